"""The ArabCulture dataset card: licence, citation, provenance, counts and column meanings.

Kept apart from the builder so the text a reader sees on the Hub can be read (and
reviewed) in one place; the numbers in it all come from the `BuildReport` of the build.
"""

from __future__ import annotations

from datasets import Features

from arab_mm_tasks.arabculture.tasks import REGION_OF_COUNTRY, REGIONS
from arab_mm_tasks.core.sources import project_repo
from dataset_builders.arabculture.source import SOURCE_REPO
from dataset_builders.core import hub, reading

LICENSE = "cc-by-nc-sa-4.0"

# Paper Table 2 (L95-113): items per country; sums to 3,482.
PAPER_ROWS: dict[str, int] = {
    "KSA": 261, "UAE": 283, "Yemen": 273, "Lebanon": 255, "Syria": 279, "Palestine": 273, "Jordan": 290,
    "Tunisia": 261, "Algeria": 271, "Morocco": 276, "Libya": 239, "Egypt": 265, "Sudan": 256,
}  # fmt: skip

CITATION = """\
@misc{sadallah2025commonsense,
  title         = {Commonsense Reasoning in Arab Culture},
  author        = {Sadallah, Abdelrahman and Tonga, Junior Cedric and Almubarak, Khalid and
                   Almheiri, Saeed and Atif, Farah and Qwaider, Chatrine and Kadaoui, Karima and
                   Shatnawi, Sara and Alesh, Yaser and Koto, Fajri},
  year          = {2025},
  eprint        = {2502.12788},
  archivePrefix = {arXiv},
  primaryClass  = {cs.CL},
  url           = {https://arxiv.org/abs/2502.12788}
}"""

SAMPLE_NOTE = """\
> **This is the bundled test sample, not the benchmark.** It was built from
> `arab_mm_tasks/data/arabculture_sample.jsonl`: 22 real rows of the authors' release
> (`MBZUAI/ArabCulture`, CC-BY-NC-SA-4.0; Egypt, KSA, Tunisia, Lebanon and Algeria, copied from a
> third-party dump of the authors' parquet files) and 16 rows written by hand for tests (2 each for
> Jordan, Libya, Morocco, Palestine, Sudan, Syria, UAE and Yemen). See `arab_mm_tasks/data/README.md`.
"""

COLUMNS = """\
| column | type | kind | meaning |
|---|---|---|---|
| `id` | string | derived | `<country>-<row>`: 0-based row in the source config; unique (`sample_id` is not) |
| `worker_id` | string | raw | annotator, e.g. `Egypt-1` (two per country) |
| `sample_id` | string | raw | `<n> \\| <English subtopic>`, e.g. `1 \\| Breakfast`, `1.0 \\| Breakfast` |
| `sub_topic` | string | raw | subtopic in Arabic |
| `first_statement` | string | raw | the premise |
| `options` | {arabic_keys, english_keys, text: list[string]} | raw | keys `أ ب ج` / `A B C`; texts unstripped |
| `answer_key` | {arabic_answer_key, english_answer_key: string} | raw | the correct option's key |
| `answer_index` | int32 | derived | 0-based position of `english_answer_key` in `english_keys` |
| `relevant_to_this_country` | string, nullable | raw | validator's `Yes`/`No` (may be null) |
| `relevant_to_other_countries` | string, nullable | raw | `Yes`/`No`, sometimes with a leading space |
| `should_discard` | string, nullable | raw | QC flag `Yes`/`No`, sometimes with a leading space |
| `country`, `region` | string | raw | config name (`KSA`, `UAE` abbreviated) and one of the 4 regions |
| `subtopic` | string | derived | the English subtopic from `sample_id` |
| `topic` | string, nullable | derived | paper Table 8 topic of the subtopic, else of `sub_topic` (null: unmapped) |
| `country_specific` | bool, nullable | derived | `relevant_to_other_countries` No -> true (CS), Yes -> false (not CS) |

Raw columns are exactly as released (leading spaces, `' No'`, nulls and float-like ids kept);
strip them where you compare values."""


def _counts_tables(counts: dict[str, int]) -> str:
    countries = [(c, REGION_OF_COUNTRY[c], n, PAPER_ROWS[c]) for c, n in counts.items() if c != "all"]
    countries.append(("all", "", counts.get("all", 0), sum(PAPER_ROWS.values())))
    regions = []
    for region in REGIONS:
        members = [c for c, r in REGION_OF_COUNTRY.items() if r == region]
        regions.append((region, sum(counts.get(c, 0) for c in members), sum(PAPER_ROWS[c] for c in members)))
    return "\n\n".join(
        [
            hub.markdown_table(("config", "region", "rows", "paper (Table 2)"), countries),
            hub.markdown_table(("region", "rows", "paper (Table 2)"), regions),
        ]
    )


def render_arabculture_card(
    report: reading.BuildReport, features: Features, num_bytes: dict[str, int], *, sample: bool = False
) -> str:
    """The README card for a built ArabCulture folder (``num_bytes``: Arrow bytes per config)."""
    repo_id = project_repo("arabculture")
    stats = report.stats
    total = report.counts.get("all", 0)
    absent = sorted(set(REGION_OF_COUNTRY) - set(report.counts))
    body = f"""\
# ArabCulture

{SAMPLE_NOTE if sample else ""}
Cultural commonsense reasoning in Modern Standard Arabic: each item is a one-sentence premise and
three plausible second sentences, only one of which is culturally right for the item's country
(13 countries, 4 regions; zero-shot, `test` split only). From "Commonsense Reasoning in Arab
Culture" (Sadallah et al., 2025, [arXiv:2502.12788](https://arxiv.org/abs/2502.12788)).

- **Source:** the authors' release [`{SOURCE_REPO}`](https://huggingface.co/datasets/{SOURCE_REPO}),
  licence CC-BY-NC-SA-4.0 (non-commercial, share-alike), which this derived copy keeps.
  Built from `{hub.shown_name(report.source)}` by `dataset_builders.arabculture.builder` (package `arab-mm-tasks`).
- **Configs:** one per country, named as in the release, plus `all` (every country, in sorted
  country order).{f" Absent from this build: {', '.join(absent)}." if absent else ""}

## Load and evaluate

```python
from datasets import load_dataset
egypt = load_dataset("{repo_id}", "Egypt", split="test")
everything = load_dataset("{repo_id}", "all", split="test")
```

```bash
lm_eval --model hf --model_args pretrained=Qwen/Qwen2.5-0.5B --tasks arabculture_mcq
```

## Counts

{_counts_tables(report.counts)}

- `should_discard` = Yes: {stats.get("should_discard_yes", 0)} of {total} rows. They are kept: the
  paper's 3,482 items include them and so do the authors' lm-eval tasks.
- Country-specific (CS, `country_specific` true): {stats.get("country_specific", 0)};
  not CS: {stats.get("not_country_specific", 0)}; unknown (null flag): {stats.get("country_specific_null", 0)}.
- Rows whose subtopic maps to no Table 8 topic (`topic` null): {stats.get("topic_unmapped", 0)}.
- Records left out by the build: {report.rows_skipped}.

## Columns

{COLUMNS}

{hub.citation_section(CITATION)}"""
    return hub.render_card(
        configs=list(report.counts),
        body=body,
        license=LICENSE,
        pretty_name="ArabCulture",
        language=["ar"],
        task_categories=["multiple-choice"],
        split="test",
        features=features,
        num_rows=report.counts,
        num_bytes=num_bytes,
        extra_metadata={"source_datasets": [SOURCE_REPO]},
    )
