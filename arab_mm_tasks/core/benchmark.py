"""A benchmark's declaration: the one object the adapters, the CLI and the catalogue read.

Each benchmark package (``arab_mm_tasks/<name>/__init__.py``) defines one `Benchmark` and
`arab_mm_tasks.core.registry` lists those packages. Nothing outside a benchmark's own package
names the benchmark: lm-eval's hooks, lighteval's table, ``arab-mm-tasks build/publish/list``
and the task catalogue all iterate over the declarations.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

from arab_mm_tasks.core.reporting import Report
from arab_mm_tasks.core.spec import Family, TaskSpec

# A benchmark's generation logs (`Benchmark.read_logs`): a task's dataset rows, and the rows read per task.
LogRecords = Callable[[str], Sequence[Mapping[str, Any]] | None]
LogRuns = dict[str, list[tuple[dict[str, Any], str]]]


OptionKind = Literal["int", "choice", "source", "revision", "judge"]


@dataclass(frozen=True)
class RunOption:
    """A per-run setting: a key of lm-eval's ``--metadata`` (``{"<key>": value}``), of ``arab-mm-lighteval
    --metadata`` and of ``arab-mm-tasks evaluate --metadata``, all checked by `arab_mm_tasks.core.run_options`.

    kind: what its value is, and so how it is checked up front:
        ``int``: an integer from `minimum` to `maximum` (None: unbounded);
        ``choice``: one of `choices`;
        ``source``: a local built folder or a Hub repo id (every benchmark's ``<name>_path``);
        ``revision``: a branch, tag or commit of that repo (``<name>_revision``);
        ``judge``: judge settings, ``"model=...,base_url=..."`` or a JSON object, never a credential.
    """

    key: str
    help: str
    kind: OptionKind = "choice"
    choices: tuple[str, ...] = ()
    minimum: int | None = None
    maximum: int | None = None

    def __post_init__(self) -> None:
        if self.kind == "choice" and not self.choices:
            raise ValueError(f"run option {self.key}: a choice option declares its choices")

    @property
    def expects(self) -> str:
        """What a value must be, as the one-line errors and the docs say it."""
        if self.kind == "int":
            low = "" if self.minimum is None else f" >= {self.minimum}"
            high = "" if self.maximum is None else f" <= {self.maximum}"
            return f"an integer{low}{' and' if low and high else ''}{high}"
        if self.kind == "choice":
            return "one of " + ", ".join(repr(c) for c in self.choices)
        return {
            "source": "a string: a built folder or a Hub repo id",
            "revision": "a string: a branch, tag or commit sha",
            "judge": 'judge settings: a string "model=...,base_url=..." or a JSON object',
        }[self.kind]


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
    run_options / configure: the extra ``--metadata`` keys it reads (`options` adds its source and revision),
        and the function applying them (given values `arab_mm_tasks.core.run_options` has checked).
    gated: a built folder is always published gated (its sources are gated).
    example: spec -> (a document to show its prompt on in docs/tasks.md, where that document comes from).
    read_logs: the authors' own generation logs, for ``arab-mm-tasks judge``: (a file, ``records``) ->
        ``{task: [(document, generation), ...]}``, or None when the file is not one of theirs;
        ``records(task)`` gives the rows of a task's config in the dataset the user named (without
        their media; None when it holds no such config), which each log row is matched to.
    read_predictions: (file, model or None) -> [(document, response)], for benchmarks whose authors
        released generations (`arab-mm-tasks score`); raises `SourceError` for a file it cannot read.
    headline: the tasks and families of the paper's own protocol (`arab-mm-tasks evaluate --suite headline`).
    report: the paper-shaped tables, breakdowns and scorecard column `arab-mm-tasks report` writes.
    build_names: other names ``arab-mm-tasks build`` takes for this builder, each with the defaults
        of the builder options it stands for (Pearl: ``pearl_lite`` = ``--release pearl_lite``).
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
    read_logs: Callable[[Path, LogRecords], LogRuns | None] | None = None
    read_predictions: Callable[[Any, str | None], list[tuple[Mapping[str, Any], str]]] | None = None
    headline: tuple[str, ...] = ()
    report: Report | None = None
    build_names: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

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

    @property
    def options(self) -> tuple[RunOption, ...]:
        """Every run option of this benchmark: its data source and revision, then its own `run_options`."""
        return (
            RunOption(self.path_key, f"{self.title}: read from this built folder or Hub repo", kind="source"),
            RunOption(self.revision_key, f"{self.title}: the revision of the repo it is read from", kind="revision"),
            *self.run_options,
        )

    def builder_module(self) -> ModuleType:
        """The builder, imported on demand (it pulls in `datasets`; listing tasks does not need it)."""
        return importlib.import_module(self.builder)

    def holds(self, folder: Path) -> bool:
        """Whether a built Hub-layout folder holds configs of this benchmark (``data/<config>/``)."""
        return any((folder / "data" / config).is_dir() for config in self.configs)
