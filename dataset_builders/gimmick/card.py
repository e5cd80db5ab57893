"""The GIMMICK dataset card: access and licence, citation, provenance, counts, fields and sampling rules.

Kept apart from the builder so the text a reader sees on the Hub can be reviewed in one place;
every number in it comes from the build's `BuildReport`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import datasets
from datasets import Features

from arab_mm_tasks.core.sources import project_repo
from arab_mm_tasks.gimmick.vocabulary import REGION_CODE_OF, REGION_CODES, REGION_LABEL, REGION_NAME
from dataset_builders.core import hub, reading
from dataset_builders.gimmick.source import RELEASE_COUNTS, SOURCE_REPOS

LICENSE = "other"
REPO_ID = project_repo("gimmick")  # the project's (gated) GIMMICK repo

CITATION = """\
@misc{schneider2025gimmick,
  title         = {{GIMMICK}: Globally Inclusive Multimodal Multitask Cultural Knowledge Benchmarking},
  author        = {Schneider, Florian and Holtermann, Carolin and Biemann, Chris and Lauscher, Anne},
  year          = {2025},
  eprint        = {2502.13766},
  archivePrefix = {arXiv},
  primaryClass  = {cs.CL},
  url           = {https://arxiv.org/abs/2502.13766}
}"""

GATE_PROMPT = (
    "GIMMICK is derived from the gated datasets floschne/gimmick-sivqa, floschne/gimmick-vvqa and "
    "floschne/gimmick-coqa. Accept their conditions on the Hub first. Images are (c) their holders as "
    "credited by UNESCO ICH; video clips are cut from YouTube videos. Research use only."
)

ACCESS = """\
## Access and licence: read this first

- **The sources are gated.** The authors' datasets
  [`floschne/gimmick-sivqa`](https://huggingface.co/datasets/floschne/gimmick-sivqa),
  [`floschne/gimmick-vvqa`](https://huggingface.co/datasets/floschne/gimmick-vvqa) and
  [`floschne/gimmick-coqa`](https://huggingface.co/datasets/floschne/gimmick-coqa) can only be
  downloaded after accepting their conditions on the Hub. This derived copy must respect the same gate.
- **What the licence covers.** The data comes from the UNESCO Intangible Cultural Heritage (ICH)
  knowledge graph, published as "open access": "free availability on the public internet,
  permitting any users to read, download, copy, distribute, print, search, or link to the full
  texts [...] or use them for any other lawful purpose" (paper §A.1, L391). That text covers the
  graph. The **images** are © their photographers or institutions, as credited on the UNESCO ICH
  pages, and no licence is stated for them. The **video clips** are cut from YouTube videos. The
  authors *assume* that open access extends to the media (L393); nobody has confirmed it.
- **Re-hosting needs the authors' permission.** This builder (`dataset_builders.gimmick.builder` in the
  `arab-mm-tasks` package) is meant to be run by users who accepted the gate, on their own copy of
  the release. A built folder may only be published as a **gated** repo (`gimmick.publish` sets
  the gate before uploading), and publishing it publicly needs the authors' permission. Copyright
  holders can ask the authors to remove media: florian.schneider-1@uni-hamburg.de."""

_CEF = "`id`, `sample_uuid`, `title`, `description`, `images` (list of Image)"
_TABLE = (
    ("civqa", "CIVQA: image VQA, open answer", "`id`, `question`, `answer`, `image` (Image), common"),
    (
        "cvvqa",
        "CVVQA: 10 s video VQA, open answer",
        "`id`, `question`, `answer`, `video` (Video, raw mp4 bytes), `video_fn`, `video_center_frame_sim`, common",
    ),
    ("coqa_c", "COQA_C: origin country, 4 options", f"{_CEF}, `target`, `options`, `answer`, `answer_index`, common"),
    ("coqa_r", "COQA_R: origin region, 4 options", "the same as `coqa_c`"),
    ("ckqa", "CKQA_N (truth: `title`) and CKQA_D (truth: `description`)", f"{_CEF}, common"),
)
FIELDS = "\n".join(
    ["| config | task (paper) | fields |", "|---|---|---|"]
    + [f"| `{config}` | {task} | {fields} |" for config, task, fields in _TABLE]
) + (
    "\n\nCommon fields, on every config: `countries` and `regions` (lists of the UNESCO strings, as "
    "released) and `region_codes` (derived: the codes of `regions`, in their order, each once). Source "
    "columns the builder does not read are kept as released, after these fields."
)

CHANGES = """\
- **Renamed:** CIVQA `question_id` -> `id` (as a string) and `ich_image` -> `image`; CVVQA
  `question_id` -> `id`. `video_fn` was a local file path: it now holds the file's basename, and
  the clip's bytes are in `video`, unchanged (not re-encoded).
- **Derived:** `region_codes` (all configs); `id` for the COQA configs (`<sample_uuid>/<target>`)
  and CKQA (= `sample_uuid`); `target`, `options`, `answer` and `answer_index` (COQA).
- **Dropped:** the coqa release's `stacked_images` (one grid image per CEF, which the authors'
  code uses only in an ablation), and any other media column the tasks do not read.
- **Filtered:** CVVQA clips that fail the similarity threshold (see above), and COQA_R's CEFs
  with more than 3 regions. Bad records are never dropped silently: a build fails on them, or
  lists each one it skips.
- Everything else is byte for byte as released: question and answer text, titles, descriptions,
  country and region strings (both Sub-Saharan spellings included) and image bytes."""


def _counts(counts: Mapping[str, int]) -> str:
    header = ("config", "rows", "authors' release (paper Table 1)")
    return hub.markdown_table(header, ((c, n, f"{RELEASE_COUNTS[c]:,}") for c, n in counts.items()))


def _regions() -> str:
    header = ("code", "paper label", "option text / canonical UNESCO name", "spellings accepted")
    return hub.markdown_table(
        header,
        (
            (
                code,
                REGION_LABEL[code],
                REGION_NAME[code],
                ", ".join(f"`{s}`" for s, c in REGION_CODE_OF.items() if c == code),
            )
            for code in REGION_CODES
        ),
    )


def _extras(kept: Mapping[str, list[str]]) -> str:
    listed = [f"`{c}`: {', '.join(f'`{f}`' for f in names)}" for c, names in kept.items() if names]
    return "; ".join(listed) if listed else "none"


def _sampling(stats: Mapping[str, Any], counts: Mapping[str, int]) -> str:
    if "coqa_seed" not in stats:
        return "Not built (no coqa source)."
    return f"""\
Options and their order are sampled once, when the dataset is built, and stored: every run
sees the same ones. Seed: **{stats["coqa_seed"]}** (the authors' seed). Each row's
`random.Random` is seeded from a SHA-256 of (seed, config, row id): 3 negatives are drawn from the
sorted candidate pool, the target is appended and the 4 are shuffled (the authors' code does the
same, but with a global generator at evaluation time). `answer` is the target's letter (A-D) and
`answer_index` its position.

- **COQA_R** ({counts.get("coqa_r", 0)} rows): one row per region of a CEF. Negatives are drawn from
  the 6 regions minus all the CEF's regions, and options are the canonical names above. CEFs with
  more than 3 regions are dropped (paper Table 5; code `len(regions) <= 3`):
  **{stats["coqa_r_cefs_dropped_over_3_regions"]}** CEFs.
- **COQA_C** ({counts.get("coqa_c", 0)} rows): one row per country of a CEF, under its Table 4 name
  (UNESCO official forms such as `Viet Nam` or `Russian Federation` are shortened; North Korea
  stays apart from `Korea`). Negatives are the Table 4 countries of *all* the CEF's regions minus
  *all* its countries (code rule; the paper says the target's region, L158). When fewer than 3
  remain, every Table 4 country minus the CEF's: {stats["coqa_c_rows_topped_up"]} rows. Targets
  that are not Table 4 countries: {stats["coqa_c_rows_unknown_country"]} rows (kept under their own
  name). Countries repeated within a CEF: {stats["coqa_c_duplicate_countries"]}."""


def _threshold(stats: Mapping[str, Any]) -> str:
    if "cvvqa_min_center_frame_similarity" not in stats:
        return "Not built (no vvqa source)."
    op = ">=" if stats["cvvqa_similarity_inclusive"] else ">"
    rule = "the authors' code's rule" if stats["cvvqa_similarity_inclusive"] else "the paper's rule (L140)"
    return (
        f"Clips are kept when `video_center_frame_sim {op} {stats['cvvqa_min_center_frame_similarity']}`, "
        f"{rule}. The paper keeps similarity > 0.5 and the authors' code filters >= 0.5. "
        f"**Rows removed by the threshold: {stats['cvvqa_removed_by_similarity']}.** This filter is "
        "documented, not an error: those rows are not among the skipped records."
    )


def render_gimmick_card(
    report: reading.BuildReport,
    features: Mapping[str, Features],
    num_bytes: Mapping[str, int],
    kept: Mapping[str, list[str]],
) -> str:
    """The README card of a built GIMMICK folder.

    ``features`` and ``num_bytes``: per written config; ``kept``: the source columns each config
    carries beyond the contract's fields.
    """
    example = f'civqa = load_dataset("{REPO_ID}", "civqa", split="test")'
    source = hub.source_section(hub.shown_source(report.source), __package__ + ".builder", report.rows_skipped, example)
    body = f"""\
# GIMMICK

Cultural knowledge of vision-language models, across 144 countries and six UNESCO macro-regions:
image and video VQA (CIVQA, CVVQA), the origin of a cultural event or facet (CEF) as a country or a
region (COQA_C, COQA_R, 4 options), and naming or describing a CEF from its images (CKQA_N, CKQA_D).
All tasks are zero-shot and have one `test` split. From "GIMMICK: Globally Inclusive Multimodal
Multitask Cultural Knowledge Benchmarking" (Schneider et al., 2025,
[arXiv:2502.13766](https://arxiv.org/abs/2502.13766)).

{ACCESS}

{source}

## Counts

{_counts(report.counts)}

## Fields

{FIELDS}

Extra source columns kept: {_extras(kept)}.

## Region codes

Codes follow paper Table 2. `region_codes` lists them in the order of `regions`, and both
Sub-Saharan spellings of the release map to `SA`.

{_regions()}

## CVVQA similarity threshold

{_threshold(report.stats)}

## COQA options

{_sampling(report.stats, report.counts)}

## Changes from the source

{CHANGES}

{hub.citation_section(CITATION)}"""
    dataset_info = [
        {
            "config_name": config,
            **datasets.DatasetInfo(features=features[config])._to_yaml_dict(),
            "splits": [{"name": "test", "num_bytes": int(num_bytes[config]), "num_examples": int(n)}],
        }
        for config, n in report.counts.items()
    ]
    return hub.render_card(
        configs=list(report.counts),
        body=body,
        license=LICENSE,
        pretty_name="GIMMICK",
        language=["en"],
        task_categories=["visual-question-answering", "video-text-to-text", "multiple-choice"],
        split="test",
        extra_metadata={
            "license_name": "unesco-ich-open-access",
            "license_link": "https://ich.unesco.org/en/open-access-to-dive-data-01218",
            "source_datasets": list(SOURCE_REPOS.values()),
            "extra_gated_prompt": GATE_PROMPT,
            "dataset_info": dataset_info,  # per config: the configs have different columns
        },
    )
