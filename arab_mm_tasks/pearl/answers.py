"""Judge-free reading of a closed-form reply (``acc_parsed``): a deviation, the paper scores with a judge only.

Pearl L141-L143 score every closed item with an LVLM judge; this reading gives a number without
one (docs/fidelity.md). Replies are compared after `metric_plugins.arabic_text.normalize`
(diacritics and tatweel dropped, hamza seats, alef maksura and ta marbuta folded, Latin lower-cased),
so ``صَحِيحَة`` is ``صحيحة`` and ``خطأ`` is ``خطا``.

- True/False: the words True / False and Arabic صحيح, صحيحة, صح, صواب / خطأ, خاطئ, خاطئة, with
  ``ال`` / ``و`` prefixes; ``غير صحيح`` and ``not true`` are False. An echo of the question's
  options ("True or False?", "صحيح أم خطأ") is not a verdict. After an answer marker
  ("Answer:", "The answer is", "الإجابة:", "الجواب") the first verdict counts; else the reply's
  final verdict.
- Letters: a leading letter (``B``, ``(B)``, ``B.``, ``B) text``), ``**B**``, a letter after an
  answer marker ("Answer: B", "The answer is B", "الإجابة: ب"), else the one choice whose text the
  reply contains.

Both readers are linear on any reply (`metric_plugins.text_parsing`'s rule): the marker patterns
have no two unbounded quantifiers over the same characters, and the verdict after each marker is
found from one list of the reply's words, not by re-reading the rest of the reply per marker.

    >>> parse_true_false("True or False? False"), parse_true_false("العبارة صَحِيحَة")
    (False, True)
    >>> parse_letter("The answer is **C**.", ["A", "B", "C"], ["الكعبة", "القلعة", "المنسف"])
    'C'
"""

from __future__ import annotations

import bisect
import json
import re

from metric_plugins.arabic_text import normalize

TRUE_FALSE = "true_false"  # a closed target's route (`arab_mm_tasks.pearl.prompts`)
LETTER = r"([A-Za-z]|[\u0621-\u064A])"
LETTERED = re.compile(r"^\s*\(?" + LETTER + r"\s*[\.\):\-]\s*")  # "B. text", "(b) text", "ب- نص"
_ALONE = re.compile(r"\(?" + LETTER + r"\)?\.?")
# a capital letter (not the article "a") or an Arabic one, alone, after "answer (is)", "option", "الإجابة (هي)"
# (``\s*[:\-]?\s*`` would split a run of spaces n^2 ways: the second run follows a colon or dash only)
LETTER_AFTER_MARKER = re.compile(
    r"(?:(?i:answer|option|choice)(?:\s+is)?|(?:الإجابة|الاجابة|الجواب|الخيار)(?:\s+(?:هي|هو))?)\s*(?:[:\-]\s*)?\(?"
    r"([A-Z]|[\u0621-\u064A])(?![A-Za-z\u0621-\u064A])"
)


