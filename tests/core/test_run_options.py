"""Run options are checked up front, in one line, by the same validator in both harness entry points.

The matrix is generated from the declarations (`run_options.declared_options`), so an option added to a
benchmark is covered here without a new test: every option x {valid, a typo of its key, a wrong type,
out of range, a credential}, through lm-eval's dataset hook (`lm_eval_hooks.load_dataset`, with the keys
lm-eval itself merges into ``--metadata``) and ``arab-mm-lighteval``'s ``--metadata`` (`lighteval_cli.run`).
Then one real ``lm_eval`` and one real ``arab-mm-lighteval`` command line, and ``--num_fewshot 1`` through
lm-eval's own evaluation, in-process.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers import console_script
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arab_mm_tasks.core import judging
from arab_mm_tasks.core.benchmark import RunOption
from arab_mm_tasks.core.run_options import (
    RunOptionError,
    check_judge,
    declared_options,
    is_ours,
    validate_run_options,
)
from arab_mm_tasks.harness import lighteval_cli, lm_eval_hooks

OPTIONS = declared_options()
SAFE_WAY = ("ARAB_MM_JUDGE_BASE_URL", "api_key_env")
# What lm-eval 0.4.13 merges into a task's metadata besides --metadata: the task YAML's own metadata
# (ours: version, description), the factory's config_source, and every --model_args key (evaluate_config.py:
# `self.metadata = self.model_args | self.metadata`; evaluator.py does the same for Python callers).
LM_EVAL_ADDS = {
    "version": 1.0,
    "description": "a task",
    "config_source": "/x/arabculture_mcq.yaml",
    "pretrained": "/models/m",
    "dtype": "float32",
    "revision": "main",
    "trust_remote_code": True,
    "max_length": 128,
    "device_map": "auto",
    "max_images": 4,
    "max_pixels": 1024,
}


@pytest.fixture()
def run_state(monkeypatch):
    """Undo what applying options sets in this process (judge settings, DCScore language, frame limits)."""
    from arab_mm_tasks.gimmick.tasks import FRAMES

    monkeypatch.setattr(judging, "_run_args", {})
    monkeypatch.setattr(judging, "_dcscore_language", ["en"])
    monkeypatch.setattr(FRAMES, "max_frames", FRAMES.max_frames)
    monkeypatch.setattr(FRAMES, "max_side", FRAMES.max_side)


def valid_value(option: RunOption, folder: Path) -> Any:
    return {
        "int": option.minimum if option.minimum is not None else 1,
        "choice": option.choices[0] if option.choices else None,
        "source": str(folder),
        "revision": "main",
        "judge": "model=judge-model,base_url=http://127.0.0.1:9/v1,concurrency=4,timeout=2.5",
    }[option.kind]


def typo(key: str) -> str:
    """The key with its last two letters swapped (``arabculture_path`` -> ``arabculture_paht``)."""
    return key[:-2] + key[-1] + key[-2]


def bad_values(option: RunOption, folder: Path) -> list[tuple[str, Any, str]]:
    """(case, value, what the one-line error must say) for every way this option's value can be wrong."""
    cases: list[tuple[str, Any, str]] = []
    if option.kind == "int":
        cases += [("type", "eight", "takes an integer"), ("type", [8], "takes an integer"), ("type", 1.5, "integer")]
        if option.minimum is not None:
            cases += [("range", option.minimum - 1, f">= {option.minimum}"), ("range", -5, f">= {option.minimum}")]
        if option.maximum is not None:
            cases.append(("range", option.maximum + 1, f"<= {option.maximum}"))
    elif option.kind == "judge":
        cases += [
            ("type", 5, "judge settings"),
            ("type", ["model=m"], "judge settings"),
            ("type", "model=m,concurrency=lots", "setting 'concurrency' takes an integer"),
            ("type", {"model": "m", "timeout": [3]}, "setting 'timeout' takes a number"),
            ("range", "model=m,concurrency=-1", "setting 'concurrency' takes a number > 0"),
            ("range", "model=m,backend=nope", "judge backend must be one of"),
            ("range", "model=m,modle=x", "unknown judge setting 'modle'"),
        ]
    else:
        takes = f"takes {option.expects}, got "
        cases += [("type", 5, takes + "5 (int)"), ("type", [str(folder)], takes), ("type", None, takes + "None")]
        if option.kind == "choice":
            cases.append(("range", "zz", "takes one of " + ", ".join(repr(c) for c in option.choices)))
        if option.kind == "source":
            file = folder / "data.parquet"
            file.write_bytes(b"PAR1")
            cases += [
                ("range", str(file), "is a file, not a folder"),
                ("range", str(folder / "missing"), "does not exist"),
            ]
        if option.kind == "revision":
            cases.append(("range", "main branch", "has spaces"))
    return cases


