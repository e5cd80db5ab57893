"""The 22 Arab League states, named once, and the spellings the benchmarks' records use for them.

The Arab-world scorecard (`arab-mm-tasks report`) reads a country from records of five releases
that spell it five ways: ArabCulture ``KSA`` / ``UAE``, GIMMICK's UNESCO forms (``Syrian Arab
Republic``, ``State of Palestine``), Pearl's ``Saudi Arabia``, JEEM's ``emirates``. `canonical_country`
maps each of them to one English name; anything else (GIMMICK's countries outside the Arab world)
is None, and the report counts those items instead of guessing.

>>> canonical_country("KSA"), canonical_country("Syrian Arab Republic"), canonical_country(" emirates ")
('Saudi Arabia', 'Syria', 'United Arab Emirates')
>>> canonical_country("Viet Nam") is None
True
>>> ARABIC_NAME["Morocco"]
'المغرب'
"""

from __future__ import annotations

# English name (as the scorecard prints it) -> (Arabic name, other spellings in the releases)
_COUNTRIES: dict[str, tuple[str, tuple[str, ...]]] = {
    "Algeria": ("الجزائر", ("People's Democratic Republic of Algeria",)),
    "Bahrain": ("البحرين", ("Kingdom of Bahrain",)),
    "Comoros": ("جزر القمر", ("Union of the Comoros",)),
    "Djibouti": ("جيبوتي", ("Republic of Djibouti",)),
    "Egypt": ("مصر", ("Arab Republic of Egypt", "egyptian")),
    "Iraq": ("العراق", ("Republic of Iraq",)),
    "Jordan": ("الأردن", ("Hashemite Kingdom of Jordan", "jordanian")),
    "Kuwait": ("الكويت", ("State of Kuwait",)),
    "Lebanon": ("لبنان", ("Lebanese Republic",)),
    "Libya": ("ليبيا", ("State of Libya", "Libyan Arab Jamahiriya")),
    "Mauritania": ("موريتانيا", ("Islamic Republic of Mauritania",)),
    "Morocco": ("المغرب", ("Kingdom of Morocco", "moroccan")),
    "Oman": ("عُمان", ("Sultanate of Oman",)),
    "Palestine": ("فلسطين", ("State of Palestine", "Palestinian Territories", "Palestinian Territory")),
    "Qatar": ("قطر", ("State of Qatar",)),
    "Saudi Arabia": ("السعودية", ("KSA", "Kingdom of Saudi Arabia")),
    "Somalia": ("الصومال", ("Federal Republic of Somalia",)),
    "Sudan": ("السودان", ("Republic of the Sudan", "the Sudan")),
    "Syria": ("سوريا", ("Syrian Arab Republic",)),
    "Tunisia": ("تونس", ("Republic of Tunisia",)),
    "United Arab Emirates": ("الإمارات", ("UAE", "emirates", "the Emirates", "emirati")),
    "Yemen": ("اليمن", ("Republic of Yemen",)),
}

ARAB_COUNTRIES: tuple[str, ...] = tuple(_COUNTRIES)
ARABIC_NAME: dict[str, str] = {name: arabic for name, (arabic, _) in _COUNTRIES.items()}
_BY_SPELLING: dict[str, str] = {
    spelling.casefold(): name for name, (arabic, others) in _COUNTRIES.items() for spelling in (name, arabic, *others)
}


def canonical_country(value: object) -> str | None:
    """The Arab League state a record's country value names, or None when it names none of them."""
    if not isinstance(value, str):
        return None
    return _BY_SPELLING.get(value.strip().casefold())
