"""A model's results and details as a Hub dataset repo in lighteval's leaderboard layout.

lighteval's ``--push-to-hub`` (0.13, ``EvaluationTracker.push_to_hub``) writes, to the dataset repo
``<org>/details_<model with / as __>`` (``_private`` appended unless the run is public):

    results_<date>.json              the run's results dict
    results_<date>.parquet           the same, one row, each top-level key as a JSON string
    <date>/details_<task>|<shots>_<date>.parquet   per-item details, one file per task
    README.md                        a card whose YAML ``configs`` name each task's files (a split per
                                     date and ``latest``) and the ``results`` config

`stage` writes exactly those files for one `ModelRun` into a folder, which ``--dry-run`` keeps and a
push uploads as it is (`push`), so what is checked is what is uploaded. A lighteval run's files are
copied byte for byte; an lm-eval run is converted: its results re-keyed as lighteval's
(``<task>|0`` -> metric -> value, ``config_general``), its samples as details rows (``doc``,
``model_response``, ``metric``, nested values as JSON strings). The token is read by
``huggingface_hub`` (``HF_TOKEN`` or ``hf auth login``) and written nowhere; credentials a run's
configuration holds (``token=`` in model arguments, ``user:key@`` or ``?key=`` in a URL, a key
field) are replaced by ``<redacted>`` in the results files (`scrub`).

>>> scrub({"model_args": "pretrained=m,token=hf_abc", "api_key": "sk-1", "url": "http://u:p@h/v1?key=k&x=1"})
{'model_args': 'pretrained=m,token=<redacted>', 'api_key': '<redacted>', 'url': 'http://<redacted>@h/v1?key=<redacted>&x=1'}
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from arab_mm_tasks.report.groups import item_score
from arab_mm_tasks.report.runs import ModelRun, lm_eval_metrics
from metric_plugins.breakdowns import read_samples

_SECRET_KEY = re.compile(r"token|api_?key|secret|password|credential", re.IGNORECASE)
_SECRET_IN_TEXT = [
    (re.compile(r"(?<=://)[^/@\s]+@"), "<redacted>@"),  # user:password@ in a URL
    (
        re.compile(r"(?i)(?:^|(?<=[?&,\s]))((?:api_?)?key|token|access_token|password|secret)=[^&,\s]*"),
        r"\1=<redacted>",
    ),
]


def scrub(value: Any) -> Any:
    """`value` (a run's results or configuration) with every credential replaced by ``<redacted>``."""
    if isinstance(value, dict):
        return {k: "<redacted>" if _SECRET_KEY.search(str(k)) and v else scrub(v) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v) for v in value]
    if isinstance(value, str):
        for pattern, replacement in _SECRET_IN_TEXT:
            value = pattern.sub(replacement, value)
    return value


def repo_id_for(org: str, model: str, public: bool) -> str:
    """lighteval's details repo name: ``<org>/details_<model, '/' as '__'>`` (+ ``_private``)."""
    name = re.sub(r"[^\w.-]", "_", model.replace("/", "__")).strip("_")
    return f"{org}/details_{name}{'' if public else '_private'}"


def stage(runs: Sequence[ModelRun], folder: Path) -> list[Path]:
    """Write the repo's files for `runs` (one model's runs) under `folder`; returns them (relative paths are the
    repo's). Each results file is one date: its results and the details of the tasks it ran."""
    folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    dates_of_task: dict[str, list[str]] = {}
    results_of_date: dict[str, dict[str, Any]] = {}
    for run in runs:
        for source in run.sources:
            date = source.name.removeprefix("results_").removesuffix(".json")
            results = results_of_date[date] = scrub(_lighteval_results(run, source))
            results_json = folder / f"results_{date}.json"
            results_json.write_text(json.dumps(results, indent=2, ensure_ascii=False), encoding="utf-8")
            written += [results_json, _results_parquet(results, folder / f"results_{date}.parquet")]
            (folder / date).mkdir(exist_ok=True)
            for leaf, file in sorted(run.files_of_source[source].items()):
                task = f"{leaf}|0"
                target = folder / date / f"details_{task}_{date}.parquet"
                if run.harness == "lighteval":
                    shutil.copyfile(file, target)  # as lighteval wrote it
                else:
                    _lm_eval_details(file, target)
                dates_of_task.setdefault(task, []).append(date)
                written.append(target)
    latest = results_of_date[max(results_of_date)]  # ISO dates sort as time
    card = folder / "README.md"
    card.write_text(_card(runs[0].model, list(results_of_date), dates_of_task, latest), encoding="utf-8")
    return [*written, card]