def credential_values(option: RunOption) -> list[Any]:
    """Ways a value of this option can carry a credential (none for a number)."""
    if option.kind == "int":
        return []
    if option.kind == "judge":
        return [
            "model=m,base_url=http://user:secret@judge.example/v1",
            "model=m,base_url=https://judge.example/v1?key=abc123",
            {"model": "m", "base_url": "https://judge.example/v1?api-version=1&api_key=abc"},
            "model=m,base_url=https://judge.example/v1?access_token=abc",
            "model=m,api_key=sk-abc123",
            {"model": "m", "token": "abc"},
            "model=m,api_key_env=sk-abc123",
        ]
    return ["https://user:secret@huggingface.co/datasets/x", "https://huggingface.co/x?token=hf_abc"]


def matrix(folder: Path) -> list[tuple[str, dict[str, Any], str]]:
    """(case id, options, the expected one-line error or '' for valid) over every declared option."""
    rows: list[tuple[str, dict[str, Any], str]] = []
    for key, option in OPTIONS.items():
        rows.append((f"{key}-valid", {key: valid_value(option, folder)}, ""))
        rows.append((f"{key}-typo", {typo(key): valid_value(option, folder)}, f"did you mean '{key}'?"))
        for i, (case, value, message) in enumerate(bad_values(option, folder)):
            rows.append((f"{key}-{case}-{i}", {key: value}, message))
        for i, value in enumerate(credential_values(option)):
            rows.append((f"{key}-credential-{i}", {key: value}, "credential"))
    return rows


def through_lm_eval(options: dict[str, Any]) -> None:
    """lm-eval's way in: its dataset hook, given --metadata merged with what lm-eval adds."""
    lm_eval_hooks.load_dataset(benchmark="arabculture", config="none", split="test", **LM_EVAL_ADDS, **options)


def through_lighteval(options: dict[str, Any], capsys) -> str:
    """arab-mm-lighteval's way in: its --metadata; returns the error line (rc 2), '' when accepted."""
    rc = lighteval_cli.run(["accelerate", "m", "t", "--metadata", json.dumps(options)])
    err = capsys.readouterr().err
    if rc == 0:
        return ""
    assert rc == 2 and len(err.strip().splitlines()) == 1, err
    return err.strip()


def test_the_matrix_covers_every_declared_option_and_kind():
    assert {"judge", "arabculture_path", "gimmick_max_frames", "gimmick_max_side", "jeem_dcscore_language"} <= set(
        OPTIONS
    )
    assert {o.kind for o in OPTIONS.values()} == {"int", "choice", "source", "revision", "judge"}
    for benchmark in {k.partition("_")[0] for k in OPTIONS if k != "judge"}:
        assert {f"{benchmark}_path", f"{benchmark}_revision"} <= set(OPTIONS)


def test_every_bad_option_is_one_line_through_both_entry_points(tmp_path, capsys, run_state):
    for case, options, message in matrix(tmp_path):
        if not message:
            continue
        with pytest.raises(RunOptionError) as raised:
            through_lm_eval(options)
        line = str(raised.value)
        assert message in line and "\n" not in line, (case, line)
        assert line.startswith(("run option '", "unknown run option '")), (case, line)
        if message == "credential":
            assert all(way in line for way in SAFE_WAY), (case, line)
        assert message in through_lighteval(options, capsys), case


