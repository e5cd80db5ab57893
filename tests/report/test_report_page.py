"""The report's heatmaps at 1 to 10 models (issue 24.9): sized from their content within a floor and a ceiling,
no two labels overlapping (as matplotlib's renderer measures them), short model names on figures and the full
names on the page."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arab_mm_tasks.core.countries import ARAB_COUNTRIES, ARABIC_NAME
from arab_mm_tasks.report.plots import (
    MAX_HEIGHT,
    MAX_WIDTH,
    MIN_HEIGHT,
    MIN_WIDTH,
    SHORT_MODEL,
    heatmap_figure,
    short_names,
)

COUNTRIES = [f"{c} · {ARABIC_NAME[c]}" for c in ARAB_COUNTRIES[:13]]  # ArabCulture's 13, as the report labels them


def _models(n: int) -> list[str]:
    """Long names, alike at both ends (the worst case for short names)."""
    return [f"an-organisation-with-a-long-name/Qwen2.5-VL-72B-Instruct-finetune-{i}-of-a-long-series-v3" for i in
            range(n)]  # fmt: skip


def _matrix(rows: list[str], columns: list[str]) -> dict[str, dict[str, float]]:
    return {r: {c: (7.0 * i + 3.0 * j) % 100 for j, c in enumerate(columns)} for i, r in enumerate(rows)}


def _figure(rows: list[str], columns: list[str], title: str = "ArabCulture MCQ accuracy (%) by country", **kw):
    figure = heatmap_figure(_matrix(rows, columns), rows, columns, title, **kw)
    figure.canvas.draw()
    return figure


def _texts(figure) -> list:
    """Every tick label (maps and colour bar) and every cell number, with its extent in pixels."""
    renderer = figure.canvas.get_renderer()
    texts = []
    for axes in figure.axes:
        for axis in (axes.xaxis, axes.yaxis):
            low, high = sorted(axis.get_view_interval())
            for tick in axis.get_major_ticks():  # the ticks drawn: those inside the axis's range
                label = tick.label1
                if label.get_visible() and label.get_text() and low - 1e-9 <= tick.get_loc() <= high + 1e-9:
                    texts.append((label.get_text(), label.get_window_extent(renderer)))
        texts += [(t.get_text(), t.get_window_extent(renderer)) for t in axes.texts]
    return texts


def _assert_readable(figure) -> None:
    """No two texts overlap and every text lies inside the figure."""
    width, height = figure.get_size_inches() * figure.dpi
    texts = _texts(figure)
    assert texts
    for text, box in texts:
        assert box.x0 >= -0.5 and box.y0 >= -0.5 and box.x1 <= width + 0.5 and box.y1 <= height + 0.5, text
    boxes = np.array([[box.x0, box.y0, box.x1, box.y1] for _, box in texts])
    for i in range(len(boxes) - 1):  # every pair, one row of pairs at a time
        rest = boxes[i + 1 :]
        overlap_w = np.minimum(boxes[i, 2], rest[:, 2]) - np.maximum(boxes[i, 0], rest[:, 0])
        overlap_h = np.minimum(boxes[i, 3], rest[:, 3]) - np.maximum(boxes[i, 1], rest[:, 1])
        hits = np.flatnonzero((overlap_w > 0.5) & (overlap_h > 0.5))  # half a pixel: touching, not overlapping
        assert not hits.size, (texts[i][0], texts[i + 1 + hits[0]][0])


@pytest.mark.parametrize("n", [1, 10])
def test_breakdown_heatmap_labels_never_overlap_with_long_model_names(n):
    models = _models(n)
    figure = _figure(models, COUNTRIES, short=short_names(models))  # a breakdown: models x countries
    try:
        _assert_readable(figure)
        drawn = {text for text, _ in _texts(figure)}
        assert set(short_names(models).values()) <= drawn  # the short names, not the 90-character ones
        assert not any(model in drawn for model in models)
    finally:
        plt.close(figure)


@pytest.mark.parametrize("n", [1, 10])
def test_cs_split_heatmap_is_readable_at_1_and_10_models(n):
    """ArabCulture Table 4: 17 locations x (model · CS / ¬CS), once a 26-column strip of squashed labels."""
    columns = [f"{model} · {split}" for model in _models(n) for split in ("CS", "¬CS")]
    locations = ["Gulf", *(f"Gulf › {c}" for c in COUNTRIES[:3]), "Levant", *(f"Levant › {c}" for c in COUNTRIES[3:7]),
                 "Nile Valley", *(f"Nile Valley › {c}" for c in COUNTRIES[7:9]), "North Africa",
                 *(f"North Africa › {c}" for c in COUNTRIES[9:])]  # fmt: skip
    figure = _figure(columns, locations, short=short_names(_models(n)))
    try:
        _assert_readable(figure)
        assert figure.get_size_inches()[0] <= MAX_WIDTH and figure.get_size_inches()[1] <= MAX_HEIGHT
    finally:
        plt.close(figure)


def _size(rows: list[str], columns: list[str]) -> tuple[float, float]:
    figure = _figure(rows, columns)
    try:
        return tuple(figure.get_size_inches())
    finally:
        plt.close(figure)


def test_figure_size_grows_with_rows_columns_and_the_longest_label():
    countries = COUNTRIES[:6]
    base = _size(countries, ["m1", "m2", "m3", "m4"])
    more_rows = _size(COUNTRIES[:12], ["m1", "m2", "m3", "m4"])
    more_columns = _size(countries, [f"m{i}" for i in range(1, 13)])
    longer_label = _size([*countries[:3], "Levant › Palestine · فلسطين, West Bank and Gaza"], ["m1", "m2", "m3"])
    shorter_label = _size([*countries[:3], "Iraq"], ["m1", "m2", "m3"])
    assert more_rows[1] > base[1] and more_rows[0] == pytest.approx(base[0], abs=0.3)
    # a map wider than tall is transposed: more columns than rows run down the page
    assert more_columns[1] > base[1]
    assert longer_label[0] > shorter_label[0]


def test_figure_size_has_a_floor_and_a_ceiling():
    tiny = _size(["a"], ["b"])
    assert tiny == (pytest.approx(MIN_WIDTH), pytest.approx(MIN_HEIGHT))
    many = [f"group {i}" for i in range(300)]  # 300 rows need ~66 inches
    figure = _figure(many, ["model 1", "model 2"])
    try:
        width, height = figure.get_size_inches()
        assert width <= MAX_WIDTH + 1e-6 and height <= MAX_HEIGHT + 1e-6
        _assert_readable(figure)  # what does not fit is left out (the title says so), never drawn on top
        assert "the table has all" in " ".join(figure.get_suptitle().split())
    finally:
        plt.close(figure)


def test_a_wide_map_is_split_into_panels_on_one_colour_scale():
    groups = [f"group {i}" for i in range(55)]  # 55 columns of half an inch: wider than the ceiling
    figure = _figure([f"m{i}" for i in range(60)], groups)
    try:
        maps = [axes for axes in figure.axes if axes.images]
        assert len(maps) > 1  # stacked panels, not one squashed strip
        assert len({axes.images[0].get_clim() for axes in maps}) == 1
        _assert_readable(figure)
    finally:
        plt.close(figure)


@settings(max_examples=20, deadline=None)
@given(models=st.lists(st.text(min_size=1, max_size=80), min_size=1, max_size=10, unique=True))
def test_short_names_are_distinct_and_short(models):
    short = short_names(models)
    assert list(short) == models
    assert len(set(short.values())) == len(models)
    assert all(len(name) <= SHORT_MODEL + 5 for name in short.values())  # "(10)" at most after the cut


def test_the_page_names_every_short_name_in_full(tmp_path):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parents[1]))
    from report_fixtures import make_run, write_lm_eval

    from arab_mm_tasks.cli import main

    models = _models(2)
    for seed, model in enumerate(models):
        write_lm_eval(make_run(model, "lm-eval", seed), tmp_path / "runs")
    assert main(["report", str(tmp_path / "runs"), "--out", str(tmp_path / "out"), "--min-items", "3"]) == 0
    page = (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
    for model, name in short_names(models).items():
        assert f"{name} = {model}" in page  # in the figures' tooltips and the line under the model list
    assert page.count("(models drawn as ") == page.count("<img ")


def test_summary_with_one_ranked_country_at_10_models_is_not_squashed():
    """The "summary by country and model" heatmap with one country ranked: once a strip a few pixels tall."""
    models = _models(10)
    summaries = {COUNTRIES[0]: {model: 10.0 * i for i, model in enumerate(models)}}
    figure = heatmap_figure(summaries, [COUNTRIES[0]], models, "summary by country and model",
                            short=short_names(models))  # fmt: skip
    try:
        figure.canvas.draw()
        (axes,) = [axes for axes in figure.axes if axes.images]
        box = axes.get_window_extent(figure.canvas.get_renderer())
        assert box.height / 10 >= 0.2 * figure.dpi and box.width >= 0.45 * figure.dpi  # every cell 0.2 in or more
        _assert_readable(figure)
    finally:
        plt.close(figure)
