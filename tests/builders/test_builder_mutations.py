"""The mutation corpus: each builder's release, broken one way at a time, with the outcome each break must have.

Releases are the fixture releases the builder tests use, in the authors' formats (.jsonl records
with media files next to them; ARB's CSV with its images). Each mutation touches one record (or one
line, or the file's end) and has one expected outcome, asserted in both policies:

- ``error``: the build raises a `reading.BadRecord` whose message names the record (``<file>:<line>``)
  and the field; nothing is written. Under ``--on-bad-records skip`` the record is the one skipped,
  counted (``rows_read == rows_written + rows_skipped``) and named in the report.
- ``kept``: the build succeeds and writes every record (a 100 KB text; an exact repeat in a release
  without ids, which is also listed in ``report.duplicates``).

A representative subset goes through the real ``arab-mm-tasks build`` command (exit status, one
line on stderr, the summary on stdout); the rest runs in-process. The same module holds the checks of
what every build writes whatever its input: card sizes (issue 24.16), the summary of a release
with many repeats (issue 23.12) and `publish` telling the five builds apart by their cards (24.18).
"""

from __future__ import annotations

import csv
import json
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import pyarrow.parquet as pq
import pytest
import yaml
from arb_fixtures import build_arb_hub_dir, marked_rows
from gimmick_fixtures import build_gimmick_hub_dir, sivqa_records
from helpers import console_script
from jeem_fixtures import build_jeem_hub_dir, write_jeem_jsonl
from pearl_fixtures import build_pearl_hub_dir, pearl_records, write_release
from PIL import Image

from arab_mm_tasks.cli import main
from arab_mm_tasks.data import SAMPLE_PATH, sample_records
from dataset_builders import arabculture, gimmick, jeem, pearl
from dataset_builders.core import reading

BuildFn = Callable[[Path, Path, str], reading.BuildReport]


@dataclass(frozen=True)
class Release:
    """One builder's .jsonl release: how to write it, build it, and which of its fields mean what."""

    write: Callable[[Path], Path]  # folder -> the .jsonl (media files beside it)
    build: BuildFn  # (out, the .jsonl, policy) -> report
    cli: Callable[[Path], list[str]]  # the .jsonl -> `arab-mm-tasks build` arguments naming it
    required: tuple[str, ...]  # fields whose loss makes the record unusable
    text: str  # a free-text field (a 100 KB value is kept)
    media: str | None  # the field naming the record's image file
    keyed: bool  # whether records carry an id (a repeat is then a bad record, else kept and listed)


