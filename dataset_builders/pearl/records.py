"""One Pearl / Pearl-Lite / Pearl-X release record -> one checked row of the built dataset.

Pearl and Pearl-Lite records carry the 13 features of the ``UBC-NLP/PEARL`` card
(`CARD_FEATURES`); Pearl-X records carry ``question``, ``question_type``, ``choices``, the
answer and ``image1`` .. ``image6`` (the columns the authors' ``generate_pearl_x.py`` reads; the
unused ones are None). Every check names the record and the field (`PearlRecordError`); values
are kept as released, images as their original bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from datasets import Features, Image, List, Value

from arab_mm_tasks.pearl import prompts
from arab_mm_tasks.pearl.answers import parse_true_false
from dataset_builders.core.reading import BadRecord
from dataset_builders.gimmick.source import image_value

CARD_FEATURES = (
    "original_index", "augmented_caption", "question", "answer", "answer_letter", "choices", "category",
    "country", "image_id", "question_type", "annotation_id", "qa_index", "image",
)  # fmt: skip
INTEGERS = ("original_index", "annotation_id", "qa_index")
PEARL_X_IMAGE_COLUMNS = tuple(f"image{i}" for i in range(1, 7))
PEARL_X_READ = ("question", "question_type", "choices", "answer", "answer_letter", *PEARL_X_IMAGE_COLUMNS)

_S = Value("string")
PEARL_FEATURES = Features(
    {
        "id": _S,  # the release's running index, as the authors' inference logs number rows
        "original_index": Value("int64"),
        "augmented_caption": _S,
        "question": _S,
        "answer": _S,
        "answer_letter": _S,
        "choices": List(_S),
        "category": _S,
        "country": _S,
        "image_id": _S,
        "question_type": _S,
        "annotation_id": Value("int64"),
        "qa_index": Value("int64"),
        "image": Image(),
    }
)
PEARL_X_FEATURES = Features(
    {
        "id": _S,
        "question": _S,
        "question_type": _S,
        "choices": List(_S),
        "answer": _S,
        "answer_letter": _S,
        "images": List(Image()),  # image1 .. imageN in order (derived)
        "n_images": Value("int32"),
    }
)


# An item with no answer letter (open-ended, True/False) keeps the release's empty string, never null:
# the card's `answer_letter` is a string feature and the authors' logs carry it as released.
NO_LETTER = ""


class PearlRecordError(BadRecord):
    """A Pearl release record the builder cannot use; the message names the record and the field."""


def _text(record: Mapping[str, Any], name: str, rid: str, *, optional: bool = False) -> str | None:
    if name not in record:
        raise PearlRecordError(rid, name, "is missing")
    value = record[name]
    if optional and (value is None or value == ""):
        return None
    if not isinstance(value, str) or not value.strip():
        raise PearlRecordError(rid, name, f"is {value!r:.80}, expected a non-empty string")
    return value


def _integer(record: Mapping[str, Any], name: str, rid: str) -> int | None:
    value = record.get(name)
    if name not in record:
        raise PearlRecordError(rid, name, "is missing")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or float(value) != int(value):
        raise PearlRecordError(rid, name, f"is {value!r:.80}, expected an integer")
    return int(value)


def _choices(record: Mapping[str, Any], rid: str, required: bool) -> list[str]:
    value = record.get("choices")
    if value is None and not required:
        return []
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) and v.strip() for v in value):
        raise PearlRecordError(rid, "choices", "is missing" if value is None else f"is {value!r:.80}, not a list")
    if required and len(value) < 2:
        raise PearlRecordError(rid, "choices", f"has {len(value)} choice(s); a multiple-choice item needs 2 or more")
    return list(value)


def question_route(record: Mapping[str, Any], rid: str) -> str:
    kind = _text(record, "question_type", rid)
    try:
        return prompts.route(kind)  # type: ignore[arg-type]
    except ValueError:
        known = ", ".join(prompts.CLOSED_TYPES + prompts.OPEN_TYPES + prompts.EXTRA_OPEN_TYPES)
        raise PearlRecordError(rid, "question_type", f"is {kind!r}, not a Pearl question type ({known})") from None


def _letter(value: str | None, letters: list[str]) -> str | None:
    """`value` as one of `letters` (``"b"``, ``"B."``), else None."""
    key = value.strip().rstrip(".").upper() if isinstance(value, str) else None
    return key if key in letters else None


def _true_false_answer(record: Mapping[str, Any], rid: str, choices: list[str]) -> tuple[str, str | None]:
    """(answer, answer_letter) of a True/False item: a True/False label (صحيح/خطأ), or a letter naming a
    True/False choice (``"A"`` over ``["True", "False"]``), whose text becomes the answer."""
    answer = str(_text(record, "answer", rid))
    given = record.get("answer_letter")
    letter = given.strip() if isinstance(given, str) and given.strip() else None
    if parse_true_false(answer) is not None:
        return answer, letter
    letters = prompts.choice_letters(choices) if choices else []
    named = _letter(answer, letters)
    label = prompts.choice_text(choices[letters.index(named)]) if named else ""
    if named is None or parse_true_false(label) is None:
        shown = f" or a letter of True/False choices {choices}" if choices else ""
        raise PearlRecordError(rid, "answer", f"is {answer!r:.80}, not True/False (or صحيح/خطأ){shown}")
    return label, named


def _closed_answer(record: Mapping[str, Any], rid: str, kind: str, choices: list[str]) -> tuple[str, str | None]:
    """(answer, answer_letter) of a closed item, checked: the letter among the choices, or a True/False label.

    An MCQ answer may come as its letter (Pearl-X's generator writes ``"Answer": "A"``, Figure D.9)
    or as the text of one choice, with no ``answer_letter``: the letter is read from it.
    """
    if kind == prompts.TRUE_FALSE:
        return _true_false_answer(record, rid, choices)
    letters = prompts.choice_letters(choices)
    letter = _text(record, "answer_letter", rid, optional=True) if "answer_letter" in record else None
    answer = _text(record, "answer", rid, optional=letter is not None) if "answer" in record else None
    if letter is None and answer is not None and _letter(answer, letters):
        letter = answer.strip().rstrip(".")  # Pearl-X's generator writes the letter as the answer (Figure D.9)
    if letter is None and answer is not None:  # the answer is one choice's text
        texts = [" ".join(prompts.choice_text(choice).split()) for choice in choices]
        wanted = " ".join(prompts.choice_text(answer).split())
        letter = letters[texts.index(wanted)] if texts.count(wanted) == 1 else None
    if letter is None:
        raise PearlRecordError(rid, "answer_letter", "is missing; a multiple-choice item needs its answer letter")
    if letter.strip().rstrip(".").upper() not in letters:
        raise PearlRecordError(rid, "answer_letter", f"is {letter!r:.40}, not one of the choices' letters {letters}")
    if answer is None or answer.strip().rstrip(".").upper() in letters:
        answer = prompts.choice_text(choices[letters.index(letter.strip().rstrip(".").upper())])
    return answer, letter


def pearl_row(record: Mapping[str, Any], index: int, rid: str, base_dir: Path | None) -> tuple[str, dict[str, Any]]:
    """(``closed`` or ``open``, the row) for a Pearl / Pearl-Lite record."""
    missing = [name for name in CARD_FEATURES if name not in record]
    if missing:
        raise PearlRecordError(rid, missing[0], f"is missing (the card's features: {', '.join(CARD_FEATURES)})")
    kind = question_route(record, rid)
    row: dict[str, Any] = {"id": str(index)}
    row |= {name: _integer(record, name, rid) for name in INTEGERS}
    for name in ("question", "category", "country", "image_id", "question_type"):
        row[name] = _text(record, name, rid)
    row["choices"] = _choices(record, rid, required=kind == prompts.MULTIPLE_CHOICE)
    if kind == prompts.OPEN_ENDED:
        row["answer"] = _text(record, "answer", rid)
        row["answer_letter"] = _text(record, "answer_letter", rid, optional=True)
        row["augmented_caption"] = _text(record, "augmented_caption", rid)  # the judge's image description
    else:
        row["answer"], row["answer_letter"] = _closed_answer(record, rid, kind, row["choices"])
        row["augmented_caption"] = _text(record, "augmented_caption", rid, optional=True)
    row["answer_letter"] = row["answer_letter"] or NO_LETTER
    row["image"] = image_value(record.get("image"), base_dir=base_dir, record=rid, field="image")
    return ("open" if kind == prompts.OPEN_ENDED else "closed"), row


def pearl_x_row(record: Mapping[str, Any], index: int, rid: str, base_dir: Path | None) -> tuple[str, dict[str, Any]]:
    """(``single`` or ``multi``, the row) for a Pearl-X record: image1 .. imageN without gaps, N from 1 to 6."""
    kind = question_route(record, rid)
    if kind == prompts.OPEN_ENDED:
        raise PearlRecordError(
            rid, "question_type", f"is {record['question_type']!r}; Pearl-X is MCQ / True-False only"
        )
    present = [name for name in PEARL_X_IMAGE_COLUMNS if record.get(name) is not None]
    if not present:
        raise PearlRecordError(rid, "image1", "is missing: a Pearl-X item has 1 to 6 images (image1 .. image6)")
    count = len(present)
    if present != list(PEARL_X_IMAGE_COLUMNS[:count]):
        gap = next(name for name in PEARL_X_IMAGE_COLUMNS[:count] if name not in present)
        raise PearlRecordError(
            rid, gap, f"is empty but {present[-1]} is set: the images must be image1 .. {present[-1]} without gaps"
        )
    declared = record.get("Single_Multiple", record.get("single_multiple"))
    kind_declared = declared.strip().lower() if isinstance(declared, str) else None
    if kind_declared in ("single", "multiple") and (kind_declared == "single") != (count == 1):
        raise PearlRecordError(rid, "Single_Multiple", f"is {declared!r} but the item has {count} image(s)")
    row: dict[str, Any] = {"id": str(index), "question": _text(record, "question", rid)}
    row["question_type"] = _text(record, "question_type", rid)
    row["choices"] = _choices(record, rid, required=kind == prompts.MULTIPLE_CHOICE)
    row["answer"], row["answer_letter"] = _closed_answer(record, rid, kind, row["choices"])
    row["answer_letter"] = row["answer_letter"] or NO_LETTER
    row["images"] = [image_value(record[name], base_dir=base_dir, record=rid, field=name) for name in present]
    row["n_images"] = count
    return ("single" if count == 1 else "multi"), row
