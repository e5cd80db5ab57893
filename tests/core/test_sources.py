"""Where a task's data comes from: an explicit folder or repo, a published repo, or the authors' release
built on first use; every failure one line that says what to do; never stale."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import datasets
import huggingface_hub.constants
import pytest
from helpers import HANG_TIMEOUT, console_script, lm_eval_refusal
from hub_fixtures import cache_arabculture_release, gated_hub

from arab_mm_tasks.core import sources
from arab_mm_tasks.core.registry import get_benchmark
from arab_mm_tasks.core.sources import DatasetSource, DataSourceError, load_split, release_cache_dir

CARD = "---\nconfigs:\n- config_name: Egypt\n  data_files:\n  - split: test\n    path: data/Egypt/test-*\n---\n"


def hub_folder(root, rows: list[dict]):
    (root / "data" / "Egypt").mkdir(parents=True)
    datasets.Dataset.from_list(rows).to_parquet(root / "data" / "Egypt" / "test-00000-of-00001.parquet")
    (root / "README.md").write_text(CARD)
    return root


@pytest.fixture
def user_caches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """Fresh user and Hugging Face caches for this test (the Hub stays unreachable)."""
    caches = {"xdg": tmp_path / "xdg", "hub": tmp_path / "hf-hub"}
    monkeypatch.setenv("XDG_CACHE_HOME", str(caches["xdg"]))
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(caches["hub"]))
    return caches


def test_default_is_the_authors_release_built_in_the_user_cache(user_caches):
    source = DatasetSource.resolve("arabculture")
    assert source.builds_release and source.benchmark == "arabculture" and source.revision is None
    assert Path(source.path) == release_cache_dir(get_benchmark("arabculture"))
    assert Path(source.path).is_relative_to(user_caches["xdg"] / "arab-mm-tasks" / "datasets" / "arabculture")
    assert source.label == "MBZUAI/ArabCulture"
    pinned = DatasetSource.from_metadata("arabculture", {"arabculture_revision": "abc123", "pretrained": "x"})
    assert pinned.builds_release and pinned.revision == "abc123" and "@abc123" in pinned.path  # keyed by revision


def test_a_published_repo_wins_over_the_release_at_its_pinned_revision(monkeypatch):
    monkeypatch.setitem(sources.PUBLISHED, "arabculture", ("arab-mm-tasks/arabculture", "f00d"))
    assert DatasetSource.resolve("arabculture") == DatasetSource("arab-mm-tasks/arabculture", "f00d")
    assert DatasetSource.resolve("arabculture", revision="beef").revision == "beef"


def test_overrides_from_lm_eval_metadata(tmp_path):
    metadata = {"arabculture_path": str(tmp_path), "arabculture_revision": "v1"}
    source = DatasetSource.from_metadata("arabculture", metadata)
    assert source == DatasetSource(str(tmp_path.resolve()), "v1") and source.is_local
    other = DatasetSource.from_metadata("arabculture", {"arabculture_path": "someone/arabculture-fork"})
    assert other.path == "someone/arabculture-fork" and not other.is_local and not other.builds_release


def test_missing_local_folder_and_unknown_benchmark_are_errors():
    with pytest.raises(DataSourceError, match=r"arabculture: dataset folder '\./nowhere' does not exist"):
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


def test_first_use_builds_the_release_once_and_reuses_it(user_caches, sample_records, capsys):
    cache_arabculture_release(user_caches["hub"], sample_records)
    source = DatasetSource.resolve("arabculture")
    egypt = load_split(source, "Egypt", "test")
    assert len(egypt) == sum(r["country"] == "Egypt" for r in sample_records)
    assert set(egypt.column_names) >= {"id", "answer_index", "topic", "country_specific"}  # our builder's schema
    err = capsys.readouterr().err
    built = Path(source.path) / "arabculture"
    assert (
        f"building ArabCulture (arabculture) from the authors' release MBZUAI/ArabCulture on first use, into {built}"
        in err
    )
    assert f"built ArabCulture (arabculture): {len(sample_records)} rows written, 0 skipped" in err
    stamp = (built / "README.md").stat().st_mtime_ns
    assert len(load_split(source, "all", "test")) == len(sample_records)
    assert "building" not in capsys.readouterr().err and (built / "README.md").stat().st_mtime_ns == stamp
    assert not [p for p in built.parent.iterdir() if ".partial" in p.name]  # nothing half-built left behind


def test_offline_without_the_release_is_one_line_with_the_fix(user_caches):
    with pytest.raises(DataSourceError) as err:
        load_split(DatasetSource.resolve("arabculture"), "Egypt", "test")
    message = str(err.value)
    assert "\n" not in message
    assert "the Hub is unreachable (offline, or HF_HUB_OFFLINE=1) and MBZUAI/ArabCulture is not in" in message
    assert "arab-mm-tasks build arabculture --source COPY --out DIR" in message
    assert '"arabculture_path": "DIR"' in message
    assert not Path(DatasetSource.resolve("arabculture").path).exists() or not any(
        Path(DatasetSource.resolve("arabculture").path).glob("*/README.md")
    )  # a failed build is not mistaken for a built one


def test_a_config_the_hub_release_lacks_says_what_to_download(user_caches):
    with pytest.raises(
        DataSourceError,
        match=r"GIMMICK CVVQA.s clips are not on the Hub: .*floschne/gimmick-vvqa.*--vvqa VVQA --out DIR",
    ):
        load_split(DatasetSource.resolve("gimmick"), "cvvqa", "test")


def test_a_folder_missing_configs_is_refused_naming_them(tmp_path):
    folder = hub_folder(tmp_path / "partial", [{"x": 1}])
    with pytest.raises(DataSourceError) as err:
        load_split(DatasetSource.resolve("arabculture", str(folder)), "UAE", "test", "arabculture")
    message = str(err.value)
    assert f"{folder} lacks configs Algeria, Jordan, KSA" in message and "(it holds Egypt)" in message
    assert "Egypt," not in message.split("(it holds")[0]  # what it holds is not listed as lacking
    assert "run only the tasks of the configs it holds" in message


def _cli_env(cli_env: dict[str, str], user_caches: dict[str, Path]) -> dict[str, str]:
    return {**cli_env, "XDG_CACHE_HOME": str(user_caches["xdg"]), "HF_HUB_CACHE": str(user_caches["hub"])}


# The README's command with no --metadata, the release built on first use, runs for real in
# tests/harness/test_lm_eval_adapter.py::test_lm_eval_command_line_after_install.


def test_lm_eval_offline_without_data_prints_one_line_not_a_traceback(user_caches, tiny_lm_dir):
    """`lm_eval --tasks arabculture_mcq_en_none_egypt` with no --metadata, offline and nothing cached: lm-eval's
    own task loading refuses, in one line (`lm_eval_refusal`; tests/cli/test_cli.py runs the command line once)."""
    printed = lm_eval_refusal(["arabculture_mcq_en_none_egypt"], {"pretrained": str(tiny_lm_dir)})
    assert "Traceback" not in printed and printed.endswith("\n") and printed.count("\n") == 1, printed
    last = printed.strip()
    assert last.startswith("error: arab-mm-tasks preflight: ArabCulture: ") and "MBZUAI/ArabCulture" in last
    assert "arab-mm-tasks build arabculture --source" in last and '"arabculture_path": "DIR"' in last


def test_gated_release_says_where_to_accept_the_conditions(tmp_path, user_caches, cli_env):
    """A gated authors' repo (a loopback Hub answering 403 GatedRepo): exit 2 and one line, through the CLI."""
    with gated_hub() as endpoint:
        env = {**_cli_env(cli_env, user_caches), "HF_ENDPOINT": endpoint}
        env.pop("HF_HUB_OFFLINE"), env.pop("HF_DATASETS_OFFLINE")
        proc = subprocess.run(
            [console_script("arab-mm-tasks"), "build", "arabculture", "--out", str(tmp_path / "out")],
            env=env, cwd=tmp_path, capture_output=True, text=True, timeout=HANG_TIMEOUT,
        )  # fmt: skip
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert proc.stderr.strip() == (
        "arab-mm-tasks build: error: MBZUAI/ArabCulture is gated: accept its conditions at "
        "https://huggingface.co/datasets/MBZUAI/ArabCulture, then log in (`hf auth login` or HF_TOKEN)"
    )


