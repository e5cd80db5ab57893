"""Property-based tests of every builder's record readers: whatever a source holds, nothing is lost silently.

The invariant, for the ArabCulture builder (.jsonl and parquet-folder sources) and the GIMMICK builder
(sivqa and coqa .jsonl sources with tiny images): a build either writes each record or skips it naming
the record (``<file>:<line>`` for a .jsonl line) and the field, with ``rows_read == rows_written +
rows_skipped`` and ``rows_read`` equal to the records in the source; or it stops with one of the
project's error types (`reading.BadRecord` in "error" mode, `SourceError` when nothing is usable).
Never another exception; through the CLI, exit 0, or exit 2 with one line on stderr.

Inputs start from real rows (`/work/shared/real/`, when present, and the bundled sample, which holds
22 real release rows) and are mutated: fields deleted or given wrong types, huge or empty values,
lines truncated, turned into JSON arrays or CSV, re-encoded as Latin-1, with BOMs and CRLF.
Examples are few (hypothesis ``max_examples`` is small) so the module stays fast.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import re
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from gimmick_fixtures import coqa_records, sivqa_records
from helpers import console_script
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

from arab_mm_tasks.cli import main
from arab_mm_tasks.core.spec import SourceError
from arab_mm_tasks.data import SAMPLE_PATH, sample_records
from arab_mm_tasks.testing.synthetic import image_bytes, make_image
from dataset_builders.arabculture import builder as arabculture
from dataset_builders.core import reading
from dataset_builders.gimmick import builder as gimmick

REAL = Path("/work/shared/real")
FAST = settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
DELETE = object()  # a mutation that removes the field


def _real_jsonl(name: str) -> list[dict[str, Any]]:
    path = REAL / name
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()] if path.is_file() else []


ARABCULTURE_POOL = _real_jsonl("arabculture/arabculture_rows.jsonl") + sample_records()
ARABCULTURE_FIELDS = [
    "worker_id", "sample_id", "sub_topic", "first_statement", "options", "options.text", "options.english_keys",
    "options.arabic_keys", "answer_key", "answer_key.english_answer_key", "answer_key.arabic_answer_key",
    "relevant_to_this_country", "relevant_to_other_countries", "should_discard", "country", "region", "extra",
]  # fmt: skip
ODD_VALUES = st.one_of(
    st.sampled_from(
        [DELETE, None, "", "   ", "x" * 100_000, "7", "3 | Brekfast", "الافطار", " No", "Egypt", "Gulf", "A", "ب", "|"]
    ),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(),
    st.booleans(),
    st.text(max_size=12),
    st.lists(st.one_of(st.text(max_size=4), st.none(), st.integers()), max_size=4),
    st.dictionaries(st.text(max_size=4), st.text(max_size=4), max_size=2),
)
# How a record's line is written: mostly as it should be, else broken in one of the ways seen in the wild.
LINE_FORMS = st.sampled_from(["utf8"] * 5 + ["latin1", "bom", "truncated", "array", "csv", "surrogate", "nested"])


def mutate(record: dict[str, Any], path: str, value: Any) -> None:
    """Set (or with `DELETE`, remove) the dotted `path`; a no-op when an earlier mutation removed a parent."""
    *parents, leaf = path.split(".")
    target: Any = record
    for key in parents:
        target = target.get(key) if isinstance(target, dict) else None
    if isinstance(target, dict):
        if value is DELETE:
            target.pop(leaf, None)
        else:
            target[leaf] = copy.deepcopy(value)


def encode(record: dict[str, Any], form: str, ascii_only: bool) -> bytes:
    text = json.dumps(record, ensure_ascii=ascii_only)
    if form == "latin1":  # a Latin-1 editor's save: é is one byte, invalid UTF-8
        return ("é" + text).encode("latin-1", errors="replace")
    if form == "bom":
        return b"\xef\xbb\xbf" + text.encode()
    if form == "truncated":
        return text.encode()[: max(1, len(text) // 2)]
    if form == "array":
        return f"[{text}]".encode()
    if form == "csv":
        return ",".join(json.dumps(v, ensure_ascii=False) for v in record.values()).encode()
    if form == "surrogate":
        return text.replace("{", '{"bad": "\\udc80", ', 1).encode()
    if form == "nested":
        return b"[" * 5000 + b"]" * 5000
    return text.encode()


@st.composite
def jsonl_file(draw: st.DrawFn, pool: list[dict[str, Any]], fields: list[str], extra: st.SearchStrategy) -> bytes:
    """A .jsonl file's bytes: 0-5 mutated pool records, in various line forms, with blank lines, BOM, CRLF."""
    lines = []
    for _ in range(draw(st.integers(0, 5))):
        record = copy.deepcopy(draw(st.sampled_from(pool)))
        for _ in range(draw(st.integers(0, 2))):
            mutate(record, draw(st.sampled_from(fields)), draw(st.one_of(ODD_VALUES, extra)))
        lines.append(encode(record, draw(LINE_FORMS), draw(st.booleans())))
        lines += [b"", b"  \r"] if draw(st.integers(0, 5)) == 0 else []
    newline = draw(st.sampled_from([b"\n", b"\r\n"]))
    return (b"\xef\xbb\xbf" if draw(st.booleans()) else b"") + newline.join(lines) + newline * draw(st.integers(0, 2))


