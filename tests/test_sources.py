"""Dataset sources: Hub by default, a local folder or another repo when asked, never stale."""

from __future__ import annotations

import datasets
import pytest

from arab_mm_tasks.sources import HUB_ORG, DatasetSource, load_split

CARD = "---\nconfigs:\n- config_name: Egypt\n  data_files:\n  - split: test\n    path: data/Egypt/test-*\n---\n"


def hub_folder(root, rows: list[dict]):
    (root / "data" / "Egypt").mkdir(parents=True)
    datasets.Dataset.from_list(rows).to_parquet(root / "data" / "Egypt" / "test-00000-of-00001.parquet")
    (root / "README.md").write_text(CARD)
    return root


def test_default_is_the_project_hub_repo():
    assert DatasetSource.resolve("arabculture") == DatasetSource(f"{HUB_ORG}/arabculture")
    assert DatasetSource.from_metadata("arabculture", {"pretrained": "x"}).path == f"{HUB_ORG}/arabculture"


def test_overrides_from_lm_eval_metadata(tmp_path):
    metadata = {"arabculture_path": str(tmp_path), "arabculture_revision": "v1"}
    source = DatasetSource.from_metadata("arabculture", metadata)
    assert source == DatasetSource(str(tmp_path.resolve()), "v1") and source.is_local
    other = DatasetSource.from_metadata("arabculture", {"arabculture_path": "someone/arabculture-fork"})
    assert other.path == "someone/arabculture-fork" and not other.is_local


def test_missing_local_folder_and_unknown_benchmark_are_errors():
    with pytest.raises(FileNotFoundError, match=r"arabculture: dataset folder '\./nowhere' does not exist"):
        DatasetSource.resolve("arabculture", "./nowhere")
    with pytest.raises(KeyError, match="unknown benchmark 'nope'"):
        DatasetSource.resolve("nope")


def test_same_named_folders_and_rebuilds_are_never_served_stale(tmp_path):
    """datasets 5.2 caches a README-configured local folder by base name only; load_split must not."""
    first = hub_folder(tmp_path / "a" / "arabculture", [{"x": 1}])
    second = hub_folder(tmp_path / "b" / "arabculture", [{"x": 2}, {"x": 3}])
    assert load_split(DatasetSource.resolve("arabculture", str(first)), "Egypt", "test")["x"] == [1]
    assert load_split(DatasetSource.resolve("arabculture", str(second)), "Egypt", "test")["x"] == [2, 3]
    datasets.Dataset.from_list([{"x": 9}]).to_parquet(first / "data" / "Egypt" / "test-00000-of-00001.parquet")
    assert load_split(DatasetSource.resolve("arabculture", str(first)), "Egypt", "test")["x"] == [9]
