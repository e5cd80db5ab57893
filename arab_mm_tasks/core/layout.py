"""The names of a built Hub-layout folder, known to the builder that writes it and to the tasks that read it.

<folder>/README.md                   the card (configs and their data files)
<folder>/data/<config>/*.parquet      each config's rows
<folder>/predictions/<model>.jsonl    a release's model outputs, kept out of the gold rows (ARB)
"""

from __future__ import annotations

from pathlib import Path

CARD_FILE = "README.md"
DATA_DIR = "data"
PREDICTIONS_DIR = "predictions"


def is_predictions_file(path: str | Path) -> bool:
    """Whether `path` is a built folder's ``predictions/<model>.jsonl`` (next to the folder's ``data/``)."""
    file = Path(path).expanduser()
    return file.suffix == ".jsonl" and file.parent.name == PREDICTIONS_DIR and (file.parent.parent / DATA_DIR).is_dir()
