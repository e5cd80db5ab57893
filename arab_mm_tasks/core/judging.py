"""The judge that scores judged metrics during a harness run, and the call that scores them.

The judge is configured per run, never per task: from ``ARAB_MM_JUDGE_*`` environment variables
(``ARAB_MM_JUDGE_MODEL``, ``ARAB_MM_JUDGE_BASE_URL``, ...; see `metric_plugins.judge.config`)
and, for lm-eval, from ``--metadata '{"judge": "model=gpt-4o-2024-11-20,concurrency=32"}'``
(read by the dataset hook), which wins over the environment. API keys stay in the environment
variable the config names.

Without a judge model, judged scores are NaN and every sample counts as unscored: the run still
finishes and its saved samples can be judged later with ``arab-mm-tasks judge``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from arab_mm_tasks.core.scoring import pending_images, release_images
from metric_plugins.judge.config import JudgeConfig, parse_settings

if TYPE_CHECKING:
    from metric_plugins.judge import JudgeRun, JudgeSummary

log = logging.getLogger(__name__)

_run_args: dict[str, Any] = {}


def configure(args: str | Mapping[str, Any] | None) -> None:
    """Set this process's judge settings (``"model=...,base_url=..."`` or a mapping); checked at once."""
    parsed = parse_settings(args)
    JudgeConfig.from_args(parsed)  # an unknown setting fails here, before any generation
    _run_args.clear()
    _run_args.update(parsed)


def current_config() -> JudgeConfig | None:
    """The configured judge, or None when no judge model is set."""
    config = JudgeConfig.from_env_or_args(_run_args)
    return config if config.model else None


def judge_values(
    prompt_id: str,
    values: Sequence[dict[str, Any]],
    config: JudgeConfig | None = None,
    ids: Sequence[str] | None = None,
) -> JudgeSummary | None:
    """Judge the judged metric values (`arab_mm_tasks.core.scoring`) in place: score and ``judge_status``.

    For harness aggregations: a judge that cannot run at all (`JudgeStopped`: unreachable, bad
    key, unknown model) is reported as one error line and the values stay unscored, so the
    harness still writes its results and samples, which `arab-mm-tasks judge` can score later.
    """
    from metric_plugins.judge import JudgeStopped

    config = config or current_config()
    if config is None:
        log.warning(
            "%d samples need the %r judge but no judge model is configured: their scores are NaN. Set "
            "ARAB_MM_JUDGE_MODEL (and ARAB_MM_JUDGE_BASE_URL), pass lm-eval --metadata "
            '\'{"judge": "model=..."}\', or judge the saved samples later with `arab-mm-tasks judge`.',
            len(values),
            prompt_id,
        )
        _mark(values, "not_judged")
        return None
    try:
        return judge_run(prompt_id, values, config, ids).summary
    except JudgeStopped as error:
        log.error("judge %s stopped, %d samples left unscored: %s", prompt_id, len(values), error)
        _mark(values, "not_judged")
        return None


def judge_run(
    prompt_id: str, values: Sequence[dict[str, Any]], config: JudgeConfig, ids: Sequence[str] | None = None
) -> JudgeRun:
    """`judge_values` that lets `JudgeStopped` through (for callers that report it themselves) and returns the run.

    `ids` name the samples in warnings and judgements (default: their position, ``sample 3``).
    """
    from metric_plugins.judge import JudgeItem, get_prompt

    ids = ids if ids is not None else [f"sample {i}" for i in range(len(values))]
    prompt = get_prompt(prompt_id)
    partial = getattr(prompt.reply_format, "partial", None)  # the scores an invalid reply does give, if any
    authors = getattr(prompt.reply_format, "authors", None)  # the released scorer's reading of a reply, if any
    judge = config.build_judge(prompt)
    items = [JudgeItem(v["judge"]["fields"], _judge_images(v, i), id=i) for v, i in zip(values, ids, strict=True)]
    run = judge.score_all(items)
    for value, judgement in zip(values, run.judgements, strict=True):
        # kept in the request, which the metrics sharing it (one per criterion) read without a new call
        value["judge"]["result"] = {
            "status": judgement.status,
            "score": judgement.score if judgement.valid else None,
            "scores": dict(judgement.scores) if judgement.valid and judgement.scores is not None else None,
        }
        if judgement.status == "invalid" and partial is not None and judgement.raw:
            value["judge"]["result"]["partial"] = partial(judgement.raw)
        if authors is not None and judgement.status in ("valid", "invalid") and judgement.raw is not None:
            value["judge"]["result"]["authors"] = authors(judgement.raw)  # None: their scorer drops the row
        apply_judgement(value, config.invalid_policy)
    _release(values)
    log.info("judge %s: %s; %s", prompt_id, run.summary, run.mean().as_dict())
    return run


