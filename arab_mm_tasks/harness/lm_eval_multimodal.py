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
3. **Images sent to a chat-completions server.** lm-eval's API models (`local-chat-completions` and the other
   ``TemplateAPI`` classes) send only the first ``max_images`` images of a request (default 1: GIMMICK's 1 fps
   frames after the first were silently dropped), all before the text, with the ``<image>`` placeholders left
   in it. For a request sent as chat messages (``--apply_chat_template``), the wrapper puts every image, as a
   base64 PNG data URL in an ``image_url`` part, where its placeholder is, in order (before the text, as
   lm-eval does, when a task's prompt has no placeholders), and hands the model text-form requests.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import functools
import io
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

    def __init__(self, hook: Any, requests: Sequence[Any], sent: Sequence[Any] | None = None) -> None:
        self.hook = hook
        self.dbdict = hook.dbdict
        self.pending: dict[Any, deque] = defaultdict(deque)
        # `sent`: the requests as the model gets them (their context is what it saves an answer under)
        for request, as_sent in zip(requests, sent or requests, strict=True):
            if has_images(request):
                self.pending[as_sent.args[0]].append(request.args)

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
def _answers_under_full_keys(model: Any, requests: Sequence[Any], sent: Sequence[Any] | None = None) -> Iterator[None]:
    hook = getattr(model, "cache_hook", None)
    if hook is None or getattr(hook, "dbdict", None) is None or not any(has_images(r) for r in requests):
        yield
        return
    model.cache_hook = _FullKeyHook(hook, requests, sent)
    try:
        yield
    finally:
        model.cache_hook = hook


def _png_data_url(image: Any) -> str:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")  # lossless, as lm-eval's own API path encodes
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def chat_content(text: str, images: Sequence[Any]) -> list[dict[str, Any]]:
    """A user turn's content parts: each image where its ``<image>`` placeholder is, in order; all of them
    before the text when the placeholders do not match the images one for one (a prompt without them)."""
    from arab_mm_tasks.core.spec import IMAGE_PLACEHOLDER

    urls = [{"type": "image_url", "image_url": {"url": _png_data_url(image)}} for image in images]
    if text.count(IMAGE_PLACEHOLDER) != len(images):
        return [*urls, {"type": "text", "text": text}]
    content: list[dict[str, Any]] = []
    for i, piece in enumerate(text.split(IMAGE_PLACEHOLDER)):
        if i:
            content.append(urls[i - 1])
        if piece:
            content.append({"type": "text", "text": piece})
    return content


def _sends_chat_json(model: Any, requests: Sequence[Any]) -> bool:
    """Whether `model` is one of lm-eval's API models and the requests are chat messages (JSON) it sends as is."""
    from lm_eval.models.api_models import JsonChatStr, TemplateAPI

    return isinstance(model, TemplateAPI) and all(isinstance(r.args[0], JsonChatStr) for r in requests)


def as_chat_request(request: Any) -> Any:
    """An image request of an API model as a text-form one whose last user turn carries its images."""
    from lm_eval.models.api_models import JsonChatStr

    chat = json.loads(request.args[0].prompt)
    turn = chat[-1]
    text = turn["content"] if isinstance(turn["content"], str) else ""
    turn["content"] = chat_content(text, request.args[2].get("visual") or [])
    return dataclasses.replace(request, arguments=(JsonChatStr(json.dumps(chat, ensure_ascii=False)), request.args[1]))


def split_by_modality(generate_until: Callable) -> Callable:
    """Wrap a multimodal model's ``generate_until`` (see the module docstring)."""

    @functools.wraps(generate_until)
    def wrapper(self: Any, requests: list, disable_tqdm: bool = False) -> list[str]:
        if requests and any(has_images(r) for r in requests) and _sends_chat_json(self, requests):
            sent = [as_chat_request(r) if has_images(r) else r for r in requests]
            with _answers_under_full_keys(self, requests, sent):
                return generate_until(self, sent, disable_tqdm=disable_tqdm)
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
