"""`arab-mm-tasks report` at full benchmark size: wall time and peak memory as models and items grow.

Writes fake runs in lm-eval's layout with the papers' item counts (ArabCulture 3,482 over 13
countries, GIMMICK CIVQA 2,233, Pearl 4,832 closed + 1,469 open over 19 countries, JEEM 4 x 550
dialect captions, ARB 1,356), per-item scores from a seeded generator, then runs the report in a
child process per size under ``/usr/bin/time -v`` and prints wall seconds and peak RSS. The baseline
is the same report on a tenth of the items (``--scale 0.1``): a ratio near the item ratio means time
grows linearly, and peak memory should grow far less (samples are read one task at a time).

    python benchmarks/report_scale.py --models 1 3 10 --scale 0.1 1
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ARABCULTURE = {"egypt": "Egypt", "ksa": "KSA", "uae": "UAE", "yemen": "Yemen", "jordan": "Jordan",
               "lebanon": "Lebanon", "palestine": "Palestine", "syria": "Syria", "algeria": "Algeria",
               "libya": "Libya", "morocco": "Morocco", "tunisia": "Tunisia", "sudan": "Sudan"}  # fmt: skip
PEARL = ["Algeria", "Bahrain", "Egypt", "Iraq", "Jordan", "Kuwait", "Lebanon", "Libya", "Mauritania", "Morocco",
         "Oman", "Palestine", "Qatar", "Saudi Arabia", "Sudan", "Syria", "Tunisia", "UAE", "Yemen"]  # fmt: skip
JEEM = {"jordanian": "jordan", "emirati": "emirates", "egyptian": "egypt", "moroccan": "morocco"}
GIMMICK = [["Egypt"], ["Morocco", "Algeria"], ["Saudi Arabia"], ["France"], ["Japan"], ["Peru"], ["Oman"]]
TYPES = ["Explanation", "Cultural Interpretation", "Comparative Analysis", "Hypothesis Formation"]
DOMAINS = ["ocr", "med", "cdt", "hist", "rs", "agro", "vr", "ml", "soc_cult", "cvp", "sci_r"]


def write_run(out: Path, model: str, scale: float, seed: int) -> None:
    rng = random.Random(seed)
    skill = 0.3 + 0.6 * rng.random()
    folder = out / model.replace("/", "__")
    folder.mkdir(parents=True)
    stamp = "2026-11-24T00-00-00.000000"
    samples: dict[str, list[dict]] = {}

    def add(task: str, doc: dict, **scores: object) -> None:
        samples.setdefault(task, []).append({"doc_id": len(samples.get(task, [])), "doc": doc, **scores})

    def hit(bias: float = 0.0) -> float:
        return float(rng.random() < min(0.95, max(0.05, skill + bias)))

    for key, country in ARABCULTURE.items():
        bias = rng.uniform(-0.2, 0.2)
        for i in range(round(268 * scale)):
            add(f"arabculture_mcq_en_none_{key}", {"country": country, "region": "R", "topic": "Food",
                                                   "country_specific": i % 3 == 0}, acc=hit(bias))  # fmt: skip
    for i in range(round(2233 * scale)):
        add("gimmick_civqa_none", {"countries": GIMMICK[i % len(GIMMICK)], "region_codes": ["A"]},
            relaxed_acc={"score": 100 * hit(-0.3), "regions": ["A"]})  # fmt: skip
    for i in range(round(4832 * scale)):
        country = PEARL[i % len(PEARL)]
        add("pearl_closed", {"country": country, "question_type": "MCQ", "category": "Foods"},
            acc={"score": 100 * hit(0.1 if country in ("Egypt", "Jordan") else -0.1)})  # fmt: skip
    for i in range(round(1469 * scale)):
        doc = {"country": PEARL[i % len(PEARL)], "question_type": TYPES[i % len(TYPES)], "category": "Foods"}
        add("pearl_open", doc, overall={"score": 1 + 4 * rng.random() * skill}, cas={"score": 100 * hit()})
    for key, country in JEEM.items():
        for _ in range(round(550 * scale)):
            add(f"jeem_caption_{key}", {"country": country}, bertscore={"score": 75 + 15 * rng.random() * skill})
    for i in range(round(1356 * scale)):
        add("arb", {"domain": DOMAINS[i % len(DOMAINS)]}, final_answer={"score": 100 * hit(-0.2)},
            reasoning_steps={"score": 100 * rng.random() * skill})  # fmt: skip
    results = {task: {"alias": task} for task in samples}
    config = {"model": "hf", "model_args": f"pretrained={model}", "limit": None}
    (folder / f"results_{stamp}.json").write_text(json.dumps({"results": results, "config": config,
                                                              "model_name": model, "configs": {}}))  # fmt: skip
    for task, rows in samples.items():
        (folder / f"samples_{task}_{stamp}.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")


def measure(runs: Path, out: Path) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of `arab-mm-tasks report` in a child process."""
    script = str(Path(sys.executable).parent / "arab-mm-tasks")  # the installed command
    command = ["/usr/bin/time", "-v", script, "report", str(runs), "--out", str(out)]
    started = time.monotonic()
    proc = subprocess.run(command, capture_output=True, text=True, check=True)
    wall = time.monotonic() - started
    peak_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr).group(1))
    return wall, peak_kb / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, nargs="+", default=[1, 3, 10])
    parser.add_argument("--scale", type=float, nargs="+", default=[0.1, 1.0])
    parser.add_argument("--keep", help="keep the runs and reports under this folder (for a screenshot)")
    args = parser.parse_args()
    root = Path(args.keep or tempfile.mkdtemp(prefix="report_scale_"))
    print("| models | items per model | wall s | peak RSS MB |\n|---|---|---|---|")
    for scale in args.scale:
        for models in args.models:
            runs = root / f"runs_{models}x{scale}"
            if not runs.exists():
                for m in range(models):
                    write_run(runs, f"org/model-{m + 1}", scale, seed=m)
            items = sum(len(f.read_text().splitlines()) for f in runs.glob("*/samples_*.jsonl"))
            wall, peak = measure(runs, root / f"report_{models}x{scale}")
            print(f"| {models} | {items // models:,} | {wall:.1f} | {peak:.0f} |", flush=True)


if __name__ == "__main__":
    main()
