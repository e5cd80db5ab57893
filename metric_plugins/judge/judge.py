"""The judge: a backend plus a prompt, judging many items concurrently, cached, retried and re-asked.

Concurrency is a thread pool (`concurrent.futures.ThreadPoolExecutor`), not asyncio. Judging
waits on the network, so threads overlap as well as coroutines do at judge scale (tens of
requests in flight); the sync openai client is thread-safe and shares one connection pool;
the in-process transformers backend is synchronous; and the harness code that calls a judge
(lm-eval aggregations, lighteval corpus metrics, notebooks) may already be inside an event
loop, where a second `asyncio.run` fails. `benchmarks/judge_throughput.py` shows the threads
reach N x latency / concurrency.

Per item: render the prompt, look the request up in the cache, otherwise send it. A transient
error (429, 5xx, timeout, dropped connection, malformed body) is retried under `RetryPolicy`;
any other 4xx fails the item at once. A reply that does not parse is asked again `reasks`
times (the same request: a server that samples, or one that was mid-fault, may answer
differently) and then stored as invalid. Each final outcome is committed to the cache as soon
as it exists; failures are not stored, so a re-run asks again.

Some failures are the run's, not the item's, and would repeat identically for every item: the
first requests of a run all fail to connect (nothing listens there), or the server answers
401/403/404 (bad key, no access, unknown model). Those stop the run with one `JudgeStopped`
instead of retrying or failing each item in turn.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NoReturn

from metric_plugins.judge.backends.base import JudgeBackend, JudgeStopped, RequestRejected, TransientError
from metric_plugins.judge.cache import CacheEntry, JudgeCache
from metric_plugins.judge.keys import cache_key, request_record
from metric_plugins.judge.prompts.base import JudgePrompt
from metric_plugins.judge.retry import RetryPolicy
from metric_plugins.judge.run import JudgeRun, JudgeSummary, Tally
from metric_plugins.judge.schema import JudgeItem, Judgement, Message, Reply, Sampling, Usage

log = logging.getLogger(__name__)

# Rejections that say the run itself is wrong (key, access, model), not this item: every request would get them.
RUN_LEVEL_STATUSES = frozenset({401, 403, 404})


@dataclass
class RunState:
    """What the worker threads of one run share: whether the endpoint ever answered, and the reason to stop.

    `unreachable_limit` connection failures before any answer from the server stop the run: a
    dead endpoint is reported once, fast, instead of being retried with backoff for every item.
    One answer (even a 500) proves the endpoint exists; from then on connection errors are retried.
    """

    unreachable_limit: int
    answered: bool = False
    unreachable: int = 0
    error: JudgeStopped | None = None
    stopped: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def check(self) -> None:
        """Raise the run's `JudgeStopped` in this worker once any worker has stopped the run."""
        if self.error is not None:
            raise self.error

    def stop(self, error: JudgeStopped) -> NoReturn:
        """Stop the run for every worker (the first reason wins) and raise it in this one."""
        with self.lock:
            self.error = self.error or error
        self.stopped.set()  # wakes the workers sleeping before a retry
        raise self.error

    def saw_answer(self) -> None:
        self.answered = True

    def saw_transient(self, error: TransientError, endpoint: str, *, last_attempt: bool = False) -> None:
        """Count a failure to connect; stop the run if the endpoint never answered and the limit is reached,
        or an item has used up its retries on it (a run with fewer requests than the limit)."""
        if not error.unreachable:
            self.answered = True
            return
        with self.lock:
            self.unreachable += 1
            count = self.unreachable
            dead = not self.answered and (count >= self.unreachable_limit or last_attempt)
        if dead:
            self.stop(
                JudgeStopped(
                    f"the judge endpoint {endpoint} is unreachable: the first {count} requests could not connect "
                    f"and none got an answer ({error}). Is the server running at that URL?"
                )
            )