def test_every_valid_option_is_accepted_by_both_entry_points(tmp_path, run_state):
    for case, options, message in matrix(tmp_path):
        if message:
            continue
        merged = validate_run_options({**LM_EVAL_ADDS, **options}, from_lm_eval_task=True)
        assert set(merged) == set(options), case  # lm-eval's and the model's keys are let through, not kept
        lighteval_cli.apply_metadata(options)  # applied as arab-mm-lighteval does, without an error


def test_values_are_applied_after_checking(tmp_path, run_state):
    from arab_mm_tasks.gimmick.tasks import FRAMES

    sources = lighteval_cli.apply_metadata(
        {"gimmick_max_frames": "8", "gimmick_max_side": 224, "jeem_dcscore_language": "ar", "arb_path": str(tmp_path)}
    )
    assert (FRAMES.max_frames, FRAMES.max_side, judging.dcscore_language()) == (8, 224, "ar")
    assert sources == {"paths": {"arb": str(tmp_path)}, "revisions": {}}


def test_a_typo_in_the_data_source_never_falls_back_to_the_default(tmp_path):
    """Issue 23 item 13: the typo would evaluate the authors' release instead of the user's build."""
    with pytest.raises(RunOptionError) as raised:
        through_lm_eval({"arabculture_paht": str(tmp_path)})
    valid = ", ".join(sorted(OPTIONS))
    expected = f"unknown run option 'arabculture_paht'; did you mean 'arabculture_path'? valid: {valid}"
    assert str(raised.value) == expected


def test_lm_eval_and_model_keys_pass_but_anything_named_like_ours_is_checked():
    for key in LM_EVAL_ADDS:
        assert not is_ours(key), key
    for key in ("arabcultre_path", "gimmick-max-frames", "jeem_paht", "Judge", "jugde", "pearl_revison"):
        assert is_ours(key), key
        with pytest.raises(RunOptionError, match="unknown run option"):
            validate_run_options({key: "x"}, from_lm_eval_task=True)
    with pytest.raises(RunOptionError, match="unknown run option 'pretrained'"):
        validate_run_options({"pretrained": "m"})  # arab-mm-lighteval / evaluate: every key is a run option


def test_lm_evals_real_merge_reaches_the_hook_and_passes(arabculture_hub_dir, monkeypatch):
    """The metadata lm-eval really hands our hook: --model_args merged as its CLI and evaluator do, plus the YAML's."""
    from lm_eval.tasks import TaskManager
    from lm_eval.utils import simple_parse_args_string

    seen: list[dict[str, Any]] = []
    real = lm_eval_hooks.load_dataset

    def spy(**kwargs: Any) -> Any:
        seen.append(kwargs)
        return real(**kwargs)

    monkeypatch.setattr(lm_eval_hooks, "load_dataset", spy)
    model_args = simple_parse_args_string("pretrained=/models/m,dtype=float32,revision=main,trust_remote_code=True")
    metadata = model_args | {"arabculture_path": str(arabculture_hub_dir)}  # lm-eval's own merge order
    loaded = TaskManager(metadata=metadata).load(["arabculture_mcq_en_none_egypt"])
    assert loaded["tasks"] and seen
    assert {"version", "config_source", "pretrained", "dtype", "revision", "arabculture_path"} <= set(seen[0])
    assert validate_run_options(seen[0], from_lm_eval_task=True) == {"arabculture_path": str(arabculture_hub_dir)}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    user=st.text("abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=12),
    secret=st.text("abcdefghijklmnopqrstuvwxyz0123456789-_", max_size=24).map(lambda s: "Qx9" + s),
    name=st.sampled_from(["key", "api_key", "apikey", "api-key", "token", "access_token", "sig", "password", "secret"]),
    form=st.sampled_from(["userinfo", "user-only", "query", "setting"]),
    as_mapping=st.booleans(),
)
def test_any_credential_in_the_judge_settings_is_refused_with_the_safe_way(user, secret, name, form, as_mapping):
    url = {
        "userinfo": f"https://{user}:{secret}@judge.example/v1",
        "user-only": f"https://{secret}@judge.example/v1",
        "query": f"https://judge.example/v1?api-version=2&{name}={secret}",
        "setting": "https://judge.example/v1",
    }[form]
    settings_ = {"model": "m", "base_url": url, **({name: secret} if form == "setting" else {})}
    value = settings_ if as_mapping else ",".join(f"{k}={v}" for k, v in settings_.items())
    with pytest.raises(RunOptionError) as raised:
        check_judge(value)
    assert "credential" in str(raised.value) and all(way in str(raised.value) for way in SAFE_WAY)
    assert secret not in str(raised.value)  # the refusal does not print the secret either