def records_in(data: bytes) -> int:
    """What a build must account for: the non-blank lines."""
    return sum(1 for line in data.split(b"\n") if line.strip())


def check_build(run: Callable[[], reading.BuildReport], policy: str, source: Path, expected: int) -> None:
    """The invariant: all records accounted for, or one of the project's errors naming the source."""
    try:
        report = run()
    except reading.BadRecord as err:
        assert policy == "error", f"a bad record escaped a {policy!r} build: {err}"
        assert err.record_id and err.problem and str(source) in err.record_id, err
        assert err.field is not None or re.fullmatch(rf"{re.escape(str(source))}:\d+", err.record_id), err
        return
    except SourceError as err:  # an empty source, or no usable record at all
        assert str(source) in str(err), err
        return
    assert report.rows_read == expected == report.rows_written + report.rows_skipped
    assert all(s.record and s.reason for s in report.skipped)
    if source.suffix == ".jsonl":
        assert all(s.record.startswith(f"{source}:") for s in report.skipped), report.skipped
    if policy == "error":
        assert not report.skipped


# ---------------------------------------------------------------------------- ArabCulture


@FAST
@given(data=jsonl_file(ARABCULTURE_POOL, ARABCULTURE_FIELDS, st.nothing()), policy=st.sampled_from(["error", "skip"]))
def test_arabculture_jsonl_records_are_written_or_named(data: bytes, policy: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp, "records.jsonl")
        source.write_bytes(data)
        run = lambda: arabculture.build(source, Path(tmp, "out"), on_bad_records=policy)  # noqa: E731
        check_build(run, policy, source, records_in(data))


@FAST
@given(
    country=st.sampled_from(sorted({r["country"] for r in ARABCULTURE_POOL})),
    path=st.sampled_from(ARABCULTURE_FIELDS),
    value=ODD_VALUES,
)
def test_arabculture_parquet_folder_records_are_written_or_named(country: str, path: str, value: Any) -> None:
    records = [copy.deepcopy(r) for r in ARABCULTURE_POOL if r["country"] == country][:3]
    for record in records:  # the same change in every row: a parquet column has one type
        mutate(record, path, value)
    try:
        table = pa.Table.from_pylist(records)
    except (pa.ArrowException, OverflowError):
        reject()  # a value parquet cannot hold, so no release can have it
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp, "release")
        (source / country).mkdir(parents=True)
        try:
            pq.write_table(table, source / country / "test-00000-of-00001.parquet")
        except pa.ArrowException:
            reject()
        run = lambda: arabculture.build(source, Path(tmp, "out"), on_bad_records="skip")  # noqa: E731
        check_build(run, "skip", source, len(records))


# ---------------------------------------------------------------------------- GIMMICK


def _image_file(folder: Path, name: str) -> str:
    (folder / "images").mkdir(exist_ok=True)
    (folder / "images" / name).write_bytes(image_bytes(make_image(name, (8, 6))))
    return f"images/{name}"


IMAGE_NAMES = ["a.png", "b.png"]  # written next to every source; records name them by relative path
ODD_IMAGES = st.sampled_from(
    [
        "images/a.png", "images/missing.png", "../../../../etc/hostname", "x" * 5000,
        {"bytes": "aGk=", "path": "a.png"}, {"path": 3}, {"bytes": None, "path": "images/b.png"},
        ["images/a.png"], [], [None], ["images/a.png", 4],
    ]
)  # fmt: skip


def _sivqa_pool() -> list[dict[str, Any]]:
    pool = [{**r, "ich_image": "images/a.png"} for r in sivqa_records()]
    for i, example in enumerate(_real_jsonl("gimmick/paper_examples_civqa_cvvqa.jsonl")):  # the paper's own rows
        keep = ("question", "answer", "countries", "regions", "image_copyright")
        fields = {k: example[k] for k in keep if k in example}
        pool.append({"question_id": 5000 + i, **fields, "ich_image": "images/b.png"})
    return pool


def _coqa_pool() -> list[dict[str, Any]]:
    return [
        {**r, "images": ["images/a.png", "images/b.png"][: len(r["images"])], "stacked_images": "images/a.png"}
        for r in coqa_records()
    ]


