"""lm-eval data-parallel under `accelerate launch --num_processes 2` on CPU (gloo): the same samples and scores
as one process, Pearl's judge asked once per item by rank 0 (with the images of rank 1's items too), on the
tiny models.

lm-eval 0.4.13's HFLM shards the documents only when it counts more than one GPU (``huggingface.py``:
``elif gpus > 1``), so on a CPU machine both ranks would evaluate everything. `LAUNCHER` makes it count
the ranks instead and then runs the unchanged ``python -m lm_eval``: everything after that (accelerate's
gloo process group, sharding, the gathers to rank 0, aggregation on rank 0) is lm-eval's own code path,
as on GPUs. docs/scale-out.md ("Data-parallel") gives the commands."""

from __future__ import annotations

import glob
import json
import multiprocessing
import os
import pickle
from pathlib import Path

import pytest
from helpers import console_script, run_cli
from pearl_fixtures import PearlJudgeServer

from arab_mm_tasks.core.media import png_bytes
from arab_mm_tasks.core.registry import get_spec
from arab_mm_tasks.core.scoring import pending_images, pending_users, release_images, score_prediction
from arab_mm_tasks.harness.lm_eval_ranks import rank_values
from arab_mm_tasks.testing.synthetic import make_image

LAUNCHER = """\
import os, runpy, sys
import torch
torch.cuda.device_count = lambda: int(os.environ.get("WORLD_SIZE", "1"))  # lm-eval shards only across "GPUs"
sys.argv[0] = "lm_eval"
runpy.run_module("lm_eval", run_name="__main__", alter_sys=True)
"""

# accelerate's torchrun launcher with a CPU gloo group (ACCELERATE_USE_CPU=1); the flags it asks for are given
ACCELERATE = ["launch", "--multi_gpu", "--num_processes", "2", "--num_machines", "1", "--mixed_precision", "no",
              "--dynamo_backend", "no"]  # fmt: skip


def _run(tmp_path: Path, env: dict[str, str], lm_eval_args: list[str], out: Path, *, ranks: int) -> None:
    if ranks == 1:
        run_cli([console_script("lm_eval"), *lm_eval_args, "--device", "cpu", "--output_path", str(out)],
                env=env, cwd=tmp_path)  # fmt: skip
        return
    launcher = tmp_path / "lm_eval_ranks.py"
    launcher.write_text(LAUNCHER)
    run_cli([console_script("accelerate"), *ACCELERATE, str(launcher), *lm_eval_args, "--output_path", str(out)],
            env={**env, "ACCELERATE_USE_CPU": "1"}, cwd=tmp_path)  # fmt: skip


def _outputs(out: Path) -> tuple[dict, dict[tuple[str, int], dict]]:
    """The results and every logged sample by (task, doc_id), without lm-eval's doc hash (it hashes a repr)."""
    (results_file,) = glob.glob(f"{out}/**/results_*.json", recursive=True)
    results = json.loads(Path(results_file).read_text())
    samples = {}
    for path in glob.glob(f"{out}/**/samples_*.jsonl", recursive=True):
        task = Path(path).name.removeprefix("samples_").rsplit("_", 1)[0]
        for line in Path(path).read_text().splitlines():
            sample = json.loads(line)
            sample.pop("doc_hash")
            sample["resps"] = [_unpadded(responses) for responses in sample["resps"]]
            samples[(task, sample["doc_id"])] = sample
    return results, samples


def _unpadded(responses: list) -> list:
    """One request's responses without lm-eval's padding: a rank with fewer requests runs its last one again until
    the ranks have as many (``evaluator.py``: ``padding_requests``), each copy's answer appended to that request."""
    assert all(response == responses[0] for response in responses)
    return responses[:1]


def _assert_same_run(one: Path, two: Path, tasks: int) -> dict[tuple[str, int], dict]:
    results_one, samples_one = _outputs(one)
    results_two, samples_two = _outputs(two)
    assert results_two["results"] == results_one["results"]
    assert len({task for task, _ in samples_one}) == tasks
    assert samples_two.keys() == samples_one.keys()
    for key, sample in samples_one.items():
        assert samples_two[key] == sample, key
    return samples_two


@pytest.mark.slow
def test_arabculture_log_likelihood_is_the_same_on_two_ranks(tmp_path, tiny_lm_dir, arabculture_hub_dir, cli_env):
    args = ["--model", "hf", "--model_args", f"pretrained={tiny_lm_dir}", "--tasks", "arabculture_mcq_en_none_ksa",
            "--batch_size", "4", "--limit", "5", "--log_samples",
            "--metadata", json.dumps({"arabculture_path": str(arabculture_hub_dir)})]  # fmt: skip
    _run(tmp_path, cli_env, args, tmp_path / "two", ranks=2)
    _run(tmp_path, cli_env, args, tmp_path / "one", ranks=1)
    samples = _assert_same_run(tmp_path / "one", tmp_path / "two", tasks=1)
    assert len(samples) == 5  # the sample's KSA documents, 3 on rank 0 and 2 (padded) on rank 1


