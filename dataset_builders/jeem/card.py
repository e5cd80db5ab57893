"""The JEEM dataset card: access and licences, citation, counts per dialect, fields and the build's rules.

Every number comes from the build's `BuildReport`.
"""

from __future__ import annotations

from collections.abc import Mapping

from arab_mm_tasks.core.sources import project_repo
from arab_mm_tasks.jeem import RELEASE_REPO
from arab_mm_tasks.jeem.vocabulary import DIALECTS
from dataset_builders.core import hub, reading
from dataset_builders.jeem import subset

REPO_ID = project_repo("jeem")
PAPER_IMAGES = {"jordan": 606, "emirates": 150, "egypt": 863, "morocco": 577}  # Table 1

CITATION = """\
@misc{kadaoui2025jeem,
  title         = {{JEEM}: Vision-Language Understanding in Four Arabic Dialects},
  author        = {Kadaoui, Karima and Atwany, Hanin and Al-Ali, Hamdan and Mohamed, Abdelrahman and
                   Mekky, Ali and Tilga, Sergei and Fedorova, Natalia and Artemova, Ekaterina and
                   Aldarmaki, Hanan and Kementchedjhieva, Yova},
  year          = {2025},
  eprint        = {2503.21910},
  archivePrefix = {arXiv},
  primaryClass  = {cs.CL},
  url           = {https://arxiv.org/abs/2503.21910}
}"""

GATE_PROMPT = (
    f"JEEM is derived from the gated dataset {RELEASE_REPO}: accept its conditions on the Hub first. "
    "Images follow the terms of Wikimedia Commons and Flickr (Creative Commons) or belong to the authors; "
    "captions, questions and answers are MIT."
)

ACCESS = f"""\
## Access and licences: read this first

- **The source is gated.** [`{RELEASE_REPO}`](https://huggingface.co/datasets/{RELEASE_REPO}) (curated by
  Toloka and MBZUAI) is downloaded after accepting its conditions; this copy keeps the same gate.
- **Annotations: MIT.** The captions, questions and answers are released under the MIT licence (paper
  L292-296; the release's card).
- **Images: their sources' terms.** Images come from Wikimedia Commons (categories under
  `Category:<country>_by_topic`), Flickr (Creative Commons searches) and the authors' own archives
  (L59, L72); they "follow the licensing terms of Wikimedia Commons and Flickr" (L292-296). Credit
  and licence are per image at its source; this card does not relicense them."""

RULES = """\
- **One record per image and annotating team.** `id` is `<country>-<image_id>`; `country` is the team
  that wrote the captions, questions and answers, `dialect` its dialect.
- **Shared pool** (L80-82: 25 images per country, 100 in all, annotated by all four teams): each
  team's annotation is its own record. A shared image is one row in each team's dialect config and
  one row per team in `captioning_msa` and in the VQA configs. `is_shared_pool` is the release's flag,
  else true when the image is annotated by more than one team. `image_origin_country` is the
  release's, else the team for an image only it annotated, else empty.
- **"Cannot tell from the picture"** (L567): such answers are kept, as released, as their question's
  reference (the paper scores them like any other answer); `answerable` is false on those rows.
- **Evaluation sample** (`*_eval350`, `in_eval_subset`): the paper's 350-image human-evaluation sample
  (100 images each for Jordan, Egypt and Morocco, 50 for the Emirates; L186-188), on which it reports
  the judge and DCScore. Its ids are unpublished: {sample_rule}"""

FIELDS = """\
| config | rows | fields |
|---|---|---|
| `captioning_<variety>` (msa, jordanian, emirati, egyptian, moroccan) | one per image and team | `id`, `image_id`, `image`, `country`, `dialect`, `variety`, `reference` (the caption), common |
| `captioning_<variety>_eval350` | the evaluation sample's | the same |
| `vqa_<dialect>` (jordanian, emirati, egyptian, moroccan) | one per question | `id` (`<record>-q<k>`), `image_id`, `image`, `country`, `dialect`, `question_index`, `question`, `reference` (the answer), `answerable`, `question_type`, common |

Common: `image_origin_country`, `is_shared_pool`, `in_eval_subset`, `image_source`, `topic` (empty when
the release does not give them)."""  # noqa: E501


def _per_dialect(report: reading.BuildReport) -> str:
    stats = report.stats
    header = ("dialect", "images (records)", "paper Table 1", "shared pool", "questions", "cannot tell")
    rows = [
        (
            f"{dialect.code} ({dialect.key})",
            stats.get(f"images_{c}", 0),
            PAPER_IMAGES[c],
            *(stats.get(f"{kind}_{c}", 0) for kind in ("shared_pool", "questions", "cannot_tell")),
            f"{stats.get(f'eval_subset_{c}', 0)} of {subset.QUOTAS[c]}",
        )
        for dialect in DIALECTS
        for c in [dialect.country or ""]
    ]
    return hub.markdown_table((*header, "evaluation sample"), rows)


def _configs(counts: Mapping[str, int]) -> str:
    return hub.markdown_table(("config", "rows"), ((f"`{c}`", n) for c, n in counts.items()))


def render_jeem_card(
    report: reading.BuildReport, num_bytes: Mapping[str, int], mapping: Mapping[str, str], seed: str | None
) -> str:
    """The README card of a built JEEM folder; `seed` is None when an id list chose the evaluation sample."""
    from dataset_builders.jeem.builder import features_of

    rule = (
        f"the sample here is deterministic, stratified by team: each team's records ordered by SHA-256 of "
        f"`{seed}:<country>:<image_id>`, the first 100 (50 for the Emirates) taken."
        if seed is not None
        else "the sample here is the id list given to the build."
    )
    mapped = ", ".join(f"`{field}` <- `{column}`" for field, column in mapping.items())
    example = f'jo = load_dataset("{REPO_ID}", "captioning_jordanian", split="test")'
    shown, builder = f"`{hub.shown_name(report.source)}`", __package__ + ".builder"
    source = hub.source_section(shown, builder, report.rows_skipped, example, also=f" Columns read: {mapped}.")
    body = f"""\
# JEEM

Image captioning in four Arabic dialects (Jordanian, Emirati, Egyptian, Moroccan) and Modern
Standard Arabic, and visual question answering in the four dialects. From "JEEM: Vision-Language
Understanding in Four Arabic Dialects" (Kadaoui et al., 2025, [arXiv:2503.21910](https://arxiv.org/abs/2503.21910)).
One `test` split: JEEM is a benchmark, not training data (L268-269).

{ACCESS}

{source}

## Counts per dialect

{_per_dialect(report)}

## Configs

{_configs(report.counts)}

## Fields

{FIELDS}

## Rules

{RULES.format(sample_rule=rule)}

{hub.citation_section(CITATION)}"""
    dataset_info = hub.config_infos(features_of, report.counts, num_bytes)  # the configs' columns differ
    return hub.render_card(
        configs=list(report.counts),
        body=body,
        license="other",
        pretty_name="JEEM",
        language=["ar"],
        task_categories=["image-to-text", "visual-question-answering"],
        split="test",
        extra_metadata={
            "license_name": "mit-annotations-images-per-source",
            "source_datasets": [RELEASE_REPO],
            "extra_gated_prompt": GATE_PROMPT,
            "dataset_info": dataset_info,
        },
    )
