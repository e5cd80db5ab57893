"""Every task variant this package defines, by name."""

from __future__ import annotations

from functools import cache

from arab_mm_tasks.spec import TaskSpec


@cache
def all_specs() -> dict[str, TaskSpec]:
    from arab_mm_tasks import arabculture

    specs: dict[str, TaskSpec] = {}
    for spec in arabculture.TASKS:
        if spec.name in specs:
            raise ValueError(f"duplicate task name {spec.name!r}")
        specs[spec.name] = spec
    return specs


def get_spec(name: str) -> TaskSpec:
    specs = all_specs()
    if name in specs:
        return specs[name]
    for spec in specs.values():
        if name in spec.aliases:
            return spec
    raise KeyError(f"unknown task {name!r}; run `arab-mm-tasks list` for the task names")
