"""Every task variant this package defines, by name."""

from __future__ import annotations

from functools import cache

from arab_mm_tasks.spec import Family, TaskSpec


@cache
def all_specs() -> dict[str, TaskSpec]:
    from arab_mm_tasks import arabculture, gimmick

    specs: dict[str, TaskSpec] = {}
    for spec in [*arabculture.TASKS, *gimmick.TASKS]:
        if spec.name in specs:
            raise ValueError(f"duplicate task name {spec.name!r}")
        specs[spec.name] = spec
    return specs


@cache
def all_families() -> dict[str, Family]:
    """Named groups of variants (``gimmick_coqa_c``); every member is a task in `all_specs`."""
    from arab_mm_tasks import gimmick

    families = {family.name: family for family in gimmick.FAMILIES}
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
