"""`arab-mm-tasks evaluate`, the installed command, when things are missing: everything missing is said at once
before the model loads; a metric without its model runs as "not computed" when asked; plain `lm_eval` stops at
task load naming each missing encoder. (No --device, a token in --model_args and a half-written samples file are
tests/cli/test_evaluate.py's, on the text-model run it shares.)"""

from __future__ import annotations

import csv
import json
import subprocess
from pathlib import Path

import pytest
from arb_fixtures import arb_corpus, build_arb_hub_dir, marked_rows
from helpers import HANG_TIMEOUT, console_script, lm_eval_refusal

pytestmark = pytest.mark.slow

SECRET = "hf_NotARealTokenButShaped1234"
DROPPED = ("ARAB_MM_BERTSCORE_MODEL", "ARAB_MM_LABSE_MODEL", "ARAB_MM_ALDI_MODEL", "ARAB_MM_JUDGE_MODEL")


def _evaluate(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [console_script("arab-mm-tasks"), "evaluate", *args], env=env, cwd=cwd, capture_output=True, text=True,
        timeout=HANG_TIMEOUT,
    )  # fmt: skip


@pytest.fixture()
def env(cli_env, tmp_path) -> dict[str, str]:
    """Offline, an empty Hugging Face cache, no encoder or judge named."""
    clean = {k: v for k, v in cli_env.items() if k not in DROPPED}
    return {**clean, "HF_HUB_CACHE": str(tmp_path / "hf-cache"), "XDG_CACHE_HOME": str(tmp_path / "xdg")}


@pytest.fixture()
def no_metric_models(monkeypatch, tmp_path) -> None:
    """This process as `env` leaves a command line: no encoder or judge named, an empty Hugging Face cache."""
    import huggingface_hub.constants

    for key in DROPPED:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))


@pytest.fixture(scope="module")
def arb_hub(tmp_path_factory) -> Path:
    """ARB built by the real builder from the authors' formats (images included), shared by this file's tests."""
    return build_arb_hub_dir(tmp_path_factory.mktemp("arb"))


@pytest.fixture(scope="module")
def arb_csv_only(tmp_path_factory) -> Path:
    """ARB built from the authors' CSV without ``--images-dir``: rows without images."""
    from dataset_builders.arb import build

    root = tmp_path_factory.mktemp("arb-csv")
    header, rows = marked_rows()
    with (root / "arb.csv").open("w", encoding="utf-8", newline="") as stream:
        writer = csv.DictWriter(stream, fieldnames=header)
        writer.writeheader()
        writer.writerows(rows)
    build(root / "hub", csv=root / "arb.csv")
    return root / "hub"


def test_everything_missing_is_listed_at_once_and_the_model_is_never_loaded(tmp_path, env, arb_csv_only):
    missing = tmp_path / "no-arabculture"
    proc = _evaluate(
        ["--model", "hf-multimodal", "--model_args", f"pretrained={tmp_path / 'no-model'},token={SECRET}",
         "--tasks", "arabculture_mcq_en_none,jeem_caption_egyptian,arb_ocr", "--output_path", str(tmp_path / "out"),
         "--dataset-path", f"arabculture={missing}", "--dataset-path", f"arb={arb_csv_only}"],
        env, tmp_path,
    )  # fmt: skip
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    problems = [line for line in proc.stderr.splitlines() if line.startswith("  - ")]
    assert len(problems) == 6, proc.stderr
    assert f"dataset folder '{missing}' does not exist" in problems[0]
    assert "the authors' release toloka/JEEM cannot be fetched" in proc.stderr
    assert f"{arb_csv_only} was built without images" in proc.stderr and "--images-dir" in proc.stderr
    for key in ("BERTSCORE", "ALDI", "LABSE"):
        assert f"ARAB_MM_{key}_MODEL" in proc.stderr
    assert "no model was loaded; --skip-unavailable-metrics runs without a metric" in proc.stderr
    assert "loading model" not in out and "Traceback" not in out  # the model path does not exist: never tried
    assert SECRET not in out
    assert not (tmp_path / "out").exists()


def test_skip_unavailable_metrics_runs_and_names_what_was_not_computed(tmp_path, env, arb_hub, no_metric_models,
                                                                        capsys):  # fmt: skip
    from arab_mm_tasks.cli import main
    from arab_mm_tasks.testing.tiny_model import build_tiny_vlm

    model = build_tiny_vlm(tmp_path / "tiny-vlm", arb_corpus())
    out = tmp_path / "runs"
    args = ["--model", "hf-multimodal", "--model_args", f"pretrained={model}", "--tasks", "arb_ocr",
            "--output_path", str(out), "--limit", "1", "--gen_kwargs", "max_gen_toks=8", "--device", "cpu",
            "--dataset-path", f"arb={arb_hub}"]  # fmt: skip
    # refused in-process: the command line's refusal before the model loads is the first test's
    assert main(["evaluate", *args]) == 1
    refused = capsys.readouterr()
    assert "loading model" not in refused.out and not out.exists()
    assert "ARAB_MM_BERTSCORE_MODEL" in refused.err and "ARAB_MM_LABSE_MODEL" in refused.err

    ran = _evaluate([*args, "--skip-unavailable-metrics"], env, tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "arb_ocr: ran (not computed: bertscore, labse, model unavailable)" in ran.stdout
    (results_file,) = out.rglob("results_*.json")
    results = json.loads(results_file.read_text(encoding="utf-8"))
    assert set(results["not_computed"]) == {"bertscore", "labse"}
    assert "ARAB_MM_LABSE_MODEL" in results["not_computed"]["labse"]
    scores = results["results"]["arb_ocr"]
    assert scores["bertscore_unscored,none"] == 1 and scores["labse_unscored,none"] == 1
    assert scores["bleu_unscored,none"] == 0  # the metrics that need no model are computed


def test_plain_lm_eval_stops_at_task_load_naming_each_missing_encoder(arb_hub, tiny_vlm_dir, no_metric_models):
    """`lm_eval --model hf-multimodal --tasks arb_ocr` without the encoders: refused when lm-eval loads the task,
    one problem a line and no traceback (`lm_eval_refusal`: lm-eval's task loading in-process; tests/cli/test_cli.py
    runs the command line once). Nothing is generated or written: lm-eval generates only after every task loads."""
    printed = lm_eval_refusal(["arb_ocr"], {"pretrained": str(tiny_vlm_dir), "arb_path": str(arb_hub)})
    assert printed.startswith("error: arab-mm-tasks preflight: 2 problem(s) found before any model work"), printed
    assert "ARAB_MM_BERTSCORE_MODEL" in printed and "ARAB_MM_LABSE_MODEL" in printed
    assert "Traceback" not in printed
