"""A benchmark's declaration: the one object the adapters, the CLI and the catalogue read.

Each benchmark package (``arab_mm_tasks/<name>/__init__.py``) defines one `Benchmark` and
`arab_mm_tasks.core.registry` lists those packages. Nothing outside a benchmark's own package
names the benchmark: lm-eval's hooks, lighteval's table, ``arab-mm-tasks build/publish/list``
and the task catalogue all iterate over the declarations.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from arab_mm_tasks.core.reporting import Report
from arab_mm_tasks.core.spec import Family, TaskSpec


@dataclass(frozen=True)
class RunOption:
    """A per-run setting a benchmark reads from lm-eval's ``--metadata`` (``{"<key>": value}``)."""

    key: str
    help: str


@dataclass(frozen=True)
class ReleasePart:
    """One piece of the authors' release that the builder turns into some of the benchmark's configs.

    A first use builds only the part holding the configs a run asks for, so one unreadable
    piece (a gated repo, a loading script) does not block the others.
    """

    name: str  # the builder's name for it: "arabculture", "sivqa", "coqa"
    repos: tuple[str, ...]  # the authors' Hub datasets it reads
    configs: tuple[str, ...]  # the configs it provides


@dataclass(frozen=True)
class Release:
    """The authors' release: what a first use is built from when no published repo is listed.

    ``not_on_hub`` maps a config the release cannot provide from the Hub (GIMMICK's CVVQA clips)
    to what the user must do instead.
    """

    parts: tuple[ReleasePart, ...]
    gated: bool = False
    not_on_hub: Mapping[str, str] = field(default_factory=dict)

    def part_of(self, config: str) -> ReleasePart | None:
        return next((part for part in self.parts if config in part.configs), None)

    @property
    def repos(self) -> tuple[str, ...]:
        return tuple(repo for part in self.parts for repo in part.repos)


@dataclass(frozen=True)
class Benchmark:
    """Everything the package knows about one benchmark, declared once.

    name: the key of ``--metadata '{"<name>_path": ...}'``, ``--dataset-path <name>=...``,
        ``arab-mm-tasks build <name>`` and the user cache.
    tasks / families: its task variants and the groups over them.
    configs: every dataset config its builder writes (a built folder holds some of them).
    release: the authors' release (first-use builds and error messages).
    builder: the `dataset_builders` module that builds it; it provides ``add_arguments(parser)``,
        ``build_from_args(args)``, ``build_release(part, out_dir, revision)`` and ``publish(...)``.
    run_options / configure: the extra ``--metadata`` keys it reads, and the function applying them.
    gated: a built folder is always published gated (its sources are gated).
    example: spec -> (a document to show its prompt on in docs/tasks.md, where that document comes from).
    read_logs: the authors' own generation logs, for ``arab-mm-tasks judge``: a file ->
        ``{task: [(document, generation), ...]}``, or None when the file is not one of theirs.
    read_predictions: (file, model or None) -> [(document, response)], for benchmarks whose authors
        released generations (`arab-mm-tasks score`); raises `SourceError` for a file it cannot read.
    headline: the tasks and families of the paper's own protocol (`arab-mm-tasks evaluate --suite headline`).
    report: the paper-shaped tables, breakdowns and scorecard column `arab-mm-tasks report` writes.
    """

    name: str
    title: str
    tasks: tuple[TaskSpec, ...]
    configs: tuple[str, ...]
    release: Release
    builder: str
    families: tuple[Family, ...] = ()
    run_options: tuple[RunOption, ...] = ()
    configure: Callable[[Mapping[str, Any]], None] | None = None
    gated: bool = False
    example: Callable[[TaskSpec], tuple[Mapping[str, Any], str] | None] | None = None
    read_logs: Callable[[Path], dict[str, list[tuple[dict[str, Any], str]]] | None] | None = None
    read_predictions: Callable[[Any, str | None], list[tuple[Mapping[str, Any], str]]] | None = None
    headline: tuple[str, ...] = ()
    report: Report | None = None

    def __post_init__(self) -> None:
        wrong = [spec.name for spec in self.tasks if spec.benchmark != self.name]
        if wrong:
            raise ValueError(f"benchmark {self.name}: tasks {wrong} declare another benchmark")
        known = {spec.name for spec in self.tasks} | {a for spec in self.tasks for a in spec.aliases}
        unknown = [name for name in self.headline if name not in known | {f.name for f in self.families}]
        if unknown:
            raise ValueError(f"benchmark {self.name}: headline names unknown tasks or families {unknown}")

    @property
    def path_key(self) -> str:
        return f"{self.name}_path"

    @property
    def revision_key(self) -> str:
        return f"{self.name}_revision"

    def builder_module(self) -> ModuleType:
        """The builder, imported on demand (it pulls in `datasets`; listing tasks does not need it)."""
        return importlib.import_module(self.builder)

    def holds(self, folder: Path) -> bool:
        """Whether a built Hub-layout folder holds configs of this benchmark (``data/<config>/``)."""
        return any((folder / "data" / config).is_dir() for config in self.configs)
