"""DCScore (DeCapBench) judge prompts: decompose a caption into atomic facts, match them, verify them.

Paper: Ye et al., "Painting with Words" (ICLR 2025), used by JEEM (papers/jeem.txt L182,
Appendix I L837-L882: "All results are based on the official implementation"). The three
prompts are the protocol and are reproduced from the official implementation,
MAGAer13/DeCapBench at commit 9f3fb10896608e5134b3f7966d8b1b7f93f47835,
``eval/evaluation_decapbench.py`` (``extract_prompt``, ``match_prompt``, ``verify_prompt``),
as the text ``str.format`` renders (``{{`` there is ``{`` here; the placeholders keep their
names). Upstream sends them as the user turn after the system turn "You are a helpful
assistant.", the image first for verification. Stored as data files next to this module:

- ``dcscore_extract.txt`` (``{caption}``): the caption as a JSON list of
  ``{"fact", "identifier", "relevance"}``; five in-context examples.
- ``dcscore_match.txt`` (``{predicted_atomic_facts}``, ``{oracle_atomic_facts}``): each
  predicted fact to an oracle ``id`` or ``"None"``.
- ``dcscore_verify.txt`` (``{reference_caption}``, ``{atomic_facts}``, plus the image): each
  fact with ``"verification": 1/0``.

The ``_ar`` variants are ours (DeCapBench is English-only; the JEEM paper does not say whether
the prompts were adapted for Arabic, specs/jeem.md 3.4). They keep every upstream sentence and
add, for Arabic captions: (extract) one paragraph asking for facts in the caption's own language
with ASCII identifiers, and a sixth, Arabic in-context example; (match, verify) one paragraph
saying the facts may be Arabic, are judged by meaning, and that each "fact" string must be
copied back unchanged (upstream keys the match and verification results by the fact text, so a
re-normalised Arabic string would break the join).

Replies are JSON lists read as leniently as upstream's ``parse_text_json`` (`parse_json_reply`);
`FactList` checks each element has the keys the later computation reads. A reply that fails is
re-asked by the judge and then counted invalid, never scored.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from metric_plugins.judge.parsing import Parsed, invalid
from metric_plugins.judge.prompts.base import JudgePrompt, read_text
from metric_plugins.text_parsing import LiteralError, json_value, python_literal, reply_too_long

UPSTREAM = "MAGAer13/DeCapBench@9f3fb10896608e5134b3f7966d8b1b7f93f47835 eval/evaluation_decapbench.py"
SYSTEM = "You are a helpful assistant."  # upstream text_message_creator / multimodal_message_creator default


def parse_json_reply(text: str) -> Any | None:
    """The JSON value in a judge reply, or None: upstream's ``parse_text_json`` candidates, each tried both ways.

    Upstream takes the text after the last ``` ```json ``` marker and tries, in order: up to the
    closing fence with ``ast.literal_eval``; then with the fences and newlines stripped, with
    ``ast.literal_eval`` and ``json.loads``; then also without any backtick. ``literal_eval``
    reads Python-style replies (single quotes, ``None``), ``json.loads`` JSON ones (``null``,
    ``true``); here every candidate is tried with both, which accepts nothing upstream would
    read differently. No ``literal_eval`` here: `metric_plugins.text_parsing.python_literal`
    reads the literals a reply holds (lists, dicts, strings, numbers, None/True/False) in one
    linear pass with a depth bound, and `json_value` is ``json.loads`` with that bound, so a
    reply nested 100,000 deep is None, not a RecursionError.

    >>> parse_json_reply('Sure!\\n```json\\n[{"fact": "A cat.", "relevance": 1}]\\n```')
    [{'fact': 'A cat.', 'relevance': 1}]
    >>> parse_json_reply("[{'fact': 'A cat.', 'matched_oracle_id': None}]")
    [{'fact': 'A cat.', 'matched_oracle_id': None}]
    >>> parse_json_reply("I cannot see the image.") is None
    True
    """
    tail = text.split("```json")[-1]
    fenced = tail.split("```")[0].strip("\n")
    flat = tail.strip("`").strip().strip("\n").replace("\n", "")
    for candidate in (fenced, flat, flat.replace("`", "")):
        for reader in (python_literal, json_value):
            try:
                return reader(candidate)
            except LiteralError:
                continue
    return None


