"""`arab-mm-tasks report`: lm-eval and lighteval outputs of one or many models -> tables, heatmaps, one page.

For each benchmark, what its declaration's `Report` lists (`arab_mm_tasks.core.reporting`): the
paper-shaped tables from the aggregated results, and the breakdowns (country, question type, domain,
dialect) from the per-item samples with bootstrap intervals, each drawn as a model x group heatmap;
then the Arab-world scorecard, a row per Arab country and a column per benchmark. Written to OUT as
``<table>.md`` / ``<table>.csv`` / ``<table>.png``, all of it in ``report.md``, and ``index.html``, one
self-contained page.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from arab_mm_tasks.core.countries import ARAB_COUNTRIES
from arab_mm_tasks.core.registry import all_benchmarks
from arab_mm_tasks.report.page import Section, page_html
from arab_mm_tasks.report.plots import heatmap
from arab_mm_tasks.report.runs import ModelRun, read_runs
from arab_mm_tasks.report.tables import MIN_ITEMS, Table, breakdown_table, country_label, results_table, scorecard


@dataclass
class WrittenReport:
    page: Path
    runs: list[ModelRun]
    files: list[Path] = field(default_factory=list)
    sections: list[Section] = field(default_factory=list)


def write_report(paths: Iterable[str | Path], out_dir: str | Path, min_items: int = MIN_ITEMS) -> WrittenReport:
    runs = read_runs(paths)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    sections = [_scorecard_section(runs, min_items)]
    for benchmark in all_benchmarks().values():
        if benchmark.report is None:
            continue
        section = Section(benchmark.name, benchmark.title)
        for spec in benchmark.report.tables:
            if table := results_table(spec, runs):
                section.items.append((table, None))
        for spec in benchmark.report.breakdowns:
            if table := breakdown_table(spec, runs, min_items):
                groups = [row[0] for row in table.rows]
                models = list(table.matrix)
                section.items.append((table, heatmap(table.matrix, models, groups, table.title, table.flagged)))
        if section.items:
            sections.append(section)
    written = WrittenReport(out / "index.html", runs, sections=sections)
    for section in sections:
        for table, png in section.items:
            written.files += table.write(out)
            if png:
                (out / f"{table.key}.png").write_bytes(png)
                written.files.append(out / f"{table.key}.png")
    markdown = [f"## {s.title}\n\n" + "\n\n".join(t.markdown() for t, _ in s.items) for s in sections]
    (out / "report.md").write_text("# arab-mm-tasks report\n\n" + "\n\n".join(markdown) + "\n", encoding="utf-8")
    generated = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    written.page.write_text(
        page_html("Arabic and culture-centred benchmarks: report", [r.label for r in runs], sections, generated),
        encoding="utf-8",
    )
    written.files += [out / "report.md", written.page]
    return written


def _scorecard_section(runs: list[ModelRun], min_items: int) -> Section:
    card = scorecard(list(all_benchmarks().values()), runs, min_items)
    section = Section(
        "scorecard",
        "Arab-world scorecard",
        "One row per Arab League state, one column per benchmark with items about that country: the mean "
        "per-item score with its bootstrap interval and item count. The summary averages the columns with "
        f"enough items (at least {min_items}); countries with too few are shown, flagged (†) and not ranked.",
    )
    summaries: dict[str, dict[str, float]] = {}
    for run in runs:
        if not card.scores.get(run.label):
            continue
        table = card.table(run.label)
        countries = [row[0] for row in table.rows if any(row[0] in by for by in table.matrix.values())]
        matrix = {country_label(c): {label: by[c] for label, by in table.matrix.items() if c in by} for c in countries}
        flagged = {country_label(c): {label for label in table.flagged if c in table.flagged[label]} for c in countries}
        png = heatmap(matrix, list(matrix), list(table.matrix), table.title, flagged) if matrix else None
        section.items.append((table, png))
        summaries[run.label] = {country_label(c): s for c in countries if (s := card.summary(run.label, c)) is not None}
    if len(summaries) > 1:
        countries = [
            label for label in map(country_label, ARAB_COUNTRIES) if any(label in by for by in summaries.values())
        ]
        rows = [[country, *(by.get(country) for by in summaries.values())] for country in countries]
        title = "Arab-world scorecard: summary by country and model"
        source = "the per-model scorecards' summary column"
        summary = Table("scorecard_summary", title, source, ["country", *summaries], rows, digits=1)
        by_country = {
            country: {model: by[country] for model, by in summaries.items() if country in by} for country in countries
        }
        section.items.insert(0, (summary, heatmap(by_country, countries, list(summaries), summary.title)))
    if not section.items:
        section.intro += " No run has per-item samples of a benchmark with countries (run with --log_samples)."
    return section
