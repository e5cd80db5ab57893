"""Helpers for tests that run the real harness command lines."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest


def console_script(name: str) -> str:
    """Path of an installed console script next to this interpreter (the venv's bin/)."""
    candidate = Path(sys.executable).parent / name
    found = str(candidate) if candidate.exists() else shutil.which(name)
    if not found:
        pytest.fail(f"console script {name!r} is not installed; install the package (pip install .)")
    return found


def run_cli(args: list[str], *, env: dict[str, str], cwd: Path, timeout: int = 600) -> subprocess.CompletedProcess:
    proc = subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise AssertionError(
            f"{' '.join(args)} exited {proc.returncode}\n--- stdout\n{proc.stdout[-4000:]}\n"
            f"--- stderr\n{proc.stderr[-6000:]}"
        )
    return proc
