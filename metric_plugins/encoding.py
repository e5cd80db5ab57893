"""Batched, length-sorted encoding: the shared loop of BERTScore and ALDi.

Texts are sorted by length before batching so a batch pads to similar lengths (little wasted
compute on padding), encoded under `torch.inference_mode`, and results come back in input order.
A progress bar appears for long runs on a terminal.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

T = TypeVar("T")

PROGRESS_FROM = 256  # texts; shorter runs finish before a bar is worth drawing


def length_sorted_batches(texts: Sequence[str], batch_size: int) -> Iterator[list[int]]:
    """Indices of `texts` in batches of similar length, longest first (an out-of-memory error shows at once)."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]), reverse=True)
    for start in range(0, len(order), batch_size):
        yield order[start : start + batch_size]


def map_batched(texts: Sequence[str], encode: Callable[[list[str]], list[T]], *, batch_size: int, desc: str) -> list[T]:
    """``encode`` over length-sorted batches of `texts`, results in input order."""
    import torch

    results: list[T | None] = [None] * len(texts)
    batches = list(length_sorted_batches(texts, batch_size))
    show = len(texts) >= PROGRESS_FROM and sys.stderr.isatty()
    if show:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(texts), desc=desc, unit="text")
    with torch.inference_mode():
        for batch in batches:
            for index, result in zip(batch, encode([texts[i] for i in batch]), strict=True):
                results[index] = result
            if show:
                bar.update(len(batch))
    if show:
        bar.close()
    return results  # type: ignore[return-value]
