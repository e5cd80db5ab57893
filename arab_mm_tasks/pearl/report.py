"""What `arab-mm-tasks report` shows of Pearl: Tables 2 and 3, Pearl-X, and the Appendix E breakdowns.

ACC and CAS are percentages; COR/COH/DET/FLU/OVR are on the judge's rubric scale (pearl.txt L143).
Appendix E draws accuracy, Overall and CAS by model x country (Figures E.1-E.3) and Overall by model x
open question type (Figure E.4) as heatmaps; the report draws the same, with the numbers.
"""

from __future__ import annotations

from arab_mm_tasks.core.reporting import (
    Breakdown,
    Column,
    Report,
    ResultsTable,
    ScorecardColumn,
    breakdowns,
    columns,
    document_field,
)

RUBRIC = (("COR", "correctness"), ("COH", "coherence"), ("DET", "detail"), ("FLU", "fluency"), ("OVR", "overall"))


def _pearl_table(prefix: str, key: str, title: str, source: str) -> ResultsTable:
    return ResultsTable(
        key,
        title,
        source,
        (Column("ACC", "acc", f"{prefix}_closed"), *columns(f"{prefix}_open", (*RUBRIC, ("CAS", "cas")))),
    )


_COUNTRY = document_field("country")
_CLOSED = (("pearl_closed",), ("pearl_lite_closed",))  # Pearl, else Pearl-Lite (whose items are Pearl's)
_OPEN = (("pearl_open",), ("pearl_lite_open",))

REPORT = Report(
    tables=(
        _pearl_table(
            "pearl",
            "pearl_table2",
            "Pearl: closed-form ACC (%), open-ended rubric and CAS (%)",
            "Table 2 (pearl.txt L179-L192)",
        ),
        _pearl_table(
            "pearl_lite",
            "pearl_table3",
            "Pearl-Lite: closed-form ACC (%), open-ended rubric and CAS (%)",
            "Table 3 (pearl.txt L196-L212)",
        ),
        ResultsTable(
            "pearl_x",
            "Pearl-X: accuracy (%) on single- and multi-image items",
            "Section 5 (pearl.txt L238-L240)",
            (
                Column("Single", "acc", "pearl_x_single"),
                Column("Multi", "acc", "pearl_x_multi"),
                Column("All", "acc", "pearl_x"),
            ),
        ),
        ResultsTable(
            "pearl_judge_free",
            "Pearl closed items, judge-free parsed accuracy (%) (a deviation, docs/fidelity.md)",
            "not in the paper",
            (
                Column("Pearl", "acc_parsed", "pearl_closed"),
                Column("Pearl-Lite", "acc_parsed", "pearl_lite_closed"),
                Column("Pearl-X single", "acc_parsed", "pearl_x_single"),
                Column("Pearl-X multi", "acc_parsed", "pearl_x_multi"),
            ),
        ),
    ),
    breakdowns=(
        *breakdowns(
            _CLOSED,
            _COUNTRY,
            "country",
            (("pearl_acc_by_country", "Pearl closed-form ACC (%) by country", "Figure E.1 (L873)", "acc"),),
        ),
        *breakdowns(
            _OPEN,
            _COUNTRY,
            "country",
            (
                ("pearl_overall_by_country", "Pearl open-ended Overall by country", "Figure E.2 (L877)", "overall"),
                ("pearl_cas_by_country", "Pearl CAS (%) by country", "Figure E.3 (L880)", "cas"),
            ),
        ),
        Breakdown(
            "pearl_overall_by_type",
            "Pearl open-ended Overall by question type",
            "Figure E.4 (L405, L870)",
            _OPEN,
            "overall",
            document_field("question_type"),
            "question type",
        ),
        Breakdown(
            "pearl_acc_by_domain",
            "Pearl closed-form ACC (%) by domain",
            "not reported in the paper",
            _CLOSED,
            "acc",
            document_field("category"),
            "domain",
        ),
    ),
    scorecard=ScorecardColumn(
        "Pearl",
        _CLOSED,
        "acc",
        _COUNTRY,
        note="closed-form ACC (%) by the LVLM judge: the country's MCQ and True/False items",
    ),
)
