"""`arab-mm-tasks demo`: evaluate a model on the bundled ArabCulture sample through lm-eval.

The sample (`arab_mm_tasks/data/arabculture_sample.jsonl`, authors' release format) is built
into a Hub-layout folder with the same builder that makes the Hub dataset, and lm-eval reads
it through the same loading code it uses for the Hub (``--metadata arabculture_path``).

Model: the one you name, else a small real model from the Hub when the Hub is reachable,
else a tiny random-weight model built locally (chance-level scores; it proves the wiring).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from arab_mm_tasks.core.sources import user_cache_dir
from arab_mm_tasks.data import SAMPLE_PATH, sample_records

DEFAULT_HUB_MODEL = "Qwen/Qwen2.5-0.5B-Instruct"  # small, multilingual, reads Arabic
DEFAULT_TASKS = ("arabculture_mcq",)


@dataclass(frozen=True)
class ModelChoice:
    pretrained: str
    why: str


def choose_model(model: str | None, work_dir: Path) -> ModelChoice:
    """The named model, else the default Hub model if the Hub answers, else a locally built tiny model."""
    if model:
        return ModelChoice(model, "given with --model")
    try:
        from huggingface_hub import snapshot_download

        path = snapshot_download(DEFAULT_HUB_MODEL, allow_patterns=["*.json", "*.safetensors", "*.txt", "*.jinja"])
        return ModelChoice(path, f"{DEFAULT_HUB_MODEL} from the Hub")
    except Exception as err:  # offline, no DNS, HF_HUB_OFFLINE=1, ...: any failure means "not reachable"
        # the error's whole first line: a cut one reads as a sentence that stops midway
        reason = f"{type(err).__name__}: {str(err).strip().splitlines()[0]}" if str(err).strip() else type(err).__name__
    return ModelChoice(
        str(build_demo_model(work_dir / "tiny-lm")),
        f"tiny random-weight model built locally (Hub unreachable: {reason})",
    )


def build_demo_model(out_dir: Path) -> Path:
    from arab_mm_tasks.testing.tiny_model import arabculture_corpus, build_tiny_lm

    if (out_dir / "model.safetensors").exists():
        return out_dir
    return build_tiny_lm(out_dir, arabculture_corpus(sample_records()))


def build_sample_dataset(out_dir: Path) -> Path:
    from dataset_builders.arabculture.builder import build

    build(str(SAMPLE_PATH), out_dir)
    return out_dir


def lm_eval_task_manager(metadata: dict):
    """A TaskManager that indexes our YAML tree only: the same task files `lm_eval --tasks` finds, without
    reading lm-eval's own ~15,000 task files first (half a minute on a 2-core machine)."""
    from lm_eval.tasks import TaskManager

    from arab_mm_tasks.harness.lm_eval_yaml import TASKS_DIR

    return TaskManager(include_path=str(TASKS_DIR), include_defaults=False, metadata=metadata)


def run_demo(
    model: str | None = None,
    tasks: tuple[str, ...] = DEFAULT_TASKS,
    limit: int | None = None,
    work_dir: Path | None = None,
    device: str = "cpu",
    batch_size: int = 8,
) -> dict:
    """Build the sample, pick a model, run lm-eval, print its per-country / per-region tables."""
    from lm_eval import simple_evaluate
    from lm_eval.utils import make_table

    work_dir = work_dir or user_cache_dir() / "demo"
    data_dir = build_sample_dataset(work_dir / "arabculture")
    choice = choose_model(model, work_dir)
    print(f"Model: {choice.pretrained}\n  ({choice.why})")
    print(f"Data:  bundled ArabCulture sample -> {data_dir}")
    metadata = {"arabculture_path": str(data_dir)}
    print(
        "Same run from the command line:\n  lm_eval --model hf --model_args pretrained="
        f'{choice.pretrained} --tasks {",".join(tasks)} --metadata \'{{"arabculture_path": "{data_dir}"}}\''
    )
    results = simple_evaluate(
        model="hf",
        model_args={"pretrained": choice.pretrained},
        tasks=list(tasks),
        task_manager=lm_eval_task_manager(metadata),
        metadata=metadata,
        device=device,
        batch_size=batch_size,
        limit=limit,
    )
    print(make_table(results))
    if results.get("groups"):
        print(make_table(results, "groups"))
    return results
