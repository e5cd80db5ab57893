"""lighteval adapter: the tasks table, its prompt function, the entry point's patches, and a real
`arab-mm-lighteval` command line."""

from __future__ import annotations

import doctest
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from helpers import console_script, run_cli
from lighteval.models.transformers.transformers_model import TransformersModelConfig
from lighteval.tasks.prompt_manager import PromptManager
from lighteval.tasks.registry import Registry

from arab_mm_tasks.cli import main
from arab_mm_tasks.core.registry import all_benchmarks, all_specs, get_spec
from arab_mm_tasks.core.sources import DatasetSource, DataSourceError, load_split, local_dataset_cache_dir
from arab_mm_tasks.harness import lighteval_cli
from arab_mm_tasks.harness.lighteval_tasks import MODULE, TASKS_TABLE, build_tasks_table

TABLE = {config.name: config for config in TASKS_TABLE}

ARABCULTURE = {name: spec for name, spec in all_specs().items() if spec.benchmark == "arabculture"}


def task_names(spec) -> list[str]:
    return [spec.name, *spec.aliases, *(f"{spec.name}:{s.name}" for s in spec.subsets)]


def as_lighteval_row(record: dict) -> dict:
    """What lighteval passes a prompt function: the dataset row plus its bookkeeping keys."""
    return {**record, "__few_shots": False, "__index": 0}


@pytest.mark.parametrize("name", sorted(ARABCULTURE))
def test_prompt_function_yields_exactly_the_spec_request(name, sample_records):
    spec = ARABCULTURE[name]
    plain_text = PromptManager(use_chat_template=False)
    for task_name in task_names(spec):
        prompt = TABLE[task_name].prompt_function
        for record in sample_records:
            want = spec.render(record)
            doc = prompt(as_lighteval_row(record), task_name)
            assert doc.query == want.query
            assert doc.choices == [spec.target_delimiter + c for c in want.choices]
            assert doc.gold_index == want.gold
            assert doc.task_name == task_name
            # the context lighteval builds for a base model is the query itself, byte for byte
            assert plain_text.prepare_prompt(doc) == want.query


def test_table_has_every_spec_alias_and_country_on_its_config():
    names = [config.name for config in TASKS_TABLE]
    assert len(names) == len(set(names))
    for spec in all_specs().values():
        hub = DatasetSource.default(spec.benchmark).path
        for name in (spec.name, *spec.aliases):
            assert TABLE[name].hf_subset == spec.all_config
        for subset in spec.subsets:
            assert TABLE[f"{spec.name}:{subset.name}"].hf_subset == subset.config
        for name in task_names(spec):
            config = TABLE[name]
            assert (config.hf_repo, config.hf_revision) == (hub, None)
            assert config.hf_avail_splits == config.evaluation_splits == (spec.split,)
            assert config.few_shots_split is None
            assert config.version == spec.version
    # the whole benchmark, its aliases, one task per subset: nothing else
    assert len(TASKS_TABLE) == sum(1 + len(spec.aliases) + len(spec.subsets) for spec in all_specs().values())
    # ArabCulture: 12 variants, each over its 13 countries, scored as the paper does
    assert len(ARABCULTURE) == 12 and {len(spec.subsets) for spec in ARABCULTURE.values()} == {13}
    assert {"arabculture_mcq", "arabculture_completion", "arabculture_mcq_en_none:egypt"} <= set(TABLE)
    for spec in ARABCULTURE.values():
        assert [m.metric_name for m in TABLE[spec.name].metrics] == list(spec.metrics) == ["acc", "acc_norm"]


def test_prompt_function_refuses_few_shot_examples(sample_records):
    prompt = TABLE["arabculture_mcq"].prompt_function
    with pytest.raises(ValueError, match="zero-shot only"):
        prompt({**sample_records[0], "__few_shots": True}, "arabculture_mcq")