def _write_arabculture(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "arabculture.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in sample_records()), "utf-8")
    return path


def _write_sivqa(folder: Path) -> Path:
    """CIVQA records as a .jsonl with each ``ich_image`` a file beside it (JSON holds no bytes)."""
    (folder / "images").mkdir(parents=True, exist_ok=True)
    lines = []
    for record in sivqa_records():
        name = f"images/{record['ich_image']['path']}"
        (folder / name).write_bytes(record["ich_image"]["bytes"])
        lines.append(json.dumps({**record, "ich_image": name}, ensure_ascii=False))
    path = folder / "sivqa.jsonl"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return path


RELEASES = {
    "arabculture": Release(
        _write_arabculture,
        lambda out, src, policy: arabculture.build(src, out, on_bad_records=policy),
        lambda src: ["arabculture", "--source", str(src)],
        ("sample_id", "first_statement", "options", "answer_key", "country"),
        "first_statement",
        None,
        keyed=False,
    ),
    "pearl": Release(
        lambda folder: write_release(folder, pearl_records()),
        lambda out, src, policy: pearl.build(out, pearl=src, on_bad_records=policy, expect_release_counts=False),
        lambda src: ["pearl", "--pearl", str(src)],
        ("question", "question_type", "category", "image"),
        "question",
        "image",
        keyed=False,
    ),
    "gimmick": Release(
        _write_sivqa,
        lambda out, src, policy: gimmick.build(out, sivqa=src, on_bad_records=policy),
        lambda src: ["gimmick", "--sivqa", str(src)],
        ("question", "answer", "question_id", "ich_image", "regions"),
        "question",
        "ich_image",
        keyed=True,
    ),
    "jeem": Release(
        write_jeem_jsonl,
        lambda out, src, policy: jeem.build(out, src, on_bad_records=policy),
        lambda src: ["jeem", "--source", str(src)],
        ("image_id", "caption_msa", "caption_dialect", "image"),
        "caption_msa",
        "image",
        keyed=True,
    ),
}
TARGET = 1  # the record every mutation breaks (0-based): line 2 of the .jsonl
DROP = object()
VALUE_MUTATIONS = {"dropped": DROP, "null": None, "empty string": "", "wrong type": {"x": [1]}}


@dataclass(frozen=True)
class Mutation:
    """What was done to the release and what must come of it."""

    line: int  # the line (1-based) of the record that is broken, or that repeats another
    field: str | None  # the field the error names (None: the whole line is unreadable)
    says: str  # what the message says
    outcome: str  # "error" (a named bad record; skipped under skip) or "kept"
    records: int  # records in the mutated release


def _records(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def _set_field(path: Path, field: str, value: Any) -> None:
    lines = _records(path)
    record = json.loads(lines[TARGET])
    if value is DROP:
        record.pop(field, None)
    else:
        record[field] = value
    lines[TARGET] = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
    path.write_bytes(b"".join(lines))


def mutate(name: str, kind: str, path: Path) -> Mutation:
    """Break the release at `path` by `kind`; the mutation's expected outcome."""
    release, lines = RELEASES[name], _records(path)
    n, line = len(lines), TARGET + 1
    if kind.startswith("field "):  # "field <name> <value mutation>"
        _, field, how = kind.split(" ", 2)
        _set_field(path, field, VALUE_MUTATIONS[how])
        return Mutation(line, field, "field '" + field, "error", n)  # or a field inside it: 'options.text'
    if kind == "huge text":
        _set_field(path, release.text, "نص " * 33_000)
        return Mutation(line, None, "", "kept", n)
    if kind == "non-UTF-8 bytes":
        lines[TARGET] = lines[TARGET].replace(b'"', b'"\xff\xfe', 1)
        path.write_bytes(b"".join(lines))
        return Mutation(line, None, "is not UTF-8 text", "error", n)
    if kind == "broken JSON line":
        lines[TARGET] = lines[TARGET][: len(lines[TARGET]) // 2] + b"\n"
        path.write_bytes(b"".join(lines))
        return Mutation(line, None, "is not valid JSON", "error", n)
    if kind == "truncated file":  # cut inside the last record, as an interrupted download leaves it
        path.write_bytes(b"".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 3])
        return Mutation(n, None, "is not", "error", n)  # valid JSON, or UTF-8 text where a letter was cut
    if kind == "duplicated row":
        path.write_bytes(b"".join([*lines[: TARGET + 1], lines[TARGET], *lines[TARGET + 1 :]]))
        if release.keyed:
            return Mutation(line + 1, None, "repeats id", "error", n + 1)
        return Mutation(line + 1, None, f"{path}:{line}", "kept", n + 1)
    if kind == "bad media bytes":
        (path.parent / "garbage.png").write_bytes(b"\x89PNG\r\n\x1a\n this is no image")
        _set_field(path, str(release.media), "garbage.png")
        return Mutation(line, release.media, "not a readable image", "error", n)
    if kind == "media outside the release":
        (path.parent.parent / "outside.png").write_bytes(Image.new("RGB", (8, 8)).tobytes())
        _set_field(path, str(release.media), "../outside.png")
        return Mutation(line, release.media, "outside", "error", n)
    raise AssertionError(kind)


LINE_KINDS = ["huge text", "non-UTF-8 bytes", "broken JSON line", "truncated file", "duplicated row"]
MEDIA_KINDS = ["bad media bytes", "media outside the release"]
CORPUS = [
    (name, kind)
    for name, release in RELEASES.items()
    for kind in [
        *(f"field {field} {how}" for field in release.required for how in VALUE_MUTATIONS),
        *LINE_KINDS,
        *(MEDIA_KINDS if release.media else []),
    ]
]


def _release(tmp_path: Path, name: str, kind: str) -> tuple[Path, Mutation]:
    path = RELEASES[name].write(tmp_path / "release")
    return path, mutate(name, kind, path)


@pytest.mark.parametrize(("name", "kind"), CORPUS, ids=[f"{n}: {k}" for n, k in CORPUS])
def test_each_mutation_has_its_outcome_in_error_mode(name: str, kind: str, tmp_path: Path) -> None:
    path, mutation = _release(tmp_path, name, kind)
    out = tmp_path / "out"
    if mutation.outcome == "kept":
        report = RELEASES[name].build(out, path, "error")
        assert report.rows_read == report.rows_written == mutation.records
        assert report.rows_skipped == 0
        if kind == "duplicated row":  # kept, and listed with the record it repeats
            assert [(d.record.split(": ")[0], d.first.split(": ")[0]) for d in report.duplicates] == [
                (f"{path}:{mutation.line}", f"{path}:{mutation.line - 1}")
            ]
            assert "1 records repeat an earlier record exactly; kept (listed in the report)" in report.warnings
        return
    with pytest.raises(reading.BadRecord) as caught:
        RELEASES[name].build(out, path, "error")
    message = str(caught.value)
    assert message.startswith(f"{path}:{mutation.line}: "), message
    assert mutation.says in message, message
    if mutation.field is not None:
        assert caught.value.field is not None and caught.value.field.startswith(mutation.field), message
    assert "\n" not in message and not (out / "data").exists()  # one line; nothing half-written


@pytest.mark.parametrize(("name", "kind"), CORPUS, ids=[f"{n}: {k}" for n, k in CORPUS])
def test_each_bad_record_is_one_counted_skip_under_skip(name: str, kind: str, tmp_path: Path) -> None:
    path, mutation = _release(tmp_path, name, kind)
    report = RELEASES[name].build(tmp_path / "out", path, "skip")
    assert report.rows_read == mutation.records == report.rows_written + report.rows_skipped
    if mutation.outcome == "kept":
        assert report.rows_skipped == 0
        return
    assert [s.record.split(": ")[0] for s in report.skipped] == [f"{path}:{mutation.line}"]
    assert mutation.says in f"{report.skipped[0].record}: {report.skipped[0].reason}"
    assert "1 bad records skipped (listed in the report)" in report.warnings


CLI_CASES = {  # the real command on a subset: builder, mutation, policy -> exit status
    "pearl bad media, skip": ("pearl", "bad media bytes", "skip", 0),  # Pearl once raised here under skip
    "pearl duplicate, error": ("pearl", "duplicated row", "error", 0),
    "gimmick duplicate, error": ("gimmick", "duplicated row", "error", 2),
    "jeem non-UTF-8, error": ("jeem", "non-UTF-8 bytes", "error", 2),
    "arabculture truncated, skip": ("arabculture", "truncated file", "skip", 0),
}


@pytest.mark.parametrize("case", list(CLI_CASES))
def test_the_real_build_command_on_mutated_releases(case: str, tmp_path: Path) -> None:
    name, kind, policy, status = CLI_CASES[case]
    path, mutation = _release(tmp_path, name, kind)
    argv = ["build", *RELEASES[name].cli(path), "--out", str(tmp_path / "out"), "--on-bad-records", policy]
    proc = subprocess.run([console_script("arab-mm-tasks"), *argv], capture_output=True, text=True, timeout=600)
    assert proc.returncode == status, proc.stderr
    assert "Traceback" not in proc.stderr
    if status == 2:
        (line,) = [x for x in proc.stderr.splitlines() if "error" in x]
        assert line.startswith("arab-mm-tasks build: error: ") and f"{path}:{mutation.line}: " in line, line
        assert mutation.says in line
    elif mutation.outcome == "error":
        assert f"skipped {path}:{mutation.line}: " in proc.stdout and ", skipped 1" in proc.stdout, proc.stdout
    else:
        assert f"duplicate {path}:{mutation.line}" in proc.stdout, proc.stdout


# ---------------------------------------------------------------------------- ARB (its CSV release)

ARB_CASES = {  # mutation -> (field named, or None for a file-level error)
    "empty question": "question",
    "duplicated row": "image_id",
    "garbage image": "image_path",  # the CSV's field that names the file
    "truncated file": None,
}


def _arb_release(tmp_path: Path, kind: str) -> tuple[Path, Path]:
    header, rows = marked_rows()
    images = tmp_path / "images"
    images.mkdir()
    for i, row in enumerate(rows):
        Image.new("RGB", (32, 24), (40 * i, 120, 200)).save(images / row["image_path"], format="PNG")
    if kind == "empty question":
        rows[1]["question"] = ""
    elif kind == "duplicated row":
        rows.insert(2, dict(rows[1]))
    elif kind == "garbage image":
        (images / rows[1]["image_path"]).write_bytes(b"\x89PNG\r\n\x1a\n no image")
    source = tmp_path / "arb.csv"
    with source.open("w", encoding="utf-8", newline="") as stream:
        writer = csv.DictWriter(stream, fieldnames=header)
        writer.writeheader()
        writer.writerows(rows)
    if kind == "truncated file":
        data = source.read_bytes()
        source.write_bytes(data[: int(len(data) * 0.8)])
    return source, images


@pytest.mark.parametrize("kind", list(ARB_CASES))
def test_arb_mutations_are_named_errors_and_counted_skips(kind: str, tmp_path: Path) -> None:
    from dataset_builders.arb import build

    source, images = _arb_release(tmp_path, kind)
    with pytest.raises((reading.BadRecord, reading.SourceError)) as caught:
        build(tmp_path / "out", csv=source, images_dir=images)
    field = ARB_CASES[kind]
    assert field is None or f"field {field!r}" in str(caught.value), caught.value
    if field is not None:
        report = build(tmp_path / "skip", csv=source, images_dir=images, on_bad_records="skip")
        assert report.rows_skipped == 1 and report.rows_read == report.rows_written + 1


# ---------------------------------------------------------------------------- what every build writes


def test_many_repeats_print_a_short_summary_and_the_report_file_lists_them_all(tmp_path: Path, capsys) -> None:
    """Issue 23.12: a release of 2,000 identical rows printed one line per repeat."""
    line = SAMPLE_PATH.read_bytes().splitlines(keepends=True)[0]
    source = tmp_path / "repeats.jsonl"
    source.write_bytes(line * 2000)
    report_file = tmp_path / "report.json"
    argv = ["build", "arabculture", "--source", str(source), "--out", str(tmp_path / "out")]
    assert main([*argv, "--report", str(report_file)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert len(printed) < 40
    shown = [x for x in printed if x.startswith("  duplicate ")]
    assert len(shown) == reading.SHOWN_RECORDS
    assert f"  ... and {1999 - reading.SHOWN_RECORDS} more duplicates (all listed in {report_file})" in printed
    saved = json.loads(report_file.read_text("utf-8"))
    assert saved["rows_duplicate"] == len(saved["duplicates"]) == 1999
    assert saved["duplicates"][-1] == {"record": f"{source}:2000: Egypt-1999", "first": f"{source}:1: Egypt-0000"}


@pytest.fixture(scope="module")
def five_builds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Real small builds of all five benchmarks, from the fixture releases."""
    root = tmp_path_factory.mktemp("five")
    arabculture.build(str(SAMPLE_PATH), root / "arabculture")
    return {
        "ArabCulture": root / "arabculture",
        "ARB": build_arb_hub_dir(root / "arb"),
        "GIMMICK": build_gimmick_hub_dir(root / "gimmick"),
        "JEEM": build_jeem_hub_dir(root / "jeem"),
        "Pearl": build_pearl_hub_dir(root / "pearl"),
    }


def _card(folder: Path) -> dict[str, Any]:
    return yaml.safe_load((folder / "README.md").read_text("utf-8").split("---\n")[1])


def test_card_sizes_are_those_of_the_written_rows(five_builds: dict[str, Path]) -> None:
    """Issue 24.16: small configs recorded ``num_bytes: 0`` (counted before their last rows were turned into Arrow)."""
    for title, folder in five_builds.items():
        for info in _card(folder)["dataset_info"]:
            config, (split,) = info["config_name"], info["splits"]
            files = sorted((folder / "data" / config).glob("*.parquet"))
            if not files:  # ARB's `all` reads its domains' shards
                continue
            arrow = sum(pq.read_table(f).nbytes for f in files)
            assert split["num_examples"] == sum(pq.read_metadata(f).num_rows for f in files)
            assert split["num_bytes"] > 0 and abs(split["num_bytes"] - arrow) <= 0.01 * arrow, (title, config)


class FakeHfApi:
    """Records what `publish` would send to the Hub (the tests are offline)."""

    calls: ClassVar[list[tuple[str, dict[str, Any]]]] = []

    def __init__(self, token: str | None = None) -> None:
        pass

    def __getattr__(self, method: str) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            FakeHfApi.calls.append((method, {"args": args, **kwargs}))
            return type("CommitInfo", (), {"commit_url": "https://hf.example/commit"})()

        return call


def test_publish_tells_the_five_builds_apart_by_their_cards(
    five_builds: dict[str, Path], monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    """Issue 24.18: ArabCulture and ARB both have a config ``all``; `publish` refused both."""
    import huggingface_hub

    monkeypatch.setattr(huggingface_hub, "HfApi", FakeHfApi)
    gated = {"ArabCulture": False, "ARB": False, "GIMMICK": True, "JEEM": True, "Pearl": True}
    for title, folder in five_builds.items():
        assert _card(folder)["pretty_name"] == title and "arab-mm-tasks" in _card(folder)["tags"]
        FakeHfApi.calls.clear()
        assert main(["publish", str(folder), "--repo-id", f"me/{title.lower()}"]) == 0, capsys.readouterr().err
        methods = [method for method, _ in FakeHfApi.calls]
        assert methods[0] == "create_repo" and methods[-1] == "upload_folder", methods
        assert ("update_repo_settings" in methods) is gated[title], title  # gated sources stay gated
        private = FakeHfApi.calls[0][1]["private"]
        assert private is (title == "Pearl"), title  # no-derivatives licence: private unless --public


def test_publish_refuses_a_folder_whose_card_is_not_ours_in_one_line(
    five_builds: dict[str, Path], tmp_path: Path, capsys
) -> None:
    folder = tmp_path / "copy"
    (folder / "data" / "all").mkdir(parents=True)
    source = next((five_builds["ARB"] / "data").rglob("*.parquet"))
    (folder / "data" / "all" / source.name).write_bytes(source.read_bytes())
    for card, says in [
        ("---\npretty_name: ARB\n---\n", "not a card written by `arab-mm-tasks build`"),
        ("---\n!!python/object:os.system\n---\n", "front matter is not valid YAML"),
        ("no front matter", "no YAML front matter"),
    ]:
        (folder / "README.md").write_text(card, "utf-8")
        assert main(["publish", str(folder), "--repo-id", "me/x"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and says in err, err
    (folder / "README.md").write_bytes(b"---\npretty_name: \xff\n---\n")
    assert main(["publish", str(folder), "--repo-id", "me/x"]) == 2
    assert "not UTF-8 text" in capsys.readouterr().err
