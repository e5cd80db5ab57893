"""Two work-arounds for lm-eval 0.4.13's multimodal models (`hf-multimodal`, `vllm-vlm`, and any other model
class with ``MULTIMODAL = True``), applied to every such class loaded when our tasks load.

1. **Text-only and image requests in one call.** lm-eval collects the ``generate_until`` requests of every task
   of a run and hands them to the model in one call. A multimodal model looks at the *first* request only: with
   images it unpacks three arguments from every request, so a text-only request (GIMMICK's ``*_text`` members
   of the ``gimmick_coqa_c`` / ``coqa_r`` / ``ckqa_d`` families, run with their image members) fails with
   ``ValueError: not enough values to unpack``. The wrapper splits one call into its text-only and its image
   requests, runs each part through the model's own method (text-only requests take the model's own text
   fallback) and returns the answers in the original order.
2. **Responses saved under the wrong key.** With ``--use_cache`` lm-eval's `CachingLM` looks a request up by all
   of its arguments, images included, but the multimodal models save each answer as they go under
   ``(context, gen_kwargs)`` only (the images left out: a ``TODO`` in ``hf_vlms.py``); only the bulk save after
   the whole call uses the right key. A run killed midway so kept nothing it had generated. The wrapper gives the
   model, for the length of the call, a cache hook that files each answer under its request's full key.
   Requests with the same text but other images (the same question on other photos) are told apart by order:
   the model sorts its requests stably, so the n-th answer for a text belongs to the n-th request with it.
"""

from __future__ import annotations

import contextlib
import functools
import json
import sys
from collections import defaultdict, deque
from collections.abc import Callable, Iterator, Sequence
from typing import Any

_PATCHED = "_arab_mm_tasks_split_by_modality"


def has_images(request: Any) -> bool:
    """A request that carries media: lm-eval appends a ``{"visual": ...}`` dict to its arguments."""
    return len(request.args) > 2


def _gen_kwargs_key(gen_kwargs: Any) -> str:
    return json.dumps(gen_kwargs, sort_keys=True, default=str)


class _FullKeyHook:
    """Stands in for a model's `CacheHook` during one call: an answer saved under ``(context, gen_kwargs)`` is
    saved under the full arguments of the request it answers."""

    def __init__(self, hook: Any, requests: Sequence[Any]) -> None:
        self.hook = hook
        self.dbdict = hook.dbdict
        self.pending: dict[str, deque] = defaultdict(deque)
        for request in requests:
            if has_images(request):
                self.pending[request.args[0]].append(request.args)

    def _take(self, context: str, gen_kwargs: Any) -> tuple | None:
        queue = self.pending.get(context)
        if not queue:
            return None
        # vllm-vlm saves its modified generation settings, hf-multimodal the request's: prefer an exact match
        wanted = _gen_kwargs_key(gen_kwargs)
        for index, args in enumerate(queue):
            if _gen_kwargs_key(args[1]) == wanted:
                del queue[index]
                return args
        return queue.popleft()

    def add_partial(self, attr: str, req: Sequence[Any], res: Any) -> None:
        if attr == "generate_until" and len(req) == 2:
            full = self._take(req[0], req[1])
            if full is not None:
                req = full
        self.hook.add_partial(attr, req, res)


@contextlib.contextmanager
def _answers_under_full_keys(model: Any, requests: Sequence[Any]) -> Iterator[None]:
    hook = getattr(model, "cache_hook", None)
    if hook is None or getattr(hook, "dbdict", None) is None or not any(has_images(r) for r in requests):
        yield
        return
    model.cache_hook = _FullKeyHook(hook, requests)
    try:
        yield
    finally:
        model.cache_hook = hook


def split_by_modality(generate_until: Callable) -> Callable:
    """Wrap a multimodal model's ``generate_until`` (see the module docstring)."""

    @functools.wraps(generate_until)
    def wrapper(self: Any, requests: list, disable_tqdm: bool = False) -> list[str]:
        with_images = [i for i, request in enumerate(requests) if has_images(request)]
        if len(with_images) in (0, len(requests)):
            with _answers_under_full_keys(self, requests):
                return generate_until(self, requests, disable_tqdm=disable_tqdm)
        image_set = set(with_images)
        text_only = [i for i in range(len(requests)) if i not in image_set]
        answers: list[Any] = [None] * len(requests)
        for indices in (text_only, with_images):
            part = [requests[i] for i in indices]
            with _answers_under_full_keys(self, part):
                for i, answer in zip(indices, generate_until(self, part, disable_tqdm=disable_tqdm), strict=True):
                    answers[i] = answer
        return answers

    setattr(wrapper, _PATCHED, True)
    return wrapper


def patch_loaded_multimodal_models() -> list[str]:
    """Wrap ``generate_until`` of every multimodal model class already imported (lm-eval imports a model's module
    when it loads the model, before it loads tasks); returns the names of the classes patched now."""
    patched = []
    for name, module in list(sys.modules.items()):
        if not name.startswith("lm_eval.models.") or module is None:
            continue
        for cls in list(vars(module).values()):
            method = getattr(cls, "generate_until", None) if isinstance(cls, type) else None
            if not getattr(cls, "MULTIMODAL", False) or method is None or getattr(method, _PATCHED, False):
                continue
            if "generate_until" not in vars(cls):  # patch where it is defined, once
                continue
            cls.generate_until = split_by_modality(method)
            patched.append(f"{cls.__module__}.{cls.__qualname__}")
    return patched
