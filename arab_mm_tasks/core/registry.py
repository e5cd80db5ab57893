"""Every benchmark, task variant and family this package defines, by name.

`BENCHMARK_PACKAGES` is the one list of benchmarks: each package defines ``BENCHMARK`` (a
`arab_mm_tasks.core.benchmark.Benchmark`). Adding a benchmark adds one line here.

Packages named in ``ARAB_MM_TASKS_EXTRA_BENCHMARKS`` (comma-separated, importable) are added
after them: a benchmark of your own, or the test suite's, runs through the same adapters
without editing this package (lm-eval finds its YAML through ``--include_path``).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from functools import cache
from typing import Any

from arab_mm_tasks.core.benchmark import Benchmark
from arab_mm_tasks.core.spec import Family, TaskSpec

BENCHMARK_PACKAGES: tuple[str, ...] = (
    "arab_mm_tasks.arabculture",
    "arab_mm_tasks.gimmick",
    "arab_mm_tasks.pearl",
    "arab_mm_tasks.jeem",
    "arab_mm_tasks.arb",
)


EXTRA_BENCHMARKS_VARIABLE = "ARAB_MM_TASKS_EXTRA_BENCHMARKS"


def benchmark_packages() -> tuple[str, ...]:
    """The packages declaring benchmarks: ours, then any named in ``ARAB_MM_TASKS_EXTRA_BENCHMARKS``."""
    extra = [name.strip() for name in os.environ.get(EXTRA_BENCHMARKS_VARIABLE, "").split(",") if name.strip()]
    return (*BENCHMARK_PACKAGES, *extra)


@cache
def all_benchmarks() -> dict[str, Benchmark]:
    benchmarks: dict[str, Benchmark] = {}
    for package in benchmark_packages():
        benchmark: Benchmark = importlib.import_module(package).BENCHMARK
        if benchmark.name != package.rpartition(".")[2]:  # one name for its package, builder, cache and options
            raise ValueError(f"{package} declares benchmark {benchmark.name!r}; name the package after it")
        if benchmark.name in benchmarks:
            raise ValueError(f"{package} declares benchmark {benchmark.name!r}, which is already declared")
        benchmarks[benchmark.name] = benchmark
    return benchmarks


def get_benchmark(name: str) -> Benchmark:
    benchmarks = all_benchmarks()
    if name not in benchmarks:
        raise KeyError(f"unknown benchmark {name!r}; known: {', '.join(benchmarks)}")
    return benchmarks[name]


def build_target(name: str) -> tuple[Benchmark, Mapping[str, Any]]:
    """The benchmark `arab-mm-tasks build NAME` builds, and the builder option defaults NAME stands for."""
    for benchmark in all_benchmarks().values():
        if name == benchmark.name:
            return benchmark, {}
        if name in benchmark.build_names:
            return benchmark, benchmark.build_names[name]
    names = [n for b in all_benchmarks().values() for n in (b.name, *b.build_names)]
    raise KeyError(f"unknown benchmark {name!r}; `arab-mm-tasks build` takes: {', '.join(names)}")


@cache
def all_specs() -> dict[str, TaskSpec]:
    specs: dict[str, TaskSpec] = {}
    for benchmark in all_benchmarks().values():
        for spec in benchmark.tasks:
            if spec.name in specs:
                raise ValueError(f"duplicate task name {spec.name!r}")
            specs[spec.name] = spec
    return specs


@cache
def all_families() -> dict[str, Family]:
    """Named groups of variants (``gimmick_coqa_c``); every member is a task in `all_specs`."""
    families = {family.name: family for b in all_benchmarks().values() for family in b.families}
    for family in families.values():
        unknown = [task for task in family.tasks if task not in all_specs()]
        if unknown or family.name in all_specs():
            raise ValueError(f"family {family.name!r}: unknown tasks {unknown} or a name clash")
    return families


def get_spec(name: str) -> TaskSpec:
    specs = all_specs()
    if name in specs:
        return specs[name]
    for spec in specs.values():
        if name in spec.aliases:
            return spec
    raise KeyError(f"unknown task {name!r}; run `arab-mm-tasks list` for the task names")
