"""A broken ARB release through `arab-mm-tasks build arb`: one line on stderr naming the file and row (and the
field, for a record), exit 2, no traceback; never a build that passes with a cut row or an undecodable image.

Issue 23 items 7-9: images that do not decode (zero bytes, cut, garbage; garbage ``image.bytes`` in the Hub
form), a CSV cut anywhere (inside a quoted cell, between cells, inside a UTF-8 character, a cut ``.csv.xz``),
text that is not UTF-8, and cells past csv's default 131,072-character limit.
"""

from __future__ import annotations

import contextlib
import csv
import io
import lzma
import re
import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from arb_csv_release import csv_bytes, png, released_rows, write_release
from helpers import console_script
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arab_mm_tasks.cli import main
from dataset_builders.arb.source import MAX_CELL_CHARS


def _cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def _build(folder: Path, source: Path, *more: str) -> tuple[int, str, str]:
    images = ["--images-dir", str(folder / "images")] if (folder / "images").is_dir() else []
    return _cli("build", "arb", "--csv", str(source), *images, "--out", str(folder / "out"), *more)


def _one_line_error(code: int, err: str, command: str = "build") -> str:
    assert code == 2, err
    assert err.startswith(f"arab-mm-tasks {command}: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    return err


# ---------------------------------------------------------------------------- images (item 7)

BAD_IMAGES = {
    "zero bytes": b"",
    "cut PNG": png("x")[:30],
    "garbage": b"this is not an image, only text in a .png file\n" * 4,
    "PNG signature only": b"\x89PNG\r\n\x1a\n" + b"\x00" * 64,
}


@pytest.mark.parametrize("case", list(BAD_IMAGES))
def test_an_image_file_that_does_not_decode_is_a_bad_record(case: str, tmp_path: Path) -> None:
    header, rows = released_rows()
    source = write_release(tmp_path, header, rows)
    (tmp_path / "images" / rows[1]["image_path"]).write_bytes(BAD_IMAGES[case])
    err = _one_line_error(*_build(tmp_path, source)[::2])
    assert f"csv row 1 ({rows[1]['image_id']}): field 'image_path' " in err
    assert not (tmp_path / "out" / "data").exists()  # nothing half-written
    code, out, err = _build(tmp_path, source, "--on-bad-records", "skip")
    assert code == 0 and "wrote 2, skipped 1" in out and f"skipped csv row 1 ({rows[1]['image_id']}): " in out


@pytest.mark.parametrize("case", list(BAD_IMAGES))
def test_garbage_image_bytes_in_the_hub_form_are_a_bad_record(case: str, tmp_path: Path) -> None:
    _, rows = released_rows()
    images = [{"bytes": png(r["image_id"]), "path": r["image_path"]} for r in rows]
    images[2] = {"bytes": BAD_IMAGES[case], "path": rows[2]["image_path"]}
    table = pa.table(
        {
            "image": images,
            **{name: [r[name] for r in rows] for name in ("question", "answer", "choices", "steps")},
            "domain": [r["category "] for r in rows],
            "Curriculum": [None] * len(rows),
        }
    )
    (tmp_path / "hub" / "data").mkdir(parents=True)
    pq.write_table(table, tmp_path / "hub" / "data" / "train-00000-of-00001.parquet")
    code, _, err = _cli("build", "arb", "--hub", str(tmp_path / "hub"), "--out", str(tmp_path / "out"))
    assert "error: hub row 2 (arb_0002): field 'image' " in _one_line_error(code, err)


# ---------------------------------------------------------------------------- a cut CSV (item 8)


def _cut_inside_quoted_steps(data: bytes, rows: list[dict[str, str]]) -> bytes:
    """The CSV up to the middle of the last row's (quoted, multi-line) ``steps`` cell."""
    steps = rows[-1]["steps"].encode("utf-8")
    start = data.rindex(steps[:40])
    return data[: start + len(steps) // 2]


def test_a_csv_cut_inside_a_quoted_cell_names_the_file_and_row(tmp_path: Path) -> None:
    header, rows = released_rows()
    cut = _cut_inside_quoted_steps(csv_bytes(header, rows), rows)
    cut = cut[: len(cut) - len(cut.decode("utf-8", "ignore").encode()[-1:])]  # end on a whole character
    source = write_release(tmp_path, header, rows, cut.decode("utf-8", "ignore").encode("utf-8"))
    err = _one_line_error(*_build(tmp_path, source)[::2])
    assert f"{source}: line " in err and "(csv row 2): the file ends inside a quoted cell: it is cut" in err
    # skip mode cannot skip a cut file: its last row is not a record, it is half of one
    assert "it is cut" in _one_line_error(*_build(tmp_path, source, "--on-bad-records", "skip")[::2])


def test_a_csv_cut_between_cells_names_the_file_and_row(tmp_path: Path) -> None:
    header, rows = released_rows()
    data = csv_bytes(header, rows)
    source = write_release(tmp_path, header, rows, data[: data.rindex(b",", 0, len(data) - 2)])  # last cell gone
    err = _one_line_error(*_build(tmp_path, source)[::2])
    assert f"{source}: csv row 2 has 9 of the header's 10 cells and the file ends there without a newline" in err


def test_score_on_a_cut_csv_is_one_line_not_an_attribute_error(tmp_path: Path) -> None:
    header, rows = released_rows()
    data = _cut_inside_quoted_steps(csv_bytes(header, rows), rows)
    source = write_release(tmp_path, header, rows, data.decode("utf-8", "ignore").encode("utf-8"))
    code, _, err = _cli("score", "arb", str(source), "--metrics", "answer_match", "--out", str(tmp_path / "s"))
    assert "it is cut" in _one_line_error(code, err, "score") and "AttributeError" not in err


def _rows_of(out: Path) -> dict[str, dict]:
    import datasets

    found = datasets.load_dataset(str(out), "all", split="test", columns=["id", "question", "steps_raw", "answer"])
    return {row["id"]: row for row in found}


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(fraction=st.floats(0.02, 1.0))
def test_a_csv_cut_anywhere_is_refused_in_one_line_or_gives_only_whole_rows(fraction: float) -> None:
    """The class, not the list: wherever the cut falls, no row is written with part of a released cell."""
    import tempfile

    header, rows = released_rows()
    data = csv_bytes(header, rows)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        source = write_release(folder, header, rows, data[: max(1, int(len(data) * fraction))])
        code, _, err = _build(folder, source)
        if code != 0:
            assert str(source) in _one_line_error(code, err)
            return
        assert source.read_bytes().endswith((b"\n", b"\r"))  # a build passes only a cut at a row's end
        whole = {row["image_id"]: row for row in rows}
        for row_id, row in _rows_of(folder / "out").items():
            released = whole[row_id]
            assert (row["question"], row["answer"], row["steps_raw"]) == (
                released["question"],
                released["answer"],
                released["steps"],
            )


# ---------------------------------------------------------------------------- file-level faults (item 9)


def _encoded(encoding: str) -> bytes:
    header, rows = released_rows()
    return csv_bytes(header, rows).decode("utf-8").encode(encoding, "replace")


FILE_FAULTS = {  # the CSV's bytes -> what the one line says after the file's name
    "UTF-16 with a BOM": (lambda: _encoded("utf-16"), r": is UTF-16 \(little-endian\) text, not UTF-8"),
    "UTF-16 without a BOM": (lambda: _encoded("utf-16-le"), r": line 1 \(the header\) holds a NUL byte: not UTF-8"),
    "Windows Arabic (cp1256)": (lambda: _encoded("cp1256"), r": line 2 \(csv row 0\) is not UTF-8 text"),
    "a character split by the cut": (
        lambda: _encoded("utf-8")[: _encoded("utf-8").rindex("ب".encode()) + 1],
        r": line \d+ \(csv row 2\) is not UTF-8 text \(unexpected end of data .*\): the file ends inside a character, "
        "it is cut",
    ),
    "a cell over the bound": (
        lambda: _encoded("utf-8").replace(b"ocr_b1.png,", b"ocr_b1.png," + b"x" * (MAX_CELL_CHARS + 1), 1),
        r": line 2 \(csv row 0\): a cell is over 4,194,304 characters",
    ),
}


@pytest.mark.parametrize("case", list(FILE_FAULTS))
def test_a_csv_that_is_not_utf8_or_too_big_is_one_line_naming_the_file(case: str, tmp_path: Path) -> None:
    make, says = FILE_FAULTS[case]
    header, rows = released_rows()
    source = write_release(tmp_path, header, rows, make())
    err = _one_line_error(*_build(tmp_path, source)[::2])
    assert re.search(re.escape(str(source)) + says, err), err


def test_a_cell_over_csv_default_limit_is_read_whole(tmp_path: Path) -> None:
    """131,072 characters is csv's default, not ARB's: a longer cell (here a 200,000-character chain) is data."""
    header, rows = released_rows()
    rows[0]["steps"] += "\n" + "خ" * 200_000
    source = write_release(tmp_path, header, rows)
    code, _, err = _build(tmp_path, source)
    assert code == 0, err
    assert len(_rows_of(tmp_path / "out")[rows[0]["image_id"]]["steps_raw"]) == len(rows[0]["steps"])


def test_a_cut_xz_is_one_line_naming_the_file(tmp_path: Path) -> None:
    header, rows = released_rows()
    packed = lzma.compress(csv_bytes(header, rows))
    write_release(tmp_path, header, rows)
    source = tmp_path / "arb.csv.xz"
    source.write_bytes(packed[: len(packed) * 2 // 3])
    err = _one_line_error(*_build(tmp_path, source)[::2])
    assert f"{source}: the .xz stream is cut or corrupt after line " in err
    source.write_bytes(packed)  # the same bytes whole: built
    assert _build(tmp_path, source)[0] == 0


def test_a_row_with_another_number_of_cells_is_a_bad_record(tmp_path: Path) -> None:
    header, rows = released_rows()
    data = csv_bytes(header, rows).decode("utf-8")
    lines = list(csv.reader(io.StringIO(data, newline="")))
    lines[2] = [*lines[2], "an extra cell"]
    text = io.StringIO(newline="")
    csv.writer(text).writerows(lines)
    source = write_release(tmp_path, header, rows, text.getvalue().encode("utf-8"))
    err = _one_line_error(*_build(tmp_path, source)[::2])
    assert f"csv row 1 ({rows[1]['image_id']}): has 11 cells, the header has 10" in err
    code, out, _ = _build(tmp_path, source, "--on-bad-records", "skip")
    assert code == 0 and "wrote 2, skipped 1" in out


# ---------------------------------------------------------------------------- the installed command


@pytest.mark.parametrize("case", ["cut CSV", "undecodable image", "UTF-16 CSV"])
def test_the_installed_command_says_one_line(case: str, tmp_path: Path, cli_env: dict[str, str]) -> None:
    header, rows = released_rows()
    data = {
        "cut CSV": _cut_inside_quoted_steps(csv_bytes(header, rows), rows).decode("utf-8", "ignore").encode(),
        "UTF-16 CSV": _encoded("utf-16"),
    }.get(case)
    source = write_release(tmp_path, header, rows, data)
    if case == "undecodable image":
        (tmp_path / "images" / rows[0]["image_path"]).write_bytes(b"")
    argv = ["build", "arb", "--csv", str(source), "--images-dir", str(tmp_path / "images"), "--out", "out"]
    proc = subprocess.run(
        [console_script("arab-mm-tasks"), *argv], capture_output=True, text=True, env=cli_env, cwd=tmp_path, timeout=300
    )
    assert str(source) in _one_line_error(proc.returncode, proc.stderr) or "csv row 0" in proc.stderr