@dataclass(frozen=True)
class FactList:
    """A non-empty JSON list of objects, each with a string ``"fact"`` and every key in `keys`.

    These are the reads upstream's computation makes (``d['fact']``, ``x['relevance']``,
    ``d['matched_oracle_id']``, ``d['verification']``): a reply without them raised there and
    the caption's attempt was invalid. An empty list is invalid too (upstream divides by the
    number of facts). Values are not range-checked: upstream counts ``verification == 1`` and
    ``relevance == 1`` and nothing else, so any other value counts as 0. The score is the
    number of facts; the facts themselves are read back from the raw reply with `facts`.
    """

    keys: tuple[str, ...]
    name: str = "n_facts"

    @property
    def score_names(self) -> tuple[str, ...]:
        return (self.name,)

    def facts(self, text: str) -> list[dict[str, Any]]:
        """The list of fact objects in `text`; ValueError with the reason when it is not a valid reply."""
        if too_long := reply_too_long(text):
            raise ValueError(too_long)
        data = parse_json_reply(text)
        if data is None:
            raise ValueError("no JSON list in the reply")
        if not isinstance(data, list):
            raise ValueError(f"the reply's JSON is a {type(data).__name__}, not a list")
        if not data:
            raise ValueError("the reply's list of atomic facts is empty")
        for position, element in enumerate(data):
            if not isinstance(element, Mapping):
                raise ValueError(f"element {position} is a {type(element).__name__}, not an object")
            if not isinstance(element.get("fact"), str):
                raise ValueError(f"element {position} has no string 'fact'")
            for key in self.keys:
                if key not in element:
                    raise ValueError(f"element {position} has no {key!r}")
                value = element[key]
                if isinstance(value, (list, dict, set)):  # upstream uses them as dict keys / compares to 1
                    raise ValueError(f"element {position} {key!r} is a {type(value).__name__}")
        return [dict(element) for element in data]

    def parse(self, text: str) -> Parsed:
        try:
            return Parsed({self.name: float(len(self.facts(text)))})
        except ValueError as error:
            return invalid(str(error))

    def spec(self) -> dict[str, Any]:
        return {"format": "dcscore_fact_list", "keys": list(self.keys), "name": self.name}


def format_json_input(facts: Sequence[Mapping[str, Any]]) -> str:
    """Facts as upstream's ``format_json_input`` writes them into a prompt: one JSON object a line, in a fence.

    >>> print(format_json_input([{"id": 0, "fact": "قطة بيضاء."}]))
    ```json[
      {"id": 0, "fact": "قطة بيضاء."},
    ]
    ```
    """
    lines = "".join(f"  {json.dumps(dict(fact), ensure_ascii=False)},\n" for fact in facts)
    return "```json[\n" + lines + "]\n```"


EXTRACT_FORMAT = FactList(("relevance",))
MATCH_FORMAT = FactList(("matched_oracle_id",))
VERIFY_FORMAT = FactList(("verification",))


def _prompts(suffix: str, note: str) -> tuple[JudgePrompt, JudgePrompt, JudgePrompt]:
    extract = JudgePrompt(
        id=f"dcscore_extract{suffix}",
        version=1,
        system=SYSTEM,
        user_template=read_text(f"dcscore_extract{suffix}.txt"),
        reply_format=EXTRACT_FORMAT,
        fields=("caption",),
        source=f"{UPSTREAM} extract_prompt{note}",
    )
    match = JudgePrompt(
        id=f"dcscore_match{suffix}",
        version=1,
        system=SYSTEM,
        user_template=read_text(f"dcscore_match{suffix}.txt"),
        reply_format=MATCH_FORMAT,
        fields=("predicted_atomic_facts", "oracle_atomic_facts"),
        source=f"{UPSTREAM} match_prompt{note}",
    )
    verify = JudgePrompt(
        id=f"dcscore_verify{suffix}",
        version=1,
        system=SYSTEM,
        user_template=read_text(f"dcscore_verify{suffix}.txt"),
        reply_format=VERIFY_FORMAT,
        fields=("reference_caption", "atomic_facts"),
        images_first=True,  # upstream multimodal_message_creator: the image part, then the text
        source=f"{UPSTREAM} verify_prompt{note}",
    )
    return extract, match, verify


DCSCORE_EXTRACT, DCSCORE_MATCH, DCSCORE_VERIFY = _prompts("", "")
DCSCORE_EXTRACT_AR, DCSCORE_MATCH_AR, DCSCORE_VERIFY_AR = _prompts(
    "_ar", " plus our Arabic handling paragraph (and, for extraction, an Arabic example)"
)

# The (extract, match, verify) prompts per caption language.
DCSCORE_PROMPTS: dict[str, tuple[JudgePrompt, JudgePrompt, JudgePrompt]] = {
    "en": (DCSCORE_EXTRACT, DCSCORE_MATCH, DCSCORE_VERIFY),
    "ar": (DCSCORE_EXTRACT_AR, DCSCORE_MATCH_AR, DCSCORE_VERIFY_AR),
}
