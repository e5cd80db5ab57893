"""The judge: a backend plus a prompt, judging many items concurrently, cached, retried and re-asked.

Concurrency is a thread pool (`concurrent.futures.ThreadPoolExecutor`), not asyncio. Judging
waits on the network, so threads overlap as well as coroutines do at judge scale (tens of
requests in flight); the sync openai client is thread-safe and shares one connection pool;
the in-process transformers backend is synchronous; and the harness code that calls a judge
(lm-eval aggregations, lighteval corpus metrics, notebooks) may already be inside an event
loop, where a second `asyncio.run` fails. `benchmarks/judge_throughput.py` shows the threads
reach N x latency / concurrency.

Per item: render the prompt, look the request up in the cache, claim it there (a lease: another
process judging into the same file waits for this judgement instead of paying for it), send
it. A transient error (429, 5xx, timeout, dropped connection, malformed body) is retried under
`RetryPolicy`, not in place: the request goes back in the queue behind the ones not tried yet,
so items that always fail never hold the workers. Any other 4xx fails the item at once. A
reply that does not parse is asked again `reasks` times (the same request: a server that
samples, or one that was mid-fault, may answer differently) and then stored as invalid. Each
final outcome is committed to the cache as soon as it exists; failures are not stored, so a
re-run asks again.

Any exception while sending, reading, parsing or storing one request is that item's, never the
run's (`Judge._step` catches broadly on purpose): retried, then counted with its reason. No lock
is held while a request is sent or a reply parsed; `RunState`'s lock guards its counters and
the cache's guards its connection, nothing else.

Some failures are the run's, not the item's, and would repeat identically for every item: the
first requests of a run all get no answer (nothing listens there, or it accepts connections
and never answers), or the server answers 401/403/404 (bad key, no access, unknown model).
Those stop the run with one `JudgeStopped` instead of retrying or failing each item in turn.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import logging
import threading
import time
from collections import deque
from collections.abc import Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NoReturn

from metric_plugins.judge.backends.base import JudgeBackend, JudgeStopped, RequestRejected, TransientError
from metric_plugins.judge.cache import CacheEntry, JudgeCache
from metric_plugins.judge.keys import cache_key, request_record
from metric_plugins.judge.parsing import Parsed
from metric_plugins.judge.prompts.base import JudgePrompt
from metric_plugins.judge.retry import RetryPolicy
from metric_plugins.judge.run import JudgeRun, JudgeSummary, Tally
from metric_plugins.judge.schema import JudgeItem, Judgement, Message, Sampling, Usage, storable_text

log = logging.getLogger(__name__)

# Rejections that say the run itself is wrong (key, access, model), not this item: every request would get them.
RUN_LEVEL_STATUSES = frozenset({401, 403, 404})
LEASE_POLL_SECONDS = 0.5  # how often a run looks for the judgements other processes are making for it


@dataclass
class _Work:
    """One pending request on its way through asks and retries."""

    item: JudgeItem
    key: str
    redo_invalid: bool = False  # its stored judgement is invalid and `retry_invalid` asks for a new one
    messages: list[Message] | None = None
    cost: Tally = field(default_factory=Tally)
    ask: int = 0  # re-asks so far
    attempt: int = 0  # transient failures of the current ask


@dataclass(frozen=True)
class _Outcome:
    """What one attempt came to: a final judgement, a retry after `delay`, or a lease held by another process."""

    judgement: Judgement | None = None
    hit: bool = False  # the judgement came from the cache (another process stored it)
    delay: float = 0.0
    elsewhere: bool = False


class _Queue:
    """The run's pending requests: never tried first, then retries whose backoff is over (earliest first)."""

    def __init__(self, works: list[_Work]) -> None:
        self.fresh: deque[_Work] = deque(works)
        self.later: list[tuple[float, int, _Work]] = []
        self.elsewhere: dict[str, _Work] = {}  # key -> request whose lease another process holds
        self.next_poll = 0.0
        self._order = itertools.count()

    def __bool__(self) -> bool:
        return bool(self.fresh or self.later or self.elsewhere)

    def retry(self, work: _Work, delay: float) -> None:
        heapq.heappush(self.later, (time.monotonic() + delay, next(self._order), work))

    def next_due(self) -> _Work | None:
        if self.fresh:
            return self.fresh.popleft()
        if self.later and self.later[0][0] <= time.monotonic():
            return heapq.heappop(self.later)[2]
        return None

    def wait_seconds(self) -> float:
        """How long the scheduler may sleep before a retry is due or the other processes' leases are polled."""
        due = [self.later[0][0]] if self.later else []
        due += [self.next_poll] if self.elsewhere else []
        return max(0.0, min(due, default=time.monotonic() + LEASE_POLL_SECONDS) - time.monotonic())


