"""Generated docs match their generator, and the README's commands are the ones CI runs."""

from __future__ import annotations

from pathlib import Path

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


def test_readme_opens_with_the_two_commands_ci_runs():
    readme = (REPO / "README.md").read_text("utf-8")
    ci = (REPO / ".ci" / "run").read_text("utf-8")
    first_block = readme.split("```bash", 2)
    demo, tests = first_block[1].split("```")[0], first_block[2].split("```")[0]
    assert "arab-mm-tasks demo" in demo and "pip install torch==2.13.0" in demo
    assert "pytest" in tests and "pip install torch==2.13.0" in tests
    for step in ("pip install --quiet torch==2.13.0", 'pip install --quiet ".[test]"', "pytest"):
        assert step in ci
    assert 'pip install ".[test]"' in tests


def test_fidelity_doc_covers_the_decisions():
    fidelity = (REPO / "docs" / "fidelity.md").read_text("utf-8")
    topics = ("target delimiter", "gold", "headline", "few-shot", "should_discard", "chat template")
    topics += ("relaxed accuracy", "1 frame per second", "similarity threshold", "options, sampled once", "L184")
    for topic in topics:
        assert topic.lower() in fidelity.lower(), topic
