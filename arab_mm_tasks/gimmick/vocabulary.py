"""GIMMICK's region and country vocabulary: UNESCO ICH strings, region codes, Table 4 country names.

Paper: "GIMMICK: Globally Inclusive Multimodal Multitask Cultural Knowledge Benchmarking",
Schneider, Holtermann, Biemann and Lauscher (2025), https://arxiv.org/abs/2502.13766.

- Region codes are Table 2's (L99-L108), in its order: A, AP, E, LAC, SA, W. The data holds the
  UNESCO region strings; Sub-Saharan Africa is spelled two ways in the release
  (``Subsaharian African States`` L683/L2004 and in the authors' code, ``Sub-Saharan African
  States`` L934/L1539): both map to ``SA``.
- `REGION_NAME` is the one canonical string per code. For SA it is the authors' spelling
  ``Subsaharian African States`` (the key of their region table and of the COQA examples), so
  COQA_R options read like the authors' ones.
- `COUNTRIES_BY_REGION` is Table 4 (L752-L760) verbatim, quirks included: the AP list keeps the
  long forms ``Lao People's Democratic Republic`` and ``Democratic People's Republic of Korea`` next
  to ``Korea``, and the W list has ``United Kingdom of Great Britain and Northern Ireland`` and
  ``Türkiye``. These are the COQA_C option texts.
- `SHORT_COUNTRY_NAME` maps UNESCO's official forms (``Viet Nam``, ``Russian Federation``, ...) to
  those Table 4 names. Unlike the authors' code (``utils/ich.py``), North Korea is not merged into
  ``Korea`` and Lao keeps Table 4's long name.
"""

from __future__ import annotations

from collections.abc import Sequence

from arab_mm_tasks.core.spec import RecordError

__all__ = [
    "ALL_COUNTRIES", "COUNTRIES_BY_REGION", "REGION_CODES", "REGION_CODE_OF", "REGION_LABEL", "REGION_NAME",
    "REGION_OF_COUNTRY", "SHORT_COUNTRY_NAME", "region_codes", "short_country_name",
]  # fmt: skip

REGION_CODES: tuple[str, ...] = ("A", "AP", "E", "LAC", "SA", "W")  # Table 2 order

REGION_NAME: dict[str, str] = {
    "A": "Arab States",
    "AP": "Asian and Pacific States",
    "E": "Eastern European States",
    "LAC": "Latin-American and Caribbean States",
    "SA": "Subsaharian African States",
    "W": "Western European and North American States",
}

REGION_LABEL: dict[str, str] = {  # Table 2's "Region" column
    "A": "Arab",
    "AP": "Asia & Pacific",
    "E": "Eastern Europe",
    "LAC": "Latin-America & Caribbean",
    "SA": "Subsaharian Africa",
    "W": "Western Europe & North America",
}

REGION_CODE_OF: dict[str, str] = {
    **{name: code for code, name in REGION_NAME.items()},
    "Sub-Saharan African States": "SA",  # CIVQA/CVVQA examples (L934, L1539)
    "Subsaharan African States": "SA",
    "African States": "SA",  # UNESCO electoral group V(a); North Africa is in "Arab States"
    "Latin American and Caribbean States": "LAC",  # UNESCO's own spelling of the group
}

