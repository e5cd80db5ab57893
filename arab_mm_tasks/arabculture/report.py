"""What `arab-mm-tasks report` shows of ArabCulture: Tables 3 and 9, and accuracy by location and CS.

Accuracy is lm-eval's ``acc`` (raw summed log-likelihood, the paper's "highest likelihood"), x100.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from arab_mm_tasks.arabculture.tasks import HEADLINE
from arab_mm_tasks.core.reporting import Breakdown, Column, Report, ResultsTable, ScorecardColumn, document_field

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


def country_and_cs(task: str, doc: Mapping[str, Any]) -> Sequence[str]:
    """Table 4's rows: the item's country, split country-specific (CS) or not."""
    return [f"{doc.get('country')} {'CS' if doc.get('country_specific') else '¬CS'}"]


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
            "Tables 4/6 (L176-195)",
            _POOLS,
            "acc",
            document_field("country"),
            "country",
            scale=100,
        ),
        Breakdown(
            "arabculture_by_region",
            "ArabCulture MCQ accuracy (%) by region",
            "Tables 4/6 (L176-195)",
            _POOLS,
            "acc",
            document_field("region"),
            "region",
            scale=100,
        ),
        Breakdown(
            "arabculture_by_country_cs",
            "ArabCulture MCQ accuracy (%) by country, CS vs ¬CS",
            "Table 4 (L176-195)",
            _POOLS,
            "acc",
            country_and_cs,
            "country, CS",
            scale=100,
        ),
        Breakdown(
            "arabculture_by_topic",
            "ArabCulture MCQ accuracy (%) by topic",
            "Table 5 (L196-210)",
            _POOLS,
            "acc",
            document_field("topic"),
            "topic",
            scale=100,
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