def apply_judgement(value: dict[str, Any], run_policy: str | None = None) -> None:
    """A judged value's score and status from its request's judgement.

    Valid: the value's ``judge_score`` (one named score of the reply), its ``judge_weights`` (a
    weighted sum of them), or else the prompt's primary score. Failed (no reply): never scored.
    Invalid: left out (``exclude``, the default) or averaged in as 0 / -1 (times the weights'
    sum), by the run's ``invalid_policy`` (`run_policy`) or else the metric's. Under ``authors``
    the metric's ``authors_invalid`` substitute stands in only for the scores the reply does not
    give (its ``partial`` ones are kept), as a benchmark's released scorer does; where the prompt's
    reply format reads replies as that scorer does (``authors``: Pearl's), that reading scores every
    answered judgement, valid or not (`_authors_score`).
    """
    from metric_plugins.judge.aggregate import INVALID_VALUES

    result = value["judge"]["result"]
    value["judge_status"] = result["status"]
    weights = value.get("judge_weights")
    if (run_policy or value.get("invalid_policy")) == "authors" and "authors" in result:
        value["score"] = _authors_score(value, result["authors"])
    elif result["status"] == "valid":
        name, scores = value.get("judge_score"), result["scores"] or {}
        missing = [n for n in ([name] if name else list(weights or ())) if n not in scores]
        if missing:
            prompt = value["judge"]["prompt"]
            raise KeyError(f"judge prompt {prompt!r} gives no score {missing[0]!r} (it gives {sorted(scores)})")
        if name:
            value["score"] = scores[name]
        elif weights:
            value["score"] = sum(float(weight) * scores[n] for n, weight in weights.items())
        else:
            value["score"] = result["score"]
    elif result["status"] == "invalid":
        policy, given = run_policy or value.get("invalid_policy", "exclude"), {}
        if policy == "authors":  # the benchmark's released scorer: its substitute, the scores the reply gives kept
            policy = value.get("authors_invalid") or value.get("invalid_policy", "exclude")
            given = result.get("partial") or {}
        substitute = INVALID_VALUES[policy]
        name = value.get("judge_score")
        parts = {name: 1.0} if name else weights or {"": 1.0}  # "": the primary score, which no partial reply gives
        value["score"] = (
            None if substitute is None else sum(float(w) * given.get(n, substitute) for n, w in parts.items())
        )
    else:
        value["score"] = None


def _authors_score(value: Mapping[str, Any], reading: Mapping[str, float | None] | None) -> float | None:
    """A value's score from the released scorer's reading of its reply (`ReplyFormat.authors`, valid or not).

    None (left out, counted unscored) when their scorer drops the row or a score it needs is None.
    """
    name, weights = value.get("judge_score"), value.get("judge_weights")
    parts = {name: 1.0} if name else weights or {None: 1.0}
    if reading is None:
        return None
    numbers = [reading.get(n) if n is not None else next(iter(reading.values()), None) for n in parts]
    if any(number is None for number in numbers):
        return None
    return sum(float(w) * float(n) for w, n in zip(parts.values(), numbers, strict=True))  # type: ignore[arg-type]


def _judge_images(value: Mapping[str, Any], sample: str) -> list[Any]:
    """The images a judged value asks the judge to see (none unless its metric has ``judge_images``)."""
    if "images" not in value["judge"]:
        return []
    images = pending_images(value["judge"]["images"])
    if images is None:
        images = saved_images(value)
    if images is None:
        raise ValueError(
            f"{sample}: its judge must see the sample's images, which are not held in this process; "
            "give the dataset (`arab-mm-tasks judge --dataset-path BENCHMARK=DIR`)"
        )
    return images


