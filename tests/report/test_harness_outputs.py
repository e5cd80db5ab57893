"""One reader of harness outputs (`arab_mm_tasks.report.harness_outputs`): file names of lm-eval, lighteval and
lmms-eval, the one rule for missing and NaN scores, lmms-eval runs read by `report`, `sample-scores` and `judge`
(from the real lmms-eval output committed in tests/data/lmms_eval_run, see its README), and several cluster
jobs' folders of one model merged into one run, the later timestamp winning a task both hold."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import shutil
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arab_mm_tasks.cli import main
from arab_mm_tasks.cli.sample_scores import SampleScores
from arab_mm_tasks.core.registry import all_specs
from arab_mm_tasks.core.sources import DatasetSource, load_split, without_media
from arab_mm_tasks.report import harness_outputs
from arab_mm_tasks.report.groups import item_score
from arab_mm_tasks.report.harness_outputs import Score, samples_file, score_of, stamp_order
from arab_mm_tasks.report.runs import read_runs

LMMS_RUN = Path(__file__).parents[1] / "data" / "lmms_eval_run"
CIVQA = "gimmick_civqa_none"


def lmms_run(tmp_path: Path, which: str, **folders: Path) -> Path:
    """A copy of the committed lmms-eval output `which`, its data folders (``@GIMMICK_DIR@``) set to `folders`."""
    target = tmp_path / which
    shutil.copytree(LMMS_RUN / which, target)
    for results in target.rglob("*_results.json"):
        text = results.read_text("utf-8")
        for name, folder in folders.items():
            text = text.replace(f"@{name.upper()}_DIR@", str(folder))
        results.write_text(text, "utf-8")
    return target


def split_rows(benchmark: str, folder: Path, task: str) -> list[dict]:
    spec = all_specs()[task]
    source = DatasetSource.resolve(benchmark, str(folder))
    return [dict(row) for row in without_media(load_split(source, spec.all_config, spec.split, benchmark))]


# ------------------------------------------------------------------------------------ file names

TASKS = st.from_regex(r"[a-z][a-z0-9]*(_[a-z0-9]+){0,4}(:[a-z]+)?", fullmatch=True)
TIMES = st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2099, 12, 31))


@settings(max_examples=40, deadline=None)
@given(task=TASKS, when=TIMES)
def test_each_harness_samples_file_name_gives_back_its_task_and_timestamp(task, when):
    lm_eval_stamp = when.isoformat().replace(":", "-")  # lm-eval's and lighteval's, microseconds when not 0
    lmms_stamp = when.strftime("%Y%m%d_%H%M%S")  # lmms-eval's
    named = {
        "lm-eval": samples_file(Path(f"samples_{task}_{lm_eval_stamp}.jsonl")),
        "lighteval": samples_file(Path(f"details_{task.split(':')[0]}|0_{lm_eval_stamp}.parquet")),
        "lmms-eval": samples_file(Path(f"{lmms_stamp}_samples_{task}.jsonl")),
    }
    for harness, found in named.items():
        assert found is not None and found.harness == harness
        assert found.task == (task.split(":")[0] if harness == "lighteval" else task)
    assert harness_outputs.results_beside(named["lmms-eval"]).name == f"{lmms_stamp}_results.json"
    assert harness_outputs.results_beside(named["lm-eval"]).name == f"results_{lm_eval_stamp}.json"
    assert samples_file(Path(f"{task}.jsonl")) is None and samples_file(Path(f"results_{lm_eval_stamp}.json")) is None


@settings(max_examples=40, deadline=None)
@given(first=TIMES, later=st.timedeltas(min_value=timedelta(seconds=1), max_value=timedelta(days=900)))
def test_timestamps_of_all_harnesses_sort_by_time(first, later):
    second = first + later
    stamps = [
        (first, first.isoformat().replace(":", "-")),
        (second, second.strftime("%Y%m%d_%H%M%S")),
        (first.replace(microsecond=0), first.strftime("%Y%m%d_%H%M%S")),
        (second, second.isoformat().replace(":", "-")),
    ]
    by_stamp = sorted(stamps, key=lambda pair: (stamp_order(pair[1]), pair[0]))
    assert [when for when, _ in by_stamp] == sorted(when for when, _ in stamps)


# ------------------------------------------------------------------------------------ the one score rule

NUMBERS = st.one_of(st.none(), st.just(math.nan), st.floats(allow_nan=False, allow_infinity=False, width=32))


@settings(max_examples=50, deadline=None)
@given(raw=NUMBERS, generative=st.booleans(), judged=st.sampled_from([None, "pending", "valid", "invalid"]))
def test_none_and_nan_are_unscored_in_every_reader(raw, generative, judged):
    value = {"score": raw, "regions": []} if generative else raw
    if generative and judged is not None:  # a judged value: its judge not run yet, or run with a verdict
        value.update(judge={"prompt": "p"}, **({} if judged == "pending" else {"judge_status": judged}))
    expected = None if raw is None or math.isnan(raw) else float(raw)
    pending = generative and judged == "pending" and expected is None  # only an unscored value waits for a judge
    assert score_of(value) == Score(expected, pending)
    assert item_score({"m": value}, "m") == expected and item_score({}, "m") is None  # the report's reader
    scores = SampleScores()  # sample-scores' reader: an unscored value is an empty cell, never "nan"
    scores.add(("model", "r1"), "task", "where", "m", value)
    assert scores.table() == [{"model": "model", "id": "r1", "m": expected}]
    assert bool(scores.pending) == pending


# ------------------------------------------------------------------------------------ lmms-eval runs


def test_report_reads_an_lmms_eval_run_with_its_documents_read_back(gimmick_hub_dir, tmp_path):
    folder = lmms_run(tmp_path, "civqa", gimmick=gimmick_hub_dir)
    (run,) = read_runs([folder])
    assert (run.harness, run.model, run.name) == ("lmms-eval", "/models/tiny-vlm", "tiny-vlm")
    results = run.results[CIVQA]
    assert results["relaxed_acc"] == 0.0 and math.isnan(results["relaxed_acc_LAC"])
    assert not [name for name in results if "stderr" in name] and run.item_counts == {CIVQA: 3}
    samples = run.samples(CIVQA)
    rows = split_rows("gimmick", gimmick_hub_dir, CIVQA)[:3]  # --limit 3: the split's first three rows
    assert [sample["doc"]["id"] for sample in samples] == [row["id"] for row in rows]
    spec = all_specs()[CIVQA]
    assert [sample["target"] for sample in samples] == [spec.target(row) for row in rows]
    assert run.check_samples() == {}


def test_report_and_sample_scores_commands_on_an_lmms_eval_run(gimmick_hub_dir, tmp_path, capsys):
    folder = lmms_run(tmp_path, "civqa", gimmick=gimmick_hub_dir)
    assert main(["report", str(folder), "--out", str(tmp_path / "report")]) == 0
    assert "/models/tiny-vlm (lmms-eval): 1 task results, 1 sample files" in capsys.readouterr().out
    out = tmp_path / "scores.csv"
    assert main(["sample-scores", f"llava={folder}", "--out", str(out)]) == 0
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    ids = [row["id"] for row in split_rows("gimmick", gimmick_hub_dir, CIVQA)[:3]]
    assert [row["id"] for row in rows] == ids and {row["model"] for row in rows} == {"llava"}
    assert {row["relaxed_acc"] for row in rows} == {"0.0"}


def test_sample_scores_reads_a_folder_of_lm_eval_and_lmms_eval_samples_together(gimmick_hub_dir, tmp_path):
    from arab_mm_tasks.cli.sample_scores import read_runs as read_scores

    folder = lmms_run(tmp_path, "civqa", gimmick=gimmick_hub_dir)
    lm_eval = {"doc_id": 0, "doc": {"id": "lm-1"}, "relaxed_acc": {"score": 100.0, "regions": ["A"]}}
    (folder / f"samples_{CIVQA}_2026-11-20T10-00-00.jsonl").write_text(json.dumps(lm_eval) + "\n", "utf-8")
    scores = read_scores([str(folder)])
    ids = [row["id"] for row in split_rows("gimmick", gimmick_hub_dir, CIVQA)[:3]]
    assert {row["id"]: row["relaxed_acc"] for row in scores.table()} == {"lm-1": 100.0, **dict.fromkeys(ids, 0.0)}


def test_submit_stages_an_lmms_eval_run_as_lighteval_details(gimmick_hub_dir, tmp_path, capsys):
    import pandas as pd

    folder = lmms_run(tmp_path, "civqa", gimmick=gimmick_hub_dir)
    staged = tmp_path / "staged"
    assert main(["submit", str(folder), "--org", "me", "--dry-run", str(staged)]) == 0
    repo = staged / "me" / "details_tiny-vlm_private"
    results = json.loads((repo / "results_20261126_120110.json").read_text("utf-8"))  # lmms-eval's run date
    assert results["config_general"]["harness"] == "lmms-eval"
    assert results["results"][f"{CIVQA}|0"]["relaxed_acc"] == 0.0
    details = pd.read_parquet(repo / "20261126_120110" / f"details_{CIVQA}|0_20261126_120110.parquet")
    ids = [row["id"] for row in split_rows("gimmick", gimmick_hub_dir, CIVQA)[:3]]
    assert [json.loads(doc)["specific"]["id"] for doc in details["doc"]] == ids
    metrics = [json.loads(metric) for metric in details["metric"]]  # metrics only: no token counts, no prompt
    assert all(set(metric) == set(all_specs()[CIVQA].metric_names()) for metric in metrics)


def test_lmms_eval_samples_whose_dataset_is_gone_are_one_line_not_a_traceback(tmp_path, capsys):
    folder = lmms_run(tmp_path, "civqa", gimmick=tmp_path / "moved")
    (samples,) = folder.rglob("*_samples_*.jsonl")
    assert main(["sample-scores", str(folder)]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"arab-mm-tasks sample-scores: error: {samples}: its documents could not be read back")
    assert str(tmp_path / "moved") in line
    assert main(["report", str(folder), "--out", str(tmp_path / "report")]) == 1  # written, the samples listed
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"arab-mm-tasks report: not read: {samples}: its documents could not be read back")
    pearl = lmms_run(tmp_path, "pearl_predict_only", pearl=tmp_path / "moved")
    (samples,) = pearl.rglob("*_samples_pearl_closed.jsonl")
    judge = ["--judge", "model=j,base_url=http://127.0.0.1:9", "--out", str(tmp_path / "judged")]
    assert main(["judge", str(samples), *judge]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"arab-mm-tasks judge: error: {samples}: its documents could not be read back")


def test_judge_scores_lmms_eval_predict_only_samples_from_the_run_recorded_dataset(pearl_hub_dir, pearl_judge,
                                                                                    tmp_path):  # fmt: skip
    """Generate-then-judge on lmms-eval: its samples hold no document; the dataset is the one the results file
    records, each sample is its doc_id's row, and the open-ended judges see that row's image."""
    from pearl_fixtures import image_bytes, judge_requests, pearl_reply

    from arab_mm_tasks.cli.judge_saved import judge_saved
    from metric_plugins.judge import JudgeItem, get_prompt
    from metric_plugins.judge.config import JudgeConfig

    folder = lmms_run(tmp_path, "pearl_predict_only", pearl=pearl_hub_dir)
    config = JudgeConfig(model="judge", base_url=pearl_judge.url, cache_path=str(tmp_path / "judge.sqlite"))
    report = judge_saved([folder], config, tmp_path / "judged")
    assert report["summary"]["invalid"] == 0 and report["summary"]["failed"] == 0
    for task, metrics in (("pearl_closed", ["acc"]), ("pearl_open", ["correctness", "overall", "cas"])):
        (saved,) = folder.rglob(f"*_samples_{task}.jsonl")
        judged = [json.loads(line) for line in (tmp_path / "judged" / saved.name).read_text("utf-8").splitlines()]
        originals = [json.loads(line) for line in saved.read_text("utf-8").splitlines()]
        assert len(judged) == 3 and all("doc" not in record for record in judged)  # lmms-eval's own format
        assert [(r["doc_id"], r["filtered_resps"]) for r in judged] == [
            (r["doc_id"], r["filtered_resps"]) for r in originals
        ]
        rows = split_rows("pearl", pearl_hub_dir, task)[:3]  # --limit 3: doc_id 0, 1, 2
        assert [r["target"] for r in originals] == [all_specs()[task].target(row) for row in rows]
        for name in metrics:
            values = [record[name] for record in judged]
            assert all(value["judge_status"] == "valid" for value in values)
            expected = []
            for value in values:
                prompt = get_prompt(value["judge"]["prompt"])
                (message,) = prompt.render(JudgeItem(value["judge"]["fields"]))
                parsed = prompt.parse(pearl_reply(message.text))
                weights = value.get("judge_weights") or {value.get("judge_score") or prompt.primary_score: 1.0}
                expected.append(sum(weight * parsed.scores[key] for key, weight in weights.items()))
            result = report["results"][f"{task} (lmms-eval: {saved.name})"][name]
            assert result == pytest.approx(sum(expected) / len(expected))
    # the rubric and CAS judges saw each sample's own image: its doc_id's row's (the closed-form judge none)
    images = image_bytes(pearl_hub_dir, "pearl_open")
    rows = split_rows("pearl", pearl_hub_dir, "pearl_open")[:3]
    seen = sorted(imgs[0] for _, imgs in judge_requests(pearl_judge) if imgs)
    assert seen == sorted([images[row["image_id"]] for row in rows] * 2)
    calls = len(pearl_judge.requests)
    judge_saved([folder], config, tmp_path / "again")
    assert len(pearl_judge.requests) == calls  # every judgement came from the cache


def test_judge_on_a_suites_folder_skips_and_lists_the_tasks_it_cannot_judge(gimmick_hub_dir, pearl_hub_dir,
                                                                            pearl_judge, tmp_path, capsys):  # fmt: skip
    from arab_mm_tasks.cli.judge_saved import judge_saved
    from metric_plugins.judge.config import JudgeConfig

    lmms_run(tmp_path / "suite", "civqa", gimmick=gimmick_hub_dir)
    lmms_run(tmp_path / "suite", "pearl_predict_only", pearl=pearl_hub_dir)
    (civqa,) = (tmp_path / "suite").rglob(f"*_samples_{CIVQA}.jsonl")
    config = JudgeConfig(model="judge", base_url=pearl_judge.url, cache_path=str(tmp_path / "judge.sqlite"))
    report = judge_saved([tmp_path / "suite"], config, tmp_path / "judged")
    assert report["skipped"] == {str(civqa): f"task {CIVQA!r} has no judged metric"}
    assert sorted(name.split(" ")[0] for name in report["results"]) == ["pearl_closed", "pearl_open"]
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"arab-mm-tasks judge: note: skipped 1 files of tasks with no judged metric ({civqa.name})"
    )
    saved = json.loads((tmp_path / "judged" / "results_judged.json").read_text("utf-8"))
    assert saved["skipped"] == report["skipped"]
    judge = ["--judge", f"model=judge,base_url={pearl_judge.url}", "--out", str(tmp_path / "again")]
    assert main(["judge", str(civqa), *judge]) == 2  # named itself: an error, in one line
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"arab-mm-tasks judge: error: {civqa}: task {CIVQA!r} has no judged metric"
    )


# ------------------------------------------------------------------------------------ several jobs, one model


def write_lm_eval(folder: Path, stamp: str, model: str, scores: dict[str, float]) -> Path:
    """An lm-eval results file as `lm_eval --output_path` writes it (the keys the report reads)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"results_{stamp}.json"
    data = {
        "results": {task: {"alias": task, "acc,none": v, "acc_stderr,none": 0.01} for task, v in scores.items()},
        "n-samples": {task: {"original": 10, "effective": 10} for task in scores},
        "config": {"model": "hf", "model_args": f"pretrained={model}"},
    }
    path.write_text(json.dumps(data), "utf-8")
    return path


