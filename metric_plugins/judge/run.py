"""What a judging run returns: one judgement per item in input order, a cost summary, and the run's settings.

The summary answers "what did this cost and what went wrong" (calls, cache hits, retries,
re-asks, invalid and failed items, tokens, wall time); `metadata` answers "which judge was
this" (backend identity, prompt id/version/hash, sampling, retry policy) and goes into results
files next to the score. Neither holds a credential.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from metric_plugins.judge.aggregate import InvalidPolicy, ScoreSummary, mean_score
from metric_plugins.judge.schema import Judgement, Usage


@dataclass(frozen=True)
class JudgeSummary:
    """Counts for one run. `calls` counts every request sent (retries and re-asks included)."""

    items: int
    calls: int
    cache_hits: int
    duplicates: int  # items whose request equals an earlier item's in the same run: judged once
    retries: int
    reasks: int
    invalid: int
    failed: int
    prompt_tokens: int
    completion_tokens: int
    wall_seconds: float  # judging, without `setup_seconds`
    setup_seconds: float = 0.0  # getting the backend ready (importing openai, loading a model), once per run

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def total(cls, summaries: Iterable[JudgeSummary]) -> JudgeSummary:
        """The sum of several runs' counts and times (one per task and prompt in a generate-then-judge run)."""
        sums = dict.fromkeys((f.name for f in fields(cls)), 0)
        for summary in summaries:
            for name, value in asdict(summary).items():
                sums[name] += value
        return cls(**sums)

    def __str__(self) -> str:
        setup = f" (+{self.setup_seconds:.2f}s setup)" if self.setup_seconds >= 0.005 else ""
        return (
            f"{self.items} items: {self.calls} calls, {self.cache_hits} cache hits, {self.retries} retries, "
            f"{self.reasks} re-asks, {self.invalid} invalid, {self.failed} failed, "
            f"{self.prompt_tokens}+{self.completion_tokens} tokens, {self.wall_seconds:.2f}s{setup}"
        )


@dataclass
class Tally:
    """Costs counted while judging: one per item in its worker thread, merged into the run's by the collector."""

    calls: int = 0
    retries: int = 0
    reasks: int = 0
    usage: Usage = field(default_factory=Usage)
    cache_hits: int = 0  # judgements another process stored while this run waited for them

    def merge(self, other: Tally) -> None:
        self.calls += other.calls
        self.retries += other.retries
        self.reasks += other.reasks
        self.usage = self.usage + other.usage


@dataclass(frozen=True)
class JudgeRun:
    """Judgements in the order of the items given, the run's summary and its settings."""

    judgements: list[Judgement]
    summary: JudgeSummary
    metadata: dict[str, Any]

    def mean(self, policy: InvalidPolicy = "exclude", name: str | None = None) -> ScoreSummary:
        """The mean score with invalid replies handled by `policy` (see `metric_plugins.judge.aggregate`)."""
        return mean_score(self.judgements, policy, name)

    @property
    def invalid(self) -> list[Judgement]:
        return [j for j in self.judgements if not j.valid and not j.failed]

    @property
    def failed(self) -> list[Judgement]:
        return [j for j in self.judgements if j.failed]

    def to_dict(self, policy: InvalidPolicy = "exclude") -> dict[str, Any]:
        """A results-file record: settings, summary, the mean with its counts, every judgement."""
        return {
            "judge": self.metadata,
            "summary": self.summary.to_dict(),
            "mean": self.mean(policy).as_dict(),
            "judgements": [j.to_dict() for j in self.judgements],
        }
