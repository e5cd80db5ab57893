"""Builders that turn each benchmark's original release into a clean Hub dataset.

One module per benchmark (``dataset_builders.arabculture.builder``, ...) reads and validates the
authors' records; `dataset_builders.core.hub` holds what they share: the Hub folder layout,
the card's front matter, the build report and publishing.
"""

from dataset_builders.core.hub import publish, render_card, write_hub_folder
from dataset_builders.core.reading import BuildReport, SkippedRecord

__all__ = ["BuildReport", "SkippedRecord", "publish", "render_card", "write_hub_folder"]
