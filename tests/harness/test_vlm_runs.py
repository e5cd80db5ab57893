"""A vision-language model through the real command lines, where lm-eval 0.4.13's multimodal models need our
work-arounds (`arab_mm_tasks.harness.lm_eval_multimodal`): a family mixing text-only and image members in one
run, and responses of an image entry killed midway, reused by the next run."""

from __future__ import annotations

import json
import signal
import subprocess

import pytest
from helpers import HANG_TIMEOUT, KILLER, console_script, run_cli

from arab_mm_tasks.report.runs import read_runs

pytestmark = pytest.mark.slow


def test_a_family_of_text_only_and_image_members_runs_on_a_vision_model(tmp_path, tiny_vlm_dir, gimmick_hub_dir,
                                                                           cli_env):  # fmt: skip
    out = tmp_path / "out"
    proc = run_cli(
        [console_script("lm_eval"), "--model", "hf-multimodal", "--model_args", f"pretrained={tiny_vlm_dir}",
         "--tasks", "gimmick_coqa_c", "--metadata", json.dumps({"gimmick_path": str(gimmick_hub_dir)}),
         "--limit", "2", "--gen_kwargs", "max_gen_toks=4", "--apply_chat_template", "--device", "cpu",
         "--output_path", str(out), "--log_samples"],
        env=cli_env, cwd=tmp_path,
    )  # fmt: skip
    assert "Traceback" not in proc.stderr
    (run,) = read_runs([out])
    members = ("gimmick_coqa_c_image", "gimmick_coqa_c_text", "gimmick_coqa_c_image_text")
    for member in members:
        samples = run.samples(member)
        assert len(samples) == 2 and all(isinstance(s["resps"][0][0], str) for s in samples)
    # the family's score is the mean of its three members (the paper's Avg.)
    family = run.results["gimmick_coqa_c"]["relaxed_acc"]
    assert family == pytest.approx(sum(run.results[m]["relaxed_acc"] for m in members) / 3)


def test_an_image_entry_killed_midway_reuses_its_responses(tmp_path, tiny_vlm_dir, gimmick_hub_dir, cli_env):
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(KILLER)
    out = tmp_path / "runs"
    args = [console_script("arab-mm-tasks"), "evaluate", "--device", "cpu", "--model", "hf-multimodal",
            "--model_args", f"pretrained={tiny_vlm_dir}", "--tasks", "gimmick_coqa_c_image",
            "--output_path", str(out), "--dataset-path", f"gimmick={gimmick_hub_dir}", "--limit", "8",
            "--gen_kwargs", "max_gen_toks=4"]  # fmt: skip
    env = {**cli_env, "PYTHONPATH": str(site), "KILL_AT_GENERATE": "4"}
    killed = subprocess.run(args, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=HANG_TIMEOUT)
    assert killed.returncode == -signal.SIGKILL
    assert not list(out.rglob("results_*.json"))

    resumed = run_cli(args, env=cli_env, cwd=tmp_path)
    log = resumed.stdout + resumed.stderr
    assert "Cached requests: 3, Requests remaining: 5" in log  # the three answers given before the kill
    (run,) = read_runs([out])
    assert len(run.samples("gimmick_coqa_c_image")) == 8

    for file in out.rglob("results_*.json"):
        file.unlink()
    rerun = run_cli(args, env=cli_env, cwd=tmp_path)
    assert "Cached requests: 8, Requests remaining: 0" in rerun.stdout + rerun.stderr
