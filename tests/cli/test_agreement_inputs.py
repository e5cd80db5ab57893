"""`arab-mm-tasks agreement` on hostile input: every bad table or target is one line and exit 2, never a traceback.

Long cells (a caption, a model's whole answer) are read; a cell that should be a number but is
200 KB of text is named by file, line and column with a short quote; a `--target` nested thousands
deep is refused by a bounded, linear parser; a file that is not UTF-8 is named with its line.
CIDEr takes any iterable of predictions.
"""

from __future__ import annotations

import csv
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arab_mm_tasks.cli import main
from arab_mm_tasks.cli.agreement_targets import MAX_CHARS, MAX_DEPTH, Target, TargetError
from metric_plugins import cider

PROG = "arab-mm-tasks agreement: error: "
ARGS = ["--id", "id", "--humans", "h1,h2", "--judges", "judge"]
ROWS = [["a", 1, 2, 3], ["b", 2, 2, 1], ["c", 3, 4, 2], ["d", 4, 3, 4]]


def _csv(path: Path, rows: list[list[object]], header: tuple[str, ...] = ("id", "h1", "h2", "judge")) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([list(header), *rows])
    return path


def _error_line(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(PROG) and "Traceback" not in err, err[:500]
    return err.strip().removeprefix(PROG)


# ------------------------------------------------------------------------------ long cells


def test_a_200_kb_cell_in_a_column_not_used_is_read(tmp_path, capsys):
    long = "نص طويل " * 25_000  # ~200 KB: over the csv module's default 131,072-character field limit
    rows = [[*row, long if i == 1 else "short"] for i, row in enumerate(ROWS)]
    path = _csv(tmp_path / "long.csv", rows, ("id", "h1", "h2", "judge", "caption"))
    assert len(long.encode()) > 200_000
    limit = csv.field_size_limit()
    assert main(["agreement", str(path), *ARGS]) == 0
    assert "Kendall tau-c" in capsys.readouterr().out
    assert csv.field_size_limit() == limit  # the process-wide limit is restored


def test_a_200_kb_cell_where_a_number_belongs_is_one_short_line(tmp_path, capsys):
    rows = [list(row) for row in ROWS]
    rows[2][3] = "x" * 200_000
    path = _csv(tmp_path / "long.csv", rows)
    line = _error_line(capsys, ["agreement", str(path), *ARGS])
    assert line.startswith(f"{path} line 4 (item 'c'), column 'judge': 'xxxx") and line.endswith("is not a number")
    assert len(line) < 300 + len(str(path))


def test_a_200_kb_id_or_header_is_quoted_short(tmp_path, capsys):
    rows = [list(row) for row in ROWS] + [["y" * 200_000, 1, 1, 1], ["y" * 200_000, 2, 2, 2]]
    path = _csv(tmp_path / "ids.csv", rows)
    line = _error_line(capsys, ["agreement", str(path), *ARGS])
    assert line.startswith(f"{path} line 7: item id 'yyy") and "repeats line 6" in line and len(line) < 400
    header = _csv(tmp_path / "header.csv", ROWS, ("id", "h1", "h2", "z" * 200_000))
    line = _error_line(capsys, ["agreement", str(header), *ARGS])
    assert line == f"unknown column 'judge' (columns: h1, h2, id, {'z' * 80})"


# ------------------------------------------------------------------------------ files that are not text


def test_a_csv_that_is_not_utf8_names_the_file_and_line(tmp_path, capsys):
    path = _csv(tmp_path / "latin.csv", ROWS)
    path.write_bytes(path.read_bytes().replace(b"c,3", b"\xe9,3"))
    line = _error_line(capsys, ["agreement", str(path), *ARGS])
    offset = path.read_bytes().index(b"\xe9")
    assert line == f"{path} line 4: not UTF-8 text (byte 0xe9 at offset {offset}); save it as UTF-8"


def test_a_utf16_table_names_the_file(tmp_path, capsys):
    path = _csv(tmp_path / "utf16.csv", ROWS)
    path.write_bytes(path.read_text(encoding="utf-8").encode("utf-16"))
    assert _error_line(capsys, ["agreement", str(path), *ARGS]).startswith(f"{path} line 1: not UTF-8 text (byte 0xff")


def test_jsonl_not_utf8_or_nested_too_deep_is_one_line(tmp_path, capsys):
    path = tmp_path / "scores.jsonl"
    path.write_bytes(b'{"id": "a", "judge": 1}\n{"id": "b\xff", "judge": 2}\n')
    humans = _csv(tmp_path / "humans.csv", [row[:3] for row in ROWS], ("id", "h1", "h2"))
    line = _error_line(capsys, ["agreement", str(path), str(humans), *ARGS])
    assert line.startswith(f"{path} line 2: not UTF-8 text (byte 0xff")
    path.write_text('{"id": "a", "judge": 1}\n' + "[" * 200_000 + "]" * 200_000 + "\n", encoding="utf-8")
    assert _error_line(capsys, ["agreement", str(path), str(humans), *ARGS]) in (
        f"{path} line 2: JSON nested too deeply to read",
        f"{path} line 2: expected a JSON object",  # a json module that reads any depth
    )


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cell=st.binary(max_size=200) | st.text(max_size=200).map(str.encode), row=st.integers(0, 3))
def test_any_cell_bytes_give_tables_or_one_line(tmp_path, capsys, cell, row):
    """Generated bytes in a rating cell (quotes, newlines, NUL, invalid UTF-8): exit 0, or 2 with one line."""
    path = _csv(tmp_path / "cells.csv", ROWS)
    lines = path.read_bytes().split(b"\r\n")
    lines[row + 1] = lines[row + 1].rsplit(b",", 1)[0] + b"," + cell
    path.write_bytes(b"\r\n".join(lines))
    code = main(["agreement", str(path), *ARGS])
    err = capsys.readouterr().err
    assert (code == 0 and not err) or (code == 2 and err.count("\n") == 1 and err.startswith(PROG)), (code, err)


