"""Shared offline fixtures: the bundled ArabCulture sample, its Hub-layout build, a tiny LM.

Nothing here touches the network: the Hub flags are set for this process and for every
command line the tests start (`cli_env`).
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture(scope="session")
def sample_records() -> list[dict]:
    """The bundled sample: real rows from the authors' release plus hand-written rows, 13 countries."""
    from arab_mm_tasks.data import sample_records

    return sample_records()


@pytest.fixture(scope="session")
def arabculture_hub_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Hub-layout folder built from the bundled sample by the real builder."""
    from arab_mm_tasks.data import SAMPLE_PATH
    from dataset_builders.arabculture.builder import build

    out = tmp_path_factory.mktemp("hub") / "arabculture"
    build(str(SAMPLE_PATH), out)
    return out


@pytest.fixture(scope="session")
def tiny_lm_dir(tmp_path_factory: pytest.TempPathFactory, sample_records: list[dict]) -> Path:
    """A 2-layer random-weight Llama whose BPE tokenizer was trained on the tasks' prompts."""
    from arab_mm_tasks.testing.tiny_model import arabculture_corpus, build_tiny_lm

    return build_tiny_lm(tmp_path_factory.mktemp("models") / "tiny-lm", arabculture_corpus(sample_records))


@pytest.fixture()
def cli_env() -> dict[str, str]:
    """Environment for harness command lines: offline, and no PYTHONPATH so the installed package runs."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    # one torch thread: generation on the tiny models is latency-bound, and CI has 2 shared cores
    env.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TOKENIZERS_PARALLELISM="false", OMP_NUM_THREADS="1")
    return env


@pytest.fixture(scope="session")
def gimmick_hub_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A local GIMMICK folder built by the real builder from sources in the authors' formats (tiny media)."""
    from gimmick_fixtures import build_gimmick_hub_dir

    return build_gimmick_hub_dir(tmp_path_factory.mktemp("gimmick"))


@pytest.fixture(scope="session")
def pearl_hub_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A local Pearl folder with all six configs, built by the real builder from records in the authors' formats."""
    from pearl_fixtures import build_pearl_hub_dir

    return build_pearl_hub_dir(tmp_path_factory.mktemp("pearl"))


@pytest.fixture(scope="session")
def jeem_hub_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A local JEEM folder (captioning and VQA, every dialect) built by the real builder from the authors' JSONL."""
    from jeem_fixtures import build_jeem_hub_dir

    return build_jeem_hub_dir(tmp_path_factory.mktemp("jeem"))


@pytest.fixture(scope="session")
def arb_hub_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A local ARB folder built by the real builder from a CSV in the authors' released format."""
    from arb_fixtures import build_arb_hub_dir

    return build_arb_hub_dir(tmp_path_factory.mktemp("arb"))


@pytest.fixture(scope="session")
def hub_dirs(gimmick_hub_dir: Path, pearl_hub_dir: Path, jeem_hub_dir: Path, arb_hub_dir: Path) -> dict[str, Path]:
    """The folder of every benchmark with images, by benchmark (the tests only read them)."""
    return {"gimmick": gimmick_hub_dir, "pearl": pearl_hub_dir, "jeem": jeem_hub_dir, "arb": arb_hub_dir}


@pytest.fixture(scope="session")
def all_hub_dirs(arabculture_hub_dir: Path, hub_dirs: dict[str, Path]) -> dict[str, Path]:
    """Every benchmark's folder, by benchmark: what a suite of all five reads (`--dataset-path name=folder`)."""
    return {"arabculture": arabculture_hub_dir, **hub_dirs}


@pytest.fixture(autouse=True)
def _no_images_left_pending() -> Any:
    """Each test leaves the images kept for pending judge requests (a process-wide registry, released as requests
    are scored) as it found them: a test that left some made a later test in the same process fail, in whichever
    order pytest-xdist ran them."""
    from arab_mm_tasks.core import scoring

    before = set(scoring._PENDING_IMAGES)
    yield
    left = set(scoring._PENDING_IMAGES) - before
    assert not left, (
        f"images still kept for {len(left)} pending judge request(s): release them (scoring.release_images)"
    )


@pytest.fixture()
def pearl_judge(monkeypatch: pytest.MonkeyPatch) -> Any:
    """A loopback judge answering Pearl's prompts (`pearl_fixtures.pearl_reply`); the run's judge reset after."""
    from pearl_fixtures import PearlJudgeServer

    from arab_mm_tasks.core import judging

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with PearlJudgeServer() as running:
        yield running
    judging.configure({})


@pytest.fixture(scope="session")
def tiny_vlm_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2-layer random-weight LLaVA (CLIP tower + Llama) whose tokenizer was trained on GIMMICK prompts."""
    from arab_mm_tasks.testing.tiny_model import build_tiny_vlm

    return build_tiny_vlm(tmp_path_factory.mktemp("models") / "tiny-vlm")


@pytest.fixture(scope="session")
def tiny_gimmick_lm_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random-weight text LM for GIMMICK's text-only variants."""
    from arab_mm_tasks.testing.tiny_model import build_tiny_lm, gimmick_corpus

    return build_tiny_lm(tmp_path_factory.mktemp("models") / "tiny-gimmick-lm", gimmick_corpus())


