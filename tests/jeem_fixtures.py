"""JEEM records in the local JSON layout, made from the paper's real text (/work/shared/real/jeem/).

Real: the four dialect captions of the shared-pool Omani halwa image (Figure 8) and the dialect
questions (Table 2, Figure 12), copied from ``jeem_paper_examples.jsonl`` at import. Written for
these tests (the paper prints none): the MSA captions (the authors' English translations put into
MSA), the answers, and which team asks which question. Images are synthetic.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from shared_files import shared

from arab_mm_tasks.testing.synthetic import image_bytes, make_image

REAL = shared("real/jeem/jeem_paper_examples.jsonl")
EXAMPLES = [json.loads(line) for line in REAL.read_text("utf-8").splitlines() if line.strip()]
CAPTIONS = {e["dialect"]: e["caption"] for e in EXAMPLES if e["record_kind"] == "caption_dialect"}
QUESTIONS = list(dict.fromkeys(e["question"] for e in EXAMPLES if "question" in e))

COUNTRY = {"Jordanian": "jordan", "Emirati": "emirates", "Egyptian": "egypt", "Moroccan": "morocco"}
MSA_CAPTIONS = {  # written for the tests from the authors' translations
    "Jordanian": "صورة لطبق حلوى تقليدية في صحن زجاجي كبير وشفاف، مغلف من الأسفل بالبلاستيك ليبقى نظيفاً، "
    "ومزين بأنواع من المكسرات مثل اللوز المبشور والفستق، وعلى سطحه حبة جوز، ولون الحلوى داكن.",
    "Emirati": "وعاء زجاجي فيه حلوى عمانية تعلوها مكسرات متنوعة، وبجانبه غطاء الوعاء. يبدو الوعاء جديداً، "
    "وما زال جزء منه مغطى بغلاف بلاستيكي، وهو موضوع على أرضية خشبية بنية.",
    "Egyptian": "صورة لحلوى البودنغ بالشوكولاتة عليها حبة جوز وشرائح صنوبر صغيرة، في طبق زجاجي عميق له "
    "غطاء زجاجي مفتوح، والطبق موضوع على أرضية من الباركيه.",
    "Moroccan": "تظهر في الصورة طاسة زجاجية صغيرة مغطاة بالسيلوفان من الأسفل، فيها حلوى داكنة مزينة "
    "بجوز الهند والفستق وحبة جوز في الوسط.",
}
TEAM_QUESTIONS = {  # the real questions, by the dialect they read as
    "Jordanian": [QUESTIONS[3], QUESTIONS[8]],
    "Emirati": [QUESTIONS[2], QUESTIONS[4], QUESTIONS[7]],
    "Egyptian": [QUESTIONS[0]],
    "Moroccan": [QUESTIONS[1], QUESTIONS[9]],
}
ANSWERS = {
    "Jordanian": ["لا، ما في اشي على النار، الصحن محطوط على الأرض.", "<Cannot tell from the picture>"],
    "Emirati": ["ما في طراد في الصورة، بس طاسة حلوى.", "ما في حرمة في الصورة.", "ما في يهال في الصورة."],
    "Egyptian": ["مفيش ناس على السطح، دي صورة طبق حلويات."],
    "Moroccan": ["ما كاين حتى شي واحد فالتصويرة.", "ما كاين لا رجال لا عيالات، غير طاسة ديال الحلوى."],
}


def jeem_records(images_dir: Path) -> list[dict[str, Any]]:
    """8 records: the shared image annotated by all four teams (no shared flag: inferred), one own image per team."""
    images_dir.mkdir(parents=True, exist_ok=True)
    records = []
    for image_id, pooled in (("omani-halwa", True), ("own", False)):
        for dialect, caption in CAPTIONS.items():
            name = image_id if pooled else f"{COUNTRY[dialect]}-{image_id}"
            path = images_dir / f"{name}.png"
            path.write_bytes(image_bytes(make_image(name)))
            record: dict[str, Any] = {
                "image_id": name,
                "country": dialect,  # the adjective: the builder maps it to the country
                "image": f"{images_dir.name}/{path.name}",
                "caption_dialect": caption,
                "caption_msa": MSA_CAPTIONS[dialect],
                "questions": TEAM_QUESTIONS[dialect],
                "answers": ANSWERS[dialect],
            }
            if pooled:
                record["image_origin_country"] = "UAE"  # "sourced from the Emirati set" (Figure 8)
            records.append(record)
    return records


def write_jeem_jsonl(folder: Path) -> Path:
    """The records as a local-layout ``.jsonl`` next to their ``images/`` folder."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "jeem.jsonl"
    lines = [json.dumps(r, ensure_ascii=False) for r in jeem_records(folder / "images")]
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return path


def build_jeem_hub_dir(folder: Path) -> Path:
    from dataset_builders.jeem import build

    out = folder / "jeem"
    build(out, write_jeem_jsonl(folder / "source"))
    return out


# --- a scripted judge: JEEM's criteria from the text judged, DCScore's stages from dcscore_fixtures ------

CRITERIA = ("Consistency", "Relevance", "Fluency", "Dialect Authenticity")


def criterion_scores(user_text: str) -> dict[str, int]:
    """The scripted judge's scores for a JEEM prompt: 1-5 from the SHA-256 of the generated text, per criterion."""
    import hashlib

    generated = user_text.split("\n\nGenerated ", 1)[1].split(": ", 1)[1].split("\n\nOutput Format", 1)[0]
    digest = hashlib.sha256(generated.encode("utf-8")).digest()
    asked = [c for c in CRITERIA if f"\n{c}: X/5" in user_text]
    return {c: 1 + digest[i] % 5 for i, c in enumerate(asked)}


def jeem_script(stage: str, user_text: str, request: dict[str, Any]) -> str | None:
    if user_text.startswith("You are an expert evaluator assessing the quality of an"):
        return "\n\n".join(f"{c}: {s}/5" for c, s in criterion_scores(user_text).items())
    from dcscore_fixtures import hand_script

    return hand_script(stage, user_text, request)