def _release(values: Sequence[dict[str, Any]]) -> None:
    """Free the images the judge requests of `values` kept (once per request, however many metrics share it)."""
    for request in {id(v["judge"]): v["judge"] for v in values}.values():
        release_images(request.pop("images", None))


# Where `arab-mm-tasks judge` finds a saved sample's images: a function of the judged value, set by that command.
_saved_images: list[Callable[[Mapping[str, Any]], list[Any] | None]] = []


def saved_images(value: Mapping[str, Any]) -> list[Any] | None:
    return _saved_images[0](value) if _saved_images else None


def set_saved_images(finder: Callable[[Mapping[str, Any]], list[Any] | None] | None) -> None:
    _saved_images.clear()
    if finder is not None:
        _saved_images.append(finder)


def _mark(values: Sequence[dict[str, Any]], status: str) -> None:
    """Leave `values` unscored, and the metrics sharing their requests too (their images are freed)."""
    for value in values:
        value["judge"]["result"] = {"status": status, "score": None, "scores": None}
        value["judge_status"] = status
    _release(values)  # never judged in this process: nothing waits for them


# --- DCScore in a task: batched scorers with images (`GenerativeMetric(batch=..., batch_images=True)`) ---

_last_dcscore: tuple[tuple, list[dict[str, Any]]] | None = None
_dcscore_language = ["en"]  # this run's DCScore prompts: "en" (DeCapBench's) or "ar" (`metric_plugins.dcscore`)


def set_dcscore_language(language: str | None) -> None:
    """This run's DCScore prompt language (a benchmark's run option); None: ``"en"``, upstream's prompts."""
    from metric_plugins.judge.prompts.dcscore import DCSCORE_PROMPTS

    language = "en" if language is None else str(language)
    if language not in DCSCORE_PROMPTS:
        raise ValueError(f"DCScore language must be one of {', '.join(DCSCORE_PROMPTS)}, got {language!r}")
    _dcscore_language[0] = language


def dcscore_language() -> str:
    return _dcscore_language[0]


def _dcscore_captions(
    predictions: Sequence[str], references: Sequence[str], images: Sequence[Sequence[bytes]]
) -> list[dict[str, Any]]:
    """Per caption, DCScore's values (x100, None when invalid) from the run's judge; one pipeline per batch.

    Precision, recall and F1 are three metrics of a task, aggregated one after another on the same
    samples: the last batch's result is kept, so the pipeline runs once (the judge cache would
    make the repeats free of calls, not of work).
    """
    global _last_dcscore
    from metric_plugins.dcscore import score_captions
    from metric_plugins.judge import JudgeStopped

    first_images = [sample[0] for sample in images]  # DCScore verifies a caption against one image
    language = dcscore_language()
    key = (language, tuple(predictions), tuple(references), tuple(hash(image) for image in first_images))
    if _last_dcscore is not None and _last_dcscore[0] == key:
        return _last_dcscore[1]
    config = current_config()
    empty = {"precision": None, "recall": None, "f1": None}
    if config is None:
        log.warning("%d captions need the DCScore judge but no judge model is configured: scores are NaN", len(key[1]))
        captions = [empty] * len(predictions)
    else:
        try:
            report = score_captions(predictions, references, first_images, judge=config, language=language)
            captions = [{"precision": c.precision, "recall": c.recall, "f1": c.f1} for c in report.captions]
            log.info("DCScore (%s prompts): %s valid, %s invalid, %s failed", language, *(getattr(report.summary,
                     f"n_{s}") for s in ("valid", "invalid", "failed")))  # fmt: skip
        except JudgeStopped as error:
            log.error("DCScore judge stopped, %d captions left unscored: %s", len(predictions), error)
            captions = [empty] * len(predictions)
    _last_dcscore = (key, captions)
    return captions


def _dcscore(measure: str) -> Any:
    def scorer(predictions: Sequence[str], references: Sequence[str], images: Sequence[Sequence[bytes]]) -> list[float]:
        values = [c[measure] for c in _dcscore_captions(predictions, references, images)]
        return [float("nan") if value is None else value for value in values]

    scorer.__name__ = f"dcscore_{measure}"
    return scorer


dcscore_precision = _dcscore("precision")
dcscore_recall = _dcscore("recall")
dcscore_f1 = _dcscore("f1")
