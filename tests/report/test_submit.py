"""`arab-mm-tasks submit`: lighteval's leaderboard layout checked file by file on a dry run, no credential in any
file, and a push that uploads exactly the dry run's files (the Hub client recorded, the Hub being unreachable)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from report_fixtures import STAMP, make_run, write_lighteval, write_lm_eval

from arab_mm_tasks.cli import main

TOKEN = "hf_TOKEN_NEVER_WRITTEN"


@pytest.fixture()
def run_dirs(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    a, b = make_run("org/model-a", "lm-eval", 1), make_run("org/model-b", "lighteval", 2)
    return a, b, write_lm_eval(a, tmp_path / "lm-eval"), write_lighteval(b, tmp_path / "lighteval")


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_dry_run_writes_lightevals_layout_file_by_file(run_dirs, tmp_path):
    a, _, lm_eval_dir, lighteval_dir = run_dirs
    out = tmp_path / "dry"
    assert main(["submit", str(lm_eval_dir), str(lighteval_dir), "--org", "arab-org", "--dry-run", str(out)]) == 0

    assert sorted(p.name for p in (out / "arab-org").iterdir()) == [
        "details_org__model-a_private",
        "details_org__model-b_private",
    ]  # lighteval's repo names: details_<model with / as __>, private unless --public
    repo_a = out / "arab-org" / "details_org__model-a_private"
    stamp = STAMP["lm-eval"]
    leaves = sorted({item.task for item in a.items})
    assert sorted(_files(repo_a)) == sorted(
        ["README.md", f"results_{stamp}.json", f"results_{stamp}.parquet"]
        + [f"{stamp}/details_{leaf}|0_{stamp}.parquet" for leaf in leaves]
    )
    results = json.loads((repo_a / f"results_{stamp}.json").read_text())
    assert results["config_general"]["model_name"] == "org/model-a"
    assert results["results"]["pearl_closed|0"]["acc"] == pytest.approx(a.results["pearl_closed"]["acc"])
    row = pq.read_table(repo_a / f"results_{stamp}.parquet").to_pylist()[0]
    assert json.loads(row["results"]) == results["results"]  # the same dict, one JSON column per key
    details = pq.read_table(repo_a / f"{stamp}/details_pearl_closed|0_{stamp}.parquet").to_pylist()
    assert len(details) == sum(1 for item in a.items if item.task == "pearl_closed")
    assert {"acc"} == set(json.loads(details[0]["metric"]))
    card = (repo_a / "README.md").read_text()
    configs = {c["config_name"]: c for c in yaml.safe_load(card.split("---")[1])["configs"]}
    assert set(configs) == {f"{leaf}_0" for leaf in leaves} | {"results"}
    for config in configs.values():
        for split in config["data_files"]:
            assert all((repo_a / path).is_file() for path in split["path"])
        assert [s["split"] for s in config["data_files"]][-1] == "latest"

    # a lighteval run: its details copied as lighteval wrote them, its results scrubbed of credentials
    repo_b = out / "arab-org" / "details_org__model-b_private"
    stamp_b = STAMP["lighteval"]
    source = next(lighteval_dir.rglob(f"details_pearl_closed|0_{stamp_b}.parquet"))
    assert (repo_b / stamp_b / source.name).read_bytes() == source.read_bytes()
    results_b = json.loads((repo_b / f"results_{stamp_b}.json").read_text())
    assert results_b["config_general"]["model_config"]["api_key"] == "<redacted>"
    for folder in (repo_a, repo_b):
        for name, content in _files(folder).items():
            assert TOKEN.encode() not in content and b"sk-SECRET-IN-CONFIG" not in content, name


def test_push_uploads_exactly_the_dry_run(run_dirs, tmp_path, monkeypatch):
    _, _, lm_eval_dir, _ = run_dirs
    dry = tmp_path / "dry"
    assert main(["submit", str(lm_eval_dir), "--org", "arab-org", "--public", "--dry-run", str(dry)]) == 0
    calls: list[tuple[str, dict]] = []

    class RecordingApi:
        def create_repo(self, repo_id, **kwargs):
            calls.append(("create_repo", {"repo_id": repo_id, **kwargs}))

        def upload_folder(self, repo_id, folder_path, **kwargs):
            calls.append(("upload_folder", {"repo_id": repo_id, "files": _files(Path(folder_path)), **kwargs}))
            return "https://hub.example/commit/1"

    import huggingface_hub

    monkeypatch.setattr(huggingface_hub, "HfApi", RecordingApi)
    assert main(["submit", str(lm_eval_dir), "--org", "arab-org", "--public"]) == 0
    (create, upload) = calls
    assert create == ("create_repo", {"repo_id": "arab-org/details_org__model-a", "repo_type": "dataset",
                                      "private": False, "exist_ok": True})  # fmt: skip
    assert upload[1]["repo_id"] == "arab-org/details_org__model-a" and upload[1]["repo_type"] == "dataset"
    assert upload[1]["files"] == _files(dry / "arab-org" / "details_org__model-a")
