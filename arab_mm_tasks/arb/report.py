"""What `arab-mm-tasks report` shows of ARB: Table 3 (final answer, reasoning steps), Table 4 (similarity
of the chain to the reference steps), both per domain (Figures 13-14 draw them by domain), and Figures 15-16:
per model, the step judge's mean of each of its 10 attributes (1-10) in each domain, as a table and heatmap."""

from __future__ import annotations

from arab_mm_tasks.arb.domains import DOMAIN_KEYS, DOMAINS
from arab_mm_tasks.arb.tasks import attribute_key
from arab_mm_tasks.core.reporting import Column, Report, ResultsTable, breakdowns, columns, document_field
from metric_plugins.judge.prompts.arb import STEP_ATTRIBUTES

_DOMAIN = document_field("domain")
_POOLS = (("arb",), tuple(f"arb_{domain}" for domain in DOMAIN_KEYS))  # all domains, else the per-domain tasks

REPORT = Report(
    tables=(
        ResultsTable(
            "arb_table3",
            "ARB: final answer and reasoning steps (%)",
            "Table 3 (arb.txt L187-192)",
            columns(
                "arb",
                (
                    ("Final Answer", "final_answer"),
                    ("Reasoning Steps", "reasoning_steps"),
                    ("Final Answer (judge-free matcher, not the paper's)", "answer_match"),
                ),
            ),
        ),
        ResultsTable(
            "arb_table4",
            "ARB: lexical and semantic similarity of the reasoning chain",
            "Table 4 (arb.txt L196-208)",
            columns(
                "arb",
                (
                    ("BLEU", "bleu"),
                    ("ROUGE-1", "rouge1"),
                    ("ROUGE-2", "rouge2"),
                    ("ROUGE-L", "rougeL"),
                    ("BERTScore", "bertscore"),
                    ("LaBSE", "labse"),
                ),
            ),
        ),
        ResultsTable(
            "arb_attributes_by_domain",
            "ARB step judge: mean of each attribute (1-10) by domain",
            "Figures 15-16 (arb.txt L529-532), a heatmap per model",
            # the harness's per-domain means of each attribute: steps_<attribute>_<domain>
            tuple(Column(a, f"steps_{attribute_key(a)}_{{row}}", "arb") for a in STEP_ATTRIBUTES),
            rows=tuple((domain.abbreviation, domain.key) for domain in DOMAINS),
            per_model=True,
        ),
    ),
    breakdowns=breakdowns(
        _POOLS,
        _DOMAIN,
        "domain",
        (
            ("arb_final_answer_by_domain", "ARB final answer (%) by domain", "Figures 13-14", "final_answer"),
            ("arb_steps_by_domain", "ARB reasoning steps (%) by domain", "Figures 13-16", "reasoning_steps"),
        ),
    ),
)