@pytest.fixture
def hf_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, dict[str, Any]]]:
    """`HfApi` write calls recorded instead of sent: ``(method, {"args": ..., **kwargs})`` in call order."""
    import huggingface_hub

    calls: list[tuple[str, dict[str, Any]]] = []

    def record(name: str) -> Any:
        def method(self: Any, *args: Any, **kwargs: Any) -> str:
            calls.append((name, {"args": args, **kwargs}))
            return f"https://huggingface.co/datasets/x/commit/{name}"

        return method

    for name in ("create_repo", "update_repo_settings", "upload_folder", "create_branch"):
        monkeypatch.setattr(huggingface_hub.HfApi, name, record(name))
    return calls


@pytest.fixture(autouse=True)
def _our_loggers_enabled():
    """Importing lighteval's command line disables every logger that exists then (its `dictConfig`);
    `arab-mm-lighteval` enables ours again, and so does each test, whatever ran before it in this process."""
    import logging

    for name, logger in list(logging.Logger.manager.loggerDict.items()):
        if isinstance(logger, logging.Logger) and name.partition(".")[0] in ("arab_mm_tasks", "metric_plugins"):
            logger.disabled = False


# lmms-eval's tests (README's third command, `pytest -m lmms`, in the `[lmms]` environment) are every test file
# whose name says lmms, so a new lmms-eval test file is picked up without editing the README or CI. In the plain
# environment they skip (no lmms-eval there); in CI's run of them (`CI=true`, `-m lmms`) a skip because lmms-eval
# is missing would hide a broken install, so there every skip fails when lmms-eval cannot be imported (a test's
# own skip, e.g. a fixture without some config, stays a skip).
LMMS_FILE_WORD = "lmms"


@pytest.hookimpl(tryfirst=True)  # before pytest's own `-m` selection reads the markers
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if LMMS_FILE_WORD in item.path.name:
            item.add_marker(pytest.mark.lmms)
    _longest_files_first(items)


# The longest test files run first. `pytest -n 2 --dist loadfile` (pytest-xdist) hands each process whole files,
# by default those with the most tests first; the files with one or two harness runs of a minute each then came
# last, and one process ran them alone for minutes while the other sat idle. Here files go in the order of
# FILE_SECONDS (each file's seconds in a full run; unknown files, e.g. new ones, count as one slow harness run
# if marked slow), and xdist keeps that order (`loadscopereorder` off). The times only order the files: a stale
# entry costs some minutes, never a result. `ARAB_MM_RECORD_FILE_SECONDS=1 pytest -n 2 --dist loadfile` rewrites
# the entries of the files a run ran.
FILE_SECONDS = Path(__file__).with_name("file_seconds.json")
UNKNOWN_SLOW_FILE_SECONDS = 60.0


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config.option, "loadscopereorder"):  # pytest-xdist present
        config.option.loadscopereorder = False


def _file_seconds() -> dict[str, float]:
    """FILE_SECONDS's entries: a file's node id (``tests/<folder>/<file>.py``) -> its seconds."""
    return json.loads(FILE_SECONDS.read_text(encoding="utf-8")) if FILE_SECONDS.is_file() else {}


def _test_file(nodeid: str) -> str:
    return nodeid.partition("::")[0]


def _longest_files_first(items: list[pytest.Item]) -> None:
    known = _file_seconds()
    cost: dict[str, float] = {}
    for item in items:
        slow = UNKNOWN_SLOW_FILE_SECONDS if item.get_closest_marker("slow") else 0.0
        file = _test_file(item.nodeid)
        cost[file] = max(cost.get(file, 0.0), known.get(file, slow))
    items.sort(key=lambda item: -cost[_test_file(item.nodeid)])  # stable: a file's tests keep their order


_RECORDED: defaultdict[str, float] = defaultdict(float)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if os.environ.get("ARAB_MM_RECORD_FILE_SECONDS"):
        _RECORDED[_test_file(report.nodeid)] += report.duration


def pytest_sessionfinish(session: pytest.Session) -> None:
    # the controlling process (not an xdist worker), after a run that recorded
    if _RECORDED and not hasattr(session.config, "workerinput"):
        known = _file_seconds()
        known.update((name, round(sec, 1)) for name, sec in _RECORDED.items())  # the files this run ran
        ordered = dict(sorted(known.items(), key=lambda kv: -kv[1]))
        FILE_SECONDS.write_text(json.dumps(ordered, indent=1) + "\n", encoding="utf-8")


@functools.cache
def _lmms_eval_missing() -> bool:
    # `lmms_eval.api.task`, not `lmms_eval`: our wheel's task tree makes a bare `lmms_eval` namespace importable
    try:
        return importlib.util.find_spec("lmms_eval.api.task") is None
    except ImportError:
        return True


def _lmms_run_in_ci(config: pytest.Config) -> bool:
    markexpr = config.getoption("markexpr", "") or ""
    return os.environ.get("CI") == "true" and "lmms" in markexpr and "not lmms" not in markexpr


def _skip_is_failure(report: pytest.CollectReport | pytest.TestReport) -> None:
    if report.skipped and not hasattr(report, "wasxfail") and _lmms_eval_missing():
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"CI=true runs lmms-eval's tests and lmms-eval cannot be imported: {reason}"


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Any:
    report = (yield).get_result()
    if LMMS_FILE_WORD in collector.path.name and _lmms_run_in_ci(collector.config):
        _skip_is_failure(report)  # a module-level `pytest.importorskip("lmms_eval")`


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Any:
    report = (yield).get_result()
    if item.get_closest_marker("lmms") and _lmms_run_in_ci(item.config):
        _skip_is_failure(report)
