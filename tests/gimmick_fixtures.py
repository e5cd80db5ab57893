"""Small GIMMICK sources in the authors' formats, and a Hub folder built from them.

For builder tests and for harness integration tests that need a local GIMMICK dataset:

    from gimmick_fixtures import build_gimmick_hub_dir   # tests/ is on sys.path under pytest, as for helpers
    hub_dir = build_gimmick_hub_dir(tmp_path)          # configs civqa, cvvqa, coqa_c, coqa_r, ckqa

Columns are the ones the authors' loaders read (`/work/shared/real/gimmick/schema_from_authors_code.json`):
sivqa ``question, answer, question_id, ich_image, countries, regions``; vvqa ``question, answer,
question_id, video_fn, video_center_frame_sim, countries, regions``; coqa ``sample_uuid, title,
description, countries, regions, images, stacked_images``. Texts, countries and regions are the
paper's examples (§B.1 CIVQA, §B.3 CVVQA, §D.2 COQA_C; both Sub-Saharan spellings included), except
where marked "constructed": the 4-region Nowruz CEF (dropped from COQA_R) and the two-Korea CEF are
real UNESCO ICH elements whose description we wrote for this fixture. ``image_copyright`` (sivqa)
and ``url`` (coqa) are illustrative extra columns, not confirmed columns of the release.
Images and clips are synthetic (`arab_mm_tasks.testing.synthetic`), made when the sources are written.

Forms: sivqa is a parquet file, vvqa a jsonl whose ``video_fn`` are absolute paths from another
machine (as the authors' loading script leaves them) plus a folder of clips, coqa a
``save_to_disk`` folder.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import datasets
from datasets import Features, Image, List, Value

from arab_mm_tasks.testing.synthetic import image_bytes, make_image, write_clip

AUTHORS_CACHE = "/home/gimmick/.cache/huggingface/datasets/downloads/extracted/5be1d2/gimmick_vvqa/clips"
A, AP, E = "Arab States", "Asian and Pacific States", "Eastern European States"
LAC, W = "Latin-American and Caribbean States", "Western European and North American States"
SA_CODE_SPELLING, SA_EXAMPLE_SPELLING = "Subsaharian African States", "Sub-Saharan African States"


def _photo(seed: str, size: tuple[int, int] = (48, 32)) -> bytes:
    return image_bytes(make_image(seed, size), format="JPEG")


# ---------------------------------------------------------------------------- CIVQA (floschne/gimmick-sivqa)

_CIVQA = [  # (question_id, question, answer, countries, regions, image_copyright); paper §B.1
    (1001, "What title is given to the woman wearing the sash in the image?", "Cherry Queen",
     ["Morocco"], [A], "Conseil municipal de Sefrou, 2010"),
    (1002, "What traditional dance are the performers engaging in, as seen in the image?", "Saman dance",
     ["Indonesia"], [AP], "2010 by Centre for Research and Development of Culture, Indonesia"),
    (1003, "What is the name of the musical instrument observed by the man in the image?", "Tar",
     ["Azerbaijan"], [E], "2010 by M.Rahimov/Ministry of Culture and Tourism"),
    (1004, "What traditional tool from the Guaraní culture is depicted in the image for drinking Terere?", "Bombilla",
     ["Paraguay"], [LAC], "Py, 2019"),
    (1005, "What festival are the people in the image celebrating?", "Fichée-Chambalaalla",
     ["Ethiopia"], [SA_EXAMPLE_SPELLING],
     "The Authority for Research and Conservation of Cultural Heritage (ARCCH), 2013"),
    (1006, "What specific region's attire is represented by the figures in the image?", "Alentejo",
     ["Portugal"], [W], "Município de Estremoz, 2015"),
]  # fmt: skip


def sivqa_records() -> list[dict[str, Any]]:
    """CIVQA rows as `datasets` gives them (``ich_image`` as ``{"bytes", "path"}``)."""
    return [
        {
            "question": question,
            "answer": answer,
            "question_id": qid,
            "ich_image": {"bytes": _photo(f"civqa/{qid}"), "path": f"ich_{qid}.jpg"},
            "countries": countries,
            "regions": regions,
            "image_copyright": credit,
        }
        for qid, question, answer, countries, regions, credit in _CIVQA
    ]


SIVQA_FEATURES = Features(
    {
        "question": Value("string"),
        "answer": Value("string"),
        "question_id": Value("int64"),
        "ich_image": Image(),
        "countries": List(Value("string")),
        "regions": List(Value("string")),
        "image_copyright": Value("string"),
    }
)


def write_sivqa(path: Path, records: list[dict[str, Any]] | None = None) -> Path:
    datasets.Dataset.from_list(records or sivqa_records(), features=SIVQA_FEATURES).to_parquet(path)
    return path


# ---------------------------------------------------------------------------- CVVQA (floschne/gimmick-vvqa)

TRANSHUMANCE = [
    "Albania",
    "Andorra",
    "Austria",
    "Croatia",
    "Spain",
    "France",
    "Greece",
    "Italy",
    "Luxembourg",
    "Romania",
]
_CVVQA = [  # (question_id, question, answer, countries, regions, similarity, clip seconds); paper §B.3
    (2001, "What event are the women in the video participating in?", "Moussem of Tan-Tan",
     ["Morocco"], [A], 0.83, 1.0),
    (2002, "What traditional Japanese performance art is depicted by the performers in the video?", "Gagaku",
     ["Japan"], [AP], 0.5, 2.0),  # exactly 0.5: out by the paper's rule, in by the code's
    (2003, "What instrument is the individual playing in the video?", "Tar", ["Azerbaijan"], [E], 0.71, 1.0),
    (2004, "In which environment do the cultural practices depicted in the video typically occur?", "Llanos",
     ["Colombia", "Venezuela (Bolivarian Republic of)"], [LAC], 0.42, 1.5),  # below the threshold
    (2005, "What type of theatre is depicted in the video, known for using elaborate costumes and performances?",
     "Kwagh-Hir", ["Nigeria"], [SA_EXAMPLE_SPELLING], 0.64, 1.0),
    (2006, "What traditional practice is depicted with the herders and sheep in the video?", "Transhumance",
     TRANSHUMANCE, [W, E], 0.57, 10.0),  # the release's clip length: 10 frames at 1 fps
]  # fmt: skip
CLIP_SECONDS = {qid: seconds for qid, *_, seconds in _CVVQA}


def vvqa_records() -> list[dict[str, Any]]:
    """CVVQA rows as the authors' loading script leaves them: ``video_fn`` is a path on *their* disk."""
    return [
        {
            "question": question,
            "answer": answer,
            "question_id": qid,
            "video_fn": f"{AUTHORS_CACHE}/{qid}.mp4",
            "video_center_frame_sim": similarity,
            "countries": countries,
            "regions": regions,
        }
        for qid, question, answer, countries, regions, similarity, _ in _CVVQA
    ]


