"""The README card of a built ARB folder: what was built from which release, configs, columns, citation.

Every number comes from the build's `BuildReport`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from datasets import Features

from arab_mm_tasks.arb.domains import DOMAINS
from dataset_builders.core import hub, reading

REPO_ID = "arab-mm-tasks/arb"

# The authors' BibTeX, as their README gives it (github.com/mbzuai-oryx/ARB @ 3933760; arXiv:2505.17021).
CITATION = """\
@misc{ghaboura2025arbcomprehensivearabicmultimodal,
  title         = {{ARB}: A Comprehensive Arabic Multimodal Reasoning Benchmark},
  author        = {Sara Ghaboura and Ketan More and Wafa Alghallabi and Omkar Thawakar and Jorma Laaksonen and
                   Hisham Cholakkal and Salman Khan and Rao Muhammad Anwer},
  year          = {2025},
  eprint        = {2505.17021},
  archivePrefix = {arXiv},
  primaryClass  = {cs.CV},
  url           = {https://arxiv.org/abs/2505.17021}
}"""


def _name(source: str | os.PathLike[str]) -> str:
    return f"`{hub.shown_name(source)}`"


def _origin(report: reading.BuildReport, hub_source: str | None, csv: str | os.PathLike[str] | None) -> str:
    """Where the rows, ids and images come from, for this build's sources."""
    stats = report.stats
    if hub_source is not None:
        text = (
            f"Rows and images come from the HF release {_name(hub_source)} (its only split, `train`, 1,355 rows, "
            "is published as `test`: ARB is an evaluation set)."
        )
        if csv is None:
            return text + " The HF release has no id column: `id` is `arb_<row>`, the row's index in it."
        return text + (
            f" `id` is the `image_id` of the authors' CSV {_name(csv)} for the {stats.get('ids_from_csv', 0)} rows "
            "with exactly one CSV row of the same question, answer and steps; the other "
            f"{report.rows_read - int(stats.get('ids_from_csv', 0))} keep `arb_<row>`, their index in the HF release."
        )
    without = int(stats.get("rows_without_image", 0))
    images = f"{without} rows have no image (built without `--images-dir`)" if without else "images by `image_path`"
    return (
        f"Rows come from the authors' CSV release {_name(csv or '')} (1,356 rows; github.com/mbzuai-oryx/ARB, "
        f"`evaluation/gpt-4.1-final-responses.csv`), published as split `test`: `id` is its `image_id`; {images}."
    )


def render_arb_card(
    report: reading.BuildReport,
    features: Features,
    num_bytes: Mapping[str, int],
    domains: Sequence[str],
    *,
    hub_source: str | None = None,
    csv: str | os.PathLike[str] | None = None,
) -> str:
    """The card; `domains` are the domain configs written, in the order config ``all`` reads them."""
    table = "\n".join(f"| `{d.key}` | {d.abbreviation} | {d.name} | {report.counts.get(d.key, 0)} |" for d in DOMAINS)
    predictions = (
        "Model outputs in the CSV (`<model>-steps`, `<model>-answers`) are not in these rows: they are in "
        "`predictions/<model>.jsonl`, one line per row that has a CSV row, by `id`."
        if csv is not None
        else "The HF release holds no model outputs."
    )
    body = f"""# ARB (built by arab-mm-tasks)

ARB: A Comprehensive Arabic Multimodal Reasoning Benchmark (arXiv:2505.17021). Built by
`arab-mm-tasks build arb`: read {report.rows_read} rows, wrote {report.rows_written}, skipped
{report.rows_skipped}. {_origin(report, hub_source, csv)}

One config per domain holds that domain's rows; config `all` ({report.counts.get("all", 0)} rows) is
every domain's shards read together, domain by domain in the order the domains first appear in the
source (each in source order), so no row is stored twice: `load_dataset(..., "all")` and
`load_dataset(..., "<domain>")` both work.

| config | paper | domain | rows |
|---|---|---|---|
{table}

Columns: `steps` are the reference chain parsed into (step, action) pairs (`steps_raw` as
released); `domain` is the paper's domain (Appendix F; blank release categories inferred from
the row's id), `domain_raw` the release's value; `curriculum` comes from the HF `Curriculum` column,
or (`curriculum_source = "derived"`) from the domain when the source has none (the CSV).
{predictions} License: Apache-2.0 (the authors' GitHub repository).

{hub.citation_section(CITATION)}"""
    return hub.render_card(
        configs=["all", *domains],
        body=body,
        license="apache-2.0",
        pretty_name="ARB",
        language="ar",
        task_categories=["visual-question-answering"],
        features=features,
        num_rows=report.counts,
        num_bytes=num_bytes,
        default_config="all",
        union_configs={"all": domains},
    )
