"""
name: ArabCulture
dataset: MBZUAI/ArabCulture, built by `dataset_builders.arabculture` (on first use, or published as
  arab-mm-tasks/arabculture)
abstract: Cultural commonsense reasoning in Arabic. Each item is an MSA premise and three
  plausible second sentences, only one of which is culturally right for the item's country
  (13 countries, 4 regions, 3,482 items, test only, zero-shot).
languages: arabic (data), arabic and english (prompts)
tags: multiple-choice, culture, log-likelihood
paper: Sadallah et al., "Commonsense Reasoning in Arab Culture", arXiv:2502.12788 (ACL 2025)

Based on: lm-evaluation-harness `lm_eval/tasks/arab_culture{,_completion}/prompts.py` and
`utils_{mcq,completion}.py` (v0.4.13), which the paper's authors contributed; the paper's
Figure 5 with the templates is an image. Our prompts are byte-identical to theirs
(tests/harness/test_upstream_parity.py); we differ only where docs/fidelity.md says so.

Variants (task names): ``arabculture_{mcq,completion}_{en,ar}_{none,region,region_country}``.
``arabculture_mcq`` / ``arabculture_completion`` are the paper's headline setting: English
prompt, no location (ℓ = None), the numbers the paper quotes in its text (L162-166).

    lm_eval --model hf --model_args pretrained=Qwen/Qwen2.5-0.5B --tasks arabculture_mcq
    arab-mm-lighteval accelerate "model_name=Qwen/Qwen2.5-0.5B" "arabculture_mcq|0"
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from arab_mm_tasks.core.spec import RecordError, Request, Subset, TaskSpec

Language = Literal["en", "ar"]
Location = Literal["none", "region", "region_country"]
Formulation = Literal["mcq", "completion"]

# Paper Table 2 (L95-113); dataset values, with the abbreviations KSA and UAE.
REGION_OF_COUNTRY: dict[str, str] = {
    "KSA": "Gulf", "UAE": "Gulf", "Yemen": "Gulf",
    "Lebanon": "Levant", "Syria": "Levant", "Palestine": "Levant", "Jordan": "Levant",
    "Tunisia": "North Africa", "Algeria": "North Africa", "Morocco": "North Africa", "Libya": "North Africa",
    "Egypt": "Nile Valley", "Sudan": "Nile Valley",
}  # fmt: skip
REGIONS: tuple[str, ...] = ("Gulf", "Levant", "North Africa", "Nile Valley")

# The Arabic prompt names places in Arabic (upstream `en_ar_countries_regions`).
ARABIC_PLACE_NAMES: dict[str, str] = {
    "Egypt": "مصر", "Morocco": "المغرب", "Algeria": "الجزائر", "Libya": "ليبيا", "Sudan": "السودان",
    "Tunisia": "تونس", "Jordan": "الأردن", "Lebanon": "لبنان", "Syria": "سوريا", "Palestine": "فلسطين",
    "Yemen": "اليمن", "UAE": "الإمارات", "KSA": "السعودية",
    "Gulf": "الخليج", "Levant": "الشام", "North Africa": "شمال أفريقيا", "Nile Valley": "وادي النيل",
}  # fmt: skip


@dataclass(frozen=True)
class PromptText:
    """The fixed sentences of one prompt language (Figure 5, as in upstream prompts.py)."""

    task: str
    location: str  # label of the location line
    statement: str  # label of the premise line
    instruction_located: str  # closing instruction when a location is given
    instruction_plain: str  # closing instruction without a location
    options: str  # heading of the options block (MCQ only)


PROMPT_TEXT: dict[Language, PromptText] = {
    "en": PromptText(
        task="You are tasked with selecting the most culturally appropriate option based on the context "
        "provided below.",
        location="Location",
        statement="Statement",
        instruction_located="Consider the cultural nuances of the specified location and choose the most "
        "suitable response from the options provided.",
        instruction_plain="Consider the cultural nuances and choose the most suitable response from the "
        "options provided.",
        options="Options",
    ),
    "ar": PromptText(
        task="مهمتك هي اختيار الخيار الأنسب ثقافياً بناءً على السياق المقدم أدناه.",
        location="الموقع",
        statement="الجملة",
        instruction_located="يرجى مراعاة الفروق الثقافية للموقع المحدد "
        "واختيار الإجابة الأكثر ملاءمة من الخيارات المتاحة.",
        instruction_plain="يرجى مراعاة الفروق الثقافية واختيار الإجابة الأكثر ملاءمة من الخيارات المتاحة.",
        options="الخيارات",
    ),
}


def _field(doc: Mapping[str, Any], *path: str) -> Any:
    """``doc[path[0]][path[1]]...`` with an error that names the record and the field."""
    value: Any = doc
    for key in path:
        if not isinstance(value, Mapping) or value.get(key) is None:
            raise RecordError(f"ArabCulture record {_record_id(doc)}: field {'.'.join(path)!r} is missing")
        value = value[key]
    return value


def _record_id(doc: Mapping[str, Any]) -> str:
    return str(doc.get("id") or f"{doc.get('country')}/{doc.get('sample_id')}")


def gold_index(doc: Mapping[str, Any]) -> int:
    """Index of the correct option: position of the English answer key among the English keys.

    Never found by matching option text (upstream's completion task does that, and an option
    with a leading space then has no gold; see docs/fidelity.md).
    """
    keys = [k.strip() for k in _field(doc, "options", "english_keys")]
    answer = str(_field(doc, "answer_key", "english_answer_key")).strip()
    if answer not in keys:
        raise RecordError(
            f"ArabCulture record {_record_id(doc)}: field 'answer_key.english_answer_key' is {answer!r}, "
            f"not one of {keys}"
        )
    return keys.index(answer)


def _location_line(doc: Mapping[str, Any], language: Language, location: Location) -> str | None:
    if location == "none":
        return None
    country, region = str(_field(doc, "country")), str(_field(doc, "region"))
    if language == "ar":
        try:
            country, region = ARABIC_PLACE_NAMES[country], ARABIC_PLACE_NAMES[region]
        except KeyError as err:
            raise RecordError(f"ArabCulture record {_record_id(doc)}: unknown place {err.args[0]!r}") from None
    place = f"{country}, {region}" if location == "region_country" else region  # ASCII comma in both
    return f"{PROMPT_TEXT[language].location}: {place}"


def render_prompt(doc: Mapping[str, Any], language: Language, location: Location, with_options: bool) -> str:
    """The Figure 5 prompt. It starts and ends with a newline, as upstream's triple-quoted strings do.

    MCQ lists the options as ``"{key}. {text.strip()}"`` lines under an options heading;
    sentence completion is the same frame "without the options section" (paper L392).
    """
    text = PROMPT_TEXT[language]
    lines = ["", text.task, ""]
    location_line = _location_line(doc, language, location)
    if location_line:
        lines.append(location_line)
    lines += [f"{text.statement}: {str(_field(doc, 'first_statement')).strip()}", ""]
    lines.append(text.instruction_plain if location == "none" else text.instruction_located)
    if with_options:
        keys = _field(doc, "options", "arabic_keys" if language == "ar" else "english_keys")
        options = _field(doc, "options", "text")
        if len(keys) != 3 or len(options) != 3:
            raise RecordError(
                f"ArabCulture record {_record_id(doc)}: field 'options' has {len(options)} texts and "
                f"{len(keys)} keys, expected 3 of each"
            )
        lines += ["", f"{text.options}:"]
        lines += [f"{key}. {option.strip()}" for key, option in zip(keys, options, strict=True)]
        lines.append("")  # upstream's options block ends with "\n" and the template adds another
    return "\n".join(lines) + "\n"


def render_mcq(doc: Mapping[str, Any], language: Language, location: Location) -> Request:
    """MCQ: the option letters (A/B/C, or أ/ب/ج for the Arabic prompt) scored after the options block."""
    keys = list(_field(doc, "options", "arabic_keys" if language == "ar" else "english_keys"))
    return Request(render_prompt(doc, language, location, with_options=True), keys, gold_index(doc))


def render_completion(doc: Mapping[str, Any], language: Language, location: Location) -> Request:
    """Sentence completion: each option's text, unstripped (as upstream scores it), as the continuation."""
    options = list(_field(doc, "options", "text"))
    return Request(render_prompt(doc, language, location, with_options=False), options, gold_index(doc))