def push(folder: Path, repo_id: str, public: bool) -> str:
    """Upload the staged `folder` as it is; the repo is private unless `public`. Returns the commit URL."""
    from huggingface_hub import HfApi

    api = HfApi()
    api.create_repo(repo_id, repo_type="dataset", private=not public, exist_ok=True)
    commit = api.upload_folder(
        repo_id=repo_id, repo_type="dataset", folder_path=str(folder), commit_message="arab-mm-tasks results"
    )
    return str(getattr(commit, "commit_url", commit))


def _lighteval_results(run: ModelRun, source: Path) -> dict[str, Any]:
    """A results file as lighteval's: as it is for a lighteval run; re-keyed for an lm-eval one."""
    data = json.loads(source.read_text(encoding="utf-8"))
    if run.harness == "lighteval":
        return data
    return {
        "config_general": {
            "model_name": run.model,
            "harness": "lm-eval",
            "lm_eval_version": data.get("lm_eval_version"),
            "model_config": data.get("config", {}),
        },
        "results": {f"{task}|0": dict(metrics) for task, metrics in lm_eval_metrics(data)},
        "versions": {f"{task}|0": version for task, version in data.get("versions", {}).items()},
    }


def _results_parquet(results: dict[str, Any], path: Path) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({key: [json.dumps(value, indent=2)] for key, value in results.items()}), path)
    return path


def _lm_eval_details(samples_file: Path, target: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = []
    for _, sample in read_samples([samples_file]):
        scores = {k: item_score(sample, k) for k in sample if k not in _SAMPLE_FIELDS}
        metrics = {k: v for k, v in scores.items() if v is not None}
        rows.append({
            "doc": json.dumps({"doc_id": sample.get("doc_id"), "specific": sample.get("doc"),
                               "target": sample.get("target")}, ensure_ascii=False, default=str),
            "model_response": json.dumps({"text": sample.get("filtered_resps"), "resps": sample.get("resps")},
                                         ensure_ascii=False, default=str),
            "metric": json.dumps(metrics),
        })  # fmt: skip
    pq.write_table(pa.Table.from_pylist(rows, schema=_details_schema()), target)


_SAMPLE_FIELDS = {
    "doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "filter", "metrics", "doc_hash",
    "prompt_hash", "target_hash",
}  # fmt: skip


def _details_schema():
    import pyarrow as pa

    return pa.schema([("doc", pa.string()), ("model_response", pa.string()), ("metric", pa.string())])


def _card(model: str, dates: list[str], dates_of_task: dict[str, list[str]], latest: dict[str, Any]) -> str:
    """lighteval's card: a config per task (a split per run date, and ``latest``) and the ``results`` config."""

    def files(paths: dict[str, str]) -> list[dict[str, Any]]:
        splits = [{"split": re.sub(r"[^\w.]", "_", date), "path": [path]} for date, path in paths.items()]
        newest = max(paths)  # ISO dates sort as time
        return [*splits, {"split": "latest", "path": [paths[newest]]}]

    configs = [
        {
            "config_name": re.sub(r"\W", "_", task),
            "data_files": files({d: f"{d}/details_{task}_{d}.parquet" for d in task_dates}),
        }
        for task, task_dates in sorted(dates_of_task.items())
    ]
    configs.append({"config_name": "results", "data_files": files({d: f"results_{d}.parquet" for d in dates})})
    header = yaml.safe_dump({"pretty_name": f"Evaluation run of {model}", "configs": configs}, sort_keys=False)
    results = json.dumps({"all": latest.get("results", {})}, indent=2, ensure_ascii=False)
    return (
        f"---\n{header}---\n\n# Evaluation run of {model}\n\n"
        f"Created by `arab-mm-tasks submit` in lighteval's details layout: {len(dates_of_task)} task configs, each "
        f"with a split per run and `latest`, and a `results` config ({len(dates)} runs).\n\n"
        f"## Latest results\n\n```json\n{results}\n```\n"
    )
