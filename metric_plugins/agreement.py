"""
Agreement between automatic scores and human ratings, and among human raters.

Three statistics, one per paper that validates its metrics or its judge against people:

- `kendall_tau_c`: JEEM's meta-evaluation. "we measure the quality of automatic evaluation
  metrics against human evaluation scores using Kendall's Tau-c" (JEEM L188); Table 3's
  tau_c row prints it x100 (40.63 in the table is "0.41" in the text, L198). Computed by
  `scipy.stats.kendalltau(..., variant="c")`, which also gives the p-value.
- `icc3`: Pearl's reliability study (L154): ICC(3,1) and ICC(3,k) of Shrout & Fleiss (1979)
  (McGraw & Wong's case 3, consistency, two-way mixed), each with its 95% confidence interval,
  printed raw to two or three decimals ("ICC(3,1) = 0.537, 95% CI [0.42, 0.65]"). No
  maintained Python package with these intervals is a dependency of ours (pingouin is not),
  so the ANOVA mean squares are computed here and the F quantiles, intervals and p-value come
  from `scipy.stats.f`, with Shrout & Fleiss's formulas.
- `krippendorff_alpha`: ARB's human validation (L179): alpha among the three annotators
  (83.56%) and again with GPT-4o's judgments added as a fourth rater (87.62%), printed as a
  percentage. Computed by the `krippendorff` package, which handles missing ratings.

Every function returns the raw coefficient (-1..1); `x100` gives the percentage JEEM and ARB
print. Ratings matrices are items x raters (one row per item, one column per rater), as in
Shrout & Fleiss's Table 2. Missing ratings are NaN: Krippendorff's alpha is defined with them;
ICC is not, so `icc3` refuses them unless asked (`missing="drop"`) to drop the incomplete
items, and then reports how many it dropped.

Examples:
    >>> round(kendall_tau_c([1, 2, 3, 4, 5], [1, 3, 2, 5, 4]).value, 4)  # 8 concordant, 2 discordant
    0.6
    >>> single, average = icc3([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]])
    >>> round(single.value, 2), round(average.value, 2)  # Shrout & Fleiss (1979), Table 2 data
    (0.71, 0.91)
    >>> round(single.ci_low, 3), round(single.ci_high, 2)
    (0.342, 0.95)
    >>> alpha = krippendorff_alpha([[0, 1], [1, 1], [0, 1], [0, 0], [0, 0], [0, 1], [0, 0], [0, 0], [1, 0], [0, 0]],
    ...                            level="nominal")
    >>> x100(alpha)
    9.52
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

Level = Literal["nominal", "ordinal", "interval", "ratio"]
LEVELS: tuple[str, ...] = ("nominal", "ordinal", "interval", "ratio")


@dataclass(frozen=True)
class Correlation:
    """A rank correlation, its two-sided p-value and the number of items it was computed on."""

    value: float
    pvalue: float
    n: int


@dataclass(frozen=True)
class ICC:
    """One intraclass correlation with its confidence interval and F test (H0: ICC = 0).

    `n_dropped` counts the items left out because a rating was missing (`missing="drop"`).
    """

    kind: str  # "ICC(3,1)" or "ICC(3,k)"
    value: float
    ci_low: float
    ci_high: float
    confidence: float
    f: float
    df1: int
    df2: int
    pvalue: float
    n_items: int
    n_raters: int
    n_dropped: int = 0


def x100(value: float, digits: int = 2) -> float:
    """A coefficient as the percentage JEEM (tau-c) and ARB (alpha) print, rounded to `digits`.

    >>> x100(0.40627)
    40.63
    """
    return round(100.0 * value, digits)


def _vector(values: Sequence[float], name: str) -> np.ndarray:
    """A 1-D float array; a missing or non-finite entry is an error naming its index."""
    array = np.asarray(values, dtype=float)
    if array.ndim != 1:
        raise ValueError(f"{name}: expected one score per item, got an array of shape {array.shape}")
    bad = np.flatnonzero(~np.isfinite(array))
    if bad.size:
        raise ValueError(f"{name}[{bad[0]}]: {array[bad[0]]} is not a finite number")
    return array


def kendall_tau_c(x: Sequence[float], y: Sequence[float]) -> Correlation:
    """Stuart's tau-c between two score lists (JEEM L188), with scipy's two-sided p-value.

    tau_c = 2 (C - D) / (n^2 (m - 1) / m), m = the smaller number of distinct values on either side.
    Undefined (an error) when either side is constant. Missing values are an error: JEEM pairs
    each caption's metric score with its human score, so a pair with a hole is a data problem.
    """
    from scipy import stats

    xs, ys = _vector(x, "x"), _vector(y, "y")
    if xs.size != ys.size:
        raise ValueError(f"x has {xs.size} items but y has {ys.size}")
    if xs.size < 2:
        raise ValueError(f"tau-c needs at least 2 items, got {xs.size}")
    for name, array in (("x", xs), ("y", ys)):
        if np.all(array == array[0]):
            raise ValueError(f"{name} is constant ({array[0]:g} for all {array.size} items): tau-c is undefined")
    result = stats.kendalltau(xs, ys, variant="c")
    return Correlation(value=float(result.statistic), pvalue=float(result.pvalue), n=int(xs.size))


def _matrix(ratings: Sequence[Sequence[float]] | np.ndarray) -> np.ndarray:
    """Items x raters as floats (None -> NaN); a ragged or 1-D input is an error."""
    try:
        array = np.array(ratings, dtype=float)
    except (TypeError, ValueError) as error:
        raise ValueError(f"ratings must be an items x raters table of numbers: {error}") from None
    if array.ndim != 2:
        raise ValueError(f"ratings must be an items x raters table, got an array of shape {array.shape}")
    infinite = np.argwhere(np.isinf(array))
    if infinite.size:
        item, rater = infinite[0]
        raise ValueError(f"ratings[{item}][{rater}]: {array[item, rater]} is not a finite number")
    return array


def icc3(
    ratings: Sequence[Sequence[float]] | np.ndarray,
    *,
    confidence: float = 0.95,
    missing: Literal["error", "drop"] = "error",
) -> tuple[ICC, ICC]:
    """ICC(3,1) and ICC(3,k) (Shrout & Fleiss 1979, case 3; McGraw & Wong ICC(C,1), ICC(C,k)).

    `ratings` is items x raters. From the two-way ANOVA without replication: BMS (between items),
    EMS (residual), F = BMS / EMS on (n-1, (n-1)(k-1)) degrees of freedom;
    ICC(3,1) = (BMS - EMS) / (BMS + (k-1) EMS) and ICC(3,k) = (BMS - EMS) / BMS. The interval uses
    F_L = F / F_{1-a/2}(n-1, (n-1)(k-1)) and F_U = F * F_{1-a/2}((n-1)(k-1), n-1):
    ICC(3,1) in [(F_L-1)/(F_L+k-1), (F_U-1)/(F_U+k-1)], ICC(3,k) in [1-1/F_L, 1-1/F_U].

    A missing rating (NaN) is an error naming the item and rater, unless `missing="drop"`: then
    the incomplete items are left out (listwise, as R's psych::ICC does) and `n_dropped` says how many.
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    if missing not in ("error", "drop"):
        raise ValueError(f"missing must be 'error' or 'drop', got {missing!r}")
    from scipy import stats

    table = _matrix(ratings)
    holes = np.isnan(table)
    n_dropped = 0
    if holes.any():
        if missing == "error":
            item, rater = np.argwhere(holes)[0]
            raise ValueError(
                f"ratings[{item}][{rater}] is missing ({int(holes.any(axis=1).sum())} incomplete items): "
                "ICC needs every rater on every item; pass missing='drop' to leave incomplete items out"
            )
        complete = ~holes.any(axis=1)
        n_dropped = int((~complete).sum())
        table = table[complete]
    n, k = table.shape
    if n < 2 or k < 2:
        raise ValueError(f"ICC needs at least 2 items and 2 raters, got {n} complete items x {k} raters")

    grand = table.mean()
    ss_items = k * float(((table.mean(axis=1) - grand) ** 2).sum())
    ss_raters = n * float(((table.mean(axis=0) - grand) ** 2).sum())
    ss_error = float(((table - grand) ** 2).sum()) - ss_items - ss_raters
    df1, df2 = n - 1, (n - 1) * (k - 1)
    bms, ems = ss_items / df1, max(ss_error, 0.0) / df2  # rounding can leave -1e-15 for a perfect fit
    if math.isclose(ems, 0.0, abs_tol=1e-12 * max(bms, 1.0)):
        if math.isclose(bms, 0.0, abs_tol=1e-12):
            raise ValueError("every item got the same ratings: no variance, ICC is undefined")
        # The raters agree perfectly up to a constant shift: consistency is exactly 1.
        perfect = dict(value=1.0, ci_low=1.0, ci_high=1.0, f=math.inf, pvalue=0.0)
        shared = dict(confidence=confidence, df1=df1, df2=df2, n_items=n, n_raters=k, n_dropped=n_dropped)
        return ICC("ICC(3,1)", **perfect, **shared), ICC("ICC(3,k)", **perfect, **shared)

    f_value = bms / ems
    tail = (1 - confidence) / 2
    f_low = f_value / float(stats.f.ppf(1 - tail, df1, df2))
    f_high = f_value * float(stats.f.ppf(1 - tail, df2, df1))
    pvalue = float(stats.f.sf(f_value, df1, df2))
    shared = dict(confidence=confidence, f=f_value, df1=df1, df2=df2, pvalue=pvalue, n_items=n, n_raters=k)
    single = ICC(
        "ICC(3,1)",
        value=(bms - ems) / (bms + (k - 1) * ems),
        ci_low=(f_low - 1) / (f_low + k - 1),
        ci_high=(f_high - 1) / (f_high + k - 1),
        n_dropped=n_dropped,
        **shared,
    )
    average = ICC(
        "ICC(3,k)",
        value=(bms - ems) / bms,
        ci_low=1 - 1 / f_low,
        ci_high=1 - 1 / f_high,
        n_dropped=n_dropped,
        **shared,
    )
    return single, average


def krippendorff_alpha(ratings: Sequence[Sequence[float]] | np.ndarray, *, level: Level = "interval") -> float:
    """Krippendorff's alpha over an items x raters table (NaN = not rated), by the `krippendorff` package.

    `level` is the level of measurement (its distance metric). The default, "interval", is the
    package's own default; ARB (L179) does not say which level it used. Items with fewer than
    two ratings are not pairable and do not count, as Krippendorff defines.
    """
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}, got {level!r}")
    import krippendorff

    table = _matrix(ratings)
    if table.shape[1] < 2:
        raise ValueError(f"Krippendorff's alpha needs at least 2 raters, got {table.shape[1]}")
    pairable = int((np.sum(~np.isnan(table), axis=1) >= 2).sum())
    if pairable == 0:
        raise ValueError("no item has two ratings: Krippendorff's alpha is undefined")
    values = np.unique(table[~np.isnan(table)])
    if values.size < 2:
        raise ValueError(f"every rating is {values[0]:g}: Krippendorff's alpha is undefined (no variation)")
    # The package wants raters x items ("reliability data": one row per coder).
    return float(krippendorff.alpha(reliability_data=table.T, level_of_measurement=level))


