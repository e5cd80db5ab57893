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
from arab_mm_tasks.report.escape import markdown_text
from arab_mm_tasks.report.page import Section, page_html
from arab_mm_tasks.report.plots import heatmap, short_names
from arab_mm_tasks.report.runs import ModelRun, RunError, read_runs
from arab_mm_tasks.report.tables import (
    MIN_ITEMS,
    Scorecard,
    Table,
    breakdown_table,
    country_label,
    file_key,
    model_tables,
    results_table,
    scorecard,
)


@dataclass
class WrittenReport:
    page: Path
    runs: list[ModelRun]
    files: list[Path] = field(default_factory=list)
    sections: list[Section] = field(default_factory=list)
    not_read: dict[Path, str] = field(default_factory=dict)  # run files left out, with why
    heatmaps: int = 0


def output_folder(out_dir: str | Path, option: str = "--out") -> Path:
    """`out_dir` created if needed; a `RunError` (one line) when it is a file or cannot be created."""
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise RunError(f"{option} {out}: exists and is not a folder") from None
    except OSError as error:
        raise RunError(f"{option} {out}: cannot create the folder ({error.strerror or error})") from None
    return out


def write_report(paths: Iterable[str | Path], out_dir: str | Path, min_items: int = MIN_ITEMS) -> WrittenReport:
    """The report of every run under `paths`, written to `out_dir`. A run file that cannot be read (a samples file
    cut mid-line, a corrupted results JSON) is left out and listed (`WrittenReport.not_read`, the page, report.md);
    the other runs are reported."""
    out = output_folder(out_dir)
    not_read: dict[Path, str] = {}
    runs = read_runs(paths, not_read)
    short = short_names([run.label for run in runs])  # model names as figures draw them
    sections = [_scorecard_section(runs, min_items, short)]
    for benchmark in all_benchmarks().values():
        if benchmark.report is None:
            continue
        section = Section(benchmark.name, benchmark.title)
        for spec in benchmark.report.tables:
            if spec.per_model:  # a table and heatmap per model (ARB's Figures 15-16)
                columns = [column.label for column in spec.columns]
                for table in model_tables(spec, runs):
                    png = heatmap(table.matrix, list(table.matrix), columns, table.title, short=short)
                    section.items.append((table, png))
            elif table := results_table(spec, runs):
                section.items.append((table, None))
        for spec in benchmark.report.breakdowns:
            if table := breakdown_table(spec, runs, min_items):
                groups = [row[0] for row in table.rows]
                models = list(table.matrix)
                png = heatmap(table.matrix, models, groups, table.title, table.flagged, short=short)
                section.items.append((table, png))
        if section.items:
            sections.append(section)
    for run in runs:
        not_read.update(run.not_read)
    if not_read:
        sections.insert(0, _not_read_section(not_read))
    written = WrittenReport(out / "index.html", runs, sections=sections, not_read=not_read)
    for section in sections:
        for table, png in section.items:
            written.files += table.write(out)
            if png:
                (out / f"{table.key}.png").write_bytes(png)
                written.files.append(out / f"{table.key}.png")
                written.heatmaps += 1
    markdown = [
        f"## {markdown_text(s.title)}\n\n" + (f"{markdown_text(s.intro)}\n\n" if s.intro else "")
        + "\n\n".join(t.markdown() for t, _ in s.items)
        for s in sections
    ]  # fmt: skip
    (out / "report.md").write_text("# arab-mm-tasks report\n\n" + "\n\n".join(markdown) + "\n", encoding="utf-8")
    generated = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    written.page.write_text(
        page_html("Arabic and culture-centred benchmarks: report", [r.label for r in runs], sections, generated, short),
        encoding="utf-8",
    )
    written.files += [out / "report.md", written.page]
    return written


def _not_read_section(not_read: dict[Path, str]) -> Section:
    table = Table("not_read", "Run files not read", "the run folders given to `arab-mm-tasks report`",
                  ["file", "reason"], [[str(file), reason] for file, reason in sorted(not_read.items())])  # fmt: skip
    intro = (f"{len(not_read)} run file(s) could not be read and are left out of every table below; "
             "the other files of the runs are reported.")  # fmt: skip
    return Section("not-read", "Not read", intro, [(table, None)])


def _scorecard_section(runs: list[ModelRun], min_items: int, short: dict[str, str]) -> Section:
    card = scorecard(list(all_benchmarks().values()), runs, min_items)
    section = Section(
        "scorecard",
        "Arab-world scorecard",
        "One row per Arab League state, one column per benchmark with items about that country: the mean "
        "per-item score with its bootstrap interval and item count. The summary averages the columns with "
        f"enough items (at least {min_items}); countries with too few are shown, flagged (†) and not ranked.",
    )
    summaries: dict[str, dict[str, float]] = {}  # country -> model -> summary
    keys: set[str] = set()
    for run in runs:
        if not card.scores.get(run.label):
            continue
        table = card.table(run.label)
        if table.key in keys:  # two model names that read the same as file names
            table.key = file_key("scorecard", run.label, hashed=True)
        keys.add(table.key)
        columns = card.labels(run.label)
        png = (heatmap(table.matrix, list(table.matrix), columns, table.title, table.flagged, short=short)
               if table.matrix else None)  # fmt: skip
        section.items.append((table, png))
        for country in ARAB_COUNTRIES:
            if (value := card.summary(run.label, country)) is not None:
                summaries.setdefault(country_label(country), {})[run.label] = value
    models = [run.label for run in runs if card.scores.get(run.label)]
    if len(models) > 1:
        countries = [c for c in map(country_label, ARAB_COUNTRIES) if c in summaries]
        rows = [[country, *(summaries[country].get(model) for model in models)] for country in countries]
        title = "Arab-world scorecard: summary by country and model"
        source = "the per-model scorecards' summary column"
        summary = Table("scorecard_summary", title, source, ["country", *models], rows, digits=1)
        png = heatmap(summaries, countries, models, summary.title, short=short) if countries else None
        section.items.insert(0, (summary, png))
    if not section.items:
        section.intro += " " + _no_scorecard_reason(runs, card)
    return section


def _no_scorecard_reason(runs: list[ModelRun], card: Scorecard) -> str:
    """Why the scorecard is empty: no samples at all, or samples of no task a column reads."""
    read = sorted({task for _, column in card.columns for pool in column.tasks for task in pool})
    if not any(run.sample_files for run in runs):
        return ("No run has per-item samples (lm-eval --log_samples, lighteval --save-details), so there is no "
                "scorecard.")  # fmt: skip
    return ("The runs' per-item samples hold no task a scorecard column reads "
            f"({', '.join(read)}), so there is no scorecard.")  # fmt: skip
