"""Images that hold no pixels while a request waits: decoded when used, dropped soon after.

lm-eval and lighteval build every request of a run before the model sees the first one, and a
request's images are PIL images, so a run used to hold every decoded frame of every clip until
it ended (a 10 s 720p clip is 10 frames of 1280 x 720 x 4 bytes: 37 MB; 1,809 clips, ~65 GB).
A `LazyImage` is a `PIL.Image.Image` that knows its size, mode and `info` and how to make its
pixels (a zero-argument `decode` that returns all images of one record field, e.g. a clip's
frames, from the record's compressed bytes or a reference to where they are stored). Pillow reaches pixels
only through `load()` and the `im` property, so those two are the only places that decode: into
a small process-wide cache bounded in bytes (`CACHE_BYTES`), from which older pixels are dropped
as newer ones come in. Used again later, an image is decoded again; decoders are deterministic,
so the pixels are the same bytes (tests/core/test_lazy_media.py compares them).

Anything written for PIL images works unchanged: `np.asarray`, `convert`, `resize`, `tobytes`,
transformers' image processors, lm-eval's `resize_image`, vLLM. Operations that make a new image
(every one of those) return a plain `Image.Image`. An in-place edit (`paste`, `thumbnail`,
`putpixel`) first gives the image a private copy of its pixels (it then stays decoded), so the
cache is never written to. A pickle is a plain, decoded image; a deep copy is lazy too.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from PIL import Image

Decode = Callable[[], Sequence[Image.Image]]  # one record field's images, in order; the cache key (by identity)

CACHE_BYTES = 256 * 2**20  # a few 720p clips (37 MB each as PIL holds them), so a batch decodes each clip once


def _nbytes(image: Image.Image) -> int:
    """About what PIL allocates for the pixels: 1 byte a pixel for 1/L/P, else 4 (RGB is stored padded to 4)."""
    return image.width * image.height * (1 if image.mode in ("1", "L", "P") else 4)


class _PixelCache:
    """Decoded images by their `Decode`, newest last; entries beyond `budget` bytes are dropped, oldest first
    (the newest always stays, however big). A lock: vLLM and lighteval may touch images from other threads."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self._entries: OrderedDict[Decode, tuple[Sequence[Image.Image], int]] = OrderedDict()
        self._lock = threading.RLock()
        self.decodes = 0  # decodes done on use (not counting `put`); tests and benchmarks read it

    def put(self, decode: Decode, images: Sequence[Image.Image]) -> None:
        with self._lock:
            self._entries[decode] = (list(images), sum(_nbytes(image) for image in images))
            self._entries.move_to_end(decode)
            self._shrink()

    def get(self, decode: Decode) -> Sequence[Image.Image]:
        with self._lock:
            if decode in self._entries:
                self._entries.move_to_end(decode)
                return self._entries[decode][0]
            images = list(decode())
            self.decodes += 1
            self.put(decode, images)
            return images

    def held(self) -> int:
        """Bytes of pixels held now."""
        with self._lock:
            return sum(size for _, size in self._entries.values())

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def _shrink(self) -> None:
        total = sum(size for _, size in self._entries.values())
        while len(self._entries) > 1 and total > self.budget:
            _, (_, size) = self._entries.popitem(last=False)
            total -= size


PIXELS = _PixelCache(CACHE_BYTES)


class LazyImage(Image.Image):
    """Image `index` of what `decode()` returns, with `like`'s mode, size and info; see the module docstring."""

    def __init__(self, decode: Decode, index: int, like: Image.Image) -> None:
        super().__init__()
        if like.palette is not None:
            raise ValueError("LazyImage takes images without a palette (RGB, L, ...), as the media layer makes")
        self._decode, self._index = decode, index
        self._mode, self._size = like.mode, like.size
        self.info = dict(like.info)

    @property  # type: ignore[override]
    def im(self) -> Any:
        if self._im is not None:  # a private copy (after an in-place edit) or a closed image
            return Image.Image.im.fget(self)  # type: ignore[attr-defined]
        image = PIXELS.get(self._decode)[self._index]
        if image.size != self._size or image.mode != self._mode:
            raise ValueError(
                f"image {self._index} decoded again as {image.mode} {image.size}, "
                f"not {self._mode} {self._size} as the first time"
            )
        return image.im

    @im.setter
    def im(self, im: Any) -> None:
        self._im = im

    @property  # type: ignore[override]
    def readonly(self) -> int:
        # Cached pixels are shared: an in-place edit must copy them first (`Image._ensure_mutable`).
        return 1 if self._im is None else Image.Image.readonly.fget(self)  # type: ignore[attr-defined]

    @readonly.setter
    def readonly(self, readonly: int) -> None:
        self._readonly = readonly

    @property
    def decoded(self) -> bool:
        """Whether this image holds pixels of its own (only after an in-place edit)."""
        return self._im is not None

    def load(self) -> Any:
        if self._im is None:
            return self.im.pixel_access(True)
        return super().load()

    def __reduce_ex__(self, protocol: Any) -> Any:
        return _plain_image, (self.__getstate__(),)  # a pickle is a plain, decoded image

    def __deepcopy__(self, memo: dict[int, Any]) -> Image.Image:
        # Lazy too: lighteval deep-copies every Doc of a run at its end (`dataclasses.asdict` of its
        # details), and plain copies would decode every image of the run at once.
        if self._im is not None:  # pixels of its own (an in-place edit): a plain copy of them
            return _plain_image(self.__getstate__())
        return LazyImage(self._decode, self._index, self)


def _plain_image(state: list[Any]) -> Image.Image:
    image = Image.Image.__new__(Image.Image)
    image.__setstate__(state)
    return image


def lazy_images(decode: Decode, images: Sequence[Image.Image]) -> list[Image.Image]:
    """`LazyImage`s standing for `images`, which `decode()` makes again; `images` go to the cache as its entry.

    So the pixels just decoded (the caller decodes once to check the record) serve the first use
    if it comes soon, and are dropped otherwise.
    """
    PIXELS.put(decode, images)
    return [LazyImage(decode, index, image) for index, image in enumerate(images)]
