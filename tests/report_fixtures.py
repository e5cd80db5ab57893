"""Two fake model runs, one in lm-eval's output layout and one in lighteval's, over all five benchmarks.

The records carry the document fields our tasks log (country spellings as each release has them:
ArabCulture's ``KSA``, GIMMICK's ``Syrian Arab Republic``, JEEM's ``emirates``), and per-item scores
drawn from a seeded generator; `expected_*` recompute what the report must print from the same items,
without the report's code.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

STAMP = {"lm-eval": "2026-11-20T10-00-00.000001", "lighteval": "2026-11-21T11-00-00.000002"}

# (benchmark's task, country as the release spells it, canonical name, number of items)
ARABCULTURE = [("egypt", "Egypt", "Egypt", 8), ("ksa", "KSA", "Saudi Arabia", 7), ("yemen", "Yemen", "Yemen", 3)]
PEARL_COUNTRIES = [("Egypt", 6), ("Saudi Arabia", 5), ("Jordan", 2)]
JEEM = [("jordanian", "jordan", "Jordan", 6), ("emirati", "emirates", "United Arab Emirates", 6)]
GIMMICK = [(["Egypt", "France"], 4), (["Syrian Arab Republic"], 5), (["Japan"], 3)]
ARB_DOMAINS = [("ocr", 4), ("med", 3)]
TOPICS = ("Food", "Wedding", "Art")
ARB_ATTRIBUTES = ("faithfulness_step", "hallucination", "missing_step")  # three of the step judge's ten
GIMMICK_MODALITIES = ("image", "text", "image_text")


@dataclass
class Item:
    task: str  # our task name (lm-eval's leaf)
    doc: dict[str, Any]
    scores: dict[str, Any]  # metric -> value as the harness logs it (a number, or {"score": ...})


@dataclass
class FakeRun:
    model: str
    harness: str
    items: list[Item] = field(default_factory=list)
    results: dict[str, dict[str, float]] = field(default_factory=dict)  # task -> metric -> value


def _generative(value: float) -> dict[str, Any]:
    return {"score": value, "regions": []}


def _arabculture_doc(key: str, spelling: str, i: int) -> dict[str, Any]:
    return {
        "id": f"{key}-{i}",
        "country": spelling,
        "region": "Gulf" if key != "egypt" else "Nile Valley",
        "topic": TOPICS[i % len(TOPICS)],
        "country_specific": None if i == 5 else i % 2 == 0,  # one null flag per larger country
    }


def make_run(model: str, harness: str, seed: int, gimmick_modalities: tuple[str, ...] = GIMMICK_MODALITIES) -> FakeRun:
    """`gimmick_modalities`: the COQA_R input settings the model ran (a text-only model: ``("text",)``)."""
    rng = random.Random(seed)
    more = random.Random(seed + 1000)  # draws added later, so the first generator's draws stay as they were
    run = FakeRun(model, harness)
    for key, spelling, _, n in ARABCULTURE:
        for i in range(n):
            doc = _arabculture_doc(key, spelling, i)
            run.items.append(Item(f"arabculture_mcq_en_none_{key}", doc, {"acc": float(rng.random() < 0.6)}))
    for country, n in PEARL_COUNTRIES:
        for i in range(n):
            doc = {"id": f"p-{country}-{i}", "country": country, "question_type": "MCQ", "category": "Foods"}
            run.items.append(Item("pearl_closed", doc, {"acc": _generative(100.0 * (rng.random() < 0.7))}))
            open_doc = {**doc, "question_type": "Explanation"}
            run.items.append(
                Item(
                    "pearl_open",
                    open_doc,
                    {
                        "overall": _generative(rng.choice([2.0, 3.4, 4.2])),
                        "cas": _generative(100.0 * (rng.random() < 0.5)),
                    },
                )
            )
    for key, spelling, _, n in JEEM:
        for i in range(n):
            doc = {"id": f"j-{key}-{i}", "country": spelling}
            run.items.append(
                Item(f"jeem_caption_{key}", doc, {"bertscore": _generative(round(70 + 20 * rng.random(), 3))})
            )
    for countries, n in GIMMICK:
        for i in range(n):
            doc = {"id": f"g-{countries[0]}-{i}", "countries": countries, "region_codes": ["A"]}
            run.items.append(
                Item("gimmick_civqa_none", doc, {"relaxed_acc": _generative(100.0 * (rng.random() < 0.4))})
            )
    for domain, n in ARB_DOMAINS:
        for i in range(n):
            doc = {"id": f"a-{domain}-{i}", "domain": domain}
            attributes = {f"steps_{a}": _generative(float(more.randint(1, 10))) for a in ARB_ATTRIBUTES}
            run.items.append(
                Item(
                    "arb",
                    doc,
                    {
                        "final_answer": _generative(100.0 * (rng.random() < 0.5)),
                        "reasoning_steps": _generative(round(100 * rng.random(), 2)),
                        **attributes,
                    },
                )
            )
    for modality in gimmick_modalities:
        for i in range(4):
            doc = {"id": f"coqa-{i}", "region_codes": ["A"]}
            score = _generative(100.0 * (more.random() < 0.7))
            run.items.append(Item(f"gimmick_coqa_r_{modality}", doc, {"relaxed_acc": score}))
    # aggregated results as the harness prints them: means of the items (acc in [0, 1], the rest x100)
    for task in {item.task for item in run.items}:
        values = [item.scores for item in run.items if item.task == task]
        run.results[task] = {m: _mean([_number(v[m]) for v in values]) for m in values[0]}
    mcq = [i.scores["acc"] for i in run.items if i.task.startswith("arabculture_mcq")]
    run.results["arabculture_mcq"] = {"acc": _mean(mcq), "acc_norm": _mean(mcq)}  # lm-eval's alias group
    run.results["arabculture_completion_en_none"] = {"acc": 0.25 + seed / 100}
    run.results["arb"].update({"bleu": 6.35 + seed, "rouge1": 71.13})
    for domain, _ in ARB_DOMAINS:  # the harness's per-domain mean of every metric: steps_<attribute>_<domain>
        items = [i for i in run.items if i.task == "arb" and i.doc["domain"] == domain]
        run.results["arb"].update({f"steps_{a}_{domain}": _mean([_number(i.scores[f"steps_{a}"]) for i in items])
                                   for a in ARB_ATTRIBUTES})  # fmt: skip
    return run


def add_arabic_variant(run: FakeRun, location: str, seed: int) -> FakeRun:
    """The run's items of ``arabculture_mcq_ar_<location>`` (lm-eval's per-country leaves) and its result."""
    rng = random.Random(seed)
    task = f"arabculture_mcq_ar_{location}"
    for key, spelling, _, n in ARABCULTURE:
        for i in range(n):
            doc = _arabculture_doc(key, spelling, i)
            run.items.append(Item(f"{task}_{key}", doc, {"acc": float(rng.random() < 0.5)}))
    run.results[task] = {"acc": _mean([i.scores["acc"] for i in run.items if i.task.startswith(f"{task}_")])}
    return run


def _number(value: Any) -> float:
    return float(value["score"] if isinstance(value, dict) else value)


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def write_lm_eval(run: FakeRun, out: Path, stamp: str = STAMP["lm-eval"], config: dict | None = None) -> Path:
    """``<out>/<model>/results_<ts>.json`` and a ``samples_<task>_<ts>.jsonl`` per leaf task, as lm-eval writes
    (`config`: more of lm-eval's ``config`` entries; a second stamp adds an entry's files beside the first's)."""
    folder = out / run.model.replace("/", "__")
    folder.mkdir(parents=True, exist_ok=True)
    results = {}
    for task, metrics in run.results.items():
        if task.startswith("arabculture_mcq_en_none_"):
            continue  # the alias group stands for them
        results[task] = {
            "alias": task,
            **{f"{m},none": v for m, v in metrics.items()},
            **{f"{m}_stderr,none": 0.01 for m in metrics},
        }
    leaves = sorted({item.task for item in run.items})
    data = {
        "results": results,
        "group_subtasks": {},
        "configs": {leaf: {} for leaf in leaves},
        "versions": {},
        "config": {"model": "hf", "model_args": f"pretrained={run.model}", "limit": None, **(config or {})},
        "model_name": run.model,
        "lm_eval_version": "0.4.13",
    }
    (folder / f"results_{stamp}.json").write_text(json.dumps(data), encoding="utf-8")
    for leaf in leaves:
        lines = [
            json.dumps(
                {
                    "doc_id": i,
                    "doc": item.doc,
                    "target": "x",
                    "arguments": {},
                    "resps": [["y"]],
                    "filtered_resps": ["y"],
                    **item.scores,
                },
                ensure_ascii=False,
            )
            for i, item in enumerate(it for it in run.items if it.task == leaf)
        ]
        (folder / f"samples_{leaf}_{stamp}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def write_lighteval(run: FakeRun, out: Path) -> Path:
    """``results/<model>/results_<ts>.json`` and ``details/<model>/<ts>/details_<task>|0_<ts>.parquet``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    stamp = STAMP["lighteval"]
    results_dir, details_dir = out / "results" / run.model, out / "details" / run.model / stamp
    results_dir.mkdir(parents=True)
    details_dir.mkdir(parents=True)
    # lighteval runs ArabCulture over the "all" config as one task, named as given (the alias)
    rename = {f"arabculture_mcq_en_none_{key}": "arabculture_mcq" for key, *_ in ARABCULTURE}
    results = {f"{t}|0": {**m, **{f"{k}_stderr": 0.01 for k in m}} for t, m in run.results.items() if t not in rename}
    results["all"] = {"acc": 0.5}
    data = {
        "config_general": {"model_name": run.model, "model_config": {"api_key": "sk-SECRET-IN-CONFIG"}},
        "results": results,
        "versions": {},
        "config_tasks": {},
        "summary_tasks": {},
        "summary_general": {},
    }
    (results_dir / f"results_{stamp}.json").write_text(json.dumps(data), encoding="utf-8")
    for task in sorted({rename.get(item.task, item.task) for item in run.items}):
        rows = [
            {"doc": {"query": "q", "specific": item.doc}, "metric": item.scores, "model_response": {"text": ["y"]}}
            for item in run.items
            if rename.get(item.task, item.task) == task
        ]
        pq.write_table(pa.Table.from_pylist(rows), details_dir / f"details_{task}|0_{stamp}.parquet")  # structs
    return out


def expected_by_country(run: FakeRun, task_prefix: str, metric: str, scale: float = 1.0) -> dict[str, float]:
    """Mean per-item score by the document's country field, computed straight from the items."""
    groups: dict[str, list[float]] = {}
    for item in run.items:
        if item.task.startswith(task_prefix):
            groups.setdefault(item.doc["country"], []).append(_number(item.scores[metric]) * scale)
    return {country: _mean(values) for country, values in groups.items()}
