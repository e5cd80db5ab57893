"""Where the tests find the project's shared reference files (real records, papers' text)."""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).parent
ROOTS = (HERE.parent.parent / "shared", Path("/work/shared"), HERE / "data" / "shared")


def shared(relative: str) -> Path:
    """``shared/<relative>``: next to the checkout, else /work/shared, else the copy in tests/data/shared."""
    for root in ROOTS:
        if (root / relative).exists():
            return root / relative
    return ROOTS[-1] / relative
