"""The README card of a built ARB folder."""

from __future__ import annotations

from collections.abc import Mapping

from datasets import Features

from arab_mm_tasks.arb.domains import DOMAINS
from dataset_builders.core import hub, reading

REPO_ID = "arab-mm-tasks/arb"


def render_arb_card(
    report: reading.BuildReport, features: Features, num_bytes: Mapping[str, int], configs: list[str]
) -> str:
    domains = "\n".join(f"| `{d.key}` | {d.abbreviation} | {d.name} | {report.counts.get(d.key, 0)} |" for d in DOMAINS)
    body = f"""# ARB (built by arab-mm-tasks)

ARB: A Comprehensive Arabic Multimodal Reasoning Benchmark (arXiv:2505.17021). Built by
`arab-mm-tasks build arb` from `{report.source}`: read {report.rows_read} rows, wrote
{report.rows_written}, skipped {report.rows_skipped}. The HF release's only split (`train`, 1,355
rows) is published as `test`: ARB is an evaluation set. Config `all` holds every row; one config
per domain holds that domain's rows.

| config | paper | domain | rows |
|---|---|---|---|
{domains}

Columns: `steps` are the reference chain parsed into (step, action) pairs (`steps_raw` as
released); `domain` is the paper's domain (Appendix F; blank release categories inferred from
`image_id`), `domain_raw` the release's value; `curriculum` comes from the HF `Curriculum` column,
or (`curriculum_source = "derived"`) from the domain when the source has none (the CSV). Model
outputs in the CSV (`<model>-steps`, `<model>-answers`) are not in these rows: they are in
`predictions/<model>.jsonl`. License: Apache-2.0 (the authors' GitHub repository).
"""
    return hub.render_card(
        configs=configs,
        body=body,
        license="apache-2.0",
        pretty_name="ARB",
        language="ar",
        task_categories=["visual-question-answering"],
        features=features,
        num_rows=report.counts,
        num_bytes=num_bytes,
        default_config="all",
    )
