"""LLM/LVLM-as-a-judge for every benchmark: one backend interface, versioned prompts, a persistent cache.

GIMMICK CKQA, Pearl, JEEM and ARB are scored at least in part by a judge model, the slowest
and costliest step of an evaluation. This package judges once and never pays twice: every
request is keyed (judge model and endpoint, prompt id/version/content hash, rendered turns,
image hashes, sampling) in a SQLite cache that is written as each judgement finishes, so a
killed run resumes where it stopped and a re-run makes no calls. Replies that do not parse
are re-asked, then counted as invalid and reported next to the score, never scored 0.

Usage (docs/judge.md has the full guide):

    from metric_plugins.judge import Judge, OpenAIChatBackend, get_prompt, ckqa_item

    backend = OpenAIChatBackend("gpt-4o-2024-11-20")                  # key from $OPENAI_API_KEY
    judge = Judge(backend, get_prompt("gimmick_ckqa"), concurrency=32)
    run = judge.score_all([ckqa_item("ckqa_n", title=t, description=d, answer=a, item_id=i) for ...])
    run.mean()      # ScoreSummary(score=..., n_valid=..., n_invalid=..., n_failed=..., policy='exclude')
    run.summary     # calls, cache hits, retries, re-asks, invalid, failed, tokens, wall time

Importing this package imports neither openai nor torch; backends load them on first use.
"""

from __future__ import annotations

from metric_plugins.judge.aggregate import InvalidPolicy, ScoreSummary, mean_score
from metric_plugins.judge.backends import (
    BackendError,
    JudgeBackend,
    JudgeStopped,
    OpenAIChatBackend,
    RequestRejected,
    TransformersBackend,
    TransientError,
)
from metric_plugins.judge.cache import JudgeCache, default_cache_path
from metric_plugins.judge.config import JudgeConfig
from metric_plugins.judge.judge import Judge
from metric_plugins.judge.parsing import BinaryDigit, CriterionLines, JsonScores, Parsed, ReplyFormat, XmlScore
from metric_plugins.judge.prompts import PROMPTS, JudgePrompt, get_prompt
from metric_plugins.judge.prompts.gimmick import GIMMICK_CKQA, ckqa_item
from metric_plugins.judge.retry import RetryPolicy
from metric_plugins.judge.run import JudgeRun, JudgeSummary
from metric_plugins.judge.schema import JudgeItem, Judgement, Message, Reply, Sampling, Usage

__all__ = [
    "GIMMICK_CKQA",
    "PROMPTS",
    "BackendError",
    "BinaryDigit",
    "CriterionLines",
    "InvalidPolicy",
    "JsonScores",
    "Judge",
    "JudgeBackend",
    "JudgeCache",
    "JudgeConfig",
    "JudgeItem",
    "JudgePrompt",
    "JudgeRun",
    "JudgeStopped",
    "JudgeSummary",
    "Judgement",
    "Message",
    "OpenAIChatBackend",
    "Parsed",
    "Reply",
    "ReplyFormat",
    "RequestRejected",
    "RetryPolicy",
    "Sampling",
    "ScoreSummary",
    "TransformersBackend",
    "TransientError",
    "Usage",
    "XmlScore",
    "ckqa_item",
    "default_cache_path",
    "get_prompt",
    "mean_score",
]
