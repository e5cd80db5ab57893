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
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

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
    judge = config.build_judge(get_prompt(prompt_id))
    run = judge.score_all([JudgeItem(v["judge"]["fields"], id=i) for v, i in zip(values, ids, strict=True)])
    for value, judgement in zip(values, run.judgements, strict=True):
        value["score"] = judgement.score if judgement.valid else None  # invalid replies are left out of the mean
        value["judge_status"] = judgement.status
    log.info("judge %s: %s; %s", prompt_id, run.summary, run.mean().as_dict())
    return run


def _mark(values: Sequence[dict[str, Any]], status: str) -> None:
    for value in values:
        value["judge_status"] = status
