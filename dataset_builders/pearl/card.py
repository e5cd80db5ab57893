"""The Pearl dataset card: licence (CC-BY-NC-ND-4.0) and gate, citation, counts per config, country and type.

Every number in it comes from the build's `BuildReport` and the per-config counters the builder keeps.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from datasets import Features

from arab_mm_tasks.core.sources import project_repo
from arab_mm_tasks.pearl import RELEASES
from dataset_builders.core import hub, reading

LICENSE = "cc-by-nc-nd-4.0"
REPO_ID = project_repo("pearl")
PAPER_COUNTS = {
    "pearl_closed": "4,832", "pearl_open": "1,469", "pearl_lite_closed": "591", "pearl_lite_open": "302",
    "pearl_x_single": "177", "pearl_x_multi": "190",
}  # fmt: skip

CITATION = """\
@article{alwajih2025pearl,
  title   = {Pearl: A Multimodal Culturally-Aware {A}rabic Instruction Dataset},
  author  = {Alwajih, Fakhraddin and others},
  year    = {2025},
  url     = {https://github.com/UBC-NLP/pearl}
}"""

GATE_PROMPT = (
    "Pearl is derived from the gated datasets UBC-NLP/PEARL, UBC-NLP/PEARL-LITE and UBC-NLP/PEARL-X "
    "(CC-BY-NC-ND-4.0). Accept their conditions on the Hub first. Non-commercial research use only; "
    "no derivatives may be shared."
)

ACCESS = """\
## Access and licence: read this first

- **Licence: CC-BY-NC-ND-4.0** (the authors' cards): attribution, non-commercial use only, and
  **no derivatives**: an adapted copy (this one re-splits the release and embeds its images) may
  not be shared. `arab-mm-tasks publish` therefore makes the repo **private** unless `--public` is
  given, with a warning; publishing publicly needs the authors' permission.
- **The sources are gated**: accept the conditions of
  [`UBC-NLP/PEARL`](https://huggingface.co/datasets/UBC-NLP/PEARL),
  [`UBC-NLP/PEARL-LITE`](https://huggingface.co/datasets/UBC-NLP/PEARL-LITE) and
  [`UBC-NLP/PEARL-X`](https://huggingface.co/datasets/UBC-NLP/PEARL-X) on the Hub first; this copy
  keeps the same gate.
- Images come from Wikipedia under Creative Commons licences; images from elsewhere were masked or
  regenerated, and depicted faces are synthetic (paper L262, L177)."""

FIELDS = """\
| configs | fields |
|---|---|
| `pearl_closed`, `pearl_open`, `pearl_lite_closed`, `pearl_lite_open` | `id` (the release's running index, \
as the authors' inference logs number rows), then the 13 card features as released: `original_index`, \
`augmented_caption`, `question`, `answer`, `answer_letter`, `choices`, `category`, `country`, `image_id`, \
`question_type`, `annotation_id`, `qa_index`, `image` |
| `pearl_x_single`, `pearl_x_multi` | `id`, `question`, `question_type`, `choices`, `answer`, `answer_letter`, \
`images` (`image1` .. `imageN` in order), `n_images`, then the release's other columns |

A Pearl-X item whose release row gives only the answer letter gets `answer` = that choice's text."""


def _counts(counts: Mapping[str, int]) -> str:
    return hub.markdown_table(("config", "rows", "paper"), ((c, f"{n:,}", PAPER_COUNTS[c]) for c, n in counts.items()))


def _by(breakdown: Mapping[str, Mapping[str, Counter[str]]], key: str) -> str:
    configs = [c for c in breakdown if breakdown[c][key]]
    if not configs:
        return "(no such field in the release)"
    values = sorted({value for c in configs for value in breakdown[c][key]})
    return hub.markdown_table(
        (key, *configs), ((value, *(breakdown[c][key][value] for c in configs)) for value in values)
    )


def render_pearl_card(
    report: reading.BuildReport,
    features: Mapping[str, Features],
    num_bytes: Mapping[str, int],
    breakdown: Mapping[str, Mapping[str, Counter[str]]],
) -> str:
    """The README card of a built Pearl folder."""
    example = f'closed = load_dataset("{REPO_ID}", "pearl_closed", split="test")'
    source = hub.source_section(hub.shown_source(report.source), __package__ + ".builder", report.rows_skipped, example)
    body = f"""\
# Pearl, Pearl-Lite and Pearl-X

Arabic culturally-aware visual question answering over 10 domains and 19 Arab countries, from
"Pearl: A Multimodal Culturally-Aware Arabic Instruction Dataset" (Alwajih et al., 2025,
https://github.com/UBC-NLP/pearl). Closed-form items (multiple choice, True/False) and open-ended
items (11 question types); Pearl-X asks about concepts shared across countries, over one image or
several. Every score of the paper comes from an LVLM judge. One `test` split per config.

{ACCESS}

{source}

## Counts

{_counts(report.counts)}

## Items per country

{_by(breakdown, "country")}

## Items per question type

{_by(breakdown, "question_type")}

## Fields

{FIELDS}

{hub.citation_section(CITATION)}"""
    return hub.render_card(
        configs=list(report.counts),
        body=body,
        license=LICENSE,
        pretty_name="Pearl",
        language=["ar"],
        task_categories=["visual-question-answering", "multiple-choice"],
        split="test",
        extra_metadata={
            "source_datasets": list(RELEASES.values()),
            "extra_gated_prompt": GATE_PROMPT,
            "dataset_info": hub.configs_dataset_info(features, report.counts, num_bytes, "test"),
        },
    )
