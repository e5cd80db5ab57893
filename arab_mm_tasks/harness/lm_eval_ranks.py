"""Per-sample values that stay one object, with their images, when lm-eval gathers them across data-parallel ranks.

Under ``accelerate launch -m lm_eval`` each rank scores its own documents (`process_results`),
then lm-eval pickles them to rank 0 in two separate gathers (``evaluator.py``: the logged samples,
then the raw metrics), and only rank 0 aggregates, so only rank 0 judges. Two things a single
process relies on would break on the way (`arab_mm_tasks.core.scoring`):

- one value object is shared by a sample's metric names and its logged sample, and judging writes
  the score into it; two separate pickles give rank 0 two copies, and the samples file would keep
  the unjudged one;
- a judge request or a batched metric names its images by a token into the scoring process's
  registry, which another rank does not have.

lmms-eval gathers the same way (each metric's list in a gather of its own); its hook does the same. (Not run
data-parallel here: lmms-eval's models place ranks on CUDA devices only.)

So in a data-parallel run the hook returns its values as `RankValue`s: a pickled one is
rebuilt as the one object of that sample already known to the receiving process (by a uid), and
one holding an image token carries the images (PNG) along, kept there under the same token for
as many scorings as were still to come. A single-process run returns plain dicts, as before.
"""

from __future__ import annotations

import uuid
import weakref
from collections.abc import Iterator, Mapping
from typing import Any

from arab_mm_tasks.core.scoring import adopt_images, pending_images, pending_users

_KNOWN: weakref.WeakValueDictionary[str, RankValue] = weakref.WeakValueDictionary()


class RankValue(dict):
    """A dict that unpickles as the object of the same uid already in this process (see the module docstring)."""

    __slots__ = ("__weakref__", "uid")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.uid = uuid.uuid4().hex
        _KNOWN[self.uid] = self

    def __reduce__(self) -> tuple[Any, ...]:
        return _interned, (self.uid, self._carried_images()), None, None, iter(self.items())

    def __copy__(self) -> dict[str, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        import copy

        return {key: copy.deepcopy(value, memo) for key, value in self.items()}

    def _carried_images(self) -> tuple[str, list[bytes], int] | None:
        token = self.get("images")
        images = pending_images(token)
        if images is None:
            return None
        from arab_mm_tasks.core.media import png_bytes

        return token, [png_bytes(image) for image in images], pending_users(token)


def _interned(uid: str, carried: tuple[str, list[bytes], int] | None) -> RankValue:
    if carried is not None and pending_images(carried[0]) is None:
        adopt_images(*carried)
    known = _KNOWN.get(uid)
    if known is None:
        known = RankValue()
        del _KNOWN[known.uid]
        known.uid = uid
        _KNOWN[uid] = known
    return known


def data_parallel() -> bool:
    """Whether this process is one rank of several (lm-eval's `accelerate launch` data-parallel run)."""
    import torch.distributed as dist

    return dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1


def rank_values(values: Mapping[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """`values` (one sample's, by metric name) as `RankValue`s, the objects shared among them still shared."""
    made: dict[int, RankValue] = {}

    def wrap(value: dict[str, Any]) -> RankValue:
        if id(value) not in made:
            made[id(value)] = RankValue(_nested(value, wrap))
        return made[id(value)]

    return {name: wrap(value) for name, value in values.items()}


def _nested(value: dict[str, Any], wrap: Any) -> Iterator[tuple[str, Any]]:
    """A value's items, its judge request and batch dicts (those that may hold an image token) wrapped too."""
    for key, item in value.items():
        yield key, wrap(item) if key in ("judge", "batch") and isinstance(item, dict) else item