@settings(max_examples=30, deadline=None)
@given(
    host=st.sampled_from(["127.0.0.1:8000", "judge.example", "localhost"]),
    params=st.lists(st.sampled_from(["api-version=2024-02-01", "model=x", "format=json"]), max_size=2),
    env=st.from_regex(r"[A-Z_][A-Z0-9_]{0,20}", fullmatch=True),
)
def test_judge_settings_without_credentials_are_accepted(host, params, env):
    url = f"http://{host}/v1" + ("?" + "&".join(params) if params else "")
    assert check_judge(f"model=m,base_url={url},api_key_env={env}") == {
        "model": "m",
        "base_url": url,
        "api_key_env": env,
    }


def _env(cli_env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    return {**cli_env, "XDG_CACHE_HOME": str(tmp_path / "xdg"), "HF_HOME": str(tmp_path / "hf")}


@pytest.mark.slow
def test_real_lm_eval_refuses_a_metadata_typo_in_one_line(tmp_path, tiny_lm_dir, arabculture_hub_dir, cli_env):
    """lm-eval builds the model before its tasks, so this is after the (tiny) model and before any data or output."""
    out = tmp_path / "out"
    proc = subprocess.run(
        [console_script("lm_eval"), "--model", "hf", "--model_args", f"pretrained={tiny_lm_dir}",
         "--tasks", "arabculture_mcq_en_none_egypt", "--device", "cpu", "--output_path", str(out),
         "--metadata", json.dumps({"arabculture_paht": str(arabculture_hub_dir)})],
        env=_env(cli_env, tmp_path), cwd=tmp_path, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("error: unknown run option 'arabculture_paht'; did you mean 'arabculture_path'? valid: ")
    assert not out.exists()


def test_lm_eval_refuses_num_fewshot_where_it_samples_examples(tiny_lm_dir, arabculture_hub_dir):
    """Issue 24 item 20: documented as refused. lm-eval's own evaluation, in-process, reaches our sampler; the
    command line prints it in one line as it does the metadata typo above (the same excepthook)."""
    from lm_eval import simple_evaluate
    from lm_eval.models.huggingface import HFLM
    from lm_eval.tasks import TaskManager

    from arab_mm_tasks.harness.lm_eval_yaml import TASKS_DIR

    manager = TaskManager(include_path=str(TASKS_DIR), include_defaults=False,
                          metadata={"arabculture_path": str(arabculture_hub_dir)})  # fmt: skip
    model = HFLM(pretrained=str(tiny_lm_dir), device="cpu")
    with pytest.raises(RunOptionError, match=r"^--num_fewshot 1: arab-mm-tasks tasks are zero-shot only"):
        simple_evaluate(model=model, tasks=["arabculture_mcq_en_none_egypt"], num_fewshot=1, task_manager=manager)


@pytest.mark.slow
def test_real_arab_mm_lighteval_refuses_a_judge_credential_before_the_model(tmp_path, cli_env):
    """The model folder does not exist: the refusal comes before lighteval would try to load it."""
    out = tmp_path / "out"
    judge = "model=m,base_url=https://user:hunter2@judge.example/v1"
    proc = subprocess.run(
        [console_script("arab-mm-lighteval"), "accelerate", f"model_name={tmp_path / 'no-model'}", "arabculture_mcq|0",
         "--output-dir", str(out), "--metadata", json.dumps({"judge": judge})],
        env=_env(cli_env, tmp_path), cwd=tmp_path, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert proc.stderr.strip().splitlines() == [
        "arab-mm-lighteval: error: run option 'judge': 'base_url' carries a credential (user info in the URL); "
        "run options are saved with the results (lm-eval writes --metadata into results_*.json): put a URL that "
        "carries credentials in ARAB_MM_JUDGE_BASE_URL and the key in an environment variable named by api_key_env "
        "(default OPENAI_API_KEY)"
    ]
    assert "hunter2" not in proc.stderr + proc.stdout and not out.exists()


def test_lighteval_few_shot_on_our_tasks_is_refused_before_the_model(capsys):
    assert lighteval_cli.run(["accelerate", "model_name=/nowhere", "arabculture_mcq|0,jeem_vqa|2"]) == 2
    assert capsys.readouterr().err.strip() == (
        "arab-mm-lighteval: error: jeem_vqa|2: arab-mm-tasks tasks are zero-shot only (the benchmarks have a test "
        "split alone, so few-shot examples would leak test items); run it as 'jeem_vqa|0'"
    )


def test_the_readme_reference_lists_every_option_with_what_it_takes():
    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme.split("### Run options", 1)[1].split("\n## ", 1)[0]
    rows = {line.split("|")[1].strip(): line.split("|")[2].strip() for line in section.splitlines() if "| `" in line}
    for key, option in OPTIONS.items():
        generic = {"source": "`<name>_path`", "revision": "`<name>_revision`"}.get(option.kind)
        row = next((takes for name, takes in rows.items() if name.startswith(generic or f"`{key}`")), None)
        assert row == option.expects, (key, row)


@settings(max_examples=50, deadline=None)
@given(
    key=st.sampled_from(sorted(OPTIONS)),
    edit=st.sampled_from(["delete", "insert", "substitute", "transpose"]),
    position=st.integers(min_value=0, max_value=40),
    letter=st.sampled_from("abcdefghijklmnopqrstuvwxyz_-"),
)
def test_a_one_letter_typo_of_any_key_is_refused_even_among_lm_evals_keys(key, edit, position, letter):
    """lm-eval lets a task see its own and the model's keys too, yet a typo of one of ours is never let through."""
    i = position % len(key)
    typo_ = {
        "delete": key[:i] + key[i + 1 :],
        "insert": key[:i] + letter + key[i:],
        "substitute": key[:i] + letter + key[i + 1 :],
        "transpose": key[:i] + key[i + 1 : i + 2] + key[i] + key[i + 2 :],
    }[edit]
    if typo_ in OPTIONS:
        return  # the edit made no change (or another valid key)
    with pytest.raises(RunOptionError, match=f"^unknown run option '{re.escape(typo_)}'; .* valid: "):
        validate_run_options({**LM_EVAL_ADDS, typo_: "x"}, from_lm_eval_task=True)


@pytest.mark.parametrize(
    ("metadata", "expected"),
    [
        ('{"arabculture_paht": "x"}', "unknown run option 'arabculture_paht'; did you mean 'arabculture_path'?"),
        ('{"gimmick_max_side": -5}', "run option 'gimmick_max_side' takes an integer >= 1, got -5"),
        ('{"gimmick_max_frames": "eight"}', "gimmick_max_frames"),
        ("[1", "--metadata is not JSON"),
        ("[1]", "--metadata must be a JSON object"),
    ],
)
def test_evaluate_checks_its_run_options_before_anything_loads(metadata, expected, tmp_path, capsys):
    from arab_mm_tasks.cli import main

    args = ["evaluate", "--model", "hf", "--model_args", f"pretrained={tmp_path / 'no-model'}", "--tasks",
            "arabculture_mcq", "--output_path", str(tmp_path / "out"), "--metadata", metadata]  # fmt: skip
    assert main(args) == 2
    err = capsys.readouterr().err
    assert expected in err and len(err.strip().splitlines()) == 1 and not (tmp_path / "out").exists()