# ------------------------------------------------------------------------------- variants

COUNTRY_SUBSETS: tuple[Subset, ...] = tuple(
    Subset(
        name=country.lower(),
        config=country,
        alias=country,
        group=REGION_OF_COUNTRY[country].lower().replace(" ", "_"),
    )
    for country in sorted(REGION_OF_COUNTRY)
)
REGION_GROUPS: dict[str, str] = {region.lower().replace(" ", "_"): region for region in REGIONS}

HEADLINE: tuple[Language, Location] = ("en", "none")  # see the module docstring and docs/fidelity.md

_RENDER = {"mcq": render_mcq, "completion": render_completion}
_DESCRIPTION = {
    "mcq": "option letter log-likelihood after the options block",
    "completion": "each option's text scored as a continuation of the prompt",
}


def _variant(formulation: Formulation, language: Language, location: Location) -> TaskSpec:
    render = _RENDER[formulation]

    def render_variant(doc: Mapping[str, Any]) -> Request:
        return render(doc, language, location)

    render_variant.__name__ = f"render_{formulation}_{language}_{location}"
    base = f"arabculture_{formulation}"
    return TaskSpec(
        name=f"{base}_{language}_{location}",
        benchmark="arabculture",
        description=f"ArabCulture {formulation.upper() if formulation == 'mcq' else formulation}: "
        f"{_DESCRIPTION[formulation]}; {language} prompt, location {location}",
        render=render_variant,
        subsets=COUNTRY_SUBSETS,
        groups=REGION_GROUPS,
        target_delimiter="",  # upstream's templates set target_delimiter: "" for both formulations
        metrics=("acc", "acc_norm"),
        weight_by_size=True,  # overall = micro average over the 3,482 items, as upstream's groups
        breakdown_keys=("country", "region", "topic", "country_specific"),
        aliases=(base,) if (language, location) == HEADLINE else (),
        version=1,
    )


TASKS: list[TaskSpec] = [
    _variant(formulation, language, location)
    for formulation in ("mcq", "completion")
    for language in ("en", "ar")
    for location in ("none", "region", "region_country")
]
