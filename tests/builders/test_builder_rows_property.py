"""Every builder's row reader on arbitrary rows: the outcome is a row, or a `reading.BadRecord`; nothing else.

A row reader is the function that turns one release record into the rows a build writes
(ArabCulture's `to_row`, Pearl's `pearl_row` / `pearl_x_row`, GIMMICK's converters, JEEM's `convert`,
ARB's `gold_row` + image). Whatever a tampered or broken release puts in a record (any JSON value in any
field, a known field name or not, media fields included), the reader either returns rows or raises a
`BadRecord` whose message starts with the record's id: never a KeyError, TypeError, AttributeError or a
decoder's own exception, which would stop a ``--on-bad-records skip`` build with a traceback.

Rows are drawn two ways: dicts of arbitrary JSON values over the reader's own field names (plus a stray
one), and a valid fixture record with a few of its fields replaced by arbitrary JSON values.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from gimmick_fixtures import coqa_records, sivqa_records, vvqa_records, write_clips
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pearl_fixtures import pearl_records, pearl_x_records

from arab_mm_tasks.data import sample_records
from dataset_builders.arabculture.builder import to_row
from dataset_builders.core.reading import BadRecord
from dataset_builders.gimmick import builder as gimmick
from dataset_builders.gimmick.source import Source
from dataset_builders.jeem import builder as jeem
from dataset_builders.jeem.schema import map_columns
from dataset_builders.pearl.records import pearl_row, pearl_x_row

FAST = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
RID = "row-under-test"

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()
    | st.text(max_size=8)
    | st.sampled_from(["", " ", "x" * 5000, "images/none.png", "../../etc/passwd", "/etc/passwd", "A", "True"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)


def _reader_cases(tmp: Path) -> dict[str, tuple[Callable[[dict[str, Any]], Any], dict[str, Any]]]:
    """Reader name -> (the reader on one record, a valid record it accepts)."""
    tmp.mkdir(parents=True, exist_ok=True)
    ctx = gimmick._Context(seed=gimmick.SEED, threshold=0.5, inclusive=False, videos_dir=None)
    source = Source("sivqa", str(tmp), False, tmp, None)
    clips = gimmick._Context(seed=gimmick.SEED, threshold=0.5, inclusive=False, videos_dir=write_clips(tmp / "clips"))
    pearl = {**pearl_records()[0], "image": {"bytes": sivqa_records()[0]["ich_image"]["bytes"], "path": "a.jpg"}}
    jeem_record = {
        "image_id": "img-1",
        "country": "Jordanian",
        "image": {"bytes": sivqa_records()[0]["ich_image"]["bytes"], "path": "a.jpg"},
        "caption_dialect": "صورة",
        "caption_msa": "صورة",
        "questions": ["شو في؟"],
        "answers": ["حلوى"],
    }
    mapping = map_columns(list(jeem_record), {}, "fixture", None)
    jeem_source = Source("jeem", str(tmp), False, tmp, None)
    return {
        "arabculture": (lambda r: to_row(r, "Egypt", 0), next(r for r in sample_records() if r["country"] == "Egypt")),
        "pearl": (lambda r: pearl_row(r, 0, RID, tmp), pearl),
        "pearl_x": (lambda r: pearl_x_row(r, 0, RID, tmp), pearl_x_records()[0]),
        "gimmick_sivqa": (lambda r: gimmick.CONVERTERS["sivqa"](r, RID, source, ctx), sivqa_records()[0]),
        "gimmick_coqa": (lambda r: gimmick.CONVERTERS["coqa"](r, RID, source, ctx), coqa_records()[0]),
        "gimmick_vvqa": (lambda r: gimmick.CONVERTERS["vvqa"](r, RID, source, clips), vvqa_records()[0]),
        "jeem": (lambda r: jeem.convert(r, RID, mapping, jeem_source, {}, set()), jeem_record),
    }


READERS = ["arabculture", "pearl", "pearl_x", "gimmick_sivqa", "gimmick_coqa", "gimmick_vvqa", "jeem"]


@pytest.fixture(scope="module")
def readers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Callable[[dict[str, Any]], Any], dict]]:
    return _reader_cases(tmp_path_factory.mktemp("rows"))


def _outcome(reader: Callable[[dict[str, Any]], Any], record: dict[str, Any]) -> str:
    try:
        reader(record)
    except BadRecord as err:
        assert str(err).startswith(err.record_id) and err.reason, err
        return "bad"
    return "row"


@pytest.mark.parametrize("name", READERS)
def test_the_fixture_record_is_read(name: str, readers: dict) -> None:
    reader, valid = readers[name]
    assert _outcome(reader, copy.deepcopy(valid)) == "row"


@pytest.mark.parametrize("name", READERS)
def test_arbitrary_rows_over_the_readers_fields_are_a_row_or_a_bad_record(name: str, readers: dict) -> None:
    reader, valid = readers[name]
    fields = st.sampled_from([*valid, "stray"])

    @FAST
    @given(st.dictionaries(fields, JSON, max_size=len(valid) + 1))
    def check(record: dict[str, Any]) -> None:
        _outcome(reader, record)

    check()


@pytest.mark.parametrize("name", READERS)
def test_a_valid_row_with_fields_replaced_by_arbitrary_json_is_a_row_or_a_bad_record(name: str, readers: dict) -> None:
    reader, valid = readers[name]
    outcomes: Counter[str] = Counter()

    @FAST
    @given(st.dictionaries(st.sampled_from(list(valid)), JSON, min_size=1, max_size=3))
    def check(changes: dict[str, Any]) -> None:
        outcomes[_outcome(reader, {**copy.deepcopy(valid), **changes})] += 1

    check()
    assert outcomes["bad"] > 0  # the property saw the error path, not only lucky valid rows


def test_arb_rows_are_a_row_or_a_bad_record() -> None:
    from dataset_builders.arb.builder import _image, gold_row

    valid = {"question": "ما الناتج؟", "answer": "4", "steps": "الخطوة 1: جمع\nالإجراء 1: 2+2", "image_id": "x_1.png"}
    valid |= {"domain": "math", "choices": "", "image": {"bytes": sivqa_records()[0]["ich_image"]["bytes"]}}

    @FAST
    @given(st.dictionaries(st.sampled_from([*valid, "Curriculum", "image_path"]), JSON, min_size=1, max_size=3))
    def check(changes: dict[str, Any]) -> None:
        record = {**valid, **changes}

        def read(r: dict[str, Any]) -> Any:
            return gold_row(r, RID, "hub", Counter(), image_id="x_1.png"), _image(r, RID, "hub", None)

        _outcome(read, record)

    check()
