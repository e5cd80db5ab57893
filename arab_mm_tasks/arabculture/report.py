"""What `arab-mm-tasks report` shows of ArabCulture: Tables 3 and 9, accuracy by country and region, and Tables
4-7 (by location and by topic, CS vs ¬CS, English and Arabic prompts).

Accuracy is lm-eval's ``acc`` (raw summed log-likelihood, the paper's "highest likelihood"), x100.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from arab_mm_tasks.arabculture.tasks import HEADLINE
from arab_mm_tasks.core.countries import ARABIC_NAME, canonical_country
from arab_mm_tasks.core.reporting import (
    Breakdown,
    Column,
    Pools,
    Report,
    ResultsTable,
    ScorecardColumn,
    document_field,
)

_LOCATIONS = (("None", "none"), ("R", "region"), ("R+C", "region_country"))
_HEADLINE_TASKS = tuple(
    f"arabculture_{formulation}_{HEADLINE[0]}_{HEADLINE[1]}" for formulation in ("mcq", "completion")
)
# Per-item breakdowns and the scorecard read the headline MCQ task, else whatever variant a run has (the
# README's example runs arabculture_mcq_ar_region_country): MCQ before completion, English before Arabic.
_VARIANT_POOLS = tuple(
    (f"arabculture_{formulation}_{language}_{location}",)
    for formulation in ("mcq", "completion")
    for language in ("en", "ar")
    for _, location in _LOCATIONS
)
_POOLS = ((_HEADLINE_TASKS[0],), *(pool for pool in _VARIANT_POOLS if pool != (_HEADLINE_TASKS[0],)))  # headline first


def _accuracy_table(language: str, key: str, title: str, source: str) -> ResultsTable:
    columns = tuple(
        Column(f"{'Compl' if formulation == 'completion' else 'MCQ'} {label}", "acc",
               f"arabculture_{formulation}_{language}_{location}", scale=100)
        for formulation in ("completion", "mcq")
        for label, location in _LOCATIONS
    )  # fmt: skip
    return ResultsTable(key, title, source, columns, digits=1)


GroupOf = Callable[[str, Mapping[str, Any]], Sequence[Any]]


def _mcq_pools(language: str, locations: Sequence[str]) -> Pools:
    return tuple((f"arabculture_mcq_{language}_{location}",) for location in locations)


# Tables 4/5 (English) do not say which location setting; the headline's (none) first. Tables 6/7 (Arabic) used
# R for GPT-4o and R+C for the others (L426): R+C first, then R, then none; a note names the one a model has.
_ENGLISH_MCQ = _mcq_pools("en", ("none", "region", "region_country"))
_ARABIC_MCQ = _mcq_pools("ar", ("region_country", "region", "none"))


def location_rows(task: str, doc: Mapping[str, Any]) -> Sequence[str]:
    """Tables 4/6's rows: the item's region (a region row) and ``region › country`` (a country row under it), so
    sorted rows read region, its countries, next region (the papers' regions are in alphabetical order)."""
    region = str(doc.get("region"))
    name = canonical_country(doc.get("country"))
    country = f"{name} · {ARABIC_NAME[name]}" if name else str(doc.get("country"))
    return [region, f"{region} › {country}"]


def country_specific(task: str, doc: Mapping[str, Any]) -> Sequence[str]:
    """CS (country-specific), ¬CS, or ``CS unknown`` for a null flag (counted, never dropped)."""
    flag = doc.get("country_specific")
    return ["CS" if flag is True else "¬CS" if flag is False else "CS unknown"]


def _cs_table(
    key: str, what: str, language: str, source: str, pools: Pools, group_of: GroupOf, label: str
) -> Breakdown:
    title = f"ArabCulture MCQ accuracy (%) by {what}, CS vs ¬CS, {language} prompt"
    return Breakdown(key, title, source, pools, "acc", group_of, label, scale=100, split_of=country_specific)


REPORT = Report(
    tables=(
        _accuracy_table(
            "en",
            "arabculture_table3",
            "ArabCulture: zero-shot accuracy (%), English prompt",
            "Table 3 (arabculture.txt L117-152)",
        ),
        _accuracy_table(
            "ar",
            "arabculture_table9",
            "ArabCulture: zero-shot accuracy (%), Arabic prompt",
            "Table 9 (arabculture.txt L464-498)",
        ),
    ),
    breakdowns=(
        Breakdown(
            "arabculture_by_country",
            "ArabCulture MCQ accuracy (%) by country",
            "Tables 4/6 (L176-195) with CS and ¬CS pooled (the paper shows them split: arabculture_table4/6)",
            _POOLS,
            "acc",
            document_field("country"),
            "country",
            scale=100,
        ),
        Breakdown(
            "arabculture_by_region",
            "ArabCulture MCQ accuracy (%) by region",
            "Tables 4/6 (L176-195) with CS and ¬CS pooled (the paper shows them split: arabculture_table4/6)",
            _POOLS,
            "acc",
            document_field("region"),
            "region",
            scale=100,
        ),
        _cs_table(
            "arabculture_table4",
            "region and country",
            "English",
            "Table 4 (arabculture.txt L176-195)",
            _ENGLISH_MCQ,
            location_rows,
            "region › country",
        ),
        _cs_table(
            "arabculture_table5",
            "topic",
            "English",
            "Table 5 (arabculture.txt L196-210)",
            _ENGLISH_MCQ,
            document_field("topic"),
            "topic",
        ),
        _cs_table(
            "arabculture_table6",
            "region and country",
            "Arabic",
            "Table 6 (arabculture.txt L407-426)",
            _ARABIC_MCQ,
            location_rows,
            "region › country",
        ),
        _cs_table(
            "arabculture_table7",
            "topic",
            "Arabic",
            "Table 7 (arabculture.txt L432-446)",
            _ARABIC_MCQ,
            document_field("topic"),
            "topic",
        ),
    ),
    scorecard=ScorecardColumn(
        "ArabCulture",
        _POOLS,
        "acc",
        document_field("country"),
        scale=100,
        note="MCQ accuracy (%), English prompt, no location (else the variant the run has): the country's items",
    ),
)
