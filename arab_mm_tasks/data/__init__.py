"""Data shipped inside the package: the bundled ArabCulture sample (provenance in README.md here)."""

from __future__ import annotations

import json
from pathlib import Path

# 38 records in the authors' release format (MBZUAI/ArabCulture rows), all 13 countries.
SAMPLE_PATH = Path(__file__).parent / "arabculture_sample.jsonl"


def sample_records() -> list[dict]:
    """The bundled ArabCulture sample, one dict per record, exactly as released (spaces and nulls kept)."""
    return [json.loads(line) for line in SAMPLE_PATH.read_text("utf-8").splitlines() if line.strip()]
