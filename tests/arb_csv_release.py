"""ARB's CSV release in miniature: rows of the authors' CSV (the bundled sample), their images as tiny PNGs
in an images folder named by ``image_path``, written to bytes a test can cut, re-encode or tamper with.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from PIL import Image
from shared_files import shared

SAMPLE = shared("real/arb/gpt-4.1-final-responses.stratified_sample.csv")
ROW_IDS = ("ocr_b1.png", "Chart_44.png", "diag_10.png")  # OCR, CDT, diagrams: each with a released category


def released_rows(ids: tuple[str, ...] = ROW_IDS) -> tuple[list[str], list[dict[str, str]]]:
    """(the released header, the rows with these ``image_id`` s, in this order)."""
    with SAMPLE.open(encoding="utf-8", newline="") as stream:
        reader = csv.DictReader(stream)
        rows = {row["image_id"]: row for row in reader}
        return list(reader.fieldnames or []), [dict(rows[i]) for i in ids]


def csv_bytes(header: list[str], rows: list[dict[str, str]]) -> bytes:
    """The rows as the authors' CSV is written (RFC 4180, multi-line quoted cells, a final newline)."""
    text = io.StringIO(newline="")
    writer = csv.DictWriter(text, fieldnames=header)
    writer.writeheader()
    writer.writerows(rows)
    return text.getvalue().encode("utf-8")


def png(seed: str) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (12, 8), tuple(seed.encode()[:3].ljust(3, b"0"))).save(buffer, format="PNG")
    return buffer.getvalue()


def write_release(folder: Path, header: list[str], rows: list[dict[str, str]], data: bytes | None = None) -> Path:
    """``folder/arb.csv`` (`data`, else the rows) and ``folder/images/<image_path>`` for every row; the CSV's path."""
    images = folder / "images"
    images.mkdir(parents=True, exist_ok=True)
    for row in rows:
        if "/" not in row["image_path"] and "\\" not in row["image_path"] and row["image_path"] not in ("", ".", ".."):
            (images / row["image_path"]).write_bytes(png(row["image_id"]))
    source = folder / "arb.csv"
    source.write_bytes(csv_bytes(header, rows) if data is None else data)
    return source
