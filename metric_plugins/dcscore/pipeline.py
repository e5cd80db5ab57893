"""The DCScore pipeline on the judge framework: extract, match and verify every caption, then score.

Each stage is a `Judge.score_all` over every caption that needs it, so requests run
concurrently, come from the SQLite cache on a re-run, and a killed run resumes. Upstream's
sampling is kept: extraction at temperature 1 (one sample), matching at temperature 1 (n=3),
verification at temperature 0.3 (n=3), every (verification, matching) pair a trial. Upstream
asks for n choices in one request; the framework sends one request per sample, so sample t
carries ``seed = attempt * n + t``: the requests differ (the cache keeps them apart), and a
server that honours seeds (vLLM, the transformers backend) reproduces them.

Upstream re-runs a caption's whole pipeline, fresh samples and all, until it is valid, at most
5 times (``MAX_TRIES``). So does this: attempt a uses seeds from a, and as every decision is
made from cached replies a re-run retraces the same attempts without calls. Inside an attempt
each unparsable reply is first re-asked by the judge (``reasks``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from metric_plugins.dcscore.formula import TrialError, trial_scores
from metric_plugins.judge.cache import JudgeCache
from metric_plugins.judge.config import JudgeConfig
from metric_plugins.judge.judge import Judge
from metric_plugins.judge.media import image_ref
from metric_plugins.judge.prompts.base import JudgePrompt
from metric_plugins.judge.prompts.dcscore import DCSCORE_PROMPTS, FactList, format_json_input
from metric_plugins.judge.retry import RetryPolicy
from metric_plugins.judge.run import JudgeSummary
from metric_plugins.judge.schema import JudgeItem, Judgement, Sampling

METRICS = ("precision", "recall", "f1", "precision_relevant", "recall_relevant", "f1_relevant", "dcscore")
# upstream's names in compute_precision_recall -> ours
UPSTREAM_NAMES = {
    "precision": "precision",
    "recall": "recall",
    "f1_score": "f1",
    "precision_relevant": "precision_relevant",
    "recall_relevant": "recall_relevant",
    "f1_score_relevant": "f1_relevant",
}


@dataclass(frozen=True)
class DCScoreOptions:
    """Upstream's settings, as defaults.

    Args:
        n_match: matching samples (upstream ``n=3``).
        n_verify: verification samples (upstream ``--n_ai_eval`` default 3).
        extract_temperature, match_temperature, verify_temperature: upstream 1, 1, 0.3.
        max_tokens: upstream ``max_tokens=2000``.
        max_attempts: whole-pipeline attempts per caption (upstream ``MAX_TRIES = 5``).
        oracle_relevance: ``"all"``: every reference fact counts as relevant, as upstream sets
            ``relevance = 1`` on its (human) oracle facts; ``"extracted"``: the reference
            extraction's own relevance labels.
    """

    n_match: int = 3
    n_verify: int = 3
    extract_temperature: float = 1.0
    match_temperature: float = 1.0
    verify_temperature: float = 0.3
    max_tokens: int = 2000
    max_attempts: int = 5
    oracle_relevance: Literal["all", "extracted"] = "all"

    def __post_init__(self) -> None:
        if min(self.n_match, self.n_verify, self.max_attempts, self.max_tokens) < 1:
            raise ValueError("n_match, n_verify, max_attempts and max_tokens must be >= 1")
        if self.oracle_relevance not in ("all", "extracted"):
            raise ValueError(f"oracle_relevance must be 'all' or 'extracted', got {self.oracle_relevance!r}")


@dataclass(frozen=True)
class CaptionScore:
    """One caption's DCScore: the metrics x100 (None unless valid), the facts, the trials and why it failed.

    `status` is ``valid``, ``invalid`` (the judge replied but no attempt gave a computable
    result: `reason` says the last attempt's problem) or ``failed`` (a request got no reply:
    `reason` holds the error; a re-run asks again).
    """

    index: int
    status: str
    precision: float | None = None
    recall: float | None = None
    f1: float | None = None
    precision_relevant: float | None = None
    recall_relevant: float | None = None
    f1_relevant: float | None = None
    dcscore: float | None = None
    attempts: int = 0
    reason: str | None = None
    predicted_facts: list[dict[str, Any]] = field(default_factory=list)
    oracle_facts: list[dict[str, Any]] = field(default_factory=list)
    trials: list[dict[str, float]] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return self.status == "valid"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class DCScoreSummary:
    """Means over the valid captions (x100; NaN when none is valid) and the counts beside them."""

    precision: float
    recall: float
    f1: float
    precision_relevant: float
    recall_relevant: float
    f1_relevant: float
    dcscore: float
    n_valid: int
    n_invalid: int
    n_failed: int
    language: str
    options: dict[str, Any]
    judge: dict[str, Any]  # calls, cache hits, re-asks, tokens... over every stage

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class DCScoreReport:
    """Per caption results, in input order, and the summary."""

    captions: list[CaptionScore]
    summary: DCScoreSummary

    def to_dict(self) -> dict[str, Any]:
        return {"summary": self.summary.to_dict(), "captions": [c.to_dict() for c in self.captions]}


JudgeSpec = Judge | JudgeConfig | str | Mapping[str, Any] | None


@dataclass
class _Stages:
    """Builds one `Judge` per (prompt, sampling) on a shared backend and cache, and adds up their summaries."""

    judge: Judge
    options: DCScoreOptions
    progress: bool
    summaries: list[JudgeSummary] = field(default_factory=list)

    def ask(self, prompt: JudgePrompt, items: list[JudgeItem], temperature: float, seed: int) -> list[Judgement]:
        if not items:
            return []
        base = self.judge
        judge = Judge(
            base.backend,
            prompt,
            cache=base.cache,
            concurrency=base.concurrency,
            sampling=Sampling(temperature=temperature, max_tokens=self.options.max_tokens, seed=seed),
            retry=base.retry,
            reasks=base.reasks,
            retry_invalid=base.retry_invalid,
            progress=self.progress,
            unreachable_limit=base.unreachable_limit,
        )
        run = judge.score_all(items)
        self.summaries.append(run.summary)
        return run.judgements


def _base_judge(judge: JudgeSpec, prompt: JudgePrompt, progress: bool) -> Judge:
    """A `Judge` whose backend, cache, concurrency, retries and re-asks every stage shares."""
    if isinstance(judge, Judge):
        return judge
    if judge is None:
        config = JudgeConfig.from_env_or_args()
    elif isinstance(judge, JudgeConfig):
        config = judge
    else:
        config = JudgeConfig.from_args(judge)
    return Judge(
        config.build_backend(),
        prompt,
        cache=JudgeCache(config.cache_path) if config.cache_path else None,
        concurrency=config.concurrency,
        retry=RetryPolicy(max_retries=config.max_retries),
        reasks=config.reasks,
        progress=progress,
    )


def _check_inputs(predictions: Sequence[str], references: Sequence[str], images: Sequence[Any]) -> list[bytes]:
    """Errors name the index and the field; images become PNG bytes once (validated, hashed once)."""
    if not (len(predictions) == len(references) == len(images)):
        raise ValueError(
            f"DCScore needs one reference and one image per prediction: got {len(predictions)} predictions, "
            f"{len(references)} references and {len(images)} images"
        )
    pngs = []
    for index, (prediction, reference, image) in enumerate(zip(predictions, references, images, strict=True)):
        if not isinstance(prediction, str):
            raise TypeError(f"DCScore item {index}: prediction must be a string, got {type(prediction).__name__}")
        if not isinstance(reference, str) or not reference.strip():
            raise ValueError(f"DCScore item {index}: reference must be a non-empty string, got {reference!r:.60}")
        try:
            pngs.append(image_ref(image).png)
        except Exception as error:  # a TypeError for non-images, PIL's errors for undecodable bytes
            raise ValueError(
                f"DCScore item {index}: image is not a PIL image or decodable image bytes: {error}"
            ) from error
    return pngs


def _facts(judgement: Judgement, reply_format: FactList) -> list[dict[str, Any]]:
    return reply_format.facts(judgement.raw or "")


def _problem(judgement: Judgement, stage: str) -> tuple[str, str]:
    """('failed' | 'invalid', why) for a judgement that is not valid."""
    if judgement.failed:
        return "failed", f"{stage}: request failed: {judgement.error}"
    return "invalid", f"{stage}: invalid reply: {judgement.reason}"


def score_captions(
    predictions: Sequence[str],
    references: Sequence[str],
    images: Sequence[Any],
    *,
    judge: JudgeSpec = None,
    language: Literal["en", "ar"] = "en",
    progress: bool = False,
    **options: Any,
) -> DCScoreReport:
    """DCScore of each caption against its reference caption and image, and the means over valid captions.

    Args:
        predictions: candidate captions.
        references: the reference caption of each image; its atomic facts are the oracle facts.
        images: one PIL image or encoded image bytes per caption (shown to the verifier).
        judge: a `Judge` (its backend, cache, concurrency, retries and re-asks are used), a
            `JudgeConfig`, settings as ``"key=value,..."`` or a mapping, or None for
            ``ARAB_MM_JUDGE_*`` variables. Its temperature is not used: each stage has upstream's.
        language: ``"en"``: upstream's prompts as they are; ``"ar"``: the Arabic-handling variants.
        progress: tqdm bars per stage.
        **options: `DCScoreOptions` fields (``n_match``, ``n_verify``, temperatures, ``max_tokens``,
            ``max_attempts``, ``oracle_relevance``).
    """
    if language not in DCSCORE_PROMPTS:
        raise ValueError(f"DCScore language must be one of {sorted(DCSCORE_PROMPTS)}, got {language!r}")
    settings = DCScoreOptions(**options)
    pngs = _check_inputs(predictions, references, images)
    extract, match, verify = DCSCORE_PROMPTS[language]
    stages = _Stages(_base_judge(judge, extract, progress), settings, progress)
    pipeline = _Pipeline(stages, settings, (extract, match, verify), list(predictions), list(references), pngs)
    captions = pipeline.run()
    return DCScoreReport(captions, _summary(captions, language, settings, stages.summaries))


@dataclass
class _Pipeline:
    stages: _Stages
    options: DCScoreOptions
    prompts: tuple[JudgePrompt, JudgePrompt, JudgePrompt]
    predictions: list[str]
    references: list[str]
    pngs: list[bytes]
    oracle: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # reference text -> its facts
    done: dict[int, CaptionScore] = field(default_factory=dict)
    last_reason: dict[int, str] = field(default_factory=dict)

    def run(self) -> list[CaptionScore]:
        for attempt in range(self.options.max_attempts):
            pending = [i for i in range(len(self.predictions)) if i not in self.done]
            if not pending:
                break
            self._attempt(attempt, pending)
        for index in range(len(self.predictions)):
            if index not in self.done:
                reason = self.last_reason.get(index, "no attempt")
                self.done[index] = CaptionScore(index, "invalid", attempts=self.options.max_attempts, reason=reason)
        return [self.done[i] for i in range(len(self.predictions))]

    def _give_up(self, index: int, status: str, reason: str, attempt: int) -> None:
        if status == "failed":  # no reply: a later attempt would not help; a re-run asks again
            self.done[index] = CaptionScore(index, "failed", attempts=attempt + 1, reason=reason)
        else:
            self.last_reason[index] = reason

    def _attempt(self, attempt: int, pending: list[int]) -> None:
        extract, match, verify = self.prompts
        fmt_extract = extract.reply_format
        # 1. extraction at seed `attempt`: the candidates, and every reference still without facts
        #    (a reference keeps the first valid extraction, so all models meet the same oracle facts)
        new_refs = sorted({self.references[i] for i in pending} - set(self.oracle))
        texts = [self.predictions[i] for i in pending] + new_refs
        items = [JudgeItem({"caption": text}, id=f"dcscore extract {n}") for n, text in enumerate(texts)]
        judged = self.stages.ask(extract, items, self.options.extract_temperature, seed=attempt)
        ref_problem: dict[str, tuple[str, str]] = {}
        for reference, judgement in zip(new_refs, judged[len(pending) :], strict=True):
            if judgement.valid:
                self.oracle[reference] = _facts(judgement, fmt_extract)  # type: ignore[arg-type]
            else:
                status, why = _problem(judgement, "reference extraction")
                ref_problem[reference] = (status, why)
        ready: list[tuple[int, list[dict[str, Any]]]] = []
        for index, judgement in zip(pending, judged[: len(pending)], strict=True):
            reference = self.references[index]
            if reference in ref_problem:
                self._give_up(index, *ref_problem[reference], attempt)
            elif not judgement.valid:
                self._give_up(index, *_problem(judgement, "extraction"), attempt)
            else:
                ready.append((index, _facts(judgement, fmt_extract)))  # type: ignore[arg-type]
        if not ready:
            return
        # 2. matching and 3. verification: n samples each, sample t at seed attempt * n + t
        match_items, verify_items = [], []
        for index, facts in ready:
            shown = format_json_input([{k: v for k, v in f.items() if k != "relevance"} for f in facts])
            oracle = format_json_input([{"id": k, "fact": f["fact"]} for k, f in enumerate(self._oracle(index))])
            match_items.append(
                JudgeItem({"predicted_atomic_facts": shown, "oracle_atomic_facts": oracle}, id=f"dcscore match {index}")
            )
            verify_items.append(
                JudgeItem(
                    {"reference_caption": self.references[index], "atomic_facts": shown},
                    images=(self.pngs[index],),
                    id=f"dcscore verify {index}",
                )
            )
        n_m, n_v = self.options.n_match, self.options.n_verify
        matches = [
            self.stages.ask(match, match_items, self.options.match_temperature, seed=attempt * n_m + t)
            for t in range(n_m)
        ]
        verifications = [
            self.stages.ask(verify, verify_items, self.options.verify_temperature, seed=attempt * n_v + t)
            for t in range(n_v)
        ]
        for row, (index, facts) in enumerate(ready):
            outcome = self._score(
                index, facts, [m[row] for m in matches], [v[row] for v in verifications], match, verify
            )
            if isinstance(outcome, CaptionScore):
                self.done[index] = CaptionScore(**{**asdict(outcome), "attempts": attempt + 1})
            else:
                self._give_up(index, *outcome, attempt)

    def _oracle(self, index: int) -> list[dict[str, Any]]:
        return self.oracle[self.references[index]]

    def _score(
        self,
        index: int,
        facts: list[dict[str, Any]],
        matches: list[Judgement],
        verifications: list[Judgement],
        match: JudgePrompt,
        verify: JudgePrompt,
    ) -> CaptionScore | tuple[str, str]:
        for stage, judgements in (("matching", matches), ("verification", verifications)):
            for judgement in judgements:
                if not judgement.valid:
                    return _problem(judgement, stage)
        mappings = [{d["fact"]: d["matched_oracle_id"] for d in _facts(j, match.reply_format)} for j in matches]  # type: ignore[arg-type]
        verified = [_facts(j, verify.reply_format) for j in verifications]  # type: ignore[arg-type]
        oracle = self._oracle(index)
        relevance = [1] * len(oracle) if self.options.oracle_relevance == "all" else [f["relevance"] for f in oracle]
        trials = []
        try:
            for verification in verified:  # upstream: for i in verifications, for j in mappings
                for mapping in mappings:
                    trials.append(trial_scores(facts, relevance, verification, mapping))
        except TrialError as error:
            return "invalid", f"trial: {error}"
        means = {ours: _mean([t[name] for t in trials]) for name, ours in UPSTREAM_NAMES.items()}
        means["dcscore"] = (means["f1"] + means["f1_relevant"]) / 2  # upstream compute_results.py
        return CaptionScore(
            index,
            "valid",
            **{name: 100 * value for name, value in means.items()},
            predicted_facts=facts,
            oracle_facts=oracle,
            trials=trials,
        )


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else math.nan


def _summary(
    captions: list[CaptionScore], language: str, options: DCScoreOptions, summaries: list[JudgeSummary]
) -> DCScoreSummary:
    valid = [c for c in captions if c.valid]
    value: Callable[[str], float] = lambda name: _mean([getattr(c, name) for c in valid])  # noqa: E731
    return DCScoreSummary(
        **{name: value(name) for name in METRICS},
        n_valid=len(valid),
        n_invalid=sum(c.status == "invalid" for c in captions),
        n_failed=sum(c.status == "failed" for c in captions),
        language=language,
        options=asdict(options),
        judge=JudgeSummary.total(summaries).to_dict() if summaries else {},
    )