@dataclass
class RunState:
    """What the worker threads of one run share: whether the endpoint ever answered, and the reason to stop.

    `unreachable_limit` requests that got no answer (refused or failed connections, and timeouts
    with no response headers: an endpoint that accepts connections and says nothing) before any
    answer from the server stop the run: a dead endpoint is reported once, fast, instead of being
    retried with backoff for every item. One answer (even a 500) proves the endpoint exists; from
    then on such errors are retried. The lock guards these counters only, never a request or a parse.
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
        """Count a request with no answer; stop the run if the endpoint never answered and the limit is reached,
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
                    f"or got no answer ({error}). Is the server running and answering at that URL? "
                    "(unreachable_limit sets how many requests this takes)"
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
        unreachable_limit: requests with no answer (refused, or timed out before any response), before
            the endpoint has answered once, that stop the run.

    Several processes (data-parallel ranks, a re-run next to a running one) may judge into one
    cache file: each request is claimed in the cache first, so it is paid for once.
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
        # how long a claim on a request keeps other processes from asking it: a request's deadline, twice, at least
        self.lease_seconds = max(30.0, 2.0 * float(getattr(backend, "timeout", 0) or 60.0))

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
        redo_invalid: set[str] = set()
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
                if entry is not None:
                    redo_invalid.add(key)
        tally = Tally()
        setup = self._prepare() if pending else 0.0
        self._run(items, pending, results, tally, self.progress if progress is None else progress, redo_invalid)
        hits += tally.cache_hits
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
        redo_invalid: set[str],
    ) -> None:
        """Judge the pending requests one attempt at a time, so no item holds a worker while it waits.

        Never-tried requests go first; a request that failed transiently is re-queued behind them
        until its backoff is over (an item that always fails cannot starve the rest, on a first
        run or a restart); one whose lease another process holds is polled for its judgement.
        """
        if not pending:
            return
        from tqdm.auto import tqdm

        done = len(items) - sum(map(len, pending.values()))
        workers = min(self.concurrency, self.backend.max_concurrency or self.concurrency, len(pending))
        bar = tqdm(total=len(items), initial=done, desc=f"judge {self.prompt.id}", unit="item", disable=not progress)
        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="judge")
        state = RunState(self.unreachable_limit)
        queue = _Queue([_Work(items[indices[0]], key, key in redo_invalid) for key, indices in pending.items()])
        in_flight: dict[Future[_Outcome], _Work] = {}
        bad = 0

        def finish(work: _Work, outcome: _Outcome) -> None:
            nonlocal bad
            judgement = outcome.judgement
            assert judgement is not None
            tally.merge(work.cost)
            tally.cache_hits += outcome.hit
            first, *copies = pending[work.key]
            results[first] = judgement
            for index in copies:  # the same request judged once: no calls of their own
                results[index] = replace(judgement, item_id=items[index].id, attempts=0, usage=Usage())
            bad += not judgement.valid
            bar.update(1 + len(copies))
            bar.set_postfix(invalid_or_failed=bad, retrying=len(queue.later), elsewhere=len(queue.elsewhere))

        try:
            context = self.metadata  # what every cache row records next to its judgement
            while queue or in_flight:
                while len(in_flight) < workers and (work := queue.next_due()) is not None:
                    in_flight[pool.submit(self._step, work, context, state)] = work
                for work, outcome in self._poll_elsewhere(queue):
                    finish(work, outcome)
                finished, _ = wait(in_flight, timeout=queue.wait_seconds(), return_when=FIRST_COMPLETED)
                if not in_flight:  # `wait` returns at once on nothing: sleep until a retry is due
                    state.stopped.wait(queue.wait_seconds())
                for future in finished:
                    work = in_flight.pop(future)
                    outcome = future.result()  # a worker's JudgeStopped ends the run here
                    if outcome.judgement is not None:
                        finish(work, outcome)
                    elif outcome.elsewhere:
                        queue.elsewhere[work.key] = work
                    else:
                        queue.retry(work, outcome.delay)
                state.check()
        finally:
            pool.shutdown(wait=True, cancel_futures=True)  # in-flight requests finish and are committed
            bar.close()

    def _poll_elsewhere(self, queue: _Queue) -> list[tuple[_Work, _Outcome]]:
        """Judgements other processes stored for requests they hold; requests whose lease ended are queued again."""
        if not queue.elsewhere or time.monotonic() < queue.next_poll:
            return []
        queue.next_poll = time.monotonic() + LEASE_POLL_SECONDS
        stored = self.cache.get_many(queue.elsewhere)
        found = []
        for key, entry in stored.items():
            work = queue.elsewhere[key]
            if entry.valid or not work.redo_invalid:
                found.append(
                    (queue.elsewhere.pop(key), _Outcome(self._from_entry(entry, work.item, cached=True), True))
                )
        held = self.cache.held_elsewhere(queue.elsewhere)
        for key in [key for key in queue.elsewhere if key not in held]:  # its owner gave it up or died
            queue.fresh.appendleft(queue.elsewhere.pop(key))
        return found

    def _step(self, work: _Work, context: dict[str, Any], state: RunState) -> _Outcome:
        """One attempt at one request. Any error but the run's own (`JudgeStopped`) is this item's:
        a failed request, a reply that cannot be read, parsed or stored is retried, then counted."""
        state.check()
        try:
            if not self.cache.claim(work.key, self.lease_seconds):
                return _Outcome(elsewhere=True)
            entry = self.cache.get_many([work.key]).get(work.key)  # stored by another process since the run began
            if entry is not None and (entry.valid or not work.redo_invalid):
                self.cache.release(work.key)
                return _Outcome(self._from_entry(entry, work.item, cached=True), hit=True)
            if work.messages is None:
                work.messages = self.prompt.render(work.item)
            return self._ask(work, context, state)
        except JudgeStopped:
            raise
        except Exception as error:  # broad on purpose: see the docstring
            log.info("judge %s: item %s: %s", self.prompt.id, work.item.id, _describe(error), exc_info=True)
            return self._retry_or_fail(work, f"error while judging: {_describe(error)}")

    def _ask(self, work: _Work, context: dict[str, Any], state: RunState) -> _Outcome:
        """Send the request once; a reply that parses (or is still unparsable after the re-asks) is stored."""
        item, cost = work.item, work.cost
        endpoint = self.backend.identity.get("base_url", self.backend.identity.get("model", "?"))
        cost.calls += 1
        try:
            reply = self.backend.complete(work.messages or [], self.sampling)
        except TransientError as error:
            state.saw_transient(error, endpoint, last_attempt=work.attempt == self.retry.max_retries)
            return self._retry_or_fail(work, str(error), error.retry_after)
        except RequestRejected as error:
            state.saw_answer()
            if error.status in RUN_LEVEL_STATUSES:  # the same answer awaits every item: say it once
                state.stop(JudgeStopped(f"the judge endpoint refused the run: {error}"))
            log.warning("judge %s: item %s failed: %s (not retried)", self.prompt.id, item.id, error)
            return self._fail(work, str(error))
        state.saw_answer()
        cost.usage = cost.usage + reply.usage
        text = storable_text(reply.text)
        try:
            parsed = self.prompt.parse(text)  # outside every lock: a slow parse holds up no other worker
        except Exception as error:  # broad on purpose: a parser bug makes one reply invalid, not the run
            parsed = Parsed(None, f"the reply parser failed: {_describe(error)}")
        if not parsed.valid and work.ask < self.reasks:
            log.info("judge %s: item %s: unparsable reply (%s)", self.prompt.id, item.id, parsed.reason)
            work.ask, work.attempt = work.ask + 1, 0
            cost.reasks += 1
            return _Outcome(delay=0.0)
        entry = CacheEntry(
            work.key, text, parsed.scores, parsed.valid, parsed.reason, cost.calls,
            cost.usage.prompt_tokens, cost.usage.completion_tokens,
        )  # fmt: skip
        try:
            self.cache.put(entry, item_id=item.id, context={**context, "request": request_record(work.messages or [])})
        except Exception as error:  # broad on purpose: storing is total, so this is the disk or the file
            return self._fail(work, f"the judgement could not be stored in the cache: {_describe(error)}")
        return _Outcome(self._from_entry(entry, item, cached=False))

    def _retry_or_fail(self, work: _Work, why: str, retry_after: float | None = None) -> _Outcome:
        """Queue the request again after its backoff, or fail the item when its retries are used up."""
        if work.attempt >= self.retry.max_retries:
            attempts = work.attempt + 1
            log.warning("judge %s: item %s failed: %s (%d attempts)", self.prompt.id, work.item.id, why, attempts)
            return self._fail(work, f"{why} (gave up after {attempts} attempts)")
        wait_seconds = self.retry.delay(work.attempt, retry_after)
        log.info("judge: item %s: %s; retry %d in %.2fs", work.item.id, why, work.attempt + 1, wait_seconds)
        work.attempt += 1
        work.cost.retries += 1
        return _Outcome(delay=wait_seconds)

    def _fail(self, work: _Work, error: str) -> _Outcome:
        """A failed item (never cached: a re-run asks again); its lease is given up for other processes."""
        with contextlib.suppress(Exception):  # the lease expires anyway; the failure is what matters here
            self.cache.release(work.key)
        cost = work.cost
        return _Outcome(Judgement(work.item.id, work.key, None, None, False, None, False, None, error, cost.calls,
                                  cost.usage))  # fmt: skip

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


def _describe(error: BaseException) -> str:
    """An exception as one short line (its type, and its message cut to 200 characters)."""
    message = " ".join(str(error).split())[:200]
    return f"{type(error).__name__}: {message}" if message else type(error).__name__
