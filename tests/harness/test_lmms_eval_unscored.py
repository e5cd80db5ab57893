"""An unscored sample in a real `lmms-eval` run: the score is over the scored samples, the rest counted apart.

lmms-eval 0.7.3 takes `np.std` over the task's ``score_key`` field of every per-sample value after
aggregating; a judged value left unscored (an invalid judge reply, or no judge at all) held ``None`` there
and the run died after generating every answer. The generated tasks now name a field that only scored values
carry (`lmms_eval_tasks.CLT_SCORE_KEY`): the run reports what lm-eval and lighteval report for the same samples,
the mean over the scored samples and ``<name>_unscored``. It skips with one line where lmms-eval is not installed.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from lmms_fixtures import lmms_eval_cli, require_lmms_eval, results_and_samples, task_files

from arab_mm_tasks.core.registry import all_specs
from metric_plugins.judge import loopback
from metric_plugins.judge.loopback import UNPARSABLE, LoopbackServer
from metric_plugins.region_aggregation import macro_mean, region_mean

require_lmms_eval()  # the whole file skips, before its fixtures build a model, where lmms-eval is not installed

TASK = "gimmick_ckqa_d_text"  # judged 0-100, invalid replies excluded (invalid_policy "exclude"), text only


class _JudgeInvalidFor(LoopbackServer):
    """The loopback judge (a hashed valid score per prompt), answering unparsably to every prompt that holds one
    of `texts` (the ground truths of the documents chosen to fail): a reply the judge retries, then counts invalid."""

    def __init__(self, texts: list[str]) -> None:
        super().__init__()

        def answer(handler: Any, request: dict, user_text: str, markers: dict, fault: str | None) -> None:
            text = UNPARSABLE if any(t in user_text for t in texts) else loopback._text_for(user_text, markers, None)
            handler._send(200, json.dumps(loopback._completion(request, text)).encode())

        self._httpd.RequestHandlerClass = type("InvalidForHandler", (self._httpd.RequestHandlerClass,),
                                               {"_answer": answer})  # fmt: skip


def _documents(gimmick_hub_dir: Path) -> list[dict]:
    from arab_mm_tasks.core.sources import DatasetSource, load_split, without_media

    spec = all_specs()[TASK]
    source = DatasetSource.from_metadata("gimmick", {"gimmick_path": str(gimmick_hub_dir)})
    return list(without_media(load_split(source, spec.all_config, spec.split, "gimmick")))


@pytest.mark.slow
def test_invalid_judge_replies_are_unscored_and_counted_in_a_real_lmms_eval_run(tmp_path, tiny_vlm_dir,
                                                                              gimmick_hub_dir, cli_env):  # fmt: skip
    spec = all_specs()[TASK]
    docs = _documents(gimmick_hub_dir)[:4]
    failing = {0, 2}  # doc_ids whose judge replies are all invalid
    assert spec.target is not None and len({spec.target(doc) for doc in docs}) == 4  # each prompt names one doc
    env = {**cli_env, "OPENAI_API_KEY": "sk-test-UNSCORED"}
    with _JudgeInvalidFor([spec.target(docs[i]) for i in failing]) as server:
        judge = f"model=judge,base_url={server.url},cache_path={tmp_path / 'judge.sqlite'}"
        metadata = {"gimmick_path": str(gimmick_hub_dir), "judge": judge}
        tasks = task_files(tmp_path / "tasks", {"task": TASK, "metadata": metadata})
        all_results, all_samples = results_and_samples(lmms_eval_cli(tmp_path, tiny_vlm_dir, tasks, env,
                                                                     "--limit", "4"))  # fmt: skip
    results, samples = all_results[TASK], all_samples[TASK]
    assert sorted(s["doc_id"] for s in samples) == [0, 1, 2, 3]

    values = {s["doc_id"]: s["judge_score"] for s in samples}
    assert {i for i, v in values.items() if v["judge_status"] == "invalid"} == failing
    assert all(values[i]["score"] is None for i in failing)
    assert all(isinstance(values[i]["score"], float) for i in set(values) - failing)
    # what lm-eval reports for the same values: the paper's region macro mean over the scored samples only,
    # each region's mean over its scored samples, and the invalid replies counted apart
    items = [(v["score"], v["regions"]) for v in values.values()]
    regions = sorted({r for _, rs in items for r in rs})
    assert results["judge_score,none"] == pytest.approx(macro_mean(items, regions))
    for region in spec.regions:
        expected, reported = region_mean(items, region), results[f"judge_score_{region},none"]
        assert math.isnan(reported) if math.isnan(expected) else reported == pytest.approx(expected)
    assert results["judge_score_unscored,none"] == len(failing)
    # lmms-eval's own CLT standard error is taken over the two scored samples, not the unscored ones
    scored = [v["score"] for v in values.values() if v["score"] is not None]
    mean = sum(scored) / len(scored)
    std = math.sqrt(sum((s - mean) ** 2 for s in scored) / (len(scored) - 1))
    assert results["judge_score_stderr_clt,none"] == pytest.approx(std / math.sqrt(len(scored)))


@pytest.mark.slow
def test_evaluate_without_a_judge_runs_and_counts_every_judged_sample_unscored(tmp_path, tiny_vlm_dir,
                                                                               gimmick_hub_dir, cli_env):  # fmt: skip
    """`evaluate --harness lmms-eval` with no judge, as with lm-eval: a note, then the run; its samples saved (for
    `arab-mm-tasks judge` later), the score NaN and every sample counted unscored (lmms-eval 0.7.3 died on this)."""
    from helpers import console_script, run_cli

    out = tmp_path / "runs"
    env = {key: value for key, value in cli_env.items() if key != "ARAB_MM_JUDGE_MODEL"}
    done = run_cli([console_script("arab-mm-tasks"), "evaluate", "--harness", "lmms-eval", "--device", "cpu",
                    "--model", "llava_hf", "--model_args", f"pretrained={tiny_vlm_dir},dtype=float32,device_map=cpu",
                    "--output_path", str(out), "--gen_kwargs", "max_new_tokens=4", "--tasks", TASK, "--limit", "3",
                    "--dataset-path", f"gimmick={gimmick_hub_dir}"], env=env, cwd=tmp_path)  # fmt: skip
    assert f"note: no judge configured: the judged metrics of {TASK} will be 'not judged'" in done.stdout
    all_results, all_samples = results_and_samples(out)
    results, samples = all_results[TASK], all_samples[TASK]
    assert len(samples) == 3 and all(s["judge_score"]["score"] is None for s in samples)
    assert {s["judge_score"]["judge_status"] for s in samples} == {"not_judged"}  # as lm-eval saves them
    assert math.isnan(results["judge_score,none"])
    assert results["judge_score_unscored,none"] == 3
    assert results["judge_score_stderr_clt,none"] == "N/A"  # no scored sample to take it over