# ------------------------------------------------------------------------------ --target


def test_a_target_nested_3000_deep_is_one_line(tmp_path, capsys):
    path = _csv(tmp_path / "r.csv", ROWS)
    deep = "t=" + "mean(" * 3000 + "h1" + ")" * 3000
    line = _error_line(capsys, ["agreement", str(path), *ARGS, "--target", deep, "--metrics", "judge@t"])
    assert line == f"--target t={deep[2:82]}...: 18,002 characters; a target expression has at most {MAX_CHARS:,}"
    nested = "t=" + "mean(" * (MAX_DEPTH + 1) + "h1" + ")" * (MAX_DEPTH + 1)
    line = _error_line(capsys, ["agreement", str(path), *ARGS, "--target", nested, "--metrics", "judge@t"])
    assert line.endswith(f": functions nested more than {MAX_DEPTH} deep")


def test_a_target_as_deep_as_allowed_still_computes(tmp_path, capsys):
    path = _csv(tmp_path / "r.csv", ROWS)
    nested = "t=" + "mean(" * MAX_DEPTH + "h1,h2" + ")" * MAX_DEPTH
    assert main(["agreement", str(path), *ARGS, "--target", nested, "--metrics", "judge@t"]) == 0
    assert "judge" in capsys.readouterr().out


TOKENS = st.sampled_from(["mean", "hmean", "median", "h1", "(", ")", ",", " ", "x(", "))", "((("])


@settings(max_examples=50, deadline=None)
@given(parts=st.lists(TOKENS, max_size=400), repeat=st.integers(1, 300))
def test_any_target_text_parses_or_is_one_line(parts, repeat):
    """Generated token soups, repeated up to ~100 KB: a Target or a one-line TargetError, never RecursionError;
    linear, so even the longest finishes far inside the 10 s bound."""
    text = "".join(parts) * repeat
    started = time.monotonic()
    try:
        target = Target.parse("t=" + text)
    except TargetError as err:
        assert "\n" not in str(err) and len(str(err)) < 400
    else:
        assert all(column and not set(column) & set("(),") for column in target.columns())
    assert time.monotonic() - started < 10


def test_adversarial_100_kb_targets_finish_quickly():
    """Inputs at the size bound and past it: rejected in linear time (10 s is only breached by a quadratic parser)."""
    under = MAX_CHARS // 6
    for text in (
        "(" * 100_000,
        "mean(" * 20_000,
        "a," * 50_000,
        "mean(" * under + "a" + ")" * under,
        "mean(a" + ",a" * (MAX_CHARS // 2 - 4) + ")",
    ):
        started = time.monotonic()
        try:
            Target.parse("t=" + text)
        except TargetError as err:
            assert "\n" not in str(err)
        assert time.monotonic() - started < 10


# ------------------------------------------------------------------------------ CIDEr


def test_cider_takes_generators_as_lists():
    predictions = ["قطة على السجادة", "رجل يقرأ كتابا"]
    references = [["قطة تجلس على السجادة", "قطة"], "رجل يقرأ"]
    expected = cider.sentence_scores(predictions, references)
    assert cider.sentence_scores((p for p in predictions), iter(references)) == expected
    assert cider.corpus_score(iter(predictions), (r for r in references)) == sum(expected) / 2
    assert expected[0] > 0
    with pytest.raises(ValueError, match="1 predictions for 2 references"):
        cider.sentence_scores(iter(predictions[:1]), references)