@pytest.mark.parametrize("order", [1, -1])
def test_jobs_of_one_model_merge_into_one_run_and_the_later_timestamp_wins_a_shared_task(tmp_path, order):
    early = write_lm_eval(tmp_path / "runs" / "job2" / "org__m", "2026-11-20T10-00-00.000001", "org/m",
                          {"arabculture_mcq_en_none": 0.25, "arabculture_mcq_ar_none": 0.5})  # fmt: skip
    write_lm_eval(tmp_path / "runs" / "job1" / "org__m", "2026-11-21T09-00-00", "org/m",
                  {"arabculture_mcq_en_none": 0.75, "arabculture_completion_en_none": 0.125})  # fmt: skip
    jobs = [tmp_path / "runs" / "job1", tmp_path / "runs" / "job2"][::order]
    (run,) = read_runs(jobs)
    assert run.results == {
        "arabculture_mcq_en_none": {"acc": 0.75},  # job1's file is the later one, whatever the folders' order
        "arabculture_mcq_ar_none": {"acc": 0.5},
        "arabculture_completion_en_none": {"acc": 0.125},
    }
    assert run.replaced == {"arabculture_mcq_en_none": early}
    (again,) = read_runs([tmp_path / "runs", *jobs])  # every file named twice is read once
    assert again.results == run.results and again.replaced == run.replaced and len(again.sources) == 2


