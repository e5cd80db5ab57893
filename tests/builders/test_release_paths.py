"""No path a release names leaves the release's folder, and no file a build writes leaves ``--out``.

DESIGN principle 6, issue 23 items 1, 2 and 4: one rule (`dataset_builders.core.paths.resolve_inside`)
for every builder that reads a path from a release (GIMMICK, JEEM and Pearl media, ARB's
``image_path``, an ArabCulture card's ``data_files``), and one for every file name derived from
release data (`safe_file_name`: ARB's model names, from CSV headers).

The escape attempts are generated (`escape_names`): ``../`` chains of every depth that really reach
a secret file outside the release, the same with Windows ``..\\``, absolute paths, a drive path, a
``file://`` URL, ``~`` with ``HOME`` pointing at the secret, links to an outside file and folder
(absolute and relative targets), a NUL byte, and names too long for the OS. The secret is a valid
PNG carrying a marker, so only the path rule stands between it and the built parquet: every test
greps what was written for the marker and checks that nothing appeared outside ``--out``.
"""

from __future__ import annotations

import io
import json
import os
import re
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
from arb_csv_release import csv_bytes, png, released_rows, write_release
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image, PngImagePlugin

from dataset_builders.core import reading
from dataset_builders.core.paths import inside, resolve_inside, safe_file_name

MARKER = b"SECRET-7f3a9c-NOT-IN-ANY-BUILD"


def _secret_png() -> bytes:
    info = PngImagePlugin.PngInfo()
    info.add_text("secret", MARKER.decode())  # a tEXt chunk: the marker is in the file's bytes as they are
    buffer = io.BytesIO()
    Image.new("RGB", (10, 10), (200, 30, 30)).save(buffer, format="PNG", pnginfo=info)
    return buffer.getvalue()


