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
``model_response``, ``metric``, nested values as JSON strings).

A model's run is one submission: every results file of it (one per `arab-mm-tasks evaluate` entry of a
suite) is merged into one run date, the latest file's, so ``latest`` and the card show the whole suite.
The repo and every staged file name the model by its public name (`model_name`): a local model folder
(``/home/x/models/foo``) is published as ``foo``, never as its path.

The token is read by ``huggingface_hub`` (``HF_TOKEN`` or ``hf auth login``) and written nowhere.
Credentials a run's configuration holds are redacted by what the value is (`scrub`), never by a
substring of its key: a Hub (``hf_...``), OpenAI (``sk-...``) or GitHub token anywhere in a text,
``user:pass@`` in a URL, a ``token=`` / ``key=`` / ``password=`` parameter, and the value of a key that
names a secret exactly (``api_key``, ``token``, ``hf_token``, ``password``, ...); ARB's
``steps_repetition_token_*`` scores and ``max_new_tokens`` are kept as they are.

>>> scrub({"model_args": "pretrained=m,token=hf_abc", "api_key": "sk-1", "url": "http://u:p@h/v1?key=k&x=1"})
{'model_args': 'pretrained=m,token=<redacted>', 'api_key': '<redacted>', 'url': 'http://<redacted>@h/v1?key=<redacted>&x=1'}
>>> scrub({"max_new_tokens": 512, "steps_repetition_token_3": 0.25, "note": "hf_" + "a1B2" * 9})
{'max_new_tokens': 512, 'steps_repetition_token_3': 0.25, 'note': '<redacted>'}
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from arab_mm_tasks.report.escape import code_fence, markdown_text
from arab_mm_tasks.report.groups import item_score
from arab_mm_tasks.report.harness_outputs import SAMPLE_FIELDS, stamp, stamp_order
from arab_mm_tasks.report.runs import ModelRun, lm_eval_metrics, model_name, read_results_file

# Keys whose value is a credential: compared whole (case and "-" / "_" ignored), never as a substring.
SECRET_KEYS = frozenset({
    "token", "hf_token", "hub_token", "access_token", "auth_token", "api_token", "bearer_token", "refresh_token",
    "huggingface_token", "huggingfacehub_api_token", "hf_api_token", "api_key", "apikey", "openai_api_key",
    "secret", "secret_key", "client_secret", "password", "passwd", "credentials", "authorization",
})  # fmt: skip
_NAMES = "|".join(sorted(SECRET_KEYS | {"key"}, key=len, reverse=True))  # ?key= in a URL is a credential
REDACTED = "<redacted>"
_SECRET_IN_TEXT = [
    (re.compile(r"(?<=://)[^/@\s]+@"), REDACTED + "@"),  # user:password@ (or a token@) in a URL
    # name=value as a URL query parameter or in lm-eval's comma-separated model_args
    (re.compile(rf"(?i)(?:^|(?<=[?&,;\s]))({_NAMES})=[^&,;\s]*"), rf"\1={REDACTED}"),
    (re.compile(r"\bhf_[A-Za-z0-9]{30,}"), REDACTED),  # a Hugging Face token
    (re.compile(r"\bsk-[A-Za-z0-9_-]{16,}"), REDACTED),  # OpenAI / Anthropic style keys
    (re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}"), REDACTED),  # GitHub tokens
    (re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{8,}"), "Bearer " + REDACTED),
]


def is_secret_key(key: Any) -> bool:
    """Whether a key names a credential exactly (``api_key``, ``HF-Token``), not merely contains a word of one."""
    return str(key).strip().lower().replace("-", "_") in SECRET_KEYS


def scrub(value: Any) -> Any:
    """`value` (a run's results or configuration) with every credential replaced by ``<redacted>``: by what a
    value is, or by a key that names a secret exactly; numbers are never changed."""
    if isinstance(value, dict):
        return {k: REDACTED if is_secret_key(k) and isinstance(v, str) and v else scrub(v) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v) for v in value]
    if isinstance(value, str):
        for pattern, replacement in _SECRET_IN_TEXT:
            value = pattern.sub(replacement, value)
    return value


def unlocal(value: Any, model: str, name: str) -> Any:
    """`value` with the local model folder `model` (as given, and as lm-eval's sanitized ``__home__x__m``)
    replaced by the model's public `name` in every text."""
    if model == name:
        return value
    forms = sorted({model, model.rstrip("/\\"), model.replace("/", "__"), model.rstrip("/\\").replace("/", "__")},
                   key=len, reverse=True)  # fmt: skip
    if isinstance(value, dict):
        return {unlocal(k, model, name): unlocal(v, model, name) for k, v in value.items()}
    if isinstance(value, list):
        return [unlocal(v, model, name) for v in value]
    if isinstance(value, str):
        for form in forms:
            value = value.replace(form, name)
    return value