def human_consensus(human_ratings: Sequence[float | Sequence[float | None] | None]) -> np.ndarray:
    """Per item, the mean of the ratings it has (Pearl's "consensus human ratings (averaged across
    the four annotators)", L154). One number per item is taken as is; None/NaN is a missing rating.
    An item with no rating at all is an error naming its index.
    """
    table = _ratings_table(human_ratings)
    unrated = np.flatnonzero(np.isnan(table).all(axis=1))
    if unrated.size:
        raise ValueError(f"human_ratings[{unrated[0]}]: no rating")
    return np.nanmean(table, axis=1)


def _ratings_table(human_ratings: Sequence[float | Sequence[float | None] | None]) -> np.ndarray:
    """Items x annotators from one rating per item or one list per item (all lists the same length)."""
    rows = [row if isinstance(row, (list, tuple, np.ndarray)) else [row] for row in human_ratings]
    widths = {len(row) for row in rows}
    if len(widths) > 1:
        raise ValueError(f"human_ratings: every item needs the same number of annotators, got {sorted(widths)}")
    return _matrix([[math.nan if value is None else value for value in row] for row in rows])


def judge_agreement(
    scores: Sequence[float],
    human_ratings: Sequence[float | Sequence[float | None] | None],
    *,
    level: Level = "interval",
    confidence: float = 0.95,
    missing: Literal["error", "drop"] = "error",
) -> dict[str, float]:
    """All three statistics for one judge (or metric) against human ratings, on the papers' scales.

    `scores` holds one score per item; `human_ratings` one rating per item or, for several
    annotators, one list per item (None = not rated). Returns:

    - ``kendall_tau_c`` (x100, JEEM) and its ``kendall_tau_c_pvalue``, against the human consensus;
    - ``icc3_1`` with ``icc3_1_ci_low``/``icc3_1_ci_high`` (raw, Pearl): the judge vs the consensus;
    - ``krippendorff_alpha`` (x100, ARB): the annotators plus the judge as one more rater;
    - with two or more annotators, the humans alone: ``icc3_1_humans``, ``icc3_k_humans`` (each
      with its CI) and ``krippendorff_alpha_humans`` (x100).

    ICC and alpha compare values, so they only mean something when the judge rates on the humans' scale.

    >>> result = judge_agreement([4, 2, 5, 3], [[4, 5], [2, 2], [5, 4], [3, 3]])
    >>> result["kendall_tau_c"], round(result["icc3_1"], 3)
    (93.75, 0.947)
    """
    judge = _vector(scores, "scores")
    humans = _ratings_table(human_ratings)
    if judge.size != humans.shape[0]:
        raise ValueError(f"scores has {judge.size} items but human_ratings has {humans.shape[0]}")
    target = human_consensus(human_ratings)
    tau = kendall_tau_c(judge, target)
    pair, _ = icc3(np.column_stack([judge, target]), confidence=confidence)
    alpha = krippendorff_alpha(np.column_stack([humans, judge]), level=level)
    result = {
        "kendall_tau_c": x100(tau.value),
        "kendall_tau_c_pvalue": tau.pvalue,
        "icc3_1": pair.value,
        "icc3_1_ci_low": pair.ci_low,
        "icc3_1_ci_high": pair.ci_high,
        "krippendorff_alpha": x100(alpha),
    }
    if humans.shape[1] >= 2:
        single, average = icc3(humans, confidence=confidence, missing=missing)
        for name, icc in (("icc3_1_humans", single), ("icc3_k_humans", average)):
            result.update({name: icc.value, f"{name}_ci_low": icc.ci_low, f"{name}_ci_high": icc.ci_high})
        result["krippendorff_alpha_humans"] = x100(krippendorff_alpha(humans, level=level))
    return result
