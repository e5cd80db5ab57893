"""Heatmaps as PNG bytes (matplotlib, no display), sized from their content, with Arabic labels as readable as
English ones.

matplotlib 3.11 lays text out with libraqm (shaping and bidirectional order), so "مصر" is drawn
joined and right to left as given; older versions drew it letter by letter, left to right, which is
why pyproject.toml asks for 3.11. DejaVu Sans, matplotlib's own font, has the Arabic glyphs.

Layout: every text is measured with matplotlib's renderer first (tick labels, cell numbers, title), then
each column is as wide as its widest content (a cell number, or its label when the label fits across, else
the label is turned upright) and each row as tall as a label line, the margins as wide as the longest label.
So labels never overlap, at 1 model or 10, whatever the names. A map wider than it is tall is transposed
(the longer list runs down the page), and one still wider than `MAX_WIDTH` is split into stacked panels of
columns on one colour scale. Model names are drawn short (`short_names`); the tables and the page's
tooltip give them in full.
"""

from __future__ import annotations

import io
import math
import os
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

DPI = 110
FONT = 8  # tick labels (points)
CELL_FONT = 7  # the numbers in the cells
MIN_WIDTH, MAX_WIDTH = 4.0, 24.0  # inches: the floor and the ceiling of a figure's width
MIN_HEIGHT, MAX_HEIGHT = 2.2, 60.0
MAX_LABEL = 48  # characters of a label drawn; a longer one is cut in the middle (the table has it whole)
SHORT_MODEL = 24  # characters of a model name drawn on a figure
_PAD = 0.08  # inches around each text


def short_names(models: Sequence[str], width: int = SHORT_MODEL) -> dict[str, str]:
    """Model name -> the name drawn on figures: without its organisation (``org/``), cut in the middle when
    longer than `width`, and numbered when two would read the same.

    >>> short_names(["meta-llama/Llama-3.3-70B-Instruct", "org/a", "x/a"])
    {'meta-llama/Llama-3.3-70B-Instruct': 'Llama-3.3-70B-Instruct', 'org/a': 'a (1)', 'x/a': 'a (2)'}
    """
    bare = {model: model.rstrip("/").rsplit("/", 1)[-1] or model for model in models}
    short = {model: _cut(name, width) for model, name in bare.items()}
    for model, name in _shown_where_they_differ(bare, short, width).items():
        short[model] = name
    counts: dict[str, int] = {}
    for name in short.values():
        counts[name] = counts.get(name, 0) + 1
    seen: dict[str, int] = {}
    for model, name in short.items():
        if counts[name] > 1:  # still alike: numbered (the page's tooltip names each in full)
            seen[name] = seen.get(name, 0) + 1
            short[model] = f"{name} ({seen[name]})"
    return short


def _shown_where_they_differ(bare: dict[str, str], short: dict[str, str], width: int) -> dict[str, str]:
    """For names whose cut reads the same, a window of `width` characters from a little before where they first
    differ (``…finetune-3-of-a-lo…``)."""
    groups: dict[str, list[str]] = {}
    for model, name in short.items():
        groups.setdefault(name, []).append(model)
    shown: dict[str, str] = {}
    for alike in (group for group in groups.values() if len(group) > 1):
        names = [bare[model] for model in alike]
        start = max(0, len(os.path.commonprefix(names)) - 8)  # noqa: RUF071 (characters, not path parts)
        for model, name in zip(alike, names, strict=True):
            window = name[start : start + width - 2]
            shown[model] = ("…" if start else "") + window + ("…" if start + width - 2 < len(name) else "")
    return shown


def heatmap(
    matrix: Mapping[str, Mapping[str, float]],
    rows: Sequence[str],
    columns: Sequence[str],
    title: str,
    flagged: Mapping[str, set[str]] | None = None,
    digits: int = 1,
    short: Mapping[str, str] | None = None,
) -> bytes:
    """A rows x columns heatmap of ``matrix[row][column]``, each cell annotated; missing cells blank, flagged
    cells (too few items) hatched and their number marked with †. `short`: model name -> the name drawn (a
    label that is a model name, or starts with one and `` · ``, is drawn with the short name). PNG bytes."""
    import matplotlib.pyplot as plt

    figure = heatmap_figure(matrix, rows, columns, title, flagged, digits, short)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI)
    plt.close(figure)
    return buffer.getvalue()