def test_dataset_paths_and_revisions_override_the_default(tmp_path):
    folder = tmp_path / "arabculture"
    folder.mkdir()
    others = {DatasetSource.default(b).path for b in all_benchmarks() if b != "arabculture"}
    table = build_tasks_table(paths={"arabculture": str(folder)}, revisions={"arabculture": "v1"})
    sources = {(c.hf_repo, c.hf_revision) for c in table}
    assert sources == {(str(folder.resolve()), "v1"), *((path, None) for path in others)}  # only the one benchmark
    renamed = {c.hf_repo for c in build_tasks_table(paths={"arabculture": "me/arabculture"})}
    assert renamed == {"me/arabculture", *others}
    with pytest.raises(KeyError, match="unknown benchmark"):
        build_tasks_table(paths={"nope": str(folder)})
    with pytest.raises(DataSourceError, match="does not exist"):
        build_tasks_table(paths={"arabculture": str(tmp_path / "missing")})


def test_default_tasks_load_the_release_built_on_first_use(tmp_path, monkeypatch, sample_records, capsys):
    """With no --dataset-path, a task's config names the first-use build folder; the loader builds it."""
    import huggingface_hub.constants
    from hub_fixtures import cache_arabculture_release
    from lighteval.tasks import lighteval_task

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    cache_arabculture_release(tmp_path / "hub", sample_records)
    monkeypatch.setattr(lighteval_task, "load_dataset", lighteval_task.load_dataset)  # undone after the test
    lighteval_cli.patch_local_dataset_cache()
    (config,) = [c for c in build_tasks_table() if c.name == "arabculture_mcq_en_none:egypt"]
    assert config.hf_repo == DatasetSource.default("arabculture").path and not Path(config.hf_repo).exists()
    rows = lighteval_task.load_dataset(path=config.hf_repo, name=config.hf_subset, revision=config.hf_revision)
    assert len(rows["test"]) == 5 and "building ArabCulture" in capsys.readouterr().err
    partial = tmp_path / "partial"
    (partial / "data" / "Egypt").mkdir(parents=True)
    with pytest.raises(DataSourceError, match=r"partial lacks config 'UAE' \(it holds Egypt\)"):
        lighteval_task.load_dataset(path=str(partial), name="UAE", revision=None)


# ------------------------------------------------------------------------------ entry point


def test_our_options_are_removed_and_custom_tasks_defaulted():
    argv, options = lighteval_cli.split_options(
        ["accelerate", "m", "t", "--dataset-path", "arabculture=/d", "--dataset-revision=arabculture=r"]
    )
    assert argv == ["accelerate", "m", "t"]
    assert options == {"paths": {"arabculture": "/d"}, "revisions": {"arabculture": "r"}}
    assert lighteval_cli.with_default_custom_tasks(argv) == [*argv, "--custom-tasks", MODULE]
    given = [*argv, "--custom-tasks", "mine.py"]
    assert lighteval_cli.with_default_custom_tasks(given) == given
    assert lighteval_cli.with_default_custom_tasks(["tasks", "create", "a", "b", "c"])[-1] == "c"
    with pytest.raises(lighteval_cli.UsageError):
        lighteval_cli.split_options(["--dataset-path", "/d"])


def test_metadata_sets_the_benchmarks_run_options_as_lm_eval_does(monkeypatch, capsys):
    from arab_mm_tasks.core import judging

    monkeypatch.setattr(judging, "_dcscore_language", ["en"])
    argv, metadata = lighteval_cli.pop_metadata(
        ["accelerate", "m", "t", "--metadata", '{"jeem_dcscore_language": "ar"}']
    )
    assert (argv, metadata) == (["accelerate", "m", "t"], {"jeem_dcscore_language": "ar"})
    lighteval_cli.apply_metadata(metadata)
    assert judging.dcscore_language() == "ar"
    for bad, message in [
        ('{"jeem_dcscore_language": "fr"}', "run option 'jeem_dcscore_language' takes one of 'en', 'ar', got 'fr'"),
        ('{"jeem_path": "/d"}', "run option 'jeem_path': folder '/d' does not exist"),
        ('{"jeem_paht": "/d"}', "unknown run option 'jeem_paht'; did you mean 'jeem_path'?"),
        ("[1]", "--metadata takes a JSON object, got '[1]'"),
    ]:
        assert lighteval_cli.run(["accelerate", "m", "t", f"--metadata={bad}"]) == 2
        assert message in capsys.readouterr().err


