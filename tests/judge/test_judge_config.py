"""The judge configuration a command line carries: parsed, typed, serialisable, and never a secret."""

from __future__ import annotations

import json

import pytest

from metric_plugins.judge import GIMMICK_CKQA, JudgeConfig, OpenAIChatBackend, Sampling


def test_a_spec_string_is_parsed_and_typed():
    config = JudgeConfig.from_args(
        "base_url=http://localhost:8000/v1, model=Qwen/Qwen2.5-72B-Instruct, concurrency=64, timeout=30,"
        "temperature=0.2, seed=7, top_p=none"
    )
    assert config.base_url == "http://localhost:8000/v1" and config.model == "Qwen/Qwen2.5-72B-Instruct"
    assert (config.concurrency, config.timeout, config.seed, config.top_p) == (64, 30.0, 7, None)
    assert config.sampling() == Sampling(temperature=0.2, seed=7)


def test_the_config_round_trips_through_json():
    config = JudgeConfig.from_args({"model": "gpt-4o-2024-11-20", "concurrency": 16, "cache_path": "/tmp/j.sqlite"})
    assert JudgeConfig.from_args(json.loads(json.dumps(config.to_dict()))) == config
    assert config.to_dict()["api_key_env"] == "OPENAI_API_KEY"  # the variable's name, not its value


def test_arguments_beat_environment_beats_defaults():
    environ = {"ARAB_MM_JUDGE_MODEL": "env-model", "ARAB_MM_JUDGE_CONCURRENCY": "3", "OPENAI_API_KEY": "sk-x"}
    config = JudgeConfig.from_env_or_args("model=arg-model", environ=environ)
    assert (config.model, config.concurrency, config.max_retries) == ("arg-model", 3, 6)
    assert "sk-x" not in repr(config) and "sk-x" not in json.dumps(config.to_dict())


def test_unknown_settings_and_backends_are_errors_that_list_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown judge setting\(s\) \['modle'\]; known: .*'model'"):
        JudgeConfig.from_args("modle=gpt-4o")
    with pytest.raises(ValueError, match="not key=value"):
        JudgeConfig.from_args("gpt-4o")
    with pytest.raises(ValueError, match="backend must be one of"):
        JudgeConfig.from_args("backend=vllm,model=x")
    with pytest.raises(ValueError, match="needs a model"):
        JudgeConfig().build_backend()


def test_the_config_builds_the_judge_it_describes(tmp_path):
    config = JudgeConfig.from_args(
        {"model": "m", "base_url": "http://localhost:11434/v1/", "api_key_env": "OLLAMA_KEY", "timeout": "12",
         "concurrency": 5, "max_retries": 2, "reasks": 1, "cache_path": str(tmp_path / "c.sqlite")}
    )  # fmt: skip
    judge = config.build_judge(GIMMICK_CKQA, progress=False)
    assert isinstance(judge.backend, OpenAIChatBackend)
    assert judge.backend.identity == {"backend": "openai-chat", "model": "m", "base_url": "http://localhost:11434/v1"}
    assert (judge.concurrency, judge.retry.max_retries, judge.reasks, judge.backend.timeout) == (5, 2, 1, 12.0)
    assert judge.cache.path == str(tmp_path / "c.sqlite")
    assert judge.metadata["prompt"] == GIMMICK_CKQA.describe()


def test_credentials_in_a_base_url_stay_out_of_identity_and_repr():
    backend = OpenAIChatBackend("m", base_url="http://user:sk-test-SECRET123@localhost:8000/v1?api-key=SECRET123")
    assert backend.identity["base_url"] == "http://localhost:8000/v1"
    # still used to connect: test_judge_faults.py::test_credentials_in_the_base_url_reach_the_server_and_nothing_else
    assert "SECRET123" not in repr(backend) and "SECRET123" not in backend.base_url
