"""The in-process transformers judge, with tiny random-weight models built at test time (no downloads).

A random model does not answer in the judge's format, which is the point: its replies must
come back as invalid judgements, re-asked, counted and excluded from the mean, not crash the
run or be scored 0.
"""

from __future__ import annotations

import pytest
from PIL import Image

from metric_plugins.judge import (
    GIMMICK_CKQA,
    Judge,
    JudgeCache,
    JudgeConfig,
    JudgeItem,
    JudgePrompt,
    Sampling,
    TransformersBackend,
    XmlScore,
)
from metric_plugins.judge.backends.base import RequestRejected
from metric_plugins.judge.schema import Message

SAMPLING = Sampling(max_tokens=12)


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory):
    from arab_mm_tasks.testing.tiny_model import build_tiny_lm

    corpus = [*(GIMMICK_CKQA.system + "\n" + GIMMICK_CKQA.user_template).splitlines(), "<score>", "</score>", "75"]
    return build_tiny_lm(tmp_path_factory.mktemp("judge-lm") / "tiny-lm", corpus)


def assert_run_accounts_for_every_item(run, n: int, reasks: int) -> None:
    summary = run.summary
    assert len(run.judgements) == n and summary.failed == 0
    valid = [j for j in run.judgements if j.valid]
    assert summary.invalid == n - len(valid) and run.mean().n_invalid == summary.invalid
    for judgement in run.judgements:
        assert judgement.raw is not None and judgement.attempts == (1 if judgement.valid else 1 + reasks)
        assert judgement.valid or (judgement.score is None and judgement.reason)
    mean = run.mean()
    assert mean.n_valid == len(valid) and (mean.score is None) == (not valid)
    assert summary.prompt_tokens > 0 and summary.completion_tokens > 0


def test_a_tiny_text_model_judges_and_its_gibberish_is_counted_invalid(tiny_lm, tmp_path):
    backend = TransformersBackend(tiny_lm)
    judge = Judge(backend, GIMMICK_CKQA, cache=tmp_path / "c.sqlite", sampling=SAMPLING, reasks=1, progress=False)
    items = [JudgeItem({"GROUND_TRUTH": "Al-Sadu", "GENERATED_ANSWER": f"weaving {i}"}, id=str(i)) for i in range(3)]
    run = judge.score_all(items)
    assert_run_accounts_for_every_item(run, 3, reasks=1)
    assert run.summary.invalid >= 1  # a random 2-layer model does not write "<score>N</score>"
    assert backend.identity["backend"] == "transformers" and "fingerprint" in backend.identity
    assert judge.score_all(items).summary.calls == 0  # cached like any other judge


def test_a_text_model_rejects_images_without_retrying(tiny_lm):
    backend = TransformersBackend(tiny_lm)
    image_message = Message("user", "look", images=(object(),))  # type: ignore[arg-type]
    with pytest.raises(RequestRejected, match="text-only"):
        backend.complete([image_message], SAMPLING)


def test_the_config_builds_an_in_process_judge(tiny_lm, tmp_path):
    config = JudgeConfig.from_args(f"backend=transformers,model={tiny_lm},cache_path={tmp_path / 'c.sqlite'}")
    judge = config.build_judge(GIMMICK_CKQA, progress=False)
    assert isinstance(judge.backend, TransformersBackend) and judge.backend.max_concurrency == 1


def test_a_tiny_vision_model_sees_the_images(tmp_path):
    tiny_model = pytest.importorskip("arab_mm_tasks.testing.tiny_model")
    if not hasattr(tiny_model, "build_tiny_vlm"):
        pytest.skip("arab_mm_tasks.testing.tiny_model has no build_tiny_vlm yet")
    folder = tiny_model.build_tiny_vlm(tmp_path / "tiny-vlm")
    prompt = JudgePrompt("test_vision", 1, None, "Does the image show {THING}? Your answer:", XmlScore(), ("THING",))
    backend = TransformersBackend(folder)
    judge = Judge(backend, prompt, cache=JudgeCache.in_memory(), sampling=SAMPLING, reasks=1, progress=False)
    pictures = [Image.new("RGB", (40, 30), (200, 30, 30)), Image.new("RGB", (30, 30), (20, 20, 220))]
    items = [JudgeItem({"THING": "a square"}, [pictures[0]], id="one"), JudgeItem({"THING": "a square"}, pictures)]
    run = judge.score_all(items)
    assert backend.vision is True
    assert_run_accounts_for_every_item(run, 2, reasks=1)
    # same text: each image adds its image tokens to the prompt
    assert run.judgements[1].usage.prompt_tokens > run.judgements[0].usage.prompt_tokens
