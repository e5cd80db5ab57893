"""Pearl release records in the authors' formats, made from the real Arabic text in /work/shared/real/pearl/.

- open-ended items: the authors' 11 caption -> QA examples (one per open-ended type; `examples.py`),
  question, answer, caption, category and country as they wrote them;
- multiple choice: the authors' seed questions (`few_shots_examples.json`) with choices made of the
  example titles (real Arabic strings; the release's own choices are not reachable);
- True/False: statements taken from the example answers;
- Pearl-X: the two questions transcribed from the paper's Figure 4, plus items over 1 to 6 images.
Images are small synthetic PNGs. `write_release` writes the card's 13 columns as a .jsonl with
image paths; `write_pearl_x` writes a parquet with ``image1`` .. ``image6`` structs.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from shared_files import shared

from metric_plugins.judge import loopback
from metric_plugins.judge.loopback import LoopbackServer

REAL = shared("real/pearl")
LETTERS = "ABCD"


def _png(seed: str, size: tuple[int, int] = (24, 16)) -> bytes:
    from arab_mm_tasks.core.media import png_bytes
    from arab_mm_tasks.testing.synthetic import make_image

    return png_bytes(make_image(seed, size=size))


def real_examples() -> list[dict[str, Any]]:
    lines = (REAL / "generation_examples_by_question_type.jsonl").read_text("utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def seed_questions() -> list[dict[str, Any]]:
    return json.loads((REAL / "few_shots_examples.json").read_text("utf-8"))


def pearl_records() -> list[dict[str, Any]]:
    """One release's records (without images): 11 open-ended, 4 multiple choice, 2 True/False."""
    examples = real_examples()
    titles = [e["ex_title"].split(" (")[0] for e in examples]
    records: list[dict[str, Any]] = []

    def add(example: dict, **fields: Any) -> None:
        index = len(records)
        records.append(
            {
                "original_index": 1000 + index,
                "augmented_caption": "تظهر الصورة " + example["ex_caption"],
                "answer_letter": "",
                "choices": [],
                "category": example["ex_category"],
                "country": example["ex_country"].split(" (")[1].rstrip(")"),
                "image_id": f"img_{index}",
                "annotation_id": 50 + index,
                "qa_index": index % 3,
                **fields,
            }
        )

    for example in examples:
        add(
            example,
            question=example["ex_question"],
            answer=example["ex_answer"],
            question_type=example["question_type"],
        )
    for k, seed in enumerate([q for q in seed_questions() if q["Category"] in ("Architecture", "Landmarks")][:4]):
        example = examples[k]
        choices = [f"{letter}. {title}" for letter, title in zip(LETTERS, titles[k : k + 4], strict=True)]
        answer_letter = LETTERS[k % 4]
        add(example, question=seed["Question"], question_type="multiple_choice", choices=choices,
            answer_letter=answer_letter, answer=titles[k + k % 4])  # fmt: skip
    for k, label in enumerate(["True", "False"]):
        example = examples[4 + k]
        statement = example["ex_answer"].split(".")[0] + "."
        add(example, question=statement, question_type="true_false", answer=label)
    return records


def write_release(folder: Path, records: list[dict[str, Any]], name: str = "pearl.jsonl") -> Path:
    """A .jsonl release with its images as files next to it (``images/<image_id>.png``)."""
    (folder / "images").mkdir(parents=True, exist_ok=True)
    path = folder / name
    with path.open("w", encoding="utf-8") as out:
        for record in records:
            image = f"images/{record['image_id']}.png"
            (folder / image).write_bytes(_png(record["image_id"]))
            out.write(json.dumps({**record, "image": image}, ensure_ascii=False) + "\n")
    return path


def pearl_x_records() -> list[dict[str, Any]]:
    """Pearl-X items over 1 to 6 images (the two Figure 4 questions among them)."""
    figure = [json.loads(x) for x in (REAL / "pearl_x_figure4_questions.jsonl").read_text("utf-8").splitlines()]
    multi, single = figure[0], figure[1]
    choices = ["A. الثوب القطري", "B. الدشداشة العمانية", "C. الجلابية المصرية", "D. القفطان المغربي"]
    items = [
        {"question": single["question"], "question_type": "multiple_choice", "choices": choices,
         "answer_letter": "B", "answer": "الدشداشة العمانية", "n": 1, "country": "Qatar"},
        {"question": multi["question"], "question_type": "multiple_choice", "choices": choices,
         "answer_letter": "A", "answer": "الثوب القطري", "n": 4, "country": "Qatar"},
        {"question": "صحيح أم خطأ: جميع الصور تُظهر الثوب يُلبس بطريقة متشابهة.", "question_type": "true_false",
         "choices": ["True", "False"], "answer_letter": None, "answer": "False", "n": 2, "country": "Oman"},
        {"question": "صحيح أم خطأ: يُقدَّم هذا الطبق عادةً مع الخبز العربي في هذا البلد.",
         "question_type": "true_false", "choices": ["True", "False"], "answer_letter": None, "answer": "True",
         "n": 1, "country": "Egypt"},
        {"question": multi["question"], "question_type": "multiple_choice", "choices": choices,
         "answer_letter": "D", "answer": "القفطان المغربي", "n": 6, "country": "Morocco"},
        {"question": multi["question"], "question_type": "multiple_choice", "choices": choices,
         "answer_letter": "C", "answer": "الجلابية المصرية", "n": 3, "country": "Egypt"},
    ]  # fmt: skip
    records = []
    for k, item in enumerate(items):
        n = item.pop("n")
        images = {f"image{i}": {"bytes": _png(f"x{k}-{i}", (20 + 4 * i, 16)), "path": f"{i}_{item['country']}.png"}
                  for i in range(1, n + 1)}  # fmt: skip
        records.append({**item, **{f"image{i}": None for i in range(1, 7)}, **images})
    return records


