"""Heatmaps as PNG bytes (matplotlib, no display), with Arabic labels as readable as English ones.

matplotlib 3.11 lays text out with libraqm (shaping and bidirectional order), so "مصر" is drawn
joined and right to left as given; older versions drew it letter by letter, left to right, which is
why pyproject.toml asks for 3.11. DejaVu Sans, matplotlib's own font, has the Arabic glyphs.
"""

from __future__ import annotations

import io
import math
import textwrap
from collections.abc import Mapping, Sequence


def heatmap(
    matrix: Mapping[str, Mapping[str, float]],
    rows: Sequence[str],
    columns: Sequence[str],
    title: str,
    flagged: Mapping[str, set[str]] | None = None,
    digits: int = 1,
) -> bytes:
    """A rows x columns heatmap of ``matrix[row][column]``, each cell annotated; missing cells blank, flagged
    cells (too few items) hatched and their number marked with †. Returns PNG bytes."""
    import matplotlib

    matplotlib.use("Agg")
    # labels come from run files: "$...$" in a model name is text, not mathtext (which could fail to parse)
    with matplotlib.rc_context({"text.parse_math": False}):
        return _draw(matrix, rows, columns, title, flagged, digits)


def _draw(
    matrix: Mapping[str, Mapping[str, float]],
    rows: Sequence[str],
    columns: Sequence[str],
    title: str,
    flagged: Mapping[str, set[str]] | None,
    digits: int,
) -> bytes:
    import matplotlib.pyplot as plt
    import numpy as np

    values = np.array([[matrix.get(r, {}).get(c, math.nan) for c in columns] for r in rows], dtype=float)
    width = min(28.0, max(6.5, 2.5 + 0.9 * len(columns)))
    height = min(24.0, 1.6 + 0.45 * len(rows))
    figure, axes = plt.subplots(figsize=(width, height), dpi=110)
    shown = np.ma.masked_invalid(values)
    image = axes.imshow(shown, aspect="auto", cmap="viridis")
    figure.colorbar(image, ax=axes, fraction=0.03, pad=0.02)
    axes.set_xticks(range(len(columns)), [_label(c) for c in columns], rotation=45, ha="right", fontsize=8)
    axes.set_yticks(range(len(rows)), [_label(r) for r in rows], fontsize=8)
    axes.set_title("\n".join(textwrap.wrap(_label(title), 70)), fontsize=10)
    finite = values[np.isfinite(values)]
    middle = (finite.min() + finite.max()) / 2 if finite.size else 0.0
    for i, row in enumerate(rows):
        for j, column in enumerate(columns):
            value = values[i, j]
            if math.isnan(value):
                continue
            small = bool(flagged and column in flagged.get(row, set()))
            if small:
                axes.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, hatch="///", edgecolor="white"))
            color = "black" if value > middle else "white"
            axes.text(j, i, f"{value:.{digits}f}{'†' if small else ''}", ha="center", va="center", fontsize=7,
                      color=color)  # fmt: skip
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    plt.close(figure)
    return buffer.getvalue()


def _label(text: str) -> str:
    """A label from run files on one line, control characters (tab, CR) as spaces: drawn as text."""
    return "".join(" " if not ch.isprintable() else ch for ch in " ".join(str(text).splitlines()))