def write_clips(videos_dir: Path) -> Path:
    """One tiny H.264 clip per CVVQA question (1-10 s), named like the release's ``video_fn``."""
    videos_dir.mkdir(parents=True, exist_ok=True)
    for qid, seconds in CLIP_SECONDS.items():
        write_clip(videos_dir / f"{qid}.mp4", seconds=seconds, fps=10, size=(64, 48), detail=False)
    return videos_dir


def write_vvqa(path: Path, records: list[dict[str, Any]] | None = None) -> Path:
    lines = [json.dumps(r, ensure_ascii=False) for r in (records or vvqa_records())]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# ---------------------------------------------------------------------------- COQA / CKQA (floschne/gimmick-coqa)

NOWRUZ = [
    "Afghanistan", "Azerbaijan", "India", "Iran (Islamic Republic of)", "Iraq", "Kazakhstan", "Kyrgyzstan",
    "Pakistan", "Tajikistan", "Turkmenistan", "Türkiye", "Uzbekistan",
]  # fmt: skip
ENGRAVING = [
    "Algeria",
    "Saudi Arabia",
    "Egypt",
    "Iraq",
    "Morocco",
    "Mauritania",
    "Palestine",
    "Sudan",
    "Tunisia",
    "Yemen",
]
_DESCRIPTIONS = {  # the paper prints these (§A.2, §B); the others are short texts written for the fixture
    "Congolese rumba": "Congolese rumba is a musical genre and dance used in formal and informal spaces for "
    "celebration and mourning.",
    "Colombian-Venezuelan llano work songs": "Colombian-Venezuelan llano work songs are a practice of vocal "
    "communication consisting of tunes sung individually, a capella, on the themes of herding and milking.",
    "Fichée-Chambalaalla, New Year festival of the Sidama people": "Fichée-Chambalaalla is a New Year festival "
    "celebrated among the Sidama people.",
    "Transhumance, the seasonal droving of livestock": "Transhumance refers to the seasonal movement of people with "
    "their livestock between geographical or climatic regions.",
}
_COQA = [  # (title, countries, regions, number of images); paper §D.2 unless marked
    ("Arts, skills and practices associated with engraving on metals (gold, silver and copper)", ENGRAVING, [A], 3),
    ("Ak-kalpak craftsmanship, traditional knowledge and skills in making and wearing Kyrgyz men's headwear",
     ["Kyrgyzstan"], [AP], 2),
    ("Sodai straw garden making in Lithuania", ["Lithuania"], [E], 2),
    ("Safeguarding strategy of traditional crafts for peace building", ["Colombia"], [LAC], 1),
    ("Congolese rumba", ["Congo", "Democratic Republic of the Congo"], [SA_CODE_SPELLING], 3),
    ("Irrigators' tribunals of the Spanish Mediterranean coast: the Council of Wise Men of the plain of Murcia and "
     "the Water Tribunal of the plain of Valencia", ["Spain"], [W], 2),
    ("Transhumance, the seasonal droving of livestock", TRANSHUMANCE, [W, E], 2),  # §B.3: two regions
    ("Fichée-Chambalaalla, New Year festival of the Sidama people", ["Ethiopia"], [SA_EXAMPLE_SPELLING], 1),
    ("Colombian-Venezuelan llano work songs", ["Colombia", "Venezuela (Bolivarian Republic of)"], [LAC], 2),
    # constructed: 4 regions (dropped from COQA_R) and UNESCO official names
    ("Nawrouz, Novruz, Nowrouz, Nowrouz, Nawrouz, Nauryz, Nooruz, Nowruz, Navruz, Nevruz, Nowruz, Navruz",
     NOWRUZ, [AP, E, A, W], 2),
    # constructed: both Koreas, which Table 4 lists apart
    ("Traditional Korean wrestling (Ssirum/Ssireum)", ["Democratic People's Republic of Korea", "Republic of Korea"],
     [AP], 1),
]  # fmt: skip