def test_the_report_command_says_which_jobs_task_was_replaced(tmp_path, capsys):
    early = write_lm_eval(tmp_path / "job1", "2026-11-20T10-00-00", "org/m", {"arabculture_mcq_en_none": 0.25})
    write_lm_eval(tmp_path / "job2", "2026-11-22T10-00-00", "org/m", {"arabculture_mcq_en_none": 0.75})
    assert main(["report", str(tmp_path / "job1"), str(tmp_path / "job2"), "--out", str(tmp_path / "out")]) == 0
    captured = capsys.readouterr()
    assert "org/m (lm-eval): 1 task results, 0 sample files" in captured.out  # one model, not one per job
    assert captured.err.splitlines() == [
        f"arab-mm-tasks report: org/m: arabculture_mcq_en_none of {early} replaced by a later run's"
    ]


def test_module_doctests_pass():
    import doctest

    assert doctest.testmod(harness_outputs).failed == 0


# ------------------------------------------------------------------------------------ breakdown


def _breakdown_rows(output: str, task: str) -> list[list[str]]:
    """The body rows of `task`'s table in what `arab-mm-tasks breakdown` printed, as cell lists."""
    section = output.split(f"\n{task} (", 1)[1].split("\n\n", 2)[1]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in section.splitlines()[2:]]


