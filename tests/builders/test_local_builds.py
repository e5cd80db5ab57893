"""A local build folder is untrusted input: its data stays inside it, and a broken one is one line.

Each case mutates a copy of a real ArabCulture build (the bundled sample, built by the real builder)
and loads it the three ways a run does: `load_split` (Python, `arab-mm-tasks`), lm-eval's
`custom_dataset` hook, and arab-mm-lighteval's patched `load_dataset`. Every refusal is a
`DataSourceError` (which the command lines print as one line) naming the card, file or folder.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path

import datasets
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arab_mm_tasks.core.registry import all_benchmarks, get_benchmark
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
    """The line a loader refuses `folder` with, without the preflight's prefixes (one problem is one line
    ``arab-mm-tasks preflight: ArabCulture: ...``; several are listed one per line, ``  - ArabCulture: ...``)."""
    with pytest.raises(DataSourceError) as caught:
        load(folder)
    last = str(caught.value).splitlines()[-1].strip()
    return re.sub(r"^(arab-mm-tasks preflight: )?(- )?(ArabCulture: )?", "", last)


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


# ------------------------------------------------------------------------------ offline: what works instead


def _build_args(benchmark: str, argv: list[str]):
    """`argv` parsed as `arab-mm-tasks build <benchmark> ...` parses it (the real command-line parser)."""
    from arab_mm_tasks.cli import _build_parser

    return _build_parser(get_benchmark(benchmark)).parse_args(argv)


@pytest.fixture
def copies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """COPY, COPY1, ... as folders in the working directory: builders check at parsing that a source exists."""
    monkeypatch.chdir(tmp_path)
    for name in ("COPY", "COPY1", "COPY2", "COPY3"):
        (tmp_path / name).mkdir()


RELEASE_PARTS = [(bench.name, part.name) for bench in all_benchmarks().values() for part in bench.release.parts]


@pytest.mark.parametrize(("benchmark", "part"), RELEASE_PARTS)
def test_the_offline_hint_names_a_build_each_builder_takes_and_every_way_to_run_it(benchmark, part, copies):
    """For every part of every release: a build from a local copy with the builder's own option, then each entry
    point's form, in one line that does not start with "Or" and ends with its last form (nothing cut after)."""
    import re
    import shlex

    from arab_mm_tasks.core.registry import get_benchmark
    from arab_mm_tasks.core.sources import local_build_hint

    bench = get_benchmark(benchmark)
    hint = local_build_hint(benchmark, part)
    assert "\n" not in hint and not hint.startswith("Or") and hint.startswith("Without the Hub, build from a local")
    (command,) = re.findall(rf"`arab-mm-tasks build {benchmark} ([^`]*)`", hint)
    args = _build_args(benchmark, shlex.split(command))  # the command line takes exactly this
    given = {name: value for name, value in vars(args).items() if name != "out" and "COPY" in str(value)}
    assert len(given) == 1 and str(args.out) == "DIR", (command, vars(args))
    for repo in next(p for p in bench.release.parts if p.name == part).repos:
        assert f"`hf download {repo} --repo-type dataset --local-dir COPY`" in hint
    assert hint.endswith(
        f'then point the run at DIR: lm_eval --metadata \'{{"{bench.path_key}": "DIR"}}\', '
        f"arab-mm-lighteval --dataset-path {benchmark}=DIR, or arab-mm-tasks evaluate --dataset-path {benchmark}=DIR."
    )


def test_a_release_with_several_parts_names_each_copy(copies):
    from arab_mm_tasks.core.sources import local_build_hint

    hint = local_build_hint("gimmick")
    assert "`arab-mm-tasks build gimmick --sivqa COPY1 --coqa COPY2 --out DIR`" in hint
    args = _build_args("gimmick", ["--sivqa", "COPY1", "--coqa", "COPY2", "--out", "DIR"])
    assert "COPY1" in str(args.sivqa) and "COPY2" in str(args.coqa)


def test_a_named_repo_offline_says_fetch_it_or_build_from_a_copy():
    from arab_mm_tasks.core.sources import _hub_error

    message = str(_hub_error(DatasetSource("someone/jeem-fork"), ConnectionError("offline"), "jeem", "msa"))
    assert message.startswith("cannot reach someone/jeem-fork on the Hub (offline, or HF_HUB_OFFLINE=1). Without")
    assert "`hf download someone/jeem-fork --repo-type dataset --local-dir DIR`" in message
    assert "`arab-mm-tasks build jeem --source COPY --out DIR`" in message and "\n" not in message


def test_a_release_build_that_stops_on_a_bad_record_says_how_to_skip_it(tmp_path, monkeypatch):
    from arab_mm_tasks.core import sources
    from arab_mm_tasks.core.registry import get_benchmark

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    bench = get_benchmark("arabculture")

    def bad_build(part: str, out: Path, revision: str | None):
        raise ValueError("MBZUAI/ArabCulture row 7: field 'answer_key' is 'Z'")

    monkeypatch.setattr(type(bench), "builder_module", lambda self: type("M", (), {"build_release": bad_build}))
    with pytest.raises(DataSourceError) as caught:
        sources.ensure_built(DatasetSource.resolve("arabculture"), CONFIG)
    assert str(caught.value).startswith(
        "ArabCulture: building MBZUAI/ArabCulture failed: MBZUAI/ArabCulture row 7: field 'answer_key' is 'Z'. "
        "To build it skipping bad records (each one counted in the build's report): "
        "`arab-mm-tasks build arabculture --on-bad-records skip --out DIR`, then point the run at DIR: "
    )


@pytest.mark.slow
def test_lm_eval_offline_prints_the_whole_hint(tmp_path, cli_env):
    """The real command line, offline, with no data: the whole line reaches stderr, its last form included."""
    import subprocess

    from helpers import console_script

    from arab_mm_tasks.core.sources import local_build_hint

    env = {**cli_env, "XDG_CACHE_HOME": str(tmp_path / "xdg"), "HF_HUB_CACHE": str(tmp_path / "hub")}
    proc = subprocess.run(
        [console_script("lm_eval"), "--model", "dummy", "--tasks", "arabculture_mcq_en_none_egypt"],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    last = proc.stderr.strip().splitlines()[-1]
    assert "MBZUAI/ArabCulture" in last and last.endswith(local_build_hint("arabculture")), last


def test_a_dataset_path_that_is_a_file_is_not_called_missing(build):
    file = build / SHARD
    with pytest.raises(DataSourceError, match=rf"^arabculture: dataset folder '{file}' is a file, not a dataset"):
        DatasetSource.resolve("arabculture", str(file))
    with pytest.raises(DataSourceError, match=r"'/no/such/folder' does not exist$"):
        DatasetSource.resolve("arabculture", "/no/such/folder")
