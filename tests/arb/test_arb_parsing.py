"""ARB's release fields and response split on the authors' released rows (issue 24 items 13-14, issue 23 item 6).

The released CSV is ``evaluation/gpt-4.1-final-responses.csv`` (gold ``steps`` and GPT-4.1's steps and
answers for all 1,356 rows, shared/real/arb/README.md).
"""

from __future__ import annotations

import csv
import io
import json
import lzma

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from shared_files import shared

from arab_mm_tasks.arb import scorers
from arab_mm_tasks.arb.answers import split_response, strip_answer_prefix
from arab_mm_tasks.arb.released import compose_response
from dataset_builders.arb.parsing import FieldError, parse_choices, parse_steps, steps_text
from metric_plugins.text_parsing import LiteralError, python_literal

EVAL_COLUMNS = shared("real/arb/gpt-4.1-final-responses.eval-columns.csv.xz")
# issue 24 item 13: the rows whose action marker is the typo لإجراء
ACTION_TYPO_ROWS = {"ocr_b13.jpg", "Chart_12.png", "diag_30.png", "table_27.png", "test_Pharmacy_201.png",
                    "test_Public_Health_4.png", "test_Pharmacy_20.png", "rs_2.jpg"}  # fmt: skip


@pytest.fixture(scope="module")
def released() -> list[dict[str, str]]:
    if not EVAL_COLUMNS.exists():
        pytest.skip(f"ARB's released outputs are not at {EVAL_COLUMNS}")
    text = lzma.decompress(EVAL_COLUMNS.read_bytes()).decode("utf-8")
    return list(csv.DictReader(io.StringIO(text, newline="")))


def test_the_action_typo_is_an_action_marker():
    pairs = parse_steps("الخطوة 1: أ\nلإجراء 1: ب\nالخطوة 2: ج\nالإجراء 2: د")
    assert pairs == [("أ", "ب"), ("ج", "د")]
    assert parse_steps("الخطوة 1: أ\nالإجراء 1: ب") == [("أ", "ب")]  # the spelling as written, unchanged


def test_released_rows_with_the_action_typo_keep_every_action(released):
    rows = {row["image_id"]: row for row in released if row["image_id"] in ACTION_TYPO_ROWS}
    assert set(rows) == ACTION_TYPO_ROWS
    for image_id, row in rows.items():
        assert "لإجراء" in row["steps"]
        pairs = parse_steps(row["steps"])
        assert len(pairs) >= 3, image_id
        assert all(pair.action for pair in pairs), image_id  # nothing glued into the previous step
        assert not any("لإجراء" in pair.step for pair in pairs), image_id


def test_every_released_row_splits_back_into_its_steps_and_answer(released):
    restated = 0
    for row in released:
        steps, answer = split_response(compose_response(row["gpt-4.1-steps"], row["gpt-4.1-answers"]))
        assert steps == row["gpt-4.1-steps"].strip(), row["image_id"]
        assert answer == strip_answer_prefix(row["gpt-4.1-answers"]).strip("*").strip(), row["image_id"]
        restated += row["gpt-4.1-answers"].startswith("الجواب النهائي:")
    assert restated == 14  # their answer restates the marker: it used to stay in the steps


def test_markers_on_the_answer_line_are_one_answer_line():
    assert split_response("الخطوة 1: x\n\nالجواب هو: الجواب النهائي: ب") == ("الخطوة 1: x", "ب")
    assert split_response("الخطوة 1: x\n**الجواب هو:** إذًا الجواب هو: ج") == ("الخطوة 1: x", "ج")
    # a marker on an earlier line stays in the steps (the answer line is the last marker's)
    assert split_response("الجواب هو: 5 ثم نتحقق\nإذن الجواب هو: 6") == ("الجواب هو: 5 ثم نتحقق\nإذن", "6")


def test_score_command_computes_the_released_bleu_to_four_digits(released, tmp_path):
    from arab_mm_tasks.cli import main
    from metric_plugins import bleu

    assert main(["score", "arb", str(EVAL_COLUMNS), "--metrics", "bleu", "--out", str(tmp_path)]) == 0
    results = json.loads((tmp_path / "results.json").read_text())["results"]
    direct = bleu.corpus_score([r["gpt-4.1-steps"] for r in released], [r["steps"] for r in released], mode="arb")
    assert round(results["bleu"], 4) == round(direct, 4) == 6.3513  # it was 6.3499 with markers left in 15 steps


def test_rouge_scorers_score_each_pair_once(monkeypatch):
    calls = []
    original = scorers.rouge_metric.all_sentence_scores

    def counting(*args, **kwargs):
        calls.append(len(args[0]))
        return original(*args, **kwargs)

    monkeypatch.setattr(scorers.rouge_metric, "all_sentence_scores", counting)
    scorers._rouge_all.cache_clear()
    responses = ["الخطوة 1: 2 و 3\nالجواب هو: 5", "الخطوة 1: 4 x\nالجواب هو: 4"]
    targets = [json.dumps({"steps": "الخطوة 1: 3 و 2"}), json.dumps({"steps": "الخطوة 1: 4 y"})]
    values = {f.__name__: f(responses, targets) for f in (scorers.rouge1, scorers.rouge2, scorers.rougeL)}
    assert calls == [2]
    expected = scorers.rouge_metric.compute(*scorers.texts(responses, targets), mode="arb")
    assert {name: sum(v) / 2 for name, v in values.items()} == pytest.approx(expected)


def test_choices_are_read_without_literal_eval():
    assert parse_choices("['أ. نعم', \"ب. لا\", 3]") == ["أ. نعم", "ب. لا", "3"]
    assert parse_choices("['it\\'s', 'a\\nb',]") == ["it's", "a\nb"]
    with pytest.raises(FieldError, match=r"^is not a Python list literal \(unexpected '-+' at character 1\)"):
        parse_choices("[" + "-" * 5000 + "1]")  # a RecursionError under ast.literal_eval
    with pytest.raises(FieldError, match="nested deeper than 32 levels"):
        parse_choices("[" * 100_000)
    with pytest.raises(FieldError, match="unexpected name 'os'"):
        parse_choices("[os.system('x')]")
    with pytest.raises(FieldError, match="is not a list of strings"):
        parse_choices("{'a': 1}")
    assert steps_text("['الخطوة 1: أ', 'الإجراء 1: ب']") == "الخطوة 1: أ\nالإجراء 1: ب"
    assert steps_text("[" + "-" * 5000 + "1]") == "[" + "-" * 5000 + "1]"  # not a list: the text as released


_SCALARS = st.none() | st.booleans() | st.integers(-(10**12), 10**12) | st.text(max_size=30)
_VALUES = st.recursive(
    _SCALARS | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=50, deadline=None)
@given(_VALUES)
def test_python_literals_read_back_as_written(value):
    """What ``repr`` writes (quotes, escapes, None/True/False, any text) reads back as the same value."""
    assert python_literal(repr(value)) == value


@settings(max_examples=50, deadline=None)
@given(st.text(alphabet="[]{}()'\",:-+0123456789.eNTFaxo_\\ \n", max_size=60))
def test_any_text_is_a_value_or_a_literal_error(text):
    try:
        python_literal(text)
    except LiteralError as error:
        assert str(error)
