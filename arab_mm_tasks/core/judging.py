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
from typing import Any

from metric_plugins.judge.config import JudgeConfig, parse_settings

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


def judge_values(prompt_id: str, values: Sequence[dict[str, Any]], config: JudgeConfig | None = None) -> None:
    """Judge the judged metric values (`arab_mm_tasks.core.scoring`) in place: score and ``judge_status``."""
    from metric_plugins.judge import JudgeItem, get_prompt

    config = config or current_config()
    if config is None:
        log.warning(
            "%d samples need the %r judge but no judge model is configured: their scores are NaN. Set "
            "ARAB_MM_JUDGE_MODEL (and ARAB_MM_JUDGE_BASE_URL), pass lm-eval --metadata "
            '\'{"judge": "model=..."}\', or judge the saved samples later with `arab-mm-tasks judge`.',
            len(values),
            prompt_id,
        )
        for value in values:
            value["judge_status"] = "not_judged"
        return
    judge = config.build_judge(get_prompt(prompt_id))
    run = judge.score_all([JudgeItem(value["judge"]["fields"]) for value in values])
    for value, judgement in zip(values, run.judgements, strict=True):
        value["score"] = judgement.score if judgement.valid else None  # invalid replies are left out of the mean
        value["judge_status"] = judgement.status
    mean = run.mean()
    log.info("judge %s: %s; %s", prompt_id, run.summary, mean.as_dict())
