"""The codebase stays ruff clean (lint and format), so style never drifts between contributors."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _ruff() -> str:
    found = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    if not Path(found).exists():
        pytest.fail("ruff is not installed; install the test extra: pip install '.[test]'")
    return found


@pytest.mark.parametrize("command", [["check", "."], ["format", "--check", "."]])
def test_ruff(command):
    proc = subprocess.run([_ruff(), *command], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_no_test_file_is_imported_by_another_file():
    """What several test files share lives in a root module (helpers.py, `<name>_fixtures.py`), never in a test file:
    each folder's test files are imported by their base name, so `from test_x import y` breaks when the two files
    sit in different folders, and it runs test_x's imports and module-level code in every importer."""
    import ast

    found = []
    for path in sorted((REPO / "tests").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"), filename=str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module]
            else:
                continue
            found += [f"{path.relative_to(REPO)}:{node.lineno}: {name}" for name in names if name.startswith("test_")]
    assert found == [], "move what is shared into a tests/*_fixtures.py module:\n" + "\n".join(found)
