"""Text from run files and datasets made literal in Markdown: the one escaping rule for every Markdown table
the package writes (`metric_plugins.breakdowns.format_table`, `arab-mm-tasks report`'s tables and cards).

Run files are untrusted input: a model name, a task name or a document field is whatever the run or the
release said. Written raw, ``<img src=x onerror=...>`` runs script in a Markdown viewer that renders HTML,
a ``|`` or a line break splits a table, ``*`` or ``[x](y)`` changes the text into emphasis or a link.

>>> markdown_text("<script>x</script> | *a*")
'&lt;script&gt;x&lt;/script&gt; \\\\| \\\\*a\\\\*'
>>> markdown_text("two\\nlines")
'two lines'
"""

from __future__ import annotations

import html
import re
from typing import Any

# Markdown punctuation that can start emphasis, code, a link or an image, or split a table cell.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]{}|~#!])")


def one_line(text: Any) -> str:
    """`text` with every line break (``\\n``, ``\\r``, U+2028, ...) as one space."""
    return " ".join(str(text).splitlines())


def markdown_text(text: Any) -> str:
    """`text` as literal Markdown on one line: HTML escaped as entities, Markdown punctuation backslash-escaped."""
    escaped = html.escape(one_line(text), quote=False)
    return _MARKDOWN_SPECIAL.sub(r"\\\1", escaped)