COUNTRIES_BY_REGION: dict[str, tuple[str, ...]] = {  # Table 4, verbatim and in its order
    "A": (
        "Algeria", "Bahrain", "Egypt", "Iraq", "Jordan", "Kuwait", "Lebanon", "Mauritania", "Morocco", "Oman",
        "Palestine", "Qatar", "Saudi Arabia", "Sudan", "Syria", "Tunisia", "United Arab Emirates", "Yemen",
    ),
    "AP": (
        "Lao People's Democratic Republic", "Afghanistan", "Australia", "Bangladesh", "Bhutan", "Cambodia", "China",
        "Cook Islands", "Democratic People's Republic of Korea", "Fiji", "India", "Indonesia", "Iran", "Japan",
        "Kazakhstan", "Korea", "Kyrgyzstan", "Malaysia", "Micronesia", "Mongolia", "Myanmar", "Nepal", "New Zealand",
        "Pakistan", "Papua New Guinea", "Philippines", "Samoa", "Singapore", "Sri Lanka", "Thailand", "Timor-Leste",
        "Tonga", "Turkmenistan", "Vanuatu", "Vietnam",
    ),
    "E": (
        "Albania", "Armenia", "Azerbaijan", "Belarus", "Bosnia and Herzegovina", "Bulgaria", "Croatia", "Czechia",
        "Estonia", "Georgia", "Hungary", "Latvia", "Lithuania", "Moldova", "Montenegro", "North Macedonia", "Poland",
        "Romania", "Russia", "Serbia", "Slovakia", "Slovenia", "Tajikistan", "Ukraine", "Uzbekistan",
    ),
    "LAC": (
        "Antigua and Barbuda", "Argentina", "Bahamas", "Belize", "Bolivia", "Brazil", "Chile", "Colombia",
        "Costa Rica", "Cuba", "Curaçao", "Dominican Republic", "Ecuador", "El Salvador", "Grenada", "Guatemala",
        "Haiti", "Honduras", "Jamaica", "Mexico", "Nicaragua", "Panama", "Paraguay", "Peru", "Saint Kitts and Nevis",
        "Saint Vincent and the Grenadines", "Uruguay", "Venezuela",
    ),
    "SA": (
        "Côte d'Ivoire", "Angola", "Benin", "Botswana", "Burkina Faso", "Burundi", "Cabo Verde", "Cameroon",
        "Central African Republic", "Chad", "Congo", "Democratic Republic of the Congo", "Djibouti", "Eritrea",
        "Eswatini", "Ethiopia", "Gabon", "Gambia", "Ghana", "Guinea", "Kenya", "Lesotho", "Madagascar", "Malawi",
        "Mali", "Mauritius", "Mozambique", "Namibia", "Niger", "Nigeria", "Rwanda", "Senegal", "Seychelles",
        "Somalia", "South Africa", "South Sudan", "Togo", "Uganda", "Zambia", "Zimbabwe",
    ),
    "W": (
        "Andorra", "Austria", "Belgium", "Canada", "Cyprus", "Denmark", "Finland", "France", "Germany", "Greece",
        "Iceland", "Ireland", "Italy", "Luxembourg", "Malta", "Netherlands", "Norway", "Portugal", "Spain", "Sweden",
        "Switzerland", "Türkiye", "United Kingdom of Great Britain and Northern Ireland",
    ),
}  # fmt: skip

REGION_OF_COUNTRY: dict[str, str] = {
    country: code for code, countries in COUNTRIES_BY_REGION.items() for country in countries
}
ALL_COUNTRIES: tuple[str, ...] = tuple(sorted(REGION_OF_COUNTRY))

SHORT_COUNTRY_NAME: dict[str, str] = {  # UNESCO official (and older) forms -> Table 4 name
    "Viet Nam": "Vietnam",
    "Iran (Islamic Republic of)": "Iran",
    "Islamic Republic of Iran": "Iran",  # Table 9's form
    "Republic of Korea": "Korea",
    "Lao": "Lao People's Democratic Republic",  # the authors' code's short form
    "Laos": "Lao People's Democratic Republic",
    "Micronesia (Federated States of)": "Micronesia",
    "Federated States of Micronesia": "Micronesia",
    "Syrian Arab Republic": "Syria",
    "State of Palestine": "Palestine",
    "Russian Federation": "Russia",
    "Republic of Moldova": "Moldova",
    "Czech Republic": "Czechia",
    "The former Yugoslav Republic of Macedonia": "North Macedonia",
    "Venezuela (Bolivarian Republic of)": "Venezuela",
    "Bolivarian Republic of Venezuela": "Venezuela",
    "Bolivia (Plurinational State of)": "Bolivia",
    "Plurinational State of Bolivia": "Bolivia",
    "Curacao": "Curaçao",
    "Cote d'Ivoire": "Côte d'Ivoire",
    "Ivory Coast": "Côte d'Ivoire",
    "Cape Verde": "Cabo Verde",
    "Swaziland": "Eswatini",
    "Turkey": "Türkiye",
    "Turkiye": "Türkiye",
    "Netherlands (Kingdom of the)": "Netherlands",
    "United Kingdom": "United Kingdom of Great Britain and Northern Ireland",
}


def short_country_name(name: str) -> str:
    """The Table 4 name of a UNESCO country string; unknown names come back stripped but otherwise unchanged.

    >>> short_country_name("Venezuela (Bolivarian Republic of)")
    'Venezuela'
    >>> short_country_name("Democratic People's Republic of Korea")  # Table 4 keeps it apart from Korea
    "Democratic People's Republic of Korea"
    """
    text = name.strip().replace("\u2019", "'")  # typographic apostrophe, as in "Côte d’Ivoire"
    return SHORT_COUNTRY_NAME.get(text, text)


def region_codes(regions: Sequence[str], *, record: str) -> list[str]:
    """Region codes of a record's UNESCO region strings, in their order, each code once.

    Raises `RecordError` naming ``record`` and the value for a string that is no known region.

    >>> region_codes(["Sub-Saharan African States", "Arab States", "Subsaharian African States"], record="q1")
    ['SA', 'A']
    """
    codes: list[str] = []
    for region in regions:
        code = REGION_CODE_OF.get(region.strip()) if isinstance(region, str) else None
        if code is None:
            raise RecordError(f"{record}: field 'regions' has {region!r}, not a UNESCO ICH region")
        if code not in codes:
            codes.append(code)
    return codes
