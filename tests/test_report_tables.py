"""The report's tables beyond Table 3s: the paper tables of issue 24.12, each recomputed here from the fake
samples of `report_fixtures`, and the one Markdown escaping rule every Markdown table of the package uses."""

from __future__ import annotations

import html
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from metric_plugins.breakdowns import BreakdownRow, format_table
from metric_plugins.markdown import markdown_text, one_line

_UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")


def _cells(line: str) -> list[str]:
    """A Markdown table line's cells, split on pipes that are not escaped."""
    return [cell.strip() for cell in _UNESCAPED_PIPE.split(line)[1:-1]]


def _unescape(cell: str) -> str:
    return html.unescape(re.sub(r"\\(.)", r"\1", cell))


def test_the_report_and_the_breakdown_command_share_one_markdown_rule():
    from arab_mm_tasks.report import escape

    assert escape.markdown_text is markdown_text and escape.one_line is one_line


@settings(max_examples=40, deadline=None)
@given(
    groups=st.lists(st.tuples(st.text(max_size=30), st.text(max_size=30)), min_size=1, max_size=5),
    key=st.sampled_from(["topic", "question_type", "a|b", "<b>x</b>"]),
)
def test_breakdown_table_cells_keep_run_file_text_literal_in_their_own_cell(groups, key):
    rows = [BreakdownRow(group, 3, 0.5, unscored=int(i == 0)) for i, group in enumerate(groups)]
    lines = format_table(rows, [key, "country"], "acc").splitlines()
    assert len(lines) == len(rows) + 2  # a line break in a value splits no row
    header = _cells(lines[0])
    assert [_unescape(h) for h in header] == [key, "country", "n", "acc (%)", "unscored"]
    for line, row in zip(lines[2:], rows, strict=True):
        assert "<" not in line and ">" not in line  # no HTML a Markdown viewer would render
        cells = _cells(line)
        assert len(cells) == len(header)  # a "|" in a value is escaped, not a new column
        assert [_unescape(c) for c in cells[:2]] == [one_line(v).strip() for v in row.group]
        assert cells[2:] == ["3", "50.0", str(row.unscored)]


def test_breakdown_table_escapes_markup_from_a_document_field():
    row = BreakdownRow(("<img src=x onerror=alert(1)> | *Food*",), 2, 1.0)
    assert format_table([row], ["topic"], "acc").splitlines()[2] == (
        r"| &lt;img src=x onerror=alert(1)&gt; \| \*Food\* | 2 | 100.0 |"
    )
