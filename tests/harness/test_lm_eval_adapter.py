"""lm-eval adapter: the generated YAML tree, the hooks, and real `lm_eval` command lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import console_script, run_cli
from hub_fixtures import cache_arabculture_release

from arab_mm_tasks.cli import main
from arab_mm_tasks.core.registry import all_specs, get_spec
from arab_mm_tasks.core.spec import RecordError
from arab_mm_tasks.harness import lm_eval_hooks
from arab_mm_tasks.harness.lm_eval_yaml import TASKS_DIR, drift, render_tree, spec_files

ARABCULTURE = {name: spec for name, spec in all_specs().items() if spec.benchmark == "arabculture"}


@pytest.fixture(scope="module")
def task_manager(arabculture_hub_dir: Path):
    from lm_eval.tasks import TaskManager

    # include_defaults=False: only our tree is scanned, which keeps these in-process tests fast.
    return TaskManager(
        include_path=str(TASKS_DIR),
        include_defaults=False,
        metadata={"arabculture_path": str(arabculture_hub_dir)},
    )


def test_committed_yaml_tree_matches_the_specs():
    assert drift() == [], "run `arab-mm-tasks generate` and commit the result"


def test_tree_has_every_variant_country_region_and_alias():
    tree = render_tree()
    names = {
        line.split(": ", 1)[1]
        for text in tree.values()
        for line in text.splitlines()
        if line.startswith(("task: ", "group: "))
    }
    for spec in all_specs().values():
        assert spec.name in names
        assert {spec.subset_task(s) for s in spec.subsets} <= names
        assert {spec.group_task(g) for g in spec.groups} <= names
        assert set(spec.aliases) <= names
    assert {"arabculture_mcq", "arabculture_completion"} <= names
    assert len([s for s in all_specs().values() if s.benchmark == "arabculture"]) == 12


def test_groups_are_micro_averaged_over_countries_of_their_region():
    files = spec_files(get_spec("arabculture_mcq_en_none"))
    gulf = files["arabculture/arabculture_mcq_en_none/_gulf.yaml"]
    assert gulf["task"] == [
        "arabculture_mcq_en_none_ksa",
        "arabculture_mcq_en_none_uae",
        "arabculture_mcq_en_none_yemen",
    ]
    assert all(m["weight_by_size"] for m in gulf["aggregate_metric_list"])
    overall = files["arabculture/arabculture_mcq_en_none/_group.yaml"]
    assert overall["task"] == [
        f"arabculture_mcq_en_none_{r}" for r in ("gulf", "levant", "north_africa", "nile_valley")
    ]


@pytest.mark.parametrize("name", sorted(ARABCULTURE))
def test_lm_eval_builds_exactly_the_spec_request(name, task_manager, arabculture_hub_dir, sample_records):
    """Through lm-eval's own Task API: context, choices and gold equal `spec.render` on every document."""
    spec = ARABCULTURE[name]
    egypt = next(s for s in spec.subsets if s.config == "Egypt")  # real rows from the authors' release
    task = task_manager.load([spec.subset_task(egypt)])["tasks"]
    (task,) = task.values()
    docs = list(task.test_docs())
    assert docs, "no documents loaded"
    for doc in docs:
        request = spec.render(doc)
        assert task.doc_to_text(doc) == request.query
        assert task.doc_to_choice(doc) == request.choices
        assert task.doc_to_target(doc) == request.gold == doc["answer_index"]


def test_mcq_request_strings_lm_eval_scores(task_manager):
    """The continuation lm-eval scores is the bare letter (target_delimiter "" as upstream)."""
    (task,) = task_manager.load(["arabculture_mcq_ar_region_country_egypt"])["tasks"].values()
    doc = next(d for d in task.test_docs() if d["sample_id"] == "1 | Breakfast")
    instances = task.construct_requests(doc=doc, ctx=task.doc_to_text(doc), metadata=("t", 0, 1))
    assert [inst.args for inst in instances] == [(task.doc_to_text(doc), letter) for letter in ("أ", "ب", "ج")]
    assert task.doc_to_text(doc).endswith("ج. يتم تناول الفول مع الفواكه\n\n")
    assert "الموقع: مصر, وادي النيل\n" in task.doc_to_text(doc)


def test_bad_record_names_record_and_field():
    process = lm_eval_hooks.process_docs_arabculture_mcq_en_none
    import datasets

    bad = {
        "id": "Egypt-0007", "country": "Egypt", "region": "Nile Valley", "first_statement": "جملة",
        "options": {"arabic_keys": ["أ", "ب", "ج"], "english_keys": ["A", "B", "C"], "text": ["x", "y", "z"]},
        "answer_key": {"arabic_answer_key": "د", "english_answer_key": "D"},
    }  # fmt: skip
    with pytest.raises(RecordError, match=r"Egypt-0007.*answer_key\.english_answer_key"):
        process(datasets.Dataset.from_list([bad]))


def test_unknown_hook_is_an_attribute_error():
    with pytest.raises(AttributeError):
        lm_eval_hooks.process_docs_no_such_task  # noqa: B018