@settings(max_examples=20, deadline=None)
@given(raw=st.lists(NUMBERS, min_size=1, max_size=8), generative=st.booleans())
def test_breakdown_counts_a_none_or_nan_sample_unscored_never_a_nan_mean(raw, generative, tmp_path_factory):
    """The one rule in `breakdown`: lm-eval numbers and ``{"score": ...}`` values, None and NaN among them (lm-eval
    writes NaN as a bare ``NaN``), give the mean of the others and their count apart."""
    folder = tmp_path_factory.mktemp("breakdown")
    lines = [{"doc_id": i, "doc": {"id": str(i), "topic": "Food"}, "acc": {"score": v} if generative else v}
             for i, v in enumerate(raw)]  # fmt: skip
    (folder / "samples_pearl_closed_2026-11-26T00-00-00.jsonl").write_text("\n".join(map(json.dumps, lines)))
    scored = [v for v in raw if v is not None and not math.isnan(v)]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["breakdown", str(folder), "--by", "topic"]) == 0
    ((topic, n, mean, *unscored),) = _breakdown_rows(out.getvalue(), "pearl_closed")
    assert (topic, int(n)) == ("Food", len(raw))
    if not scored:
        assert mean == "nan"
    else:
        expected = sum(scored) / len(scored)
        assert mean == (f"{expected:.2f}" if generative else f"{100 * expected:.1f}")
    assert unscored == ([str(len(raw) - len(scored))] if len(scored) < len(raw) else [])


