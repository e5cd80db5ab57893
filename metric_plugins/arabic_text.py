"""Arabic normalisation and tokenisation for the lexical metrics (BLEU, ROUGE, CIDEr).

Why this exists: the lexical metrics count shared words, and the usual tokenisers do not see
Arabic words. rouge-score's default tokenizer keeps only ``[a-z0-9]`` after lower-casing, so it
deletes every Arabic letter: ROUGE on Arabic then measures digits and Latin letters only.

    >>> from rouge_score.tokenize import tokenize as rouge_score_default
    >>> rouge_score_default("الخطوة 1: نحسب المساحة = 12 سم", None)
    ['1', '12']
    >>> tokenize("الخطوة 1: نحسب المساحة = 12 سم")
    ['الخطوه', '1', 'نحسب', 'المساحه', '12', 'سم']

`normalize` folds the orthographic variants that Arabic writers (and dialect writers most of all)
use interchangeably, so that a metric counts a word as the same word however it was spelled. Each
fold is a named option, all on by default (`Normalization`):

- ``diacritics``: drop the short vowels, tanwin, shadda and sukun (U+064B-U+0652) and the
  superscript alef (U+0670); references are rarely vocalised and predictions sometimes are.
- ``tatweel``: drop the kashida U+0640, a stretching mark with no linguistic content.
- ``alef``: أ إ آ ٱ -> ا (hamza seats are often omitted in informal writing).
- ``ya``: ى (alef maksura) -> ي (interchanged, notably in Egyptian writing).
- ``ta_marbuta``: ة -> ه (interchanged in dialect writing).

Both functions are linear on any text (`metric_plugins.text_parsing`'s rule): translations and
single character-class patterns, no backtracking.

Digits are kept (Arabic-Indic digits become ASCII, so ٣ and 3 are one token), Latin letters are
lower-cased, and punctuation separates tokens without being one.

    >>> normalize("إِنَّهَا مَدْرَسَةٌ كَبِيــرَةٌ")
    'انها مدرسه كبيره'
    >>> normalize("مدرسة على", Normalization(ta_marbuta=False, ya=False))
    'مدرسة على'
    >>> tokenize("GPT-4.1 قال: ٣ تفاحات!")
    ['gpt', '4', '1', 'قال', '3', 'تفاحات']
    >>> tokenize("مَدْرَسَة", Normalization(diacritics=False))  # a kept mark does not split its word
    ['مَدْرَسَه']
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_DIACRITICS = re.compile("[\u064b-\u0652\u0670]")
_TATWEEL = "\u0640"
_ALEF = str.maketrans({"أ": "ا", "إ": "ا", "آ": "ا", "ٱ": "ا"})
_YA = str.maketrans({"ى": "ي"})
_TA_MARBUTA = str.maketrans({"ة": "ه"})
_DIGITS = str.maketrans("٠١٢٣٤٥٦٧٨٩۰۱۲۳۴۵۶۷۸۹", "01234567890123456789")  # Arabic-Indic and Persian
# a token: a run of letters (any script) or of digits; Arabic marks and tatweel, when kept, stay inside
# their word (they are not word characters to `re`)
_TOKEN = re.compile("(?:[^\\W\\d_]|[\u064b-\u0652\u0670\u0640])+|\\d+")


@dataclass(frozen=True)
class Normalization:
    """Which orthographic folds `normalize` applies (all on: the package's Arabic default)."""

    diacritics: bool = True
    tatweel: bool = True
    alef: bool = True
    ya: bool = True
    ta_marbuta: bool = True


DEFAULT = Normalization()


def normalize(text: str, options: Normalization = DEFAULT) -> str:
    """`text` with the folds `options` selects, Arabic-Indic digits as ASCII, Latin lower-cased."""
    if options.diacritics:
        text = _DIACRITICS.sub("", text)
    if options.tatweel:
        text = text.replace(_TATWEEL, "")
    if options.alef:
        text = text.translate(_ALEF)
    if options.ya:
        text = text.translate(_YA)
    if options.ta_marbuta:
        text = text.translate(_TA_MARBUTA)
    return text.translate(_DIGITS).lower()


def tokenize(text: str, options: Normalization = DEFAULT) -> list[str]:
    """Words (runs of letters) and numbers of the normalised text; punctuation only separates."""
    return _TOKEN.findall(normalize(text, options))


class ArabicTokenizer:
    """`tokenize` in the shape rouge-score's ``RougeScorer(tokenizer=...)`` expects."""

    def __init__(self, options: Normalization = DEFAULT) -> None:
        self.options = options

    def tokenize(self, text: str) -> list[str]:
        return tokenize(text, self.options)


def check_pairs(predictions: object, references: object) -> tuple[list[str], list[str]]:
    """Two equally long lists of strings, or a ValueError naming the first bad item and field."""
    predictions, references = list(predictions), list(references)  # type: ignore[call-overload]
    if len(predictions) != len(references):
        raise ValueError(f"{len(predictions)} predictions for {len(references)} references")
    for field, texts in (("prediction", predictions), ("reference", references)):
        for index, text in enumerate(texts):
            if not isinstance(text, str):
                raise ValueError(f"item {index}: {field} is {type(text).__name__}, not a string")
    return predictions, references