def coqa_uuid(title: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"https://ich.unesco.org/en/{title}"))


def coqa_records() -> list[dict[str, Any]]:
    """One row per CEF, as the authors' coqa dataset holds them (``images`` a list of images)."""
    records = []
    for title, countries, regions, n_images in _COQA:
        key = coqa_uuid(title)
        records.append(
            {
                "sample_uuid": key,
                "title": title,
                "description": _DESCRIPTIONS.get(title, f"{title} is an element of the intangible cultural heritage."),
                "countries": countries,
                "regions": regions,
                "images": [{"bytes": _photo(f"{key}/{k}"), "path": f"{key}_{k}.jpg"} for k in range(n_images)],
                "stacked_images": {"bytes": image_bytes(make_image(f"{key}/grid", (96, 32))), "path": f"{key}.png"},
                "url": f"https://ich.unesco.org/en/RL/{key[:8]}",
            }
        )
    return records


COQA_FEATURES = Features(
    {
        "sample_uuid": Value("string"),
        "title": Value("string"),
        "description": Value("string"),
        "countries": List(Value("string")),
        "regions": List(Value("string")),
        "images": List(Image()),
        "stacked_images": Image(),
        "url": Value("string"),
    }
)


def write_coqa(path: Path, records: list[dict[str, Any]] | None = None) -> Path:
    datasets.Dataset.from_list(records or coqa_records(), features=COQA_FEATURES).save_to_disk(str(path))
    return path


# ---------------------------------------------------------------------------- all together


def write_gimmick_sources(directory: str | Path) -> dict[str, Path]:
    """Write the three sources under `directory`: keys sivqa, vvqa, videos_dir, coqa (build kwargs)."""
    root = Path(directory)
    root.mkdir(parents=True, exist_ok=True)
    return {
        "sivqa": write_sivqa(root / "gimmick-sivqa.parquet"),
        "vvqa": write_vvqa(root / "gimmick-vvqa.jsonl"),
        "videos_dir": write_clips(root / "clips"),
        "coqa": write_coqa(root / "gimmick-coqa"),
    }


def build_gimmick_hub_dir(directory: str | Path, **build_kwargs: Any) -> Path:
    """Sources under ``directory/sources``, built into ``directory/gimmick`` (a local Hub-layout folder)."""
    from dataset_builders.gimmick.builder import build

    root = Path(directory)
    out = root / "gimmick"
    build(out, **write_gimmick_sources(root / "sources"), **build_kwargs)
    return out