def repo_id_for(org: str, model: str, public: bool) -> str:
    """lighteval's details repo name: ``<org>/details_<model, '/' as '__'>`` (+ ``_private``); a local model
    folder is named by its public name (`model_name`)."""
    name = re.sub(r"[^\w.-]", "_", model_name(model).replace("/", "__")).strip("_")
    return f"{org}/details_{name}{'' if public else '_private'}"


def stage(runs: Sequence[ModelRun], folder: Path) -> list[Path]:
    """Write the repo's files for `runs` (one model's runs, a harness each) under `folder`; returns them (relative
    paths are the repo's). Each run is one submission at one date, its latest results file's: the merged
    results of all its files and the details of every task they ran (a later file winning for a task)."""
    folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    dates_of_task: dict[str, list[str]] = {}
    results_of_date: dict[str, dict[str, Any]] = {}
    name = model_name(runs[0].model)
    for run in runs:
        date = stamp(run.sources[-1])  # sources are oldest first
        results = results_of_date[date] = unlocal(scrub(_lighteval_results(run)), run.model, name)
        results_json = folder / f"results_{date}.json"
        results_json.write_text(json.dumps(results, indent=2, ensure_ascii=False), encoding="utf-8")
        written += [results_json, _results_parquet(results, folder / f"results_{date}.parquet")]
        (folder / date).mkdir(exist_ok=True)
        details = {leaf: file for source in run.sources for leaf, file in run.files_of_source[source].items()}
        for leaf, file in sorted(details.items()):
            task = f"{leaf}|0"
            target = folder / date / f"details_{task}_{date}.parquet"
            if run.harness == "lighteval":
                shutil.copyfile(file, target)  # as lighteval wrote it
            else:
                _lm_eval_details(run.file_samples(file), target, run.model, name)
            dates_of_task.setdefault(task, []).append(date)
            written.append(target)
    latest = results_of_date[max(results_of_date, key=stamp_order)]  # by time, whichever harness's format
    card = folder / "README.md"
    card.write_text(_card(name, list(results_of_date), dates_of_task, latest), encoding="utf-8")
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


def _lighteval_results(run: ModelRun) -> dict[str, Any]:
    """The run's results files as one lighteval results dict: a lighteval file as it is (several merged, the
    latest winning per task, lighteval's run-wide ``all`` mean dropped as it covers one file's tasks); an
    lm-eval run re-keyed."""
    files = [read_results_file(source)[2] for source in run.sources]
    if run.harness == "lighteval":
        if len(files) == 1:
            return files[0]
        merged = dict(files[-1])
        for key in ("results", "versions", "config_tasks", "summary_tasks"):
            merged[key] = {k: v for data in files for k, v in (data.get(key) or {}).items()}
        merged["results"].pop("all", None)
        return merged
    latest = files[-1]
    return {
        "config_general": {
            "model_name": model_name(run.model),
            "harness": run.harness,
            "lm_eval_version": latest.get("lm_eval_version"),
            "model_config": latest.get("config", {}),
        },
        "results": {f"{task}|0": dict(metrics) for data in files for task, metrics in lm_eval_metrics(data)},
        "versions": {f"{task}|0": version for data in files for task, version in (data.get("versions") or {}).items()},
    }


def _results_parquet(results: dict[str, Any], path: Path) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({key: [json.dumps(value, indent=2)] for key, value in results.items()}), path)
    return path


def _lm_eval_details(samples: list[dict[str, Any]], target: Path, model: str, name: str) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = []
    for sample in unlocal(samples, model, name):
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


_SAMPLE_FIELDS = SAMPLE_FIELDS  # lm-eval's and lmms-eval's non-metric keys (harness_outputs)


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
    fence = code_fence(results)  # task names come from run files: no backtick run of theirs closes the block
    return (
        f"---\n{header}---\n\n# Evaluation run of {markdown_text(model)}\n\n"
        f"Created by `arab-mm-tasks submit` in lighteval's details layout: {len(dates_of_task)} task configs, each "
        f"with a split per run and `latest`, and a `results` config ({len(dates)} runs).\n\n"
        f"## Latest results\n\n{fence}json\n{results}\n{fence}\n"
    )