def test_concurrent_first_uses_build_once(user_caches, sample_records, capsys):
    """Two loaders at once (two lm-eval tasks, two processes): one builds, the other waits and reuses it."""
    from concurrent.futures import ThreadPoolExecutor

    cache_arabculture_release(user_caches["hub"], sample_records)
    source = DatasetSource.resolve("arabculture")
    with ThreadPoolExecutor(2) as pool:
        sizes = list(pool.map(lambda config: len(load_split(source, config, "test")), ["Egypt", "KSA"]))
    assert sizes == [5, 5]
    assert capsys.readouterr().err.count("building ArabCulture") == 1


def test_release_folder_of_a_lighteval_config_is_recognised(user_caches):
    source = DatasetSource.resolve("gimmick", revision="r1")
    assert sources.release_source_at(source.path, "r1") == source
    assert sources.release_source_at(source.path, None) is None  # another revision is another build
    assert sources.release_source_at(os.fspath(user_caches["xdg"])) is None


def test_metadata_keys_follow_the_benchmark_name():
    bench = get_benchmark("gimmick")
    assert (bench.path_key, bench.revision_key) == ("gimmick_path", "gimmick_revision")
    assert json.dumps([o.key for o in bench.run_options]) == '["gimmick_max_frames", "gimmick_max_side"]'
