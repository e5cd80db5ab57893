"""Generated docs match their generator, the README's commands are the ones CI runs, every command-line option
has help and every test file the docs name exists."""

from __future__ import annotations

import argparse
import re
import subprocess
from pathlib import Path

from arab_mm_tasks.cli import parser
from arab_mm_tasks.cli.catalogue import render_catalogue
from arab_mm_tasks.core.registry import all_specs

REPO = Path(__file__).resolve().parents[1]


def test_task_catalogue_is_current():
    committed = (REPO / "docs" / "tasks.md").read_text("utf-8")
    assert committed == render_catalogue(), "run `arab-mm-tasks generate` and commit docs/tasks.md"


def test_catalogue_lists_every_task_and_alias():
    text = render_catalogue()
    for spec in all_specs().values():
        assert f"`{spec.name}`" in text
        for alias in spec.aliases:
            assert f"`{alias}`" in text


def test_readme_opens_with_the_commands_ci_runs():
    """CI runs the README's first three bash blocks as written, read from the README itself."""
    readme = (REPO / "README.md").read_text("utf-8")
    blocks = [part.split("```")[0].strip() for part in readme.split("```bash\n")[1:4]]
    demo, tests, lmms = blocks
    for command in (demo, tests):  # the fast route with the Python a user has: a current pip, then the CPU torch
        assert command.startswith("python3 -m venv .venv && . .venv/bin/activate && python -m pip install -q -U pip")
        assert "pip install -q torch==2.13.0 && pip install -q " in command
    assert demo.endswith("arab-mm-tasks demo") and tests.endswith(
        'pip install -q ".[test]" && pytest -n 2 --dist loadfile'
    )
    # lmms-eval's tests in their own environment: the extra with torch in ONE pip command (docs/lmms_eval.md)
    assert lmms.startswith("python3 -m venv .venv-lmms && . .venv-lmms/bin/activate && python -m pip install -q -U pip")
    assert lmms.endswith(
        'pip install -q torch==2.13.0 ".[lmms,test]" && pip uninstall -q -y torchvision'
        " && pytest -m lmms -n 2 --dist loadfile"
    )
    ci = (REPO / ".ci" / "run").read_text("utf-8")
    (reader,) = [line for line in ci.splitlines() if line.startswith("readme_command()")]
    for n, block in enumerate(blocks, start=1):
        read = subprocess.run(["bash", "-c", f"{reader}\nreadme_command {n}"], cwd=REPO, capture_output=True, text=True)
        assert read.stdout.strip() == block
    assert 'bash -euo pipefail -c "$command"' in ci and "README_COMMANDS=3" in ci


def test_fidelity_doc_covers_the_decisions():
    fidelity = (REPO / "docs" / "fidelity.md").read_text("utf-8")
    topics = ("target delimiter", "gold", "headline", "few-shot", "should_discard", "chat template")
    topics += ("relaxed accuracy", "1 frame per second", "similarity threshold", "options, sampled once", "L184")
    for topic in topics:
        assert topic.lower() in fidelity.lower(), topic


def _options(p: argparse.ArgumentParser, path: str):
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _options(sub, f"{path} {name}")
        elif not isinstance(action, argparse._HelpAction):
            yield path, "/".join(action.option_strings) or action.dest, action.help


def test_every_command_line_option_has_help():
    options = list(_options(parser(), "arab-mm-tasks"))
    assert any(name == "--limit" and path.endswith("demo") for path, name, _ in options)
    assert [(path, name) for path, name, text in options if not text] == []


def test_every_test_file_the_docs_name_exists():
    named = {
        path
        for doc in [*sorted((REPO / "docs").glob("*.md")), REPO / "README.md"]
        for path in re.findall(r"tests/[\w./-]+\.py", doc.read_text(encoding="utf-8"))
    }
    assert named and sorted(p for p in named if not (REPO / p).is_file()) == []
