"""One self-contained HTML page: every table and heatmap of a report, images inlined, no network at view time."""

from __future__ import annotations

import base64
import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from arab_mm_tasks.report.tables import Table

_STYLE = """
body { font-family: "DejaVu Sans", "Noto Sans", "Noto Naskh Arabic", Arial, sans-serif; margin: 2em; color: #222; }
h1 { font-size: 1.6em; } h2 { border-bottom: 2px solid #446; padding-bottom: .2em; margin-top: 2em; }
h3 { font-size: 1.05em; margin-bottom: .2em; } .source { color: #666; font-size: .85em; margin-top: 0; }
table { border-collapse: collapse; margin: .5em 0 1em; font-size: .85em; }
th, td { border: 1px solid #ccc; padding: .25em .6em; text-align: right; }
th { max-width: 14em; overflow-wrap: anywhere; } td { white-space: nowrap; }
table.wide { display: block; overflow-x: auto; max-width: 100%; }
th { background: #eef; } td:first-child, th:first-child { text-align: left; }
td.ar { direction: rtl; text-align: right; font-size: 1.05em; }
ul.notes { font-size: .8em; color: #555; } img { max-width: 100%; border: 1px solid #ddd; margin: .5em 0; }
nav a { margin-right: 1em; }
"""


@dataclass
class Section:
    anchor: str
    title: str
    intro: str = ""
    items: list[tuple[Table, bytes | None]] = field(default_factory=list)  # a table and its heatmap PNG


def table_html(table: Table) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in table.header)
    body = []
    for row in table.rows:
        cells = []
        for cell in row:
            text = html.escape(table.text(cell))
            # right to left only for Arabic-only cells: "Egypt · مصر" reads left to right
            arabic = any("\u0600" <= ch <= "\u06ff" for ch in text) and not any(
                ch.isascii() and ch.isalpha() for ch in text
            )
            cells.append(f'<td class="ar" dir="rtl">{text}</td>' if arabic else f"<td>{text}</td>")
        body.append(f"<tr>{''.join(cells)}</tr>")
    notes = "".join(f"<li>{html.escape(note)}</li>" for note in table.notes)
    return (
        f'<h3 id="{html.escape(table.key)}">{html.escape(table.title)}</h3>'
        f'<p class="source">{html.escape(table.source)}</p>'
        f'<table class="wide"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'
        + (f'<ul class="notes">{notes}</ul>' if notes else "")
    )


def page_html(
    title: str,
    models: Sequence[str],
    sections: Sequence[Section],
    generated: str,
    short: Mapping[str, str] | None = None,
) -> str:
    """The page; `short`: model name -> the name the figures draw, listed in each figure's tooltip (``title``)."""
    nav = "".join(f'<a href="#{html.escape(s.anchor)}">{html.escape(s.title)}</a>' for s in sections)
    renamed = {full: name for full, name in (short or {}).items() if name != full}
    names = "; ".join(f"{name} = {full}" for full, name in renamed.items())
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f"<p>Models: {', '.join(html.escape(m) for m in models)}. Generated {html.escape(generated)} by "
        "<code>arab-mm-tasks report</code>.</p>",
        *([f'<p class="source">Figures name models short: {html.escape(names)}.</p>'] if names else []),
        f"<nav>{nav}</nav>",
    ]
    for section in sections:
        parts.append(f'<section id="{html.escape(section.anchor)}"><h2>{html.escape(section.title)}</h2>')
        if section.intro:
            parts.append(f"<p>{html.escape(section.intro)}</p>")
        for table, png in section.items:
            parts.append(table_html(table))
            if png:
                encoded = base64.b64encode(png).decode("ascii")
                tooltip = table.title + (f" (models drawn as {names})" if names else "")
                parts.append(f'<img alt="{html.escape(table.title)} heatmap" title="{html.escape(tooltip)}" '
                             f'src="data:image/png;base64,{encoded}">')  # fmt: skip
        parts.append("</section>")
    parts.append("</body></html>")
    return "\n".join(parts)