@pytest.mark.slow
def test_pearl_judged_on_two_ranks_asks_the_judge_once_per_item(tmp_path, tiny_vlm_dir, pearl_hub_dir, cli_env):
    env = {**cli_env, "OPENAI_API_KEY": "sk-test"}
    bodies = {}
    for ranks in (2, 1):
        with PearlJudgeServer() as server:
            judge = f"model=judge,base_url={server.url},cache_path={tmp_path / f'judge{ranks}.sqlite'}"
            metadata = json.dumps({"pearl_path": str(pearl_hub_dir), "judge": judge})
            args = ["--model", "hf-multimodal", "--model_args", f"pretrained={tiny_vlm_dir},max_images=8",
                    "--tasks", "pearl_open,pearl_x_multi", "--gen_kwargs", "max_gen_toks=4", "--limit", "4",
                    "--log_samples", "--metadata", metadata]  # fmt: skip
            _run(tmp_path, env, args, tmp_path / f"ranks{ranks}", ranks=ranks)
            bodies[ranks] = sorted(request.body for request in server.requests)
    samples = _assert_same_run(tmp_path / "ranks1", tmp_path / "ranks2", tasks=2)
    # judged in the samples file too (rank 1's samples came over as the objects rank 0 judged), none unscored
    open_values = [s["overall"] for (task, _), s in samples.items() if task == "pearl_open"]
    assert len(open_values) == 4 and all(v["judge_status"] == "valid" for v in open_values)
    # each item judged once across both ranks: the same requests as one process, none twice
    assert bodies[2] == bodies[1]
    assert len(set(bodies[2])) == len(bodies[2]) == 4 * 2 + 4  # Pearl open: rubric + CAS; Pearl-X: one each
    # the open items' judges saw their image, rank 1's items included
    contents = [json.loads(body)["messages"][0]["content"] for body in bodies[2]]
    assert sum(not isinstance(content, str) and content[0]["type"] == "image_url" for content in contents) == 8
    assert os.path.exists(tmp_path / "judge2.sqlite")


def _rank_one(task: str, predictions: list[str]) -> tuple[bytes, bytes, list[dict], list[bytes]]:
    """What another rank sends: its samples' values pickled twice, as lm-eval's two gathers do (logged samples,
    then raw metrics), the plain values' JSON, and the images' PNG bytes."""
    spec, image = get_spec(task), make_image("rank1", size=(20, 12))
    target = json.dumps({"question": "ما هذا؟", "ground_truth": "جواب", "image_description": "صورة"})
    samples = [score_prediction(spec, p, target, ["Egypt"], images=[image]) for p in predictions]
    plain = json.loads(json.dumps(samples))
    values = [rank_values(sample) for sample in samples]
    return (
        pickle.dumps([{"doc_id": i, **v} for i, v in enumerate(values)]),
        pickle.dumps(values),
        plain,
        [png_bytes(image)],
    )


def test_values_from_another_rank_arrive_as_one_object_with_their_images():
    """Pearl's open-ended metrics share one rubric request (with the image) and one CAS request; the per-country
    names share their metric's value. After the two gathers rank 0 holds one object per value for both the
    logged sample and the metric lists, and the images under the request's token, kept for each request."""
    predictions = ["جواب أول", "جواب ثان"]
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        logged_blob, metrics_blob, plain, (png,) = pool.apply(_rank_one, ("pearl_open", predictions))
    logged, metrics = pickle.loads(logged_blob), pickle.loads(metrics_blob)
    tokens = []
    try:
        for sample, values, expected in zip(logged, metrics, plain, strict=True):
            assert {name: value for name, value in sample.items() if name != "doc_id"} == expected
            for name, value in values.items():
                assert sample[name] is value  # one object: a score written by rank 0's judge shows in the samples file
            requests = {id(v["judge"]): v["judge"] for v in values.values() if "judge" in v}
            assert len(requests) == 2  # rubric and CAS, each shared by the metrics that read it
            (token,) = {request["images"] for request in requests.values()}
            tokens.append(token)
            assert [png_bytes(image) for image in pending_images(token)] == [png]
            assert pending_users(token) == 2
            values["overall"]["score"] = 4.0
            assert sample["overall"]["score"] == 4.0
    finally:  # the process-wide registry as this test found it: the judge that would release them never runs here
        for token in tokens:
            while pending_images(token) is not None:
                release_images(token)
