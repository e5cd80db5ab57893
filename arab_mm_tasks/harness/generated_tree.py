"""Generated task trees (lm-eval's and lmms-eval's YAML files): their YAML, metric lists, writing and checking,
one rule for both."""

from __future__ import annotations

from pathlib import Path

import yaml

from arab_mm_tasks.core.scoring import aggregation_kind
from arab_mm_tasks.core.spec import TaskSpec, higher_is_better


def write_tree(tree: dict[str, str], out_dir: Path, pattern: str = "*.yaml") -> list[Path]:
    """Write `tree` (relative path -> text) under `out_dir`, removing generated files it no longer holds."""
    for old in sorted(out_dir.rglob(pattern)) if out_dir.exists() else []:
        if old.relative_to(out_dir).as_posix() not in tree:
            old.unlink()
    written = []
    for rel, text in tree.items():
        path = out_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def drift(tree: dict[str, str], out_dir: Path, pattern: str = "*.yaml") -> list[str]:
    """The files under `out_dir` that differ from `tree`: stale ones first, then changed or missing ones."""
    on_disk = {p.relative_to(out_dir).as_posix() for p in out_dir.rglob(pattern)} if out_dir.exists() else set()
    stale = sorted(on_disk - set(tree))
    changed = [
        rel for rel, text in tree.items() if not (out_dir / rel).exists() or (out_dir / rel).read_text("utf-8") != text
    ]
    return stale + changed


class Function(str):
    """A `!function module.attr` reference in a generated task file."""


def dump(data: dict, header: str) -> str:
    """`data` as YAML after `header`, `Function` values written as ``!function`` tags."""

    class Dumper(yaml.SafeDumper):
        pass

    Dumper.add_representer(Function, lambda d, v: d.represent_scalar("!function", str(v)))
    return header + yaml.dump(data, Dumper=Dumper, allow_unicode=True, sort_keys=False, width=1000)


def metric_list(spec: TaskSpec, hooks: str) -> list[dict]:
    """A generative task's metrics, each aggregated by the `hooks` module's ``aggregate_<kind>`` function."""
    return [
        {
            "metric": name,
            "aggregation": Function(f"{hooks}.aggregate_{aggregation_kind(spec, name)}"),
            "higher_is_better": higher_is_better(name),
        }
        for name in spec.metric_names()
    ]
