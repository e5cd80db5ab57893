"""ARB's 11 domains: config keys, the paper's abbreviations, the Arabic names the prompt uses, curricula.

The abbreviations and English names are Appendix F (arb.txt L505-518); the keys are those
abbreviations as config and metric names (``M&L`` -> ``ml``). The paper gives no Arabic wording
for ``{Domain}`` in the Figure 4 prompt (specs/arb.md 3.1): the Arabic names here are ours
(docs/fidelity.md). The released CSV names domains by its ``category `` column, partly blank:
`domain_of` maps its values, the HF card's ``domain`` values, and the 217 blank rows (by their
``image_id`` prefix, as Figure 20's per-domain totals confirm).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Domain:
    key: str  # config and metric-name suffix
    abbreviation: str  # the paper's (L507-518)
    name: str  # the paper's English name (Appendix F)
    arabic: str  # what fills {Domain} in the Figure 4 prompt (ours; the paper gives none)
    curriculum: str  # the curriculum a row without one gets (the CSV has no Curriculum column)


COMPUTATIONAL, SCIENTIFIC, TEXTUAL, GENERAL = "حسابي", "علمي/طبي", "نصي/جزئي", "عامي"
CURRICULA = (COMPUTATIONAL, SCIENTIFIC, TEXTUAL, GENERAL)
# The English names the paper (L494-499) and the authors' README use, for a release that spells them so.
_CURRICULUM_NAMES = {
    "computational": COMPUTATIONAL,
    "scientific/medical": SCIENTIFIC,
    "sci/med": SCIENTIFIC,
    "textual/partial": TEXTUAL,
    "descriptive/inference": TEXTUAL,
    "general": GENERAL,
}


def curriculum_of(value: str) -> str | None:
    """The Arabic curriculum (what the prompt shows) of a release value, Arabic or English; None if unknown."""
    text = " ".join(value.split())
    if text in CURRICULA:
        return text
    return _CURRICULUM_NAMES.get(text.lower().replace(" / ", "/"))


DOMAINS: tuple[Domain, ...] = (
    Domain("vr", "VR", "Visual Reasoning", "الاستدلال البصري", GENERAL),
    Domain("ocr", "OCR", "OCR and Document Analysis", "التعرف الضوئي على النصوص وتحليل المستندات", TEXTUAL),
    Domain("cdt", "CDT", "Charts, Diagrams, and Tables", "المخططات والرسوم التوضيحية والجداول", COMPUTATIONAL),
    Domain("ml", "M&L", "Mathematical and Logical Reasoning", "الاستدلال الرياضي والمنطقي", COMPUTATIONAL),
    Domain("soc_cult", "Soc.Cult.", "Social and Cultural Understanding", "الفهم الاجتماعي والثقافي", GENERAL),
    Domain("cvp", "CVP", "Complex Visual Perception", "الإدراك البصري المعقد", GENERAL),
    Domain("med", "MED", "Medical Image Analysis", "تحليل الصور الطبية", SCIENTIFIC),
    Domain("sci_r", "Sci.R", "Scientific Reasoning", "الاستدلال العلمي", SCIENTIFIC),
    Domain("hist", "Hist.", "Historical & Archaeological Interpretation", "التفسير التاريخي والأثري", TEXTUAL),
    Domain("rs", "RS", "Remote Sensing Analysis", "تحليل صور الاستشعار عن بعد", TEXTUAL),
    Domain("agro", "Agro", "Agricultural Image Understanding", "فهم الصور الزراعية", TEXTUAL),
)
DOMAIN_KEYS = tuple(domain.key for domain in DOMAINS)
BY_KEY = {domain.key: domain for domain in DOMAINS}

# Release spellings (CSV ``category `` values, lower-cased and stripped; the paper's names and
# abbreviations, which the HF card's ``domain`` is said to use) -> key.
_NAMES: dict[str, str] = {
    "ocr": "ocr",
    "charts-cdt": "cdt",
    "diagrams-cdt": "cdt",
    "tables-cdt": "cdt",
    "medical": "med",
    "rs": "rs",
    "historical": "hist",
    "argo": "agro",
    "social and cultural understanding": "soc_cult",
    "math and logic reasoning": "ml",
    "scientific reasoning": "sci_r",
}
for _domain in DOMAINS:
    for _spelling in (_domain.key, _domain.abbreviation, _domain.name):
        _NAMES[_spelling.lower()] = _domain.key

# A blank category, by image id: Figure 20's VR=23 and CVP=35 totals (specs/arb.md section 1).
_BLANK_BY_ID = (
    (re.compile(r"^MMMU_blink_art", re.IGNORECASE), "vr"),
    (re.compile(r"^blink_val_IQ", re.IGNORECASE), "cvp"),
    (re.compile(r"^logic_?vista", re.IGNORECASE), "ml"),
    (re.compile(r"^Chart_", re.IGNORECASE), "cdt"),
)


def domain_of(category: str, image_id: str = "") -> str | None:
    """The domain key of a release row, from its category (or, when blank, its image id); None if unknown."""
    name = " ".join(category.split()).lower()
    if name:
        return _NAMES.get(name)
    return next((key for pattern, key in _BLANK_BY_ID if pattern.match(image_id.strip())), None)