def heatmap_figure(
    matrix: Mapping[str, Mapping[str, float]],
    rows: Sequence[str],
    columns: Sequence[str],
    title: str,
    flagged: Mapping[str, set[str]] | None = None,
    digits: int = 1,
    short: Mapping[str, str] | None = None,
) -> Any:
    """The heatmap as a matplotlib Figure (for `heatmap`, and for tests that measure its texts)."""
    import matplotlib

    matplotlib.use("Agg")
    # labels come from run files: "$...$" in a model name is text, not mathtext (which could fail to parse)
    with matplotlib.rc_context({"text.parse_math": False}):
        return _draw(matrix, rows, columns, title, flagged or {}, digits, short or {})


def _draw(
    matrix: Mapping[str, Mapping[str, float]],
    rows: Sequence[str],
    columns: Sequence[str],
    title: str,
    flagged: Mapping[str, set[str]],
    digits: int,
    short: Mapping[str, str],
) -> Any:
    import matplotlib.pyplot as plt
    import numpy as np

    if not rows or not columns:
        raise ValueError(f"heatmap {title!r}: no rows or no columns")
    values = np.array([[matrix.get(r, {}).get(c, math.nan) for c in columns] for r in rows], dtype=float)
    small = np.array([[c in flagged.get(r, set()) for c in columns] for r in rows], dtype=bool)
    row_labels = [_label(r, short) for r in rows]
    column_labels = [_label(c, short) for c in columns]
    if len(columns) > len(rows):  # the longer list runs down the page, where labels read across
        values, small = values.T, small.T
        row_labels, column_labels = column_labels, row_labels
    texts = [_cell_text(v, s, digits) for v, s in zip(values.flat, small.flat, strict=True)]

    figure = plt.figure(dpi=DPI)
    renderer = figure.canvas.get_renderer()
    label_h = _extent(figure, renderer, row_labels + column_labels, FONT)[1]
    cell_w, cell_h = _extent(figure, renderer, texts or ["0"], CELL_FONT)
    y_label_w = _extent(figure, renderer, row_labels, FONT)[0]
    x_widths = [_extent(figure, renderer, [text], FONT)[0] for text in column_labels]
    row_h = max(0.22, label_h + 2 * _PAD, cell_h + 2 * _PAD)
    # column labels read across when they are short (or there are few columns), else upright
    across = max(x_widths, default=0.0) + 2 * _PAD <= (2.2 if len(column_labels) <= 3 else 1.2)
    col_w = max(0.5, cell_w + 2 * _PAD, (max(x_widths, default=0.0) + 2 * _PAD) if across else label_h + 2 * _PAD)
    x_label_h = label_h if across else max(x_widths, default=0.0)
    left = y_label_w + 3 * _PAD
    colorbar = 0.9  # inches right of the map: the colour bar and its numbers
    per_panel = max(1, int((MAX_WIDTH - left - colorbar) // col_w))
    panels = [list(range(start, min(start + per_panel, len(column_labels))))
              for start in range(0, max(1, len(column_labels)), per_panel)]  # fmt: skip
    map_w = col_w * max(1, max(len(p) for p in panels))
    width = min(MAX_WIDTH, max(MIN_WIDTH, left + map_w + colorbar))
    title_lines, title_h = _title(title, width)
    if title_h + (len(row_labels) * row_h + x_label_h + 3 * _PAD) * len(panels) > MAX_HEIGHT:
        # past the ceiling: the first rows (and panels) that fit are drawn, and the title says so
        title_lines, title_h = _title(f"{title} (the first rows and columns that fit; the table has all)", width)
        panels = panels[: max(1, int((MAX_HEIGHT - title_h) // (x_label_h + 3 * _PAD + row_h)))]
        fit = int(((MAX_HEIGHT - title_h) / len(panels) - x_label_h - 3 * _PAD) // row_h)
        row_labels = row_labels[: max(1, fit)]
    panel_h = len(row_labels) * row_h + x_label_h + 3 * _PAD
    height = min(MAX_HEIGHT, max(MIN_HEIGHT, title_h + panel_h * len(panels)))
    figure.set_size_inches(width, height)

    finite = values[np.isfinite(values)]
    low, high = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    middle = (low + high) / 2
    image = None
    top = height - title_h
    for panel in panels:
        bottom = top - len(row_labels) * row_h
        axes = figure.add_axes((left / width, bottom / height, col_w * len(panel) / width, (top - bottom) / height))
        shown = np.ma.masked_invalid(values[: len(row_labels), panel])
        image = axes.imshow(shown, aspect="auto", cmap="viridis", vmin=low, vmax=high)
        axes.set_xticks(range(len(panel)), [column_labels[j] for j in panel], rotation=0 if across else 90,
                        ha="center", va="top", fontsize=FONT)  # fmt: skip
        axes.set_yticks(range(len(row_labels)), row_labels, fontsize=FONT)
        for i in range(len(row_labels)):
            for x, j in enumerate(panel):
                if math.isnan(values[i, j]):
                    continue
                if small[i, j]:
                    # a light hatch: the number stays readable over it
                    axes.add_patch(plt.Rectangle((x - 0.5, i - 0.5), 1, 1, fill=False, hatch="//", linewidth=0,
                                                 edgecolor=(1, 1, 1, 0.45)))  # fmt: skip
                axes.text(x, i, texts[i * values.shape[1] + j], ha="center", va="center", fontsize=CELL_FONT,
                          color="black" if values[i, j] > middle else "white")  # fmt: skip
        top = bottom - x_label_h - 3 * _PAD
    if image is not None:
        bar_h = min(height - title_h - 0.3, max(1.0, len(row_labels) * row_h))
        bar = figure.add_axes(((left + map_w + 0.15) / width, (height - title_h - bar_h) / height, 0.15 / width,
                               bar_h / height))  # fmt: skip
        figure.colorbar(image, cax=bar)
        bar.tick_params(labelsize=FONT)
    figure.suptitle("\n".join(title_lines), fontsize=10, y=1 - _PAD / height, va="top")
    return figure


def _title(title: str, width: float) -> tuple[list[str], float]:
    """The title's lines wrapped to the figure's width, and their height in inches."""
    lines = textwrap.wrap(_one_line(title), max(20, int((width - 0.4) * 72 / (0.6 * 10)))) or [""]
    return lines, len(lines) * 10 / 72 * 1.35 + 2 * _PAD


def _extent(figure: Any, renderer: Any, texts: Sequence[str], size: float) -> tuple[float, float]:
    """The widest and tallest of `texts` drawn at `size` points, in inches (0, 0 for none)."""
    width = height = 0.0
    for text in set(texts):  # cell numbers repeat: each distinct text measured once
        artist = figure.text(0, 0, text, fontsize=size)
        box = artist.get_window_extent(renderer)
        artist.remove()
        width, height = max(width, box.width / DPI), max(height, box.height / DPI)
    return width, height


def _cell_text(value: float, small: bool, digits: int) -> str:
    return "" if math.isnan(value) else f"{value:.{digits}f}{'†' if small else ''}"


def _label(text: str, short: Mapping[str, str]) -> str:
    """A label as drawn: a model name (or ``model · split``) by its short name; from run files, on one line,
    control characters (tab, CR) as spaces; at most `MAX_LABEL` characters."""
    text = str(text)
    for full in sorted(short, key=len, reverse=True):
        if text == full or text.startswith(f"{full} · "):
            text = short[full] + text[len(full) :]
            break
    return _cut(_one_line(text), MAX_LABEL)


def _one_line(text: str) -> str:
    """Text from run files on one line, control characters (tab, CR) as spaces: drawn as text."""
    return "".join(" " if not ch.isprintable() else ch for ch in " ".join(str(text).splitlines()))


def _cut(text: str, width: int) -> str:
    """`text` cut in the middle to `width` characters (``Qwen2.5-VL-72B…truct-AWQ``)."""
    if len(text) <= width:
        return text
    head = (width - 1) * 3 // 5
    return text[:head] + "…" + text[len(text) - (width - 1 - head) :]
