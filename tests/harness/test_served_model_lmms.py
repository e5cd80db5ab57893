"""lmms-eval's OpenAI-compatible model (``--model openai``) against the loopback model server (issue 22 point 1):
GIMMICK's video task (1 fps frames) and a text-only task in one run; the server's log proves the frames arrived
in order as base64 PNG data URLs, each where its placeholder is, with the paper's generation settings; every
sample's answer is the server's reply and every score is recomputed from them. Runs where lmms-eval is installed
(/work/lmms-venv, the ``[lmms]`` extra); skips with one line elsewhere."""

from __future__ import annotations

import json
import math

import pytest
import yaml

from arab_mm_tasks.core.registry import get_spec
from arab_mm_tasks.core.sources import DatasetSource, load_split
from arab_mm_tasks.core.spec import IMAGE_PLACEHOLDER
from arab_mm_tasks.testing.model_server import ModelServer, pixel_digest

pytestmark = pytest.mark.slow


def _relaxed_overall(spec, items: list[tuple[float, list[str]]]) -> float:
    from arab_mm_tasks.gimmick.vocabulary import REGION_CODES
    from metric_plugins.region_aggregation import macro_mean, micro_mean

    return micro_mean(items) if spec.generative_metrics[0].overall == "micro" else macro_mean(items, REGION_CODES)


def test_lmms_eval_openai_model_sends_frames_in_order_and_scores_the_replies(tmp_path, gimmick_hub_dir, cli_env):
    pytest.importorskip("lmms_eval.api.task", reason="lmms-eval is not installed (the [lmms] extra)")
    from helpers import console_script, run_cli

    from arab_mm_tasks.harness import lmms_eval_tasks
    from metric_plugins.relaxed_accuracy import relaxed_match

    names = ("gimmick_cvvqa_none", "gimmick_coqa_c_text")
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    for i, name in enumerate(names):
        entry = {"task": name, "metadata": {"gimmick_path": str(gimmick_hub_dir)}}
        (tasks / f"{i}.yaml").write_text(yaml.safe_dump(entry), encoding="utf-8")
    out = tmp_path / "out"
    with ModelServer() as model:
        run_cli(
            [console_script("lmms-eval"), "--model", "openai",
             "--model_args", f"model=served-vlm,base_url={model.url},num_concurrent=8,max_retries=1",
             "--tasks", str(tasks), "--include_path", lmms_eval_tasks.tasks_path(), "--limit", "4",
             "--output_path", str(out), "--log_samples"],
            env={**cli_env, "OPENAI_API_KEY": "unused"}, cwd=tmp_path,
        )  # fmt: skip
    assert len(model.requests) == 8
    requests = {(r.text, tuple(i.pixels for i in r.images)): r for r in model.requests}
    (results_file,) = out.rglob("*_results.json")
    results = json.loads(results_file.read_text("utf-8"))["results"]
    frames = 0
    for name in names:
        spec = get_spec(name)
        docs = list(load_split(DatasetSource.resolve("gimmick", str(gimmick_hub_dir)), spec.all_config, spec.split))
        (samples_file,) = out.rglob(f"*_samples_{name}.jsonl")
        items = []
        for sample in map(json.loads, samples_file.read_text("utf-8").splitlines()):
            doc = docs[sample["doc_id"]]
            request = spec.render(doc)
            text = "\n".join(piece for piece in request.query.split(IMAGE_PLACEHOLDER) if piece)
            sent = requests[(text, tuple(pixel_digest(image) for image in request.images))]
            assert all(image.url_prefix == "data:image/png;base64" for image in sent.images)
            if request.images:  # each frame where its placeholder is: the prompt opens with them, one per line
                assert [image.position for image in sent.images] == list(range(0, 2 * len(request.images), 2))
            assert (sent.max_tokens, sent.temperature) == (spec.generation.max_new_tokens, 0)
            assert sample["filtered_resps"] == sent.reply.strip()
            frames = max(frames, len(sent.images))
            items.append((relaxed_match(sample["filtered_resps"], request.target), doc["region_codes"]))
        reported = results[name]["relaxed_acc,none"]
        assert not math.isnan(reported) and reported == pytest.approx(_relaxed_overall(spec, items))
    assert frames == 10  # the 10 s clip: 10 frames, 1 per second


def test_evaluate_through_lmms_eval_runs_a_served_model(tmp_path, gimmick_hub_dir, cli_env):
    """`arab-mm-tasks evaluate --harness lmms-eval --model openai`: a GIMMICK family mixing text-only and image
    members runs against the served model and is saved (lmms-eval records the model object as the run's
    `model_source`: an API client could not be copied into the results file); ArabCulture is skipped in one line."""
    pytest.importorskip("lmms_eval.api.task", reason="lmms-eval is not installed (the [lmms] extra)")
    import re

    from helpers import console_script, run_cli

    out = tmp_path / "runs"
    with ModelServer() as model:
        proc = run_cli(
            [console_script("arab-mm-tasks"), "evaluate", "--harness", "lmms-eval", "--model", "openai",
             "--model_args", f"model=served-vlm,base_url={model.url},num_concurrent=8",
             "--tasks", "gimmick_coqa_c,arabculture_mcq", "--dataset-path", f"gimmick={gimmick_hub_dir}",
             "--limit", "2", "--output_path", str(out)],
            env={**cli_env, "OPENAI_API_KEY": "unused"}, cwd=tmp_path,
        )  # fmt: skip
    summary = dict(re.findall(r"^  (\S+): (.+)$", proc.stdout[proc.stdout.index("summary:") :], flags=re.MULTILINE))
    assert summary["gimmick_coqa_c"] == "ran"
    assert summary["arabculture_mcq"].startswith("skipped: log-likelihood tasks")
    (results_file,) = out.rglob("*_results.json")
    assert json.loads(results_file.read_text("utf-8"))["model_source"] == "openai"
    replies = {}
    for name in ("gimmick_coqa_c_image", "gimmick_coqa_c_text", "gimmick_coqa_c_image_text"):
        (samples_file,) = out.rglob(f"*_samples_{name}.jsonl")
        replies[name] = [json.loads(line)["filtered_resps"] for line in samples_file.read_text("utf-8").splitlines()]
    assert sorted(r for values in replies.values() for r in values) == sorted(r.reply for r in model.requests)
    assert sorted(len(r.images) for r in model.requests) == [0, 0, 3, 3, 3, 3]  # text, image, image+text members
