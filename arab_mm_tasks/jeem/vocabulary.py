"""JEEM's varieties: the four dialects (one per country, L27, L49-51) and MSA, named once.

Builders, prompts, judge fields and reports read this table; nothing else spells a dialect.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Variety:
    """One captioning subset of Table 3 (four of them are also the VQA subsets of Table 4).

    key: the config and task-name suffix (``captioning_jordanian``, ``jeem_caption_jordanian``).
    code: the paper's subset label (Table 3: MSA, JO, AE, EG, MA).
    country: the dataset's ``country`` value of the annotating team; None for MSA (every team wrote it).
    judge_country: what fills the judge prompts' ``{country}`` (Figures 9-11); the paper prints no value.
    name_ar: the variety in the model instruction, after "باللهجة" / "باللغة".
    """

    key: str
    code: str
    country: str | None
    judge_country: str | None
    name_ar: str

    @property
    def is_dialect(self) -> bool:
        return self.country is not None


MSA = Variety("msa", "MSA", None, None, "باللغة العربية الفصحى")
DIALECTS = (
    Variety("jordanian", "JO", "jordan", "Jordan", "باللهجة الأردنية"),
    Variety("emirati", "AE", "emirates", "the United Arab Emirates", "باللهجة الإماراتية"),
    Variety("egyptian", "EG", "egypt", "Egypt", "باللهجة المصرية"),
    Variety("moroccan", "MA", "morocco", "Morocco", "باللهجة المغربية (الدارجة)"),
)
VARIETIES = (MSA, *DIALECTS)
VARIETY = {variety.key: variety for variety in VARIETIES}
COUNTRIES = tuple(d.country for d in DIALECTS if d.country)
DIALECT_OF_COUNTRY = {d.country: d for d in DIALECTS}

# Values a release may use for a team's country (case-insensitive): the names, adjectives and codes
# the paper uses (Table 1, Table 3, L27). The Hub release's spelling is unknown (specs/jeem.md section 1).
COUNTRY_ALIASES: dict[str, str] = {}
for _dialect, _names in zip(
    DIALECTS,
    (
        ("jordan", "jordanian", "jo", "jor", "levantine"),
        ("emirates", "emirati", "uae", "ae", "the emirates", "united arab emirates", "gulf", "khaleeji"),
        ("egypt", "egyptian", "eg", "egy"),
        ("morocco", "moroccan", "ma", "mar", "maghrebi", "darija"),
    ),
    strict=True,
):
    for _name in _names:
        COUNTRY_ALIASES[_name] = _dialect.country  # type: ignore[assignment]


def country_of(value: str) -> str | None:
    """The canonical country of a release's spelling (``"Jordanian"`` -> ``"jordan"``), or None."""
    return COUNTRY_ALIASES.get(" ".join(value.strip().lower().replace("_", " ").split()))