def _normal(words: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(normalize(word) for word in words)


TRUE_WORDS = _normal(("true", "صحيح", "صحيحة", "صح", "صواب"))
FALSE_WORDS = _normal(("false", "خطأ", "خطا", "خاطئ", "خاطئة"))
NEGATIONS = _normal(("not", "غير"))
PREFIXES = ("", "ال", "و", "وال")  # "الصحيح", "وخطأ"
# on normalised text: "the answer is", "answer:", "الإجابة هي:", "الجواب"
VERDICT_MARKER = re.compile(r"(?:answer|الاجابه|الجواب)(?:\s+(?:is|هي|هو))?\s*[:\-]?")
_OPTIONS = "|".join(map(re.escape, (*TRUE_WORDS, *FALSE_WORDS)))
ECHO = re.compile(rf"(?:{_OPTIONS})\s*(?:or|/|ام|او)\s*(?:{_OPTIONS})")  # "true or false", "صحيح ام خطا"


WORD = re.compile(r"[a-z]+|[\u0621-\u064A]+")
LONGEST_WORD = max(map(len, (*TRUE_WORDS, *FALSE_WORDS, *NEGATIONS))) + max(map(len, PREFIXES))


def _verdict(word: str) -> bool | None:
    """True / False for a verdict word (with its prefixes), None for any other word."""
    if len(word) > LONGEST_WORD:
        return None
    stems = {word.removeprefix(prefix) for prefix in PREFIXES if word.startswith(prefix)}
    if stems & set(TRUE_WORDS):
        return True
    if stems & set(FALSE_WORDS):
        return False
    return None


def _verdicts(words: list[str]) -> list[bool]:
    """The True/False verdicts of a list of words, in order (a negated True is False)."""
    verdicts: list[bool] = []
    for index, word in enumerate(words):
        verdict = _verdict(word)
        if verdict is not None:
            verdicts.append(verdict and not (index > 0 and words[index - 1] in NEGATIONS))
    return verdicts


def _first_verdict_after(words: list[re.Match[str]], ends: list[int], verdicts: list[int], at: int) -> bool | None:
    """``_verdicts(words of text[at:])[0]`` from the whole text's `words` (`ends`: their ends; `verdicts`:
    the indices of its verdict words), in O(log n): the first word of ``text[at:]`` may be the tail
    of a longer word (``answers`` -> ``s``), every later one is a whole word of the text. A tail longer
    than any verdict word is not read (a reply may be one 100 KB "word").
    """
    first = bisect.bisect_right(ends, at)
    if first == len(words):
        return None
    word = words[first]
    start = max(word.start(), at)
    tail = word.string[start : word.end()] if word.end() - start <= LONGEST_WORD else ""
    verdict = _verdict(tail)
    if verdict is not None:
        return verdict
    later = bisect.bisect_right(verdicts, first)
    if later == len(verdicts):
        return None
    index = verdicts[later]
    previous = words[index - 1].group() if index - 1 > first else tail
    return bool(_verdict(words[index].group())) and previous not in NEGATIONS


def parse_true_false(text: str) -> bool | None:
    """A reply's True/False verdict (English or Arabic), else None (see the module docstring)."""
    clean = ECHO.sub(" ", normalize(text))
    words = list(WORD.finditer(clean))
    ends = [word.end() for word in words]
    verdicts = [index for index, word in enumerate(words) if _verdict(word.group()) is not None]
    for marker in reversed(list(VERDICT_MARKER.finditer(clean))):
        after = _first_verdict_after(words, ends, verdicts, marker.end())
        if after is not None:
            return after
    found = _verdicts([word.group() for word in words])
    return found[-1] if found else None


def parse_letter(text: str, letters: list[str], choices: list[str]) -> str | None:
    """The option a reply names (see the module docstring), as one of `letters`, else None."""
    raw = re.sub(r"[*_`\u064b-\u0652\u0670\u0640]", "", text).strip()  # markdown, diacritics, tatweel; case kept
    match = LETTERED.match(raw) or _ALONE.fullmatch(raw)
    found = ([match.group(1)] if match else []) + [m.group(1) for m in LETTER_AFTER_MARKER.finditer(raw)][-1:]
    for letter in found:
        if letter.upper() in letters:
            return letter.upper()
    clean = normalize(raw)
    named = [letter for letter, choice in zip(letters, choices, strict=True) if choice and normalize(choice) in clean]
    return named[0] if len(named) == 1 else None


def parsed_answer_score(prediction: str, target: str) -> float:
    """100 when the parsed letter / True-False label matches the gold one, else 0 (unparsable = 0)."""
    gold = json.loads(target)
    if gold["route"] == TRUE_FALSE:
        return 100.0 * (parse_true_false(prediction) == gold["label"])
    return 100.0 * (parse_letter(prediction, gold["letters"], gold["choices"]) == gold["answer_letter"])
