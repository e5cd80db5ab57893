"""Per-document cost of our `arabculture_mcq` vs lm-eval's built-in `arab_culture`, same model and data.

Both tasks build byte-identical prompts (tests/harness/test_upstream_parity.py), so the model does the
same work; what differs is our task plumbing (dataset source hook, request columns added by
`process_docs`). Each round evaluates one country with each task in the same process,
alternating the order, and the median wall time per document is compared.

    python benchmarks/arabculture_overhead.py                  # tiny local model, offline
    python benchmarks/arabculture_overhead.py --model Qwen/Qwen2.5-0.5B --docs 265

Prints one JSON line: seconds per document for each task and the ratio ours / built-in.
Target: ratio <= 1.1.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

RAW_FIELDS = (
    "worker_id", "sample_id", "sub_topic", "first_statement", "options", "answer_key",
    "relevant_to_this_country", "relevant_to_other_countries", "should_discard", "country", "region",
)  # fmt: skip


def make_data(work: Path, n_docs: int) -> tuple[Path, Path]:
    """The bundled sample's records, repeated to `n_docs` Egypt documents, in both layouts."""
    import datasets

    from arab_mm_tasks.data import sample_records
    from dataset_builders.arabculture.builder import build

    records = sample_records()
    egypt = [dict(r, country="Egypt", region="Nile Valley") for r in records]
    egypt = [{k: egypt[i % len(egypt)][k] for k in RAW_FIELDS} for i in range(n_docs)]
    # The authors' layout, which lm-eval's built-in task reads (normally from MBZUAI/ArabCulture).
    # A unique folder name: datasets caches README-configured local folders by base name (docs/fidelity.md).
    authors = work / f"authors-{work.name}"
    (authors / "Egypt").mkdir(parents=True)
    datasets.Dataset.from_list(egypt).to_parquet(authors / "Egypt" / "test-00000-of-00001.parquet")
    (authors / "README.md").write_text(
        "---\nconfigs:\n- config_name: Egypt\n  data_files:\n  - split: test\n    path: Egypt/test-*\n---\n"
    )
    jsonl = work / "egypt.jsonl"
    jsonl.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in egypt), "utf-8")
    ours = work / "ours"
    build(str(jsonl), ours)
    return authors, ours


def evaluate(task_manager, task: str | dict, model) -> tuple[float, int]:
    from lm_eval import simple_evaluate

    start = time.perf_counter()
    results = simple_evaluate(model=model, tasks=[task], task_manager=task_manager, batch_size=8)
    elapsed = time.perf_counter() - start
    n = sum(v["effective"] for v in results["n-samples"].values())
    return elapsed, n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", help="any causal LM; default: the demo's tiny local model")
    parser.add_argument("--docs", type=int, default=200, help="Egypt documents per run")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    import lm_eval.tasks
    from lm_eval.models.huggingface import HFLM
    from lm_eval.tasks import TaskManager
    from lm_eval.tasks._yaml_loader import load_yaml

    from arab_mm_tasks.cli.demo import build_demo_model
    from arab_mm_tasks.harness.lm_eval_yaml import TASKS_DIR

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        authors, ours = make_data(work, args.docs)
        pretrained = args.model or str(build_demo_model(work / "tiny-lm"))
        model = HFLM(pretrained=pretrained, device="cpu", batch_size=8)  # loaded once, shared by both tasks
        manager = TaskManager(include_path=str(TASKS_DIR), metadata={"arabculture_path": str(ours)})
        # The built-in task's own config, pointed at the same records in the authors' layout.
        builtin = load_yaml(Path(lm_eval.tasks.__file__).parent / "arab_culture" / "arab_culture_egypt.yaml")
        builtin["dataset_path"] = str(authors)
        timings: dict[str, list[float]] = {"builtin": [], "ours": []}
        evaluate(manager, "arabculture_mcq_en_none_egypt", model)  # warm-up: imports, caches
        for round_ in range(args.rounds):
            order = [("builtin", builtin), ("ours", "arabculture_mcq_en_none_egypt")]
            for name, task in order if round_ % 2 == 0 else reversed(order):
                elapsed, n = evaluate(manager, task, model)
                assert n == args.docs, f"{name} evaluated {n} documents, expected {args.docs}"
                timings[name].append(elapsed / n)
    per_doc = {name: statistics.median(values) for name, values in timings.items()}
    print(json.dumps({
        "model": args.model or "tiny local Llama (2 layers)",
        "docs": args.docs,
        "rounds": args.rounds,
        "builtin_s_per_doc": round(per_doc["builtin"], 6),
        "ours_s_per_doc": round(per_doc["ours"], 6),
        "ratio_ours_over_builtin": round(per_doc["ours"] / per_doc["builtin"], 3),
    }))  # fmt: skip


if __name__ == "__main__":
    main()
