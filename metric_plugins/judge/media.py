"""Images for the judge: one encoding (PNG) for every backend, and the hash cache keys use.

A judge must see the same pixels each run and the cache must recognise them, so every image
is turned into PNG bytes once (PNG input is passed through untouched, other formats and PIL
images are encoded losslessly) and keyed by the sha256 of those bytes.
"""

from __future__ import annotations

import base64
import hashlib
import io
from typing import Any

from metric_plugins.judge.schema import ImageRef

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def image_ref(image: Any) -> ImageRef:
    """PNG bytes and their sha256 for a PIL image or encoded image bytes."""
    if isinstance(image, (bytes, bytearray, memoryview)):
        data = bytes(image)
        if not data.startswith(PNG_SIGNATURE):
            data = _encode_png(_open(data))
    elif hasattr(image, "save") and hasattr(image, "mode"):
        data = _encode_png(image)
    else:
        raise TypeError(f"a judge image must be a PIL image or encoded bytes, got {type(image).__name__}")
    return ImageRef(png=data, sha256=hashlib.sha256(data).hexdigest())


def data_url(image: ImageRef) -> str:
    """The ``data:image/png;base64,...`` URL OpenAI-compatible servers accept in an ``image_url`` part."""
    return "data:image/png;base64," + base64.b64encode(image.png).decode("ascii")


def to_pil(image: ImageRef) -> Any:
    """A decoded PIL image, for in-process processors."""
    return _open(image.png)


def _open(data: bytes) -> Any:
    from PIL import Image

    picture = Image.open(io.BytesIO(data))
    picture.load()
    return picture


def _encode_png(picture: Any) -> bytes:
    if picture.mode not in ("1", "L", "LA", "I", "P", "RGB", "RGBA"):
        picture = picture.convert("RGBA" if "A" in picture.getbands() else "RGB")
    buffer = io.BytesIO()
    picture.save(buffer, format="PNG")
    return buffer.getvalue()