def plant(root: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """``root/release/images/ok.png`` and a secret outside the release: ``root/secret/secret.png`` (and HOME)."""
    release, secret = root / "release", root / "secret" / "secret.png"
    (release / "images").mkdir(parents=True)
    secret.parent.mkdir()
    secret.write_bytes(_secret_png())
    (release / "images" / "ok.png").write_bytes(png("ok"))
    (release / "images" / "link.png").symlink_to(secret)
    (release / "images" / "relative-link.png").symlink_to(Path("..", "..", "secret", "secret.png"))
    (release / "images" / "linkdir").symlink_to(secret.parent, target_is_directory=True)
    monkeypatch.setenv("HOME", str(secret.parent))  # `~/secret.png` would be the secret if `~` were expanded
    return release, secret


def escape_names(release: Path, secret: Path) -> dict[str, str]:
    """Names a tampered release could give for an image (relative to `release`), each reaching `secret` if obeyed."""
    from_root = str(secret.relative_to(secret.anchor))
    depth = len(release.resolve().parts) - 1  # `..` steps from `release` up to `/`
    names = {
        "parent": os.path.relpath(secret, release),
        "down then up": "images/../" + os.path.relpath(secret, release),
        "absolute": str(secret),
        "absolute through the release": f"{release}/../{secret.parent.name}/{secret.name}",
        "drive": "C:\\secret\\secret.png",
        "file URL": f"file://{secret}",
        "home": "~/secret.png",
        "link to a file": "images/link.png",
        "relative link": "images/relative-link.png",
        "link to a folder": "images/linkdir/secret.png",
        "NUL byte": "images/ok.png\x00/../../" + from_root,
        "too long": "a" * 5000 + ".png",
        "long chain": "../" * 2000 + from_root,
    }
    for extra in (0, 1, 3):  # chains that reach `/` (and past it: `..` of `/` is `/`), then the secret
        names[f"chain +{extra}"] = "../" * (depth + extra) + from_root
        names[f"windows chain +{extra}"] = "..\\" * (depth + extra) + from_root.replace("/", "\\")
    names["windows parent"] = names["parent"].replace("/", "\\")
    return names


def test_every_generated_name_would_reach_the_secret_if_obeyed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The attempts are real: read naively (joined, `~` expanded, `\\` as a separator), most name the secret."""
    release, secret = plant(tmp_path, monkeypatch)
    reached = set()
    for case, name in escape_names(release, secret).items():
        naive = Path(os.path.expanduser(name.replace("\\", "/").removeprefix("file://")))
        try:
            if (release / naive).resolve() == secret.resolve():
                reached.add(case)
        except (OSError, ValueError):  # NUL, too long
            pass
    assert {"parent", "absolute", "home", "link to a file", "relative link", "link to a folder", "chain +0"} <= reached
    assert {"windows chain +0", "windows chain +3", "long chain", "file URL"} <= reached


def _files_outside(root: Path, out: Path) -> set[Path]:
    return {p for p in root.rglob("*") if not p.is_relative_to(out)}


def _no_secret_in(out: Path) -> None:
    for file in out.rglob("*"):
        if file.is_file():
            assert MARKER not in file.read_bytes(), f"the secret was embedded in {file}"


# ---------------------------------------------------------------------------- every builder that reads a path


def _jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def _gimmick(release: Path, names: list[str]) -> tuple[Callable[..., reading.BuildReport], str]:
    from gimmick_fixtures import sivqa_records

    from dataset_builders.gimmick import build

    base = sivqa_records()[0]
    records = [{**base, "ich_image": "images/ok.png"}]
    records += [{**base, "question_id": 5000 + i, "question": f"{i}", "ich_image": n} for i, n in enumerate(names)]
    source = _jsonl(release / "sivqa.jsonl", records)
    return lambda out, **kw: build(out, sivqa=source, **kw), "ich_image"


def _jeem(release: Path, names: list[str]) -> tuple[Callable[..., reading.BuildReport], str]:
    from jeem_fixtures import jeem_records

    from dataset_builders.jeem import build

    base = jeem_records(release / "images")[-1]  # one team's own image
    records = [{**base, "image": "images/ok.png"}]
    records += [{**base, "image_id": f"escape-{i}", "image": n} for i, n in enumerate(names)]
    source = _jsonl(release / "jeem.jsonl", records)
    return lambda out, **kw: build(out, source, **kw), "image"


def _pearl(release: Path, names: list[str]) -> tuple[Callable[..., reading.BuildReport], str]:
    from pearl_fixtures import pearl_records

    from dataset_builders.pearl import build

    base = pearl_records()[0]
    records = [{**base, "image": "images/ok.png"}]
    records += [
        {**base, "image": n, "image_id": f"escape-{i}", "question": f"{base['question']} {i}", "qa_index": 100 + i}
        for i, n in enumerate(names)
    ]
    source = _jsonl(release / "pearl.jsonl", records)
    return lambda out, **kw: build(out, pearl=source, expect_release_counts=False, **kw), "image"


def _arb(release: Path, names: list[str]) -> tuple[Callable[..., reading.BuildReport], str]:
    from dataset_builders.arb import build

    header, rows = released_rows(("ocr_b1.png",))
    rows[0]["image_path"] = "ok.png"
    rows += [{**rows[0], "image_id": f"escape_{i}", "image_path": n} for i, n in enumerate(names)]
    source = release / "arb.csv"
    source.write_bytes(csv_bytes(header, rows))
    images = release / "images"  # --images-dir: the release's folder of images
    return lambda out, **kw: build(out, csv=source, images_dir=images, **kw), "image_path"


BUILDERS = {"gimmick": _gimmick, "jeem": _jeem, "pearl": _pearl, "arb": _arb}


def _names_for(builder: str, release: Path, secret: Path) -> dict[str, str]:
    names = escape_names(release, secret)
    if builder == "arb":
        # `--images-dir` is release/images: the same secret, one level further up; a NUL is no CSV text at all
        # (the whole file is refused: test_a_nul_byte_in_the_arb_csv_is_a_file_error).
        names = escape_names(release / "images", secret)
        names.pop("NUL byte")
        names["link to a file"], names["relative link"] = "link.png", "relative-link.png"
        names["link to a folder"] = "linkdir/secret.png"
    return names


@pytest.mark.parametrize("builder", list(BUILDERS))
def test_no_builder_reads_outside_the_release(builder: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    release, secret = plant(tmp_path, monkeypatch)
    names = _names_for(builder, release, secret)
    run, field = BUILDERS[builder](release, list(names.values()))
    before = _files_outside(tmp_path, tmp_path / "out")

    with pytest.raises(reading.BadRecord) as raised:  # the first escape stops a strict build, naming it
        run(tmp_path / "out")
    assert raised.value.field == field and "1" in raised.value.record_id, str(raised.value)
    assert not (tmp_path / "out" / "data").exists()

    report = run(tmp_path / "out", on_bad_records="skip")  # a tolerant one writes the good record only
    assert (report.rows_written, report.rows_skipped) == (1, len(names))
    for skipped, case in zip(report.skipped, names, strict=True):
        assert re.match(rf"field '{field}' ", skipped.reason), (case, skipped)
    _no_secret_in(tmp_path / "out")
    assert _files_outside(tmp_path, tmp_path / "out") == before


def test_a_nul_byte_in_the_arb_csv_is_a_file_error(tmp_path: Path) -> None:
    from dataset_builders.arb import build

    header, rows = released_rows(("ocr_b1.png",))
    rows[0]["image_path"] = "ocr_b1.png\x00/../../etc/passwd"
    source = write_release(tmp_path, header, rows)
    with pytest.raises(reading.SourceError, match=r"arb\.csv: line \d+ \(csv row 0\) holds a NUL byte"):
        build(tmp_path / "out", csv=source, images_dir=tmp_path / "images")


def test_an_arabculture_card_cannot_name_data_outside_its_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 23 item 4: a folder's card ``data_files`` may not reach a parquet outside the folder."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from arab_mm_tasks.data import SAMPLE_PATH
    from dataset_builders.arabculture import build

    records = [json.loads(line) for line in SAMPLE_PATH.read_text(encoding="utf-8").splitlines() if line.strip()]
    egypt = [
        {**r, "first_statement": f"{r['first_statement']} {MARKER.decode()}"}
        for r in records
        if r["country"] == "Egypt"
    ]
    secret = tmp_path / "secret" / "test-00000-of-00001.parquet"
    secret.parent.mkdir()
    pq.write_table(pa.Table.from_pylist(egypt), secret)
    folder = tmp_path / "release"
    (folder / "Egypt").mkdir(parents=True)
    (folder / "Egypt" / "test-00000-of-00001.parquet").symlink_to(secret)
    (folder / "README.md").touch()
    before = _files_outside(tmp_path, tmp_path / "out")
    for path in (str(secret), "../secret/test-*.parquet", "Egypt/test-*.parquet"):  # the last: a link out
        (folder / "README.md").write_text(
            f"---\nconfigs:\n- config_name: Egypt\n  data_files:\n  - split: test\n    path: {json.dumps(path)}\n---\n",
            encoding="utf-8",
        )
        with pytest.raises(
            reading.SourceError, match=r"config 'Egypt': field 'data_files' names .* outside the release"
        ):
            build(folder, tmp_path / "out")
        assert not (tmp_path / "out" / "data").exists()
        _no_secret_in(tmp_path / "out")
    assert _files_outside(tmp_path, tmp_path / "out") == before


# ---------------------------------------------------------------------------- ARB: file names from CSV headers


def test_arb_model_names_from_the_header_stay_inside_out(tmp_path: Path) -> None:
    """Issue 23 item 2: a header ``/abs/dir/PWNED-steps`` or ``../../../X-steps`` names a file inside --out."""
    from dataset_builders.arb import build

    header, rows = released_rows()
    outside = tmp_path / "abs" / "dir"
    models = [f"{outside}/PWNED", "../../../X", "..", ".hidden", "a\\..\\..\\W", "100%"]
    for row in rows:
        for model in models:
            row[f"{model}-steps"], row[f"{model}-answers"] = "الخطوة 1: اقرأ.", "أ"
    header += [f"{m}-{kind}" for m in models for kind in ("steps", "answers")]
    source = write_release(tmp_path / "release", header, rows)
    before = _files_outside(tmp_path, tmp_path / "out")
    build(tmp_path / "out", csv=source, images_dir=tmp_path / "release" / "images")
    written = sorted(p.name for p in (tmp_path / "out" / "predictions").iterdir())
    assert written == sorted(
        [
            "%2E..jsonl",
            "%2Ehidden.jsonl",
            "%2E.%2F..%2F..%2FX.jsonl",
            "100%25.jsonl",
            f"{str(outside).replace('/', '%2F')}%2FPWNED.jsonl",
            "a%5C..%5C..%5CW.jsonl",
            "gpt-4.1.jsonl",
        ]
    )
    assert _files_outside(tmp_path, tmp_path / "out") == before and not outside.exists()


def test_an_arb_model_name_too_long_for_a_file_is_one_line(tmp_path: Path) -> None:
    from dataset_builders.arb import build

    header, rows = released_rows()
    model = "m" * 300
    header += [f"{model}-steps", f"{model}-answers"]
    source = write_release(tmp_path, header, rows)
    with pytest.raises(reading.SourceError, match=r"arb\.csv: the model name of columns 'm+-steps'/'m+-answers' is "):
        build(tmp_path / "out", csv=source, images_dir=tmp_path / "images")
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------------------- the rule itself, on generated paths

PARTS = st.sampled_from(["..", ".", "images", "ok.png", "secret", "~", "", "a" * 300, "link.png", "linkdir", "C:"])


@settings(max_examples=50, deadline=None, derandomize=True)
@given(
    parts=st.lists(PARTS, min_size=1, max_size=12),
    separator=st.sampled_from(["/", "\\"]),
    lead=st.sampled_from(["", "/", "\\", "C:\\", "~/"]),
)
def test_resolve_inside_returns_a_path_inside_or_a_named_bad_record(
    parts: list[str], separator: str, lead: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    root = tmp_path_factory.mktemp("rule")
    (root / "release" / "images").mkdir(parents=True)
    (root / "secret").mkdir()
    (root / "release" / "images" / "link.png").symlink_to(root / "secret" / "x.png")
    (root / "release" / "images" / "linkdir").symlink_to(root / "secret", target_is_directory=True)
    name = lead + separator.join(parts)
    try:
        file = resolve_inside(root / "release", name, record="row 7", field="image")
    except reading.BadRecord as error:
        assert str(error).startswith("row 7: field 'image' ") and "\n" not in str(error)
    else:
        assert file.is_relative_to((root / "release").resolve())
        assert not PurePosixPath(name.replace("\\", "/")).is_absolute()


def _safe_or_none(name: str) -> str | None:
    try:
        return safe_file_name(name, what="model name")
    except reading.SourceError as error:
        assert str(error).startswith("model name is ") and "\n" not in str(error)
        assert not name.strip() or "too long to name a file" in str(error)
        return None


@settings(max_examples=50, deadline=None, derandomize=True)
@given(name=st.text(min_size=1, max_size=80))
def test_safe_file_name_is_one_name_and_distinct_names_stay_distinct(name: str) -> None:
    from urllib.parse import unquote

    safe = _safe_or_none(name)
    if safe is None:
        return
    assert "/" not in safe and "\\" not in safe and "\x00" not in safe and not safe.startswith(".")
    assert len(safe.encode("utf-8")) <= 200 and safe == _safe_or_none(name)
    assert _safe_or_none(name + "/") != safe
    assert unquote(safe, errors="surrogatepass") == name  # reversible: two names never share a file


def test_inside_refuses_a_path_that_leaves_out(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    assert inside(tmp_path / "out", tmp_path / "out" / "predictions" / "m.jsonl").name == "m.jsonl"
    with pytest.raises(reading.SourceError, match="outside the output folder"):
        inside(tmp_path / "out", tmp_path / "out" / ".." / "m.jsonl")


def test_a_save_to_disk_folder_cannot_name_arrow_files_outside_it(tmp_path: Path) -> None:
    """GIMMICK / JEEM / Pearl read a ``save_to_disk`` folder: its state.json names its .arrow files."""
    import datasets
    from gimmick_fixtures import SIVQA_FEATURES, sivqa_records

    from dataset_builders.gimmick import build

    folder, outside = tmp_path / "release", tmp_path / "secret"
    datasets.Dataset.from_list(sivqa_records(), features=SIVQA_FEATURES).save_to_disk(str(folder))
    state = json.loads((folder / "state.json").read_text(encoding="utf-8"))
    arrow = state["_data_files"][0]["filename"]
    outside.mkdir()
    (folder / arrow).rename(outside / arrow)
    state["_data_files"][0]["filename"] = f"../secret/{arrow}"
    (folder / "state.json").write_text(json.dumps(state), encoding="utf-8")
    with pytest.raises(reading.SourceError, match=r"field 'state.json _data_files' names .* outside the release"):
        build(tmp_path / "out", sivqa=folder)
    assert not (tmp_path / "out" / "data").exists()


@pytest.mark.parametrize("builder", ["gimmick", "arb"])
def test_a_parquet_folder_cannot_link_to_a_parquet_outside_it(builder: str, tmp_path: Path) -> None:
    """A Hub-layout folder is read by globbing ``*.parquet``: a link among them to another file is refused."""
    from gimmick_fixtures import write_sivqa

    from dataset_builders import arb, gimmick

    (tmp_path / "secret").mkdir()
    secret = write_sivqa(tmp_path / "secret" / "test-00000-of-00001.parquet")
    (tmp_path / "release" / "data").mkdir(parents=True)
    (tmp_path / "release" / "data" / "test-00000-of-00001.parquet").symlink_to(secret)
    run = {
        "gimmick": lambda: gimmick.build(tmp_path / "out", sivqa=tmp_path / "release"),
        "arb": lambda: arb.build(tmp_path / "out", hub_source=str(tmp_path / "release")),
    }[builder]
    with pytest.raises(reading.SourceError, match=r"field 'files' names .* outside the release's folder"):
        run()
    assert not (tmp_path / "out" / "data").exists()
