"""A local build folder is untrusted input: its data stays inside it, and a broken one is one line.

Each case mutates a copy of a real ArabCulture build (the bundled sample, built by the real builder)
and loads it the three ways a run does: `load_split` (Python, `arab-mm-tasks`), lm-eval's
`custom_dataset` hook, and arab-mm-lighteval's patched `load_dataset`. Every refusal is a
`DataSourceError` (which the command lines print as one line) naming the card, file or folder.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import datasets
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arab_mm_tasks.core.sources import DatasetSource, DataSourceError, check_config, load_split

CONFIG = "Egypt"
SHARD = Path("data") / CONFIG / "test-00000-of-00001.parquet"


@pytest.fixture
def build(arabculture_hub_dir: Path, tmp_path: Path) -> Path:
    """A fresh copy of a real build, to tamper with."""
    return Path(shutil.copytree(arabculture_hub_dir, tmp_path / "build"))


def _load_split(folder: Path) -> None:
    load_split(DatasetSource.resolve("arabculture", str(folder)), CONFIG, "test", "arabculture")


def _lm_eval_hook(folder: Path) -> None:
    from arab_mm_tasks.harness import lm_eval_hooks

    lm_eval_hooks.load_dataset(benchmark="arabculture", config=CONFIG, split="test", arabculture_path=str(folder))


def _lighteval_loader(folder: Path) -> None:
    from lighteval.tasks import lighteval_task

    from arab_mm_tasks.harness.lighteval_cli import patch_local_dataset_cache

    patch_local_dataset_cache()
    lighteval_task.load_dataset(str(folder), CONFIG, split="test")


LOADERS: dict[str, Callable[[Path], None]] = {
    "load_split": _load_split,
    "lm-eval hook": _lm_eval_hook,
    "lighteval loader": _lighteval_loader,
}


def _refusal(load: Callable[[Path], None], folder: Path) -> str:
    """The line a loader refuses `folder` with (a preflight lists it among its problems, one per line)."""
    with pytest.raises(DataSourceError) as caught:
        load(folder)
    lines = [line.strip().removeprefix("- ").removeprefix("ArabCulture: ") for line in str(caught.value).splitlines()]
    return lines[-1]


def _set_card_path(folder: Path, path: str) -> None:
    card = folder / "README.md"
    card.write_text(card.read_text().replace(f"path: data/{CONFIG}/test-*.parquet", f"path: {path}"))


def _outside_parquet(tmp_path: Path) -> Path:
    secret = tmp_path / "elsewhere" / "secret.parquet"
    secret.parent.mkdir()
    datasets.Dataset.from_list([{"secret": "planted outside the build"}]).to_parquet(secret)
    return secret


# ------------------------------------------------------------------------------ data stays inside the folder


@pytest.mark.parametrize("loader", LOADERS)
def test_card_data_files_outside_the_folder_are_refused(build, tmp_path, loader):
    secret = _outside_parquet(tmp_path)
    relative = "../elsewhere/secret.parquet"
    cases = {
        str(secret): "is the absolute path",
        relative: "points outside the release's folder",
        f"data/{CONFIG}/../../../elsewhere/*.parquet": "points outside the release's folder",
        "hf://datasets/someone/other/data/*.parquet": "a URL",
    }
    for path, problem in cases.items():
        folder = Path(shutil.copytree(build, tmp_path / f"case-{len(list(tmp_path.iterdir()))}"))
        _set_card_path(folder, path)
        line = _refusal(LOADERS[loader], folder)
        assert line.startswith(f"{folder / 'README.md'}: config 'Egypt' ") and problem in line, (path, line)
        assert f"a local build's data stays inside its folder {folder}" in line


@pytest.mark.parametrize("loader", LOADERS)
def test_a_data_file_linked_out_of_the_folder_is_refused(build, tmp_path, loader):
    secret = _outside_parquet(tmp_path)
    (build / SHARD).unlink()
    (build / SHARD).symlink_to(secret)
    line = _refusal(LOADERS[loader], build)
    assert line.startswith(f"{build / 'README.md'}: config 'Egypt' data file names ") and "outside" in line, line


def test_a_config_folder_linked_out_of_the_folder_is_refused(build, tmp_path):
    secret = _outside_parquet(tmp_path)
    shutil.rmtree(build / "data" / CONFIG)
    (build / "data" / CONFIG).symlink_to(secret.parent, target_is_directory=True)
    with pytest.raises(DataSourceError, match=r"data file names .*points outside the release's folder"):
        check_config(build, CONFIG, "arabculture")


def test_links_and_patterns_inside_the_folder_still_load(build):
    """The rule refuses what leaves the folder, not links or `..` that stay in it."""
    shard = build / SHARD
    (build / "shards").mkdir()
    shard.rename(build / "shards" / shard.name)
    shard.symlink_to(Path("..") / ".." / "shards" / shard.name)
    _set_card_path(build, f"data/{CONFIG}/../{CONFIG}/test-*.parquet")
    rows = load_split(DatasetSource.resolve("arabculture", str(build)), CONFIG, "test", "arabculture")
    assert len(rows) == 5


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    ups=st.integers(1, 6),
    steps=st.lists(st.sampled_from(["data", CONFIG, ".", "x"]), max_size=3),
    absolute=st.booleans(),
    backslashes=st.booleans(),
)
def test_any_pattern_that_leaves_the_folder_is_refused(build, ups, steps, absolute, backslashes):
    """Generated `..` chains, absolute paths and Windows separators: refused whenever they leave the folder."""
    parts = ([str(build.parent)] if absolute else []) + [".."] * ups + steps + ["*.parquet"]
    pattern = ("\\" if backslashes else "/").join(parts)
    resolved = Path(build, "/".join(parts)).resolve()  # an absolute part replaces the folder, as it would in a load
    card = build / "README.md"
    original = card.read_text()
    card.write_text(original.replace(f"path: data/{CONFIG}/test-*.parquet", f"path: '{pattern}'"))
    try:
        check_config(build, CONFIG, "arabculture")
    except DataSourceError as err:
        assert "\n" not in str(err) and "a local build's data stays inside its folder" in str(err)
    else:
        assert resolved.is_relative_to(build.resolve()), pattern
    finally:
        card.write_text(original)


# ------------------------------------------------------------------------------ a broken card


def _write_card(folder: Path, data: bytes) -> None:
    (folder / "README.md").write_bytes(data)


@pytest.mark.parametrize("loader", LOADERS)
def test_a_card_that_is_not_utf8_is_one_line_naming_it(build, loader):
    card = (build / "README.md").read_bytes().replace(b"pretty_name: ArabCulture", b"pretty_name: \xff\xfe")
    _write_card(build, card)
    line = _refusal(LOADERS[loader], build)
    offset = card.index(b"\xff")
    assert line == f"{build / 'README.md'}: not UTF-8 text (byte 0xff at offset {offset}): a dataset card is UTF-8"


@pytest.mark.parametrize("loader", LOADERS)
def test_a_card_whose_yaml_does_not_parse_is_one_line_naming_it(build, loader):
    text = (build / "README.md").read_text()
    _write_card(build, text.replace("configs:\n", "configs: [unclosed\n", 1).encode())
    line = _refusal(LOADERS[loader], build)
    assert line.startswith(f"{build / 'README.md'}: its YAML header does not parse (line "), line


@pytest.mark.parametrize("loader", LOADERS)
def test_a_python_tag_in_the_card_is_refused_and_never_run(build, tmp_path, loader):
    marker = tmp_path / "PWNED"
    payload = f"x: !!python/object/apply:os.system ['touch {marker}']\n"
    text = (build / "README.md").read_text()
    _write_card(build, text.replace("license:", payload + "license:", 1).encode())
    line = _refusal(LOADERS[loader], build)
    assert "its YAML header does not parse" in line and "python/object/apply:os.system" in line, line
    assert "tags such as !!python/object are refused" in line
    assert not marker.exists()


def test_a_card_header_without_its_end_or_not_a_mapping_is_one_line(build):
    card = build / "README.md"
    _write_card(build, b"---\nconfigs: []\n")
    with pytest.raises(DataSourceError, match=r"README.md: its YAML header has no closing '---' line$"):
        check_config(build, CONFIG, "arabculture")
    _write_card(build, b"---\n- a\n- b\n---\n")
    with pytest.raises(DataSourceError, match=rf"^{card}: its YAML header is a list, not a mapping of card fields$"):
        check_config(build, CONFIG, "arabculture")
    _write_card(build, b"---\nconfigs: 3\n---\n")
    with pytest.raises(DataSourceError, match=r"'configs' is not a list of mappings"):
        check_config(build, CONFIG, "arabculture")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=300) | st.text(max_size=300).map(lambda t: ("---\n" + t + "\n---\n").encode()))
def test_any_card_is_loaded_or_refused_in_one_line(build, card):
    """Whatever bytes the card holds, the check before loading ends in one `DataSourceError` line, or passes."""
    _write_card(build, card)
    try:
        check_config(build, CONFIG, "arabculture")
    except DataSourceError as err:
        assert "\n" not in str(err) and str(build) in str(err)


# ------------------------------------------------------------------------------ broken data files


@pytest.mark.parametrize("loader", LOADERS)
def test_a_zero_byte_parquet_is_one_line_naming_it(build, loader):
    (build / SHARD).write_bytes(b"")
    line = _refusal(LOADERS[loader], build)
    assert line == f"{build / SHARD}: an empty file (0 bytes), not parquet data: the build was cut; rebuild it"


@pytest.mark.parametrize("loader", LOADERS)
def test_a_truncated_parquet_is_one_line_naming_it(build, loader):
    data = (build / SHARD).read_bytes()
    (build / SHARD).write_bytes(data[: len(data) * 2 // 3])
    line = _refusal(LOADERS[loader], build)
    assert line.startswith(f"{build / SHARD}: not a readable parquet file (") and "truncated or corrupt" in line


@pytest.mark.parametrize("loader", LOADERS)
def test_an_empty_config_folder_is_one_line_naming_it(build, loader):
    (build / SHARD).unlink()
    line = _refusal(LOADERS[loader], build)
    assert line == (
        f"{build}: config 'Egypt' has no data files (none matches its card's data_files): "
        "an empty config folder; rebuild it"
    )


def test_a_folder_datasets_still_cannot_read_is_one_line(build):
    """Past the footer check (a whole parquet of another table), `datasets`' own error is one line too."""
    datasets.Dataset.from_list([{"other": 1}]).to_parquet(build / "data" / CONFIG / "test-00001-of-00001.parquet")
    with pytest.raises(DataSourceError) as caught:
        _load_split(build)
    assert str(caught.value).startswith(f"{build}: `datasets` cannot load config 'Egypt': ")
    assert "\n" not in str(caught.value)
