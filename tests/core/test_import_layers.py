"""The three packages import one way (docs/architecture.md, "Layers"): issue 25 points 3 and 4.

    arab_mm_tasks.cli              the commands: may import everything
    dataset_builders               may import arab_mm_tasks (not its cli) and metric_plugins
    arab_mm_tasks (not cli)        may import metric_plugins, never dataset_builders
    metric_plugins                 imports neither

The graph is read from the source with `ast`, every ``import`` counted wherever it stands (a lazy
import inside a function is still an import), so a cycle cannot hide behind a deferred import.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("metric_plugins", "arab_mm_tasks", "dataset_builders")


def layer(module: str) -> str | None:
    """The layer of a dotted module name of ours, None for anything else (stdlib, third party)."""
    top = module.split(".")[0]
    if top not in PACKAGES:
        return None
    if module == "arab_mm_tasks.cli" or module.startswith("arab_mm_tasks.cli."):
        return "cli"
    return top


# What each layer may import, besides itself: the direction of the arrows in docs/architecture.md.
ALLOWED = {
    "metric_plugins": set(),
    "arab_mm_tasks": {"metric_plugins"},
    "dataset_builders": {"arab_mm_tasks", "metric_plugins"},
    "cli": {"arab_mm_tasks", "dataset_builders", "metric_plugins"},
}


def module_name(file: Path) -> str:
    parts = list(file.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(tree: ast.AST, module: str, is_package: bool) -> list[tuple[int, str]]:
    """(line, dotted name) of every import in `tree`, relative ones resolved against `module`."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # ``from . import x`` inside module a.b.c is a.b (a package a.b.c: a.b.c)
                base = module.split(".")[: len(module.split(".")) - node.level + (1 if is_package else 0)]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            found.append((node.lineno, name))
        elif isinstance(node, ast.Call) and _import_module_call(node):
            found.append((node.lineno, node.args[0].value))  # importlib.import_module("literal")
    return found


def _import_module_call(node: ast.Call) -> bool:
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return (
        name in ("import_module", "__import__")
        and bool(node.args)
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    )


def violations(source: str, module: str, is_package: bool = False, where: str = "<source>") -> list[str]:
    """One line per import of `source` (the text of `module`) that runs against the direction."""
    own = layer(module)
    if own is None:
        return []
    out = []
    for line, name in imported(ast.parse(source), module, is_package):
        target = layer(name)
        if target is not None and target != own and target not in ALLOWED[own]:
            out.append(f"{where}:{line}: {own} imports {name} ({target})")
    return out


def source_files() -> list[Path]:
    return sorted(f for package in PACKAGES for f in (REPO / package).rglob("*.py") if "__pycache__" not in f.parts)


def test_every_import_of_the_three_packages_runs_with_the_layers():
    files = source_files()
    assert len(files) > 150  # the walk sees the tree (a wrong root would pass with nothing read)
    found = []
    for file in files:
        found += violations(
            file.read_text(encoding="utf-8"),
            module_name(file),
            file.name == "__init__.py",
            str(file.relative_to(REPO)),
        )
    assert found == []


@pytest.mark.parametrize(
    ("module", "is_package", "source", "bad"),
    [
        ("arab_mm_tasks.core.sources", False, "from dataset_builders.core.release import X", True),
        ("arab_mm_tasks.arb.released", False, "def f():\n    from dataset_builders.arb import parsing", True),  # lazy
        ("arab_mm_tasks.core.sources", False, "import importlib\nimportlib.import_module('dataset_builders.x')", True),
        ("metric_plugins.judge.cache", False, "def f():\n    import arab_mm_tasks.core.sources", True),
        ("metric_plugins.judge", True, "from ..text_parsing import x", False),  # relative, inside metric_plugins
        ("dataset_builders.arb.builder", False, "from arab_mm_tasks.cli import main", True),
        ("dataset_builders.arb.builder", False, "from arab_mm_tasks.arb.answers import resolve_gold", False),
        ("arab_mm_tasks.cli.demo", False, "from dataset_builders.arabculture.builder import build", False),
        ("arab_mm_tasks.core.sources", False, "from ..cli import main", True),  # relative, out of the library
        ("arab_mm_tasks.harness", True, "from .. import cli", False),  # `from arab_mm_tasks import cli`: a name
        ("arab_mm_tasks.harness", True, "from ..cli import main", True),
    ],
)
def test_the_walk_catches_an_import_against_the_direction(module, is_package, source, bad):
    assert bool(violations(source, module, is_package)) is bad


MODULES = ["metric_plugins.m", "arab_mm_tasks.core.m", "dataset_builders.core.m", "arab_mm_tasks.cli.m"]
FORMS = ["import {t}", "from {t} import z", "def f():\n    import {t}", "if X:\n    from {t} import z"]


@settings(max_examples=30, deadline=None)
@given(importer=st.sampled_from(MODULES), target=st.sampled_from(MODULES), form=st.sampled_from(FORMS))
def test_any_import_form_is_judged_by_the_layers_alone(importer, target, form):
    """Where an import stands (top, function, branch) and its form do not change the verdict."""
    expected_bad = layer(target) != layer(importer) and layer(target) not in ALLOWED[layer(importer)]
    assert bool(violations(form.format(t=target), importer)) is expected_bad


STANDALONE = textwrap.dedent(
    """
    import importlib, pkgutil, sys, tempfile
    from pathlib import Path

    class Refuse:  # as if arab_mm_tasks and dataset_builders were not installed
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("arab_mm_tasks", "dataset_builders"):
                raise ModuleNotFoundError(f"No module named {name!r} (blocked)")
            return None

    sys.meta_path.insert(0, Refuse())
    import metric_plugins
    names = [m.name for m in pkgutil.walk_packages(metric_plugins.__path__, "metric_plugins.")]
    for name in names:
        importlib.import_module(name)
    # the two functions that used to import arab_mm_tasks.core.sources when called
    from metric_plugins.judge.cache import default_cache_path
    from metric_plugins.judge.backends.transformers_local import TransformersBackend
    assert default_cache_path().name == "judge.sqlite", default_cache_path()
    folder = Path(tempfile.mkdtemp())
    (folder / "config.json").write_text("{}")
    fingerprint = TransformersBackend(str(folder)).identity["fingerprint"]
    assert len(fingerprint) == 16, fingerprint
    print(len(names), sorted(m for m in sys.modules if m.startswith(("arab_mm_tasks", "dataset_builders"))))
    """
)


def test_metric_plugins_imports_and_works_without_arab_mm_tasks(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-c", STANDALONE],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": "/usr/bin:/bin", "XDG_CACHE_HOME": str(tmp_path / "cache"), "PYTHONPATH": str(REPO)},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    count, loaded = proc.stdout.split(" ", 1)
    assert int(count) > 40 and loaded.strip() == "[]"
