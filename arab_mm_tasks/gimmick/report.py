"""What `arab-mm-tasks report` shows of GIMMICK: Tables 10, 14, 15, 16, 17 and the CKQA_N table.

Layouts as the paper's: VQA tables give the six regions under hint condition N, then the overall
score under N/R/C/B; COQA and CKQA_D tables give the regions for image+text input, then the
averages for I/T/I+T and the family's "Avg." (the mean of the three; for a text-only model, its T as the
paper's LLM rows). Scores are x100 already (relaxed accuracy, judge 0-100).
"""

from __future__ import annotations

from arab_mm_tasks.core.reporting import Column, Report, ResultsTable, ScorecardColumn, document_field

VQA_REGIONS = ("W", "AP", "SA", "A", "E", "LAC")  # Tables 10, 11, 14
KNOWLEDGE_REGIONS = ("W", "E", "AP", "LAC", "A", "SA")  # Tables 15-17, CKQA_N


def _vqa_table(task: str, key: str, title: str, source: str) -> ResultsTable:
    regions = tuple(Column(region, f"relaxed_acc_{region}", f"gimmick_{task}_none") for region in VQA_REGIONS)
    hints = tuple(
        Column(f"Avg {label}", "relaxed_acc", f"gimmick_{task}_{hint}")
        for label, hint in (("N", "none"), ("R", "region"), ("C", "country"), ("B", "both"))
    )
    return ResultsTable(key, title, source, regions + hints)


def _knowledge_table(family: str, metric: str, key: str, title: str, source: str) -> ResultsTable:
    regions = tuple(
        Column(region, f"{metric}_{region}", f"gimmick_{family}_image_text") for region in KNOWLEDGE_REGIONS
    )
    inputs = tuple(
        Column(f"Avg {label}", metric, f"gimmick_{family}_{modality}")
        for label, modality in (("I", "image"), ("T", "text"), ("I+T", "image_text"))
    )
    # "Avg." is the mean of the I, T and I+T averages; a text-only model's row has T only, and its Avg. is T
    # (Tables 15-17's LLM rows, specs/gimmick.md 3.6)
    average = Column("Avg.", metric, f"gimmick_{family}", alone=(f"gimmick_{family}_text",))
    return ResultsTable(key, title, source, (*regions, *inputs, average))


REPORT = Report(
    tables=(
        _vqa_table("civqa", "gimmick_table10_civqa", "GIMMICK CIVQA: relaxed accuracy (%)", "Table 10 (L2145-L2177)"),
        _vqa_table("cvvqa", "gimmick_table14_cvvqa", "GIMMICK CVVQA: relaxed accuracy (%)", "Table 14 (L2258-L2286)"),
        _knowledge_table(
            "coqa_r",
            "relaxed_acc",
            "gimmick_table15_coqa_r",
            "GIMMICK COQA_R: relaxed accuracy (%)",
            "Table 15 (L2292-L2342)",
        ),
        _knowledge_table(
            "coqa_c",
            "relaxed_acc",
            "gimmick_table16_coqa_c",
            "GIMMICK COQA_C: relaxed accuracy (%)",
            "Table 16 (L2344-L2394)",
        ),
        _knowledge_table(
            "ckqa_d",
            "judge_score",
            "gimmick_table17_ckqa_d",
            "GIMMICK CKQA_D: average judge score",
            "Table 17 (L2474-L2526)",
        ),
        ResultsTable(
            "gimmick_ckqa_n",
            "GIMMICK CKQA_N: average judge score",
            "uncaptioned table (L2528-L2560)",
            (
                *(Column(r, f"judge_score_{r}", "gimmick_ckqa_n") for r in KNOWLEDGE_REGIONS),
                Column("Average", "judge_score", "gimmick_ckqa_n"),
            ),
        ),
    ),
    scorecard=ScorecardColumn(
        "GIMMICK",
        (("gimmick_civqa_none",),),
        "relaxed_acc",
        document_field("countries"),
        note="CIVQA relaxed accuracy (%), no hint: items whose cultural event or facet belongs to the country",
    ),
)
