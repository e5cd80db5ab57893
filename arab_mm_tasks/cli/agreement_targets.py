"""Human targets of ``arab-mm-tasks agreement``: what a metric is correlated with, built from rating columns.

A target is ``NAME=EXPR`` (``--target``), where EXPR is a rating column or a function of
expressions: ``mean(...)`` and ``median(...)`` over the values an item has (an empty cell is a
missing rating), ``hmean(...)`` the harmonic mean (an item missing any argument has none). JEEM
correlates DCScore with "the harmonic mean of human Consistency and Relevance scores" (L198) and
ALDi and the judge's DAuth with human dialect authenticity (L200); with three annotators a column:

    --target "conrel=hmean(mean(con_1,con_2,con_3),mean(rel_1,rel_2,rel_3))"
    --target "dauth=mean(dauth_1,dauth_2,dauth_3)"

Examples:
    >>> import numpy as np
    >>> target = Target.parse("conrel=hmean(mean(c1,c2),r)")
    >>> target.columns()
    ['c1', 'c2', 'r']
    >>> ratings = {"c1": np.array([4.0, 2.0]), "c2": np.array([2.0, np.nan]), "r": np.array([6.0, 2.0])}
    >>> target.values(ratings, ["a", "b"])  # a: hmean(3, 6); b: hmean(2, 2)
    array([4., 2.])
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

FUNCTIONS = ("mean", "median", "hmean")
_TOKEN = re.compile(r"[(),]|[^(),]+")
Tree = Any  # a column name, or (function, (argument trees...))
# Bounds on an expression typed on a command line (JEEM's own is 2 deep, ~70 characters). They keep the
# recursive parser, `columns` and `_evaluate` far from Python's recursion limit, and messages short.
MAX_DEPTH = 32  # nested function calls
MAX_CHARS = 10_000
SHOWN = 80  # characters of an expression or token quoted in a message


class TargetError(ValueError):
    """A target that cannot be parsed or computed: one line naming the target (and the item)."""


def _parse(text: str, name: str) -> Tree:
    """The tree of `text`, in one pass over its tokens (linear); a `TargetError` line for anything else."""
    shown = text if len(text) <= SHOWN else text[:SHOWN] + "..."

    def fail(what: str) -> TargetError:
        return TargetError(f"--target {name[:SHOWN]}={shown}: {what}")

    if len(text) > MAX_CHARS:
        raise fail(f"{len(text):,} characters; a target expression has at most {MAX_CHARS:,}")
    tokens = [token.strip() for token in _TOKEN.findall(text) if token.strip()]
    position = 0

    def expression(depth: int) -> Tree:
        nonlocal position
        if position >= len(tokens) or tokens[position] in ("(", ")", ","):
            raise fail("expected a column or a function")
        word = tokens[position]
        position += 1
        if position < len(tokens) and tokens[position] == "(":
            if word not in FUNCTIONS:
                raise fail(f"unknown function {word[:SHOWN]!r} (known: {', '.join(FUNCTIONS)})")
            if depth >= MAX_DEPTH:
                raise fail(f"functions nested more than {MAX_DEPTH} deep")
            position += 1
            arguments = [expression(depth + 1)]
            while position < len(tokens) and tokens[position] == ",":
                position += 1
                arguments.append(expression(depth + 1))
            if position >= len(tokens) or tokens[position] != ")":
                raise fail(f"{word}( is not closed")
            position += 1
            return word, tuple(arguments)
        return word

    tree = expression(0)
    if position != len(tokens):
        raise fail(f"unexpected {tokens[position][:SHOWN]!r}")
    return tree


@dataclass(frozen=True)
class Target:
    """A named human target and the expression that computes it per item."""

    name: str
    text: str
    tree: Tree

    @classmethod
    def parse(cls, spec: str) -> Target:
        name, sep, text = spec.partition("=")
        name, text = name.strip(), text.strip()
        if not (sep and name and text):
            raise TargetError(
                f"--target takes NAME=EXPR, e.g. conrel=hmean(consistency,relevance), got {spec[:SHOWN]!r}"
            )
        return cls(name, text, _parse(text, name))

    @classmethod
    def aggregate(cls, name: str, how: str, columns: Sequence[str]) -> Target:
        """The per-item mean (or median) of rating columns (``--humans``)."""
        return cls(name, f"{how}({', '.join(columns)})", (how, tuple(columns)))

    def columns(self) -> list[str]:
        found: list[str] = []

        def walk(tree: Tree) -> None:
            if isinstance(tree, str):
                if tree not in found:
                    found.append(tree)
            else:
                for argument in tree[1]:
                    walk(argument)

        walk(self.tree)
        return found

    def values(self, columns: Mapping[str, np.ndarray], ids: Sequence[Any]) -> np.ndarray:
        """The target per item (NaN where an item has no value)."""
        return self._evaluate(self.tree, columns, ids)

    def _evaluate(self, tree: Tree, columns: Mapping[str, np.ndarray], ids: Sequence[Any]) -> np.ndarray:
        import numpy as np

        if isinstance(tree, str):
            return np.asarray(columns[tree], dtype=float)
        function, arguments = tree
        stacked = np.column_stack([self._evaluate(a, columns, ids) for a in arguments])
        if function == "hmean":
            negative = np.argwhere(stacked < 0)
            if negative.size:
                raise TargetError(f"target {self.name!r}: item {ids[negative[0][0]]!r} has a negative rating")
            with np.errstate(divide="ignore"):
                result = stacked.shape[1] / np.sum(1.0 / stacked, axis=1)  # a 0 rating gives 0, NaN stays NaN
            return np.where(np.isnan(stacked).any(axis=1), np.nan, result)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # an item with no rating at all: NaN, reported later
            return np.nanmedian(stacked, axis=1) if function == "median" else np.nanmean(stacked, axis=1)