GIMMICK_CASES = {
    "sivqa": (_sivqa_pool(), ["question", "answer", "question_id", "ich_image", "countries", "regions", "extra"]),
    "coqa": (_coqa_pool(), ["sample_uuid", "title", "description", "countries", "regions", "images", "url"]),
}


@pytest.mark.parametrize("name", list(GIMMICK_CASES))
def test_gimmick_jsonl_records_are_written_or_named(name: str) -> None:
    pool, fields = GIMMICK_CASES[name]

    @FAST
    @given(data=jsonl_file(pool, fields, ODD_IMAGES), policy=st.sampled_from(["error", "skip"]))
    def check(data: bytes, policy: str) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            for image in IMAGE_NAMES:
                _image_file(Path(tmp), image)
            source = Path(tmp, f"{name}.jsonl")
            source.write_bytes(data)
            run = lambda: gimmick.build(Path(tmp, "out"), **{name: source}, on_bad_records=policy)  # noqa: E731
            check_build(run, policy, source, records_in(data))

    check()


# ---------------------------------------------------------------------------- the command line


def _cli(*args: str) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(["build", *args])
    return code, err.getvalue()


@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(data=jsonl_file(ARABCULTURE_POOL, ARABCULTURE_FIELDS, st.nothing()), policy=st.sampled_from(["error", "skip"]))
def test_cli_build_exits_0_or_2_with_one_line(data: bytes, policy: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "r.jsonl").write_bytes(data)
        code, err = _cli("arabculture", "--source", f"{tmp}/r.jsonl", "--out", f"{tmp}/out", "--on-bad-records", policy)
    assert code in (0, 2)
    if code == 2:
        assert err.startswith("arab-mm-tasks build: error: ") and err.count("\n") == 1, err


def test_cli_gimmick_bad_sources_exit_2_with_one_line(tmp_path: Path) -> None:
    (tmp_path / "s.csv").write_text("question,answer\n", encoding="utf-8")
    (tmp_path / "s.jsonl").write_bytes(b'{"question": "What\n')
    for source, says in (("s.csv", "expected a .parquet or .jsonl file"), ("s.jsonl", "s.jsonl:1: is not valid JSON")):
        code, err = _cli("gimmick", "--sivqa", str(tmp_path / source), "--out", str(tmp_path / "out"))
        assert code == 2 and err.count("\n") == 1 and says in err, err
    code, err = _cli(
        "gimmick", "--sivqa", str(tmp_path / "s.jsonl"), "--out", str(tmp_path / "out"), "--on-bad-records", "skip"
    )
    assert code == 2 and "no GIMMICK rows to write (1 skipped; the first: " in err, err


SAMPLE_LINES = SAMPLE_PATH.read_bytes().splitlines(keepends=True)
CLI_CASES = {  # file name, its bytes, policy -> exit status, what stderr must say
    "empty file": ("r.jsonl", b"", "error", 2, "no records"),
    "only blank lines": ("r.jsonl", b"\n \r\n\n", "skip", 2, "no records"),
    "csv given as jsonl": ("r.jsonl", b"worker_id,sample_id\nEgypt-1,1 | Breakfast\n", "skip", 2, "no valid"),
    "a .csv file": ("r.csv", b"worker_id,sample_id\n", "error", 2, "expected a .jsonl file"),
    "truncated line": ("r.jsonl", SAMPLE_LINES[0][:40] + b"\n" + SAMPLE_LINES[1], "error", 2, "jsonl:1: is not valid"),
    "JSON array line, skip": ("r.jsonl", b"[1, 2]\n" + b"".join(SAMPLE_LINES), "skip", 0, ""),
}


@pytest.mark.parametrize("case", list(CLI_CASES))
def test_installed_cli_on_bad_input(case: str, tmp_path: Path, cli_env: dict[str, str]) -> None:
    """Through the installed entry point (a subprocess): no traceback, one line, exit 2 (or 0 when skipped)."""
    name, data, policy, status, says = CLI_CASES[case]
    (tmp_path / name).write_bytes(data)
    argv = ["build", "arabculture", "--source", str(tmp_path / name), "--out", str(tmp_path / "out")]
    proc = subprocess.run(
        [console_script("arab-mm-tasks"), *argv, "--on-bad-records", policy],
        capture_output=True, text=True, env=cli_env, cwd=tmp_path, timeout=120,
    )  # fmt: skip
    assert proc.returncode == status, proc.stderr
    assert "Traceback" not in proc.stderr
    if status == 2:
        assert proc.stderr.startswith("arab-mm-tasks build: error: ") and proc.stderr.count("\n") == 1
        assert says in proc.stderr
    else:
        assert "skipped 1" in proc.stdout and f"{tmp_path / name}:1: is not a JSON object" in proc.stdout
