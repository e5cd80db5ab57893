"""The `arab-mm-tasks` command: list, build, generate --check and the README's demo."""

from __future__ import annotations

import subprocess

import datasets
import pytest
from helpers import HANG_TIMEOUT, console_script, run_cli

from arab_mm_tasks.cli import main
from arab_mm_tasks.core.registry import all_specs
from arab_mm_tasks.data import SAMPLE_PATH


def test_list_names_every_task_and_the_aliases(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for name in all_specs():
        assert name in out
    assert "arabculture_mcq_en_none  (alias: arabculture_mcq)" in out
    assert "gimmick_coqa_c  (group: gimmick_coqa_c_image, gimmick_coqa_c_text, gimmick_coqa_c_image_text)" in out


def test_build_command_writes_a_loadable_folder(tmp_path):
    out = tmp_path / "arabculture"
    assert main(["build", "arabculture", "--source", str(SAMPLE_PATH), "--out", str(out)]) == 0
    assert len(datasets.load_dataset(str(out), "all", split="test")) == len(SAMPLE_PATH.read_text().splitlines())


def test_unknown_command_is_an_error():
    with pytest.raises(SystemExit):
        main(["no-such-command"])


@pytest.mark.slow
def test_readme_demo_runs_offline_on_the_bundled_sample(tmp_path, cli_env):
    """The README's first command, offline: it must say it fell back to the tiny local model."""
    proc = run_cli(
        [console_script("arab-mm-tasks"), "demo", "--work-dir", str(tmp_path / "work"), "--limit", "3"],
        env=cli_env, cwd=tmp_path,
    )  # fmt: skip
    assert "tiny random-weight model built locally (Hub unreachable" in proc.stdout
    for row in ("arabculture_mcq", "Gulf", "Levant", "North Africa", "Nile Valley", "Egypt", "Morocco", "acc"):
        assert row in proc.stdout


@pytest.mark.slow
def test_missing_dataset_folder_is_a_clear_error(tmp_path, tiny_lm_dir, cli_env):
    """The one plain `lm_eval` command line that proves a refusal ends the run in one line, no traceback (the
    excepthook `lm_eval_hooks` installs); the other refusals are checked in-process (`helpers.lm_eval_refusal`)."""
    proc = subprocess.run(
        [console_script("lm_eval"), "--model", "hf", "--model_args", f"pretrained={tiny_lm_dir}",
         "--tasks", "arabculture_mcq_en_none_egypt", "--metadata", '{"arabculture_path": "./no/such/folder"}'],
        env=cli_env, cwd=tmp_path, capture_output=True, text=True, timeout=HANG_TIMEOUT,
    )  # fmt: skip
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last == "error: run option 'arabculture_path': folder './no/such/folder' does not exist"


def test_build_gimmick_from_the_authors_formats(tmp_path, capsys):
    from gimmick_fixtures import write_gimmick_sources

    sources = write_gimmick_sources(tmp_path / "sources")
    options = [item for name, path in sources.items() for item in (f"--{name.replace('_', '-')}", str(path))]
    assert main(["build", "gimmick", "--out", str(tmp_path / "out"), *options]) == 0
    report = capsys.readouterr().out
    assert "cvvqa_removed_by_similarity: 2" in report  # the paper's > 0.5 rule, counted, not silently dropped
    assert {p.name for p in (tmp_path / "out" / "data").iterdir()} == {"civqa", "cvvqa", "coqa_c", "coqa_r", "ckqa"}