IMAGE_STRUCT = pa.struct([("bytes", pa.binary()), ("path", pa.string())])


def write_pearl_x(path: Path, records: list[dict[str, Any]]) -> Path:
    """A parquet file like the Hub's: ``image1`` .. ``image6`` image structs (null when absent)."""
    schema = pa.schema(
        [("question", pa.string()), ("question_type", pa.string()), ("choices", pa.list_(pa.string())),
         ("answer_letter", pa.string()), ("answer", pa.string()), ("country", pa.string()),
         *((f"image{i}", IMAGE_STRUCT) for i in range(1, 7))]
    )  # fmt: skip
    pq.write_table(pa.Table.from_pylist(records, schema=schema), path)
    return path


def build_pearl_hub_dir(root: Path) -> Path:
    """A built folder with all six configs (Pearl-Lite: the first 9 records of the Pearl fixture)."""
    from dataset_builders.pearl import build

    records = pearl_records()
    pearl = write_release(root / "pearl", records)
    lite = write_release(root / "lite", records[::2], "lite.jsonl")
    pearl_x = write_pearl_x(root / "pearl_x.parquet", pearl_x_records())
    out = root / "hub"
    build(out, pearl=pearl, pearl_lite=lite, pearl_x=pearl_x)
    return out


# ----------------------------------------------------------------------------- a judge that answers Pearl's prompts

MARK = re.compile(r"<<(acc|cas|rubric)=(.*?)>>")


def pearl_reply(user_text: str) -> str:
    """What the test judge answers to a rendered Pearl prompt.

    A ``<<acc=…>>``, ``<<cas=…>>`` or ``<<rubric=c,h,d,f>>`` marker in the candidate answer sets
    the reply of that prompt (any text: ``<<rubric=bad>>`` is an invalid reply); without one the
    reply is a valid one derived from the text's sha256, so a test can recompute it.
    """
    marks = dict(MARK.findall(user_text))
    digest = int(hashlib.sha256(user_text.encode("utf-8")).hexdigest(), 16)
    if "Output ONE JSON object only" in user_text:
        if "rubric" in marks:
            parts = marks["rubric"].split(",")
            if len(parts) != 4:
                return marks["rubric"]
            scores = parts
        else:
            scores = [str((digest >> (8 * i)) % 6) for i in range(4)]
        return "```json\n" + json.dumps(dict(zip(RUBRIC, map(float, scores), strict=True))) + "\n```"
    if "Cultural Awareness" in user_text:
        return marks.get("cas", str(digest % 2))
    return marks.get("acc", str(digest % 2))


RUBRIC = ("correctness", "coherence", "detail", "fluency")


def judged_score(value: dict) -> float:
    """What a judged per-sample value must score: `pearl_reply` to its rendered prompt, weighted as the metric says."""
    from metric_plugins.judge import JudgeItem, get_prompt

    judge = value["judge"]
    prompt = get_prompt(judge["prompt"])
    (message,) = prompt.render(JudgeItem(judge["fields"]))
    parsed = prompt.parse(pearl_reply(message.text))
    assert parsed.valid
    return sum(weight * parsed.scores[name] for name, weight in value["judge_weights"].items())


def assert_judged(results: dict, samples: dict, metrics: dict[str, list[str]]) -> None:
    """Every judged value of each task's `metrics` got a valid reply, and each reported score (lm-eval's and
    lmms-eval's ``<metric>,none``) is the mean of `judged_score` over the samples, none unscored."""
    for task, names in metrics.items():
        for name in names:
            values = [sample[name] for sample in samples[task]]
            assert all(value["judge_status"] == "valid" for value in values), (task, name)
            expected = sum(judged_score(value) for value in values) / len(values)
            assert results[task][f"{name},none"] == pytest.approx(expected), (task, name)
            assert results[task][f"{name}_unscored,none"] == 0, (task, name)


class PearlJudgeServer(LoopbackServer):
    """The loopback server answering every request with `pearl_reply` of its user text."""

    def __init__(self) -> None:
        super().__init__()
        base = self._httpd.RequestHandlerClass

        def answer(handler: Any, request: dict[str, Any], user_text: str, markers: dict, fault: str | None) -> None:
            handler._send(200, json.dumps(loopback._completion(request, pearl_reply(user_text))).encode())

        self._httpd.RequestHandlerClass = type("PearlHandler", (base,), {"_answer": answer})


# ------------------------------------------------------------------------------ what the judge was sent, and the images


def image_bytes(hub: Path, config: str) -> dict[str, bytes]:
    """The image bytes each record of `config` holds, as released (not the harness's references to them)."""
    import datasets

    from arab_mm_tasks.core.sources import DatasetSource, load_split

    split = load_split(DatasetSource.resolve("pearl", str(hub)), config, "test")
    split = split.cast_column("image", datasets.Image(decode=False))
    return {row["image_id"]: row["image"]["bytes"] for row in split}


def judge_requests(pearl_judge: LoopbackServer) -> list[tuple[str, list[bytes]]]:
    """(user text, [PNG bytes of its images]) of every judge request."""
    out = []
    for request in pearl_judge.requests:
        content = json.loads(request.body)["messages"][0]["content"]
        if isinstance(content, str):
            out.append((content, []))
            continue
        text = "".join(part["text"] for part in content if part["type"] == "text")
        images = [base64.b64decode(p["image_url"]["url"].split(",", 1)[1]) for p in content if p["type"] != "text"]
        out.append((text, images))
    return out