def test_bad_dataset_options_exit_2(tmp_path, capsys):
    assert lighteval_cli.run(["accelerate", "m", "t", "--dataset-path", f"arabculture={tmp_path}/no"]) == 2
    assert lighteval_cli.run(["accelerate", "m", "t", "--dataset-path", f"other={tmp_path}"]) == 2
    bad = ["accelerate", "m", "t", "--dataset-path", f"arabculture={tmp_path}", "--custom-tasks", "x.py"]
    assert lighteval_cli.run(bad) == 2
    assert "arab-mm-lighteval: error:" in capsys.readouterr().err


@pytest.fixture()
def restore_registry(monkeypatch):
    """Undo the registry patches after the test (monkeypatch restores the original class attributes)."""
    for name in ("load_all_task_configs", "_expand_task_definition", "_get_full_task_list_from_input_string"):
        monkeypatch.setattr(Registry, name, Registry.__dict__[name])


def test_registry_loads_only_our_tasks_and_runs_exact_names_as_themselves(restore_registry):
    import sys

    lighteval_cli.patch_registry({})
    registry = Registry(tasks="arabculture_mcq_en_none|0,arabculture_mcq_en_none:egypt|0", custom_tasks=MODULE)
    # stock lighteval would expand `arabculture_mcq_en_none` to all 14 `arabculture_mcq_en_none*` tasks
    assert sorted(registry.task_to_configs) == ["arabculture_mcq_en_none", "arabculture_mcq_en_none:egypt"]
    assert set(registry._task_registry) == set(TABLE)
    assert "lighteval.tasks.tasks.tiny_benchmarks" not in sys.modules  # its import downloads a file


def test_our_group_names_run_their_tasks(restore_registry, tmp_path):
    lighteval_cli.patch_registry({})
    tasks = "jeem_caption|0,pearl|0,arabculture_mcq_en_none_gulf|0,jeem_caption_msa|0,arabculture_mcq|0"
    registry = Registry(tasks=tasks, custom_tasks=MODULE)
    varieties = ("msa", "jordanian", "emirati", "egyptian", "moroccan")
    expected = {f"jeem_caption_{v}" for v in varieties} | {"pearl_closed", "pearl_open", "arabculture_mcq"}
    expected |= {f"arabculture_mcq_en_none:{c}" for c in ("ksa", "uae", "yemen")}  # the Gulf countries
    assert set(registry.task_to_configs) == expected
    assert {c.full_name for configs in registry.task_to_configs.values() for c in configs} == {
        f"{name}|0" for name in expected
    }  # a member named on its own as well runs once
    listed = tmp_path / "tasks.txt"  # lighteval also reads the list from a file
    listed.write_text("# JEEM VQA\njeem_vqa|0\n", encoding="utf-8")
    assert sorted(Registry(tasks=str(listed), custom_tasks=MODULE).task_to_configs) == [
        f"jeem_vqa_{d}" for d in ("egyptian", "emirati", "jordanian", "moroccan")
    ]


def test_group_expansion_keeps_shots_suite_and_metric_parameters():
    groups = {"g": ["a", "b"]}
    assert lighteval_cli.expand_groups(["g|0", "x|0"], groups) == ["a|0", "b|0", "x|0"]
    assert lighteval_cli.expand_groups(["lighteval|g|0"], groups) == ["lighteval|a|0", "lighteval|b|0"]
    assert lighteval_cli.expand_groups(["g@k=1|0", "g"], groups) == ["a@k=1|0", "b@k=1|0", "a", "b"]
    assert doctest.testmod(lighteval_cli).failed == 0


def test_details_hashing_accepts_str_as_xxhash_4_does_not():
    import xxhash

    class Xxhash4:  # xxhash>=4 raises on str
        @staticmethod
        def xxh64(data, *args, **kwargs):
            if isinstance(data, str):
                raise TypeError("Strings must be encoded before hashing")
            return xxhash.xxh64(data, *args, **kwargs)

    safe = lighteval_cli._StrSafeXXHash(Xxhash4())
    assert safe.xxh64("سؤال").hexdigest() == xxhash.xxh64("سؤال".encode()).hexdigest()


