"""An in-process transformers model as the judge, for offline and local judging.

Text judges load with ``AutoModelForCausalLM`` and the tokenizer's chat template; vision
judges (a config with a ``vision_config``) with ``AutoProcessor`` and
``AutoModelForImageTextToText``, the images passed to the processor. The model loads on the
first request, and requests run one at a time (`max_concurrency` 1): a model in memory gains
nothing from threads, and generation is not thread-safe. There is no per-request timeout.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from metric_plugins.judge.backends.base import RequestRejected
from metric_plugins.judge.media import to_pil
from metric_plugins.judge.schema import Message, Reply, Sampling, Usage
from metric_plugins.local_files import fingerprint


class TransformersBackend:
    """A local model folder or Hub id, generated from in this process.

    Args:
        model: a folder or a Hub id (in the local Hub cache when offline).
        revision: the Hub revision, recorded in the identity.
        vision: force a vision (True) or text (False) judge; None decides from the model config.
        device: torch device.
        dtype: torch dtype name, or "auto".
    """

    def __init__(
        self,
        model: str | Path,
        *,
        revision: str | None = None,
        vision: bool | None = None,
        device: str = "cpu",
        dtype: str = "auto",
    ) -> None:
        self.model = str(model)
        self.revision = revision
        self.vision = vision
        self.device = device
        self.dtype = dtype
        self._identity: dict[str, str] | None = None
        self._loaded: tuple[Any, Any] | None = None
        self._lock = threading.Lock()

    @property
    def identity(self) -> Mapping[str, str]:
        """Model name plus a fingerprint of a local folder's files, so a rebuilt model misses the cache.

        Computed once: every cache key asks for it.
        """
        if self._identity is None:
            out = {"backend": "transformers", "model": self.model}
            folder = Path(self.model).expanduser()
            if folder.is_dir():
                out["fingerprint"] = fingerprint(folder, recursive=True)
            elif self.revision:
                out["revision"] = self.revision
            self._identity = out
        return self._identity

    @property
    def max_concurrency(self) -> int | None:
        return 1

    def __repr__(self) -> str:
        return f"TransformersBackend(model={self.model!r}, vision={self.vision}, device={self.device!r})"

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k not in ("_loaded", "_lock")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state, _loaded=None, _lock=threading.Lock())

    def prepare(self) -> None:
        """Load the model now (in the calling thread), so a run reports loading apart from judging."""
        with self._lock:
            self._load()

    def _load(self) -> tuple[Any, Any]:
        """(processor or tokenizer, model), loaded once."""
        if self._loaded is None:
            import transformers

            config = transformers.AutoConfig.from_pretrained(self.model, revision=self.revision)
            if self.vision is None:
                self.vision = hasattr(config, "vision_config")
            if self.vision:
                processor = transformers.AutoProcessor.from_pretrained(self.model, revision=self.revision)
                auto_model = transformers.AutoModelForImageTextToText
            else:
                processor = transformers.AutoTokenizer.from_pretrained(self.model, revision=self.revision)
                auto_model = transformers.AutoModelForCausalLM
            model = auto_model.from_pretrained(self.model, revision=self.revision, dtype=self.dtype)
            self._loaded = (processor, model.to(self.device).eval())
        return self._loaded

    def complete(self, messages: Sequence[Message], sampling: Sampling) -> Reply:
        import torch

        with self._lock:
            processor, model = self._load()
            if self.vision:
                inputs = _vision_inputs(processor, messages)
            elif any(m.images for m in messages):
                raise RequestRejected(f"{self.model} is a text-only judge; this prompt sends images")
            else:
                chat = [{"role": m.role, "content": m.text} for m in messages]
                inputs = processor.apply_chat_template(
                    chat, add_generation_prompt=True, return_tensors="pt", return_dict=True
                )
            inputs = inputs.to(self.device)
            tokenizer = getattr(processor, "tokenizer", processor)
            if sampling.seed is not None:
                torch.manual_seed(sampling.seed)
            with torch.inference_mode():
                output = model.generate(**inputs, **_generate_kwargs(sampling, tokenizer))
            prompt_length = inputs["input_ids"].shape[1]
            new_tokens = output[0, prompt_length:]
            text = tokenizer.decode(new_tokens, skip_special_tokens=True)
        return Reply(text, Usage(int(prompt_length), int(new_tokens.shape[0])))


def _vision_inputs(processor: Any, messages: Sequence[Message]) -> Any:
    """Render the chat with one image part per image, then let the processor expand and encode the images."""
    chat, images = [], []
    for message in messages:
        parts: list[dict[str, Any]] = [{"type": "image"} for _ in message.images]
        text = [{"type": "text", "text": message.text}]
        chat.append({"role": message.role, "content": parts + text if message.images_first else text + parts})
        images += [to_pil(image) for image in message.images]
    prompt = processor.apply_chat_template(chat, add_generation_prompt=True, tokenize=False)
    return processor(text=prompt, images=images or None, return_tensors="pt")


def _generate_kwargs(sampling: Sampling, tokenizer: Any) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"max_new_tokens": sampling.max_tokens, "pad_token_id": tokenizer.pad_token_id}
    if sampling.temperature > 0:
        kwargs.update(do_sample=True, temperature=sampling.temperature)
        if sampling.top_p is not None:
            kwargs["top_p"] = sampling.top_p
    else:
        kwargs["do_sample"] = False
    if sampling.stop:
        kwargs.update(stop_strings=list(sampling.stop), tokenizer=tokenizer)
    kwargs.update(sampling.extra)
    return kwargs
