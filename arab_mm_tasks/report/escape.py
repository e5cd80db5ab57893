"""Values read from run files (model names, task names, countries, answers) made inert in what the report writes.

Run files are untrusted input (a model name is whatever ``pretrained=`` said): written raw, a name like
``<img src=x onerror=...>`` runs script in a Markdown viewer that renders HTML, a ``|`` or a newline
breaks a table, and a CSV cell ``=HYPERLINK(...)`` is a formula in a spreadsheet. One function per
target format, used by every writer of that format; the Markdown one lives in `metric_plugins.markdown`
(metric_plugins imports nothing of ours, and `arab-mm-tasks breakdown`'s table uses it too):

>>> markdown_text("<script>x</script> | *a*")
'&lt;script&gt;x&lt;/script&gt; \\\\| \\\\*a\\\\*'
>>> [csv_cell(v) for v in ("=1+1", "-0.5 [-1.0, 0.0] n=3", -0.5, "@SUM(A1)", "Egypt")]
["'=1+1", '-0.5 [-1.0, 0.0] n=3', -0.5, "'@SUM(A1)", 'Egypt']
"""

from __future__ import annotations

import re
from typing import Any

from metric_plugins.markdown import markdown_text, one_line

__all__ = ["code_fence", "csv_cell", "markdown_text", "one_line"]

# OWASP CSV injection: a cell starting with these is a formula (or becomes one) in Excel / LibreOffice.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\n")
# Cells we compose from numbers: a number, optionally with our interval, item count, flag and unscored count.
_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[-+]?\d+)?|[-+]?inf|nan"
_NUMERIC_CELL = re.compile(
    rf"(?:{_NUMBER})(?: \[(?:{_NUMBER}), (?:{_NUMBER})\] n=\d+)?(?: \(\d+(?:/\d+)? unscored\))?(?: †)?"
)


def code_fence(content: str) -> str:
    """A backtick fence longer than any backtick run in `content`, so the content cannot close it."""
    longest = max((len(run) for run in re.findall(r"`+", content)), default=0)
    return "`" * max(3, longest + 1)


def csv_cell(value: Any) -> Any:
    """A CSV cell that no spreadsheet reads as a formula: a text starting with ``= + - @``, a tab or a line break
    gets a leading apostrophe (OWASP), unless it is one of our numeric cells (``-0.5``, ``-1.2 [-3.0, 0.4] n=8``).
    Numbers (int, float) are written as numbers."""
    if not isinstance(value, str) or not value.startswith(_FORMULA_START):
        return value
    return value if _NUMERIC_CELL.fullmatch(value) else "'" + value