def test_response_cache_never_lands_in_the_model_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    model = tmp_path / "models" / "m"
    model.mkdir(parents=True)
    (model / "model.safetensors").write_bytes(b"v1")

    config = lighteval_cli.cache_config(TransformersModelConfig(model_name=str(model)))
    assert config.cache_dir == str(tmp_path / "xdg" / "arab-mm-tasks" / "lighteval")
    key = Path(config.cache_dir) / config.model_name
    assert key.is_relative_to(config.cache_dir) and not key.is_relative_to(model)

    (model / "model.safetensors").write_bytes(b"v2, rebuilt in place")
    assert lighteval_cli.cache_config(TransformersModelConfig(model_name=str(model))).model_name != config.model_name

    mine = lighteval_cli.cache_config(TransformersModelConfig(model_name=str(model), cache_dir=str(tmp_path / "c")))
    assert mine.cache_dir == str(tmp_path / "c")
    hub = lighteval_cli.cache_config(TransformersModelConfig(model_name="org/model-on-the-hub"))
    assert hub.model_name == "org/model-on-the-hub"


def test_local_dataset_cache_is_keyed_by_path_and_content(tmp_path):
    first, second = tmp_path / "a" / "arabculture", tmp_path / "b" / "arabculture"
    for folder in (first, second):
        (folder / "data").mkdir(parents=True)
        (folder / "data" / "x.parquet").write_bytes(b"1")
    assert local_dataset_cache_dir(first) != local_dataset_cache_dir(second)
    before = local_dataset_cache_dir(first)
    (first / "data" / "x.parquet").write_bytes(b"rebuilt")
    assert local_dataset_cache_dir(first) != before


# ----------------------------------------------------------------------------- command line

# Loaded first by every Python the command starts: records any attempt to reach another machine.
NETWORK_GUARD = """
import socket
_connect, _getaddrinfo = socket.socket.connect, socket.getaddrinfo
LOCAL = {None, "localhost", "127.0.0.1", "::1"}

def _refuse(what):
    with open(__file__ + ".attempts", "a") as log:
        log.write(repr(what) + "\\n")
    raise OSError(f"network access attempted: {what!r}")

def _guarded_connect(self, address, *args, **kwargs):
    if self.family in (socket.AF_INET, socket.AF_INET6) and address[0] not in LOCAL:
        _refuse(address)
    return _connect(self, address, *args, **kwargs)

def _guarded_getaddrinfo(host, *args, **kwargs):
    if host not in LOCAL:
        _refuse(host)
    return _getaddrinfo(host, *args, **kwargs)

socket.socket.connect = _guarded_connect
socket.getaddrinfo = _guarded_getaddrinfo
"""