class Judge:
    """Judges items with one backend and one prompt.

    Args:
        backend: where replies come from (`OpenAIChatBackend`, `TransformersBackend`, ...).
        prompt: the `JudgePrompt` (its version and content hash are part of every cache key).
        cache: a `JudgeCache`, a path to one, or None for the default file
            (``$XDG_CACHE_HOME/arab-mm-tasks/judge.sqlite``). `JudgeCache.in_memory()` keeps nothing.
        concurrency: requests in flight at once (capped by the backend's `max_concurrency`).
        sampling: decoding parameters; default temperature 0.
        retry: backoff policy for transient errors.
        reasks: extra requests for a reply that does not parse, before it is recorded as invalid.
        retry_invalid: ask again for items whose cached judgement is invalid (after fixing a server, say).
        progress: show a tqdm bar on stderr.
        unreachable_limit: connection failures, before the endpoint has answered once, that stop the run.
    """

    def __init__(
        self,
        backend: JudgeBackend,
        prompt: JudgePrompt,
        *,
        cache: JudgeCache | str | Path | None = None,
        concurrency: int = 8,
        sampling: Sampling | None = None,
        retry: RetryPolicy | None = None,
        reasks: int = 2,
        retry_invalid: bool = False,
        progress: bool = True,
        unreachable_limit: int = 8,
    ) -> None:
        if concurrency < 1 or reasks < 0 or unreachable_limit < 1:
            raise ValueError(
                f"concurrency and unreachable_limit must be >= 1 and reasks >= 0, "
                f"got {concurrency}, {unreachable_limit} and {reasks}"
            )
        self.backend = backend
        self.prompt = prompt
        self.cache = cache if isinstance(cache, JudgeCache) else JudgeCache(cache) if cache else JudgeCache.default()
        self.concurrency = concurrency
        self.sampling = sampling or Sampling()
        self.retry = retry or RetryPolicy()
        self.reasks = reasks
        self.retry_invalid = retry_invalid
        self.progress = progress
        self.unreachable_limit = unreachable_limit

    def __repr__(self) -> str:
        return f"Judge({self.backend!r}, prompt={self.prompt.id}@v{self.prompt.version}, cache={self.cache!r})"

    @property
    def metadata(self) -> dict[str, Any]:
        """The judge's settings for results files (no credentials anywhere in them)."""
        return {
            "backend": dict(self.backend.identity),
            "prompt": self.prompt.describe(),
            "sampling": self.sampling.to_dict(),
            "retry": self.retry.to_dict(),
            "reasks": self.reasks,
            "concurrency": self.concurrency,
            "cache": self.cache.path,
        }

    def key(self, item: JudgeItem, messages: Sequence[Message] | None = None) -> str:
        """The cache key of `item`'s request under this judge."""
        messages = self.prompt.render(item) if messages is None else messages
        return cache_key(self.backend.identity, self.prompt, messages, self.sampling)

    def score(self, item: JudgeItem) -> Judgement:
        """Judge one item (cached like any other)."""
        return self.score_all([item], progress=False).judgements[0]

    def score_all(self, items: Iterable[JudgeItem], *, progress: bool | None = None) -> JudgeRun:
        """Judge every item: cached ones from the cache, the rest `concurrency` at a time, in input order.

        Raises `JudgeStopped` when the run cannot succeed (unreachable endpoint, 401/403/404); the
        judgements made until then are cached.
        """
        items = list(items)
        start = time.perf_counter()
        keys = [self.key(item) for item in items]
        stored = self.cache.get_many(keys)
        results: list[Judgement | None] = [None] * len(items)
        pending: dict[str, list[int]] = {}
        hits = duplicates = 0
        for index, key in enumerate(keys):
            entry = stored.get(key)
            if entry is not None and (entry.valid or not self.retry_invalid):
                results[index] = self._from_entry(entry, items[index], cached=True)
                hits += 1
            elif key in pending:
                pending[key].append(index)
                duplicates += 1
            else:
                pending[key] = [index]
        tally = Tally()
        setup = self._prepare() if pending else 0.0
        self._run(items, pending, results, tally, self.progress if progress is None else progress)
        judgements: list[Judgement] = [j for j in results if j is not None]
        summary = JudgeSummary(
            items=len(items),
            calls=tally.calls,
            cache_hits=hits,
            duplicates=duplicates,
            retries=tally.retries,
            reasks=tally.reasks,
            invalid=sum(not j.valid and not j.failed for j in judgements),
            failed=sum(j.failed for j in judgements),
            prompt_tokens=tally.usage.prompt_tokens,
            completion_tokens=tally.usage.completion_tokens,
            wall_seconds=time.perf_counter() - start - setup,
            setup_seconds=setup,
        )
        log.info("judge %s: %s", self.prompt.id, summary)
        return JudgeRun(judgements, summary, self.metadata)

    def _prepare(self) -> float:
        """Seconds the backend took to get ready (importing openai, loading a model), kept out of `wall_seconds`."""
        prepare = getattr(self.backend, "prepare", None)  # optional: a custom backend need not have it
        if prepare is None:
            return 0.0
        start = time.perf_counter()
        prepare()
        return time.perf_counter() - start

    def _run(
        self,
        items: list[JudgeItem],
        pending: dict[str, list[int]],
        results: list[Judgement | None],
        tally: Tally,
        progress: bool,
    ) -> None:
        if not pending:
            return
        from tqdm.auto import tqdm

        done = len(items) - sum(map(len, pending.values()))
        workers = min(self.concurrency, self.backend.max_concurrency or self.concurrency, len(pending))
        bar = tqdm(total=len(items), initial=done, desc=f"judge {self.prompt.id}", unit="item", disable=not progress)
        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="judge")
        try:
            context = self.metadata  # what every cache row records next to its judgement
            state = RunState(self.unreachable_limit)
            futures = {
                pool.submit(self._judge, items[indices[0]], key, context, state): key
                for key, indices in pending.items()
            }
            bad = 0
            for future in as_completed(futures):
                judgement, cost = future.result()  # a worker's JudgeStopped ends the run here
                tally.merge(cost)
                first, *copies = pending[futures[future]]
                results[first] = judgement
                for index in copies:  # the same request judged once: no calls of their own
                    results[index] = replace(judgement, item_id=items[index].id, attempts=0, usage=Usage())
                bad += not judgement.valid
                bar.update(1 + len(copies))
                bar.set_postfix(invalid_or_failed=bad, refresh=False)
        finally:
            pool.shutdown(wait=True, cancel_futures=True)  # in-flight requests finish and are committed
            bar.close()

    def _judge(self, item: JudgeItem, key: str, context: dict[str, Any], state: RunState) -> tuple[Judgement, Tally]:
        """Ask (and re-ask) until the reply parses or the re-asks run out; commit the outcome unless it failed."""
        messages = self.prompt.render(item)
        cost = Tally()
        for ask in range(self.reasks + 1):
            cost.reasks += ask > 0
            reply, error = self._request(messages, item.id, cost, state)
            if reply is None:
                failed = Judgement(item.id, key, None, None, False, None, False, None, error, cost.calls, cost.usage)
                return failed, cost
            parsed = self.prompt.parse(reply.text)
            if parsed.valid:
                break
            log.info("judge %s: item %s: unparsable reply (%s)", self.prompt.id, item.id, parsed.reason)
        entry = CacheEntry(
            key, reply.text, parsed.scores, parsed.valid, parsed.reason, cost.calls,
            cost.usage.prompt_tokens, cost.usage.completion_tokens,
        )  # fmt: skip
        self.cache.put(entry, item_id=item.id, context={**context, "request": request_record(messages)})
        return self._from_entry(entry, item, cached=False), cost

    def _request(
        self, messages: list[Message], item_id: str | None, cost: Tally, state: RunState
    ) -> tuple[Reply | None, str]:
        """One reply, retrying transient errors; (None, why) when retries run out or the request is rejected."""
        endpoint = self.backend.identity.get("base_url", self.backend.identity.get("model", "?"))
        for attempt in range(self.retry.max_retries + 1):
            state.check()
            cost.calls += 1
            try:
                reply = self.backend.complete(messages, self.sampling)
            except TransientError as error:
                state.saw_transient(error, endpoint, last_attempt=attempt == self.retry.max_retries)
                if attempt == self.retry.max_retries:
                    log.warning(
                        "judge %s: item %s failed: %s (%d attempts)", self.prompt.id, item_id, error, attempt + 1
                    )
                    return None, f"{error} (gave up after {attempt + 1} attempts)"
                wait = self.retry.delay(attempt, error.retry_after)
                log.info("judge: item %s: %s; retry %d in %.2fs", item_id, error, attempt + 1, wait)
                cost.retries += 1
                state.stopped.wait(wait)  # a sleep that ends early when another worker stops the run
                continue
            except RequestRejected as error:
                state.saw_answer()
                if error.status in RUN_LEVEL_STATUSES:  # the same answer awaits every item: say it once
                    state.stop(JudgeStopped(f"the judge endpoint refused the run: {error}"))
                log.warning("judge %s: item %s failed: %s (not retried)", self.prompt.id, item_id, error)
                return None, str(error)
            state.saw_answer()
            cost.usage = cost.usage + reply.usage
            return reply, ""
        raise AssertionError("unreachable")

    def _from_entry(self, entry: CacheEntry, item: JudgeItem, *, cached: bool) -> Judgement:
        scores = dict(entry.scores) if entry.scores is not None else None
        return Judgement(
            item_id=item.id,
            key=entry.key,
            scores=scores,
            score=scores.get(self.prompt.primary_score) if scores else None,
            valid=entry.valid,
            raw=entry.raw,
            cached=cached,
            reason=entry.reason,
            attempts=0 if cached else entry.attempts,
            usage=Usage() if cached else Usage(entry.prompt_tokens, entry.completion_tokens),
        )
