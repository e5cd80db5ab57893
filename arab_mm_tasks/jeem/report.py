"""What `arab-mm-tasks report` shows of JEEM: Table 3 (captioning) and Table 4 (VQA), a row per model and subset.

Traditional metrics (BLEU, CIDEr, ROUGE, BERTScore recall) and ALDi are the full-data tasks'; the
judge and DCScore columns are the 350-image tasks', as the paper's starred blocks (L178). Judge
criteria are on the 1-5 scale; the rest x100. MSA has no DAuth and no ALDi ("-" in Table 3).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from arab_mm_tasks.core.reporting import (
    Breakdown,
    Column,
    Report,
    ResultsTable,
    ScorecardColumn,
    columns,
    document_field,
)
from arab_mm_tasks.jeem.tasks import EVAL_SUBSET
from arab_mm_tasks.jeem.vocabulary import DIALECTS, VARIETIES, VARIETY

_EVAL = f"{{row}}_{EVAL_SUBSET}"
CRITERIA = (("Con", "judge_con"), ("Rel", "judge_rel"), ("Flu", "judge_flu"), ("DAuth", "judge_dauth"))
CAPTION_TASKS = tuple(f"jeem_caption_{v.key}" for v in VARIETIES)
DIALECT_CAPTION_TASKS = tuple(f"jeem_caption_{d.key}" for d in DIALECTS)


def variety_of_task(task: str, doc: Mapping[str, Any]) -> Sequence[str]:
    """The subset label (MSA, JO, AE, EG, MA) of a JEEM task: the paper's rows are subsets, one task each."""
    key = task.removeprefix("jeem_caption_").removeprefix("jeem_vqa_").removesuffix(f"_{EVAL_SUBSET}")
    return [VARIETY[key].code]


REPORT = Report(
    tables=(
        ResultsTable(
            "jeem_table3_captioning",
            "JEEM captioning: BLEU, CIDEr, ROUGE-L, BERTScore recall (full data); judge (1-5) and DCScore (350 images);"
            " ALDi",
            "Table 3 (jeem.txt L154-178)",
            (
                Column("B", "bleu"),
                Column("C", "cider"),
                Column("R", "rougeL"),
                Column("BSc", "bertscore"),
                *columns(_EVAL, ((f"J-{label}", metric) for label, metric in CRITERIA)),
                *(
                    Column(f"DC-{label}", f"dcscore_{m}", _EVAL)
                    for label, m in (("P", "precision"), ("R", "recall"), ("F1", "f1"))
                ),
                Column("ALDi", "aldi"),
            ),
            rows=tuple((v.code, f"jeem_caption_{v.key}") for v in VARIETIES),
        ),
        ResultsTable(
            "jeem_table4_vqa",
            "JEEM VQA: judge scores (1-5)",
            "Table 4 (jeem.txt L212-228)",
            columns(None, CRITERIA),
            rows=tuple((d.code, f"jeem_vqa_{d.key}") for d in DIALECTS),
        ),
    ),
    breakdowns=(
        Breakdown(
            "jeem_bertscore_by_variety",
            "JEEM captioning BERTScore recall by dialect (x100)",
            "Table 3 BSc",
            (CAPTION_TASKS,),
            "bertscore",
            variety_of_task,
            "dialect",
        ),
        Breakdown(
            "jeem_aldi_by_dialect",
            "JEEM captioning ALDi by dialect (x100)",
            "Table 3 ALDi",
            (DIALECT_CAPTION_TASKS,),
            "aldi",
            variety_of_task,
            "dialect",
        ),
        Breakdown(
            "jeem_vqa_consistency_by_dialect",
            "JEEM VQA judge Consistency by dialect (1-5)",
            "Table 4 Con",
            (tuple(f"jeem_vqa_{d.key}" for d in DIALECTS),),
            "judge_con",
            variety_of_task,
            "dialect",
        ),
    ),
    scorecard=ScorecardColumn(
        "JEEM",
        (DIALECT_CAPTION_TASKS,),
        "bertscore",
        document_field("country"),
        note="dialect captioning, BERTScore recall with CAMeLBERT-mix (x100): captions in the country's dialect",
    ),
)
