"""Helpers for tests that run the real harness command lines."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

# A command line's timeout is a guard against a hang, never a bound on speed: at load ~20 on 2 shared cores a
# plain `lm_eval` refusal took over 300 s (issue 25), so the guard is far above any slow-but-working run.
HANG_TIMEOUT = 1800


# A sitecustomize.py that kills the process on the n-th call of a model's `generate` (`KILL_AT_GENERATE=n`), like a
# user's Ctrl-C or an OOM kill mid-entry: write it to a folder and put that folder on the command line's PYTHONPATH.
KILLER = """\
import os

if os.environ.get("KILL_AT_GENERATE"):
    import transformers.generation.utils as generation

    _calls, _kill_at, _generate = [0], int(os.environ["KILL_AT_GENERATE"]), generation.GenerationMixin.generate

    def generate(self, *args, **kwargs):
        _calls[0] += 1
        if _calls[0] == _kill_at:
            os.kill(os.getpid(), 9)
        return _generate(self, *args, **kwargs)

    generation.GenerationMixin.generate = generate
"""


def console_script(name: str) -> str:
    """Path of an installed console script next to this interpreter (the venv's bin/)."""
    candidate = Path(sys.executable).parent / name
    found = str(candidate) if candidate.exists() else shutil.which(name)
    if not found:
        pytest.fail(f"console script {name!r} is not installed; install the package (pip install .)")
    return found


def command_line_env() -> dict[str, str]:
    """`cli_env` (conftest.py) for a module- or session-scoped fixture, which cannot take a per-test fixture:
    offline, no PYTHONPATH so the installed package runs, one torch thread."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TOKENIZERS_PARALLELISM="false", OMP_NUM_THREADS="1")
    return env


def run_cli(
    args: list[str], *, env: dict[str, str], cwd: Path, timeout: int = HANG_TIMEOUT
) -> subprocess.CompletedProcess:
    proc = subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise AssertionError(
            f"{' '.join(args)} exited {proc.returncode}\n--- stdout\n{proc.stdout[-4000:]}\n"
            f"--- stderr\n{proc.stderr[-6000:]}"
        )
    return proc


def lm_eval_refusal(tasks: list[str], metadata: dict[str, Any]) -> str:
    """What `lm_eval --tasks ...` prints when loading one of our tasks refuses, proven in-process.

    lm-eval's own `TaskManager` loads the tasks from our YAML tree with the run's ``--metadata`` (the command
    line also merges the ``--model_args`` into it: pass ``pretrained`` here too), so our `load_dataset` hook
    runs as it does in a real run; the error it raises is given to the hook that ends lm_eval's command line
    (`sys.excepthook`, installed by `lm_eval_hooks`). Returns what that hook wrote to stderr. A plain `lm_eval`
    run pays ~15 s of CPU (lm-eval indexes its ~15,000 task files and loads the model before it reads a task)
    to print that line, so one command-line test (tests/cli/test_cli.py) proves the excepthook wiring and the
    other refusals are checked here.
    """
    from lm_eval.tasks import TaskManager

    from arab_mm_tasks.harness import lm_eval_hooks
    from arab_mm_tasks.harness.lm_eval_yaml import TASKS_DIR

    # what importing the hooks does in lm_eval's process; again here (a no-op when it is in place) in case a test
    # before this one in the worker put its own `sys.excepthook` back
    lm_eval_hooks._print_data_errors_as_one_line()
    manager = TaskManager(include_path=str(TASKS_DIR), include_defaults=False, metadata=metadata)
    try:
        manager.load(tasks)
    except Exception as error:  # whatever escapes lm-eval is what its command line ends on
        stderr = io.StringIO()
        with contextlib.redirect_stderr(stderr):
            sys.excepthook(type(error), error, error.__traceback__)
        return stderr.getvalue()
    pytest.fail(f"lm-eval loaded {tasks} without refusing")