def test_breakdown_reads_lmms_eval_samples_with_their_documents_read_back(gimmick_hub_dir, tmp_path, capsys):
    folder = lmms_run(tmp_path, "civqa", gimmick=gimmick_hub_dir)
    (samples_path,) = folder.rglob("*_samples_*.jsonl")
    samples = [json.loads(line) for line in samples_path.read_text("utf-8").splitlines()]
    samples[0]["relaxed_acc"]["score"], samples[1]["relaxed_acc"]["score"] = 100.0, math.nan  # NaN: unscored
    samples_path.write_text("\n".join(map(json.dumps, samples)) + "\n", "utf-8")
    assert main(["breakdown", str(folder), "--by", "id", "--metric", "relaxed_acc"]) == 0
    ids = [row["id"] for row in split_rows("gimmick", gimmick_hub_dir, CIVQA)[:3]]  # only from the read-back rows
    assert _breakdown_rows(capsys.readouterr().out, CIVQA) == [
        [ids[0], "1", "100.00", "0"], [ids[1], "1", "nan", "1"], [ids[2], "1", "0.00", "0"],
    ]  # fmt: skip
    assert main(["breakdown", str(samples_path), "--by", "id", "--metric", "relaxed_acc"]) == 0  # one file named
    assert f"{CIVQA} (3 samples)" in capsys.readouterr().out


def test_breakdown_of_a_file_no_harness_writes_is_one_line(tmp_path, capsys):
    odd = tmp_path / "my_samples.jsonl"
    odd.write_text('{"doc": {"topic": "Food"}, "acc": 1.0}\n')
    assert main(["breakdown", str(odd), "--by", "topic"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"arab-mm-tasks breakdown: error: {odd}: not a samples file of lm-eval, lighteval or lmms-eval (by its name)"
    ]