@pytest.mark.slow
def test_command_line_runs_offline(tmp_path, tiny_lm_dir, arabculture_hub_dir, cli_env, sample_records, capsys):
    """The installed script, an absolute model path (lighteval's worst case for its cache), no network."""
    guard = tmp_path / "guard"
    guard.mkdir()
    (guard / "sitecustomize.py").write_text(NETWORK_GUARD)
    # both caches in tmp_path: each test session's dataset folder is new, and so would be its cache entry
    env = {**cli_env, "PYTHONPATH": str(guard), "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    env["HF_DATASETS_CACHE"] = str(tmp_path / "datasets")
    model_files = sorted(p.relative_to(tiny_lm_dir) for p in tiny_lm_dir.rglob("*"))
    tasks = ["arabculture_mcq", "arabculture_completion_ar_region_country:egypt", "arabculture_mcq_en_none"]
    out = tmp_path / "out"

    run_cli(
        [console_script("arab-mm-lighteval"), "accelerate",
         f"model_name={tiny_lm_dir},override_chat_template=False", ",".join(f"{t}|0" for t in tasks),
         "--dataset-path", f"arabculture={arabculture_hub_dir}",
         "--max-samples", "3", "--output-dir", str(out), "--save-details"],
        env=env, cwd=tmp_path,
    )  # fmt: skip

    assert not (guard / "sitecustomize.py.attempts").exists(), (guard / "sitecustomize.py.attempts").read_text()
    (results_file,) = out.rglob("results_*.json")
    results = json.loads(results_file.read_text())["results"]
    # each name ran as exactly one task: no expansion to the 13 countries
    assert set(results) == {f"{t}|0" for t in tasks} | {"all"}
    for task in tasks:
        assert {"acc", "acc_norm"} <= set(results[f"{task}|0"])

    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_lm_dir)
    all_rows = load_split(DatasetSource.resolve("arabculture", str(arabculture_hub_dir)), "all", "test")
    built = {row["id"]: row for row in all_rows}
    for task in tasks:
        name, _, country = task.partition(":")
        spec = get_spec(name)  # resolves the alias arabculture_mcq
        records = [r for r in sample_records if not country or r["country"].lower() == country]
        requests = [spec.render(r) for r in records]
        expected = {request.query: request for request in requests}
        (details,) = out.rglob(f"details_{task}|0_*.parquet")
        rows = pd.read_parquet(details)
        assert len(rows) == 3
        for doc, response in zip(rows["doc"], rows["model_response"], strict=True):
            request = expected[doc["query"]]
            assert list(doc["choices"]) == [spec.target_delimiter + c for c in request.choices]
            assert doc["gold_index"] == request.gold
            row = built[doc["specific"]["id"]]  # the dataset's own id, kept so details join back to the data
            assert doc["specific"] == {key: row[key] for key in ("id", *spec.breakdown_keys)}
            # what the model scored: exactly query + choice (lighteval moves trailing whitespace across)
            context = tokenizer.decode(response["input_tokens"])
            scored = [context + tokenizer.decode([t for t in c if t >= 0]) for c in response["output_tokens"]]
            assert scored == [request.query + spec.target_delimiter + c for c in request.choices]

    assert sorted(p.relative_to(tiny_lm_dir) for p in tiny_lm_dir.rglob("*")) == model_files
    assert list((tmp_path / "xdg" / "arab-mm-tasks" / "lighteval" / "local").rglob("*.parquet"))
    assert list((tmp_path / "datasets" / "arab-mm-tasks").rglob("*.arrow"))  # the local folder's own cache

    # the paper's topic x CS breakdown, from lighteval's details as from lm-eval's samples
    assert main(["breakdown", str(out), "--by", "country,country_specific"]) == 0
    report = capsys.readouterr().out
    assert "arabculture_completion_ar_region_country:egypt (3 samples)" in report
    assert "| Egypt | True |" in report


def test_judge_option_is_taken_out_of_lighteval_argv():
    argv = ["accelerate", "m", "t|0", "--judge", "model=j,base_url=http://x/v1", "--max-samples", "3"]
    assert lighteval_cli.pop_judge(argv) == (
        ["accelerate", "m", "t|0", "--max-samples", "3"],
        "model=j,base_url=http://x/v1",
    )
    assert lighteval_cli.pop_judge(["a", "--judge=model=j"]) == (["a"], "model=j")
    with pytest.raises(lighteval_cli.UsageError):
        lighteval_cli.pop_judge(["a", "--judge"])
    # an unknown setting fails before any work
    assert lighteval_cli.run(["accelerate", "m", "t", "--judge", "colour=blue"]) == 2


def test_our_loggers_survive_lighteval_logging_setup(cli_env):
    """lighteval's `dictConfig` disables loggers made before it; our command line enables ours again (patch 9)."""
    code = (
        "import logging\n"
        "ours, other = logging.getLogger('arab_mm_tasks.core.judging'), logging.getLogger('some.other.library')\n"
        "from arab_mm_tasks.harness import lighteval_cli\n"
        "lighteval_cli.import_lighteval_app()\n"
        "print(ours.disabled, other.disabled)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], env=cli_env, capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "True"]  # lighteval disabled the other one: the patch is needed
