"""How a harness's YAML reaches a task's own functions: by name, ``!function <hooks module>.<hook>_<task>``.

lm-eval's and lmms-eval's task YAMLs name a function per task (``doc_to_text_pearl_open``), and each hooks
module (`lm_eval_hooks`, `lmms_eval_hooks`) makes it on first use from the task's `TaskSpec`, through a module
``__getattr__`` (`module_getattr`): no per-task code is written out, so every harness gets the spec's own
functions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from arab_mm_tasks.core.registry import all_specs


def generative_hook(
    name: str, prefixes: Sequence[str], hooks: Callable[[str], Mapping[str, Callable]]
) -> Callable | None:
    """The hook ``<prefix><task>`` names: ``hooks(task)[<prefix without its "_">]`` for a generative task, else None."""
    for prefix in prefixes:
        task = name.removeprefix(prefix)
        if name.startswith(prefix) and task in all_specs() and all_specs()[task].output_type == "generate_until":
            return hooks(task)[prefix.rstrip("_")]
    return None


def module_getattr(module: str, resolve: Callable[[str], Callable | None]) -> Callable[[str], Callable]:
    """A module ``__getattr__`` that makes each hook once, by `resolve` (None: the module has no such attribute)."""
    made: dict[str, Callable] = {}

    def __getattr__(name: str) -> Callable:
        if name not in made:
            hook = resolve(name)
            if hook is None:
                raise AttributeError(f"module {module!r} has no attribute {name!r}")
            made[name] = hook
        return made[name]

    return __getattr__