def test_few_shot_is_refused():
    sampler = lm_eval_hooks.ZeroShotOnly([], rnd=None)
    assert sampler.sample(0) == []
    with pytest.raises(ValueError, match="zero-shot only"):
        sampler.sample(3)


@pytest.mark.slow
def test_lm_eval_command_line_after_install(tmp_path, tiny_lm_dir, sample_records, cli_env, capsys):
    """The README's command, `lm_eval --tasks arabculture_mcq,arabculture_completion`, from any directory, with
    no --include_path and no --metadata: the authors' release (in the Hugging Face cache; the Hub is unreachable)
    is built on first use, once for both families, then scored."""
    hub_cache = tmp_path / "hf-hub"
    cache_arabculture_release(hub_cache, sample_records)
    env = {**cli_env, "XDG_CACHE_HOME": str(tmp_path / "xdg"), "HF_HUB_CACHE": str(hub_cache)}
    out = tmp_path / "out"
    proc = run_cli(
        [console_script("lm_eval"), "--model", "hf", "--model_args", f"pretrained={tiny_lm_dir}",
         "--tasks", "arabculture_mcq,arabculture_completion", "--device", "cpu", "--batch_size", "4",
         "--output_path", str(out), "--log_samples"],
        env=env, cwd=tmp_path,
    )  # fmt: skip
    assert proc.stderr.count("building ArabCulture (arabculture) from the authors' release") == 1
    table = proc.stdout
    for row in ("arabculture_mcq", "arabculture_completion", "Gulf", "Nile Valley", "Egypt", "KSA", "Yemen"):
        assert row in table
    (results_file,) = out.rglob("results_*.json")
    results = json.loads(results_file.read_text())
    n_docs = {task: results["n-samples"][task]["effective"] for task in results["n-samples"]}
    assert n_docs["arabculture_mcq_en_none_egypt"] == 5
    for family in ("arabculture_mcq", "arabculture_completion"):
        overall = results["results"][family]["acc,none"]
        # the overall score is the micro average of the 13 countries
        countries = [t for t in n_docs if t.startswith(f"{family}_en_none_") and t.count("_") == 4]
        assert len(countries) == 13
        micro = sum(results["results"][t]["acc,none"] * n_docs[t] for t in countries) / sum(
            n_docs[t] for t in countries
        )
        assert overall == pytest.approx(micro)
    samples = [json.loads(line) for line in next(out.rglob("samples_arabculture_mcq_en_none_egypt_*.jsonl")).open()]
    first = next(s for s in samples if s["doc"]["sample_id"] == "1 | Breakfast")
    assert first["arguments"]["gen_args_0"]["arg_0"].startswith("\nYou are tasked with selecting")
    assert int(first["target"]) == 1  # lm-eval logs targets as strings
    # the paper's topic x CS breakdown from the same samples
    assert main(["breakdown", str(out), "--by", "topic,country_specific"]) == 0
    report = capsys.readouterr().out
    assert "arabculture_mcq_en_none (" in report and "| Food | True |" in report


def test_process_docs_renders_each_split_once_and_never_mixes_them(sample_records):
    import datasets

    process = lm_eval_hooks.process_docs_arabculture_mcq_en_none
    egypt = datasets.Dataset.from_list([r for r in sample_records if r["country"] == "Egypt"])
    ksa = datasets.Dataset.from_list([r for r in sample_records if r["country"] == "KSA"])
    first = process(egypt)
    assert process(ksa)["request_query"] == [get_spec("arabculture_mcq_en_none").render(r).query for r in ksa]
    assert process(egypt) is first  # lm-eval reads the docs three times a run; rendered once


def test_lm_evals_custom_dataset_notice_is_dropped_for_our_tasks_only(caplog, monkeypatch):
    """lm-eval's two-line "Custom kwargs can be passed to `--metadata`" warning (`api/task.py:download`), once
    per task (26 per ArabCulture run), is not printed for our tasks; for anyone else's task it still is."""
    import logging

    import arab_mm_tasks.harness.lm_eval_hooks  # noqa: F401  (the filter is installed with the hooks)

    notice = (
        "{}: Custom kwargs can be passed to `--metadata` in console (as json string) or to the TaskManager."
        "\nFor example --metadata='{{\"max_seq_lengths\":[4096, 8192]}}'. For details see task Readme."
    )
    names = ["arabculture_mcq_en_none_egypt", "gimmick_cvvqa_none", "arb", "arab_culture_egypt", "arabicmmlu_all"]
    logger = logging.getLogger("lm_eval.api.task")
    monkeypatch.setattr(logger, "disabled", False)  # lighteval's dictConfig, imported earlier, disables it
    with caplog.at_level(logging.WARNING, logger="lm_eval.api.task"):
        for name in names:
            logger.warning(notice.format(name))
    assert [r.getMessage().split(":")[0] for r in caplog.records] == ["arab_culture_egypt", "arabicmmlu_all"]
