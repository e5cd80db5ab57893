"""lm-eval and lighteval build byte-identical prompts, choices and gold for every ArabCulture and GIMMICK variant
(lm-eval against lmms-eval, for every generative task of every benchmark: test_lmms_eval_adapter.py).

lm-eval side: the real `ConfigurableTask` built from our generated YAML (doc_to_text,
doc_to_choice, doc_to_target plus the target delimiter). lighteval side: the prompt function
of the `LightevalTaskConfig`, producing the `Doc` lighteval scores. Same documents, loaded
from the same Hub-layout folder by each harness's own loading path.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from arab_mm_tasks.core.registry import all_specs
from arab_mm_tasks.harness.lighteval_tasks import build_tasks_table
from arab_mm_tasks.harness.lm_eval_yaml import TASKS_DIR

ARABCULTURE = {name: spec for name, spec in all_specs().items() if spec.benchmark == "arabculture"}


@pytest.fixture(scope="module")
def lm_eval_manager(arabculture_hub_dir: Path):
    from lm_eval.tasks import TaskManager

    return TaskManager(
        include_path=str(TASKS_DIR), include_defaults=False, metadata={"arabculture_path": str(arabculture_hub_dir)}
    )


@pytest.fixture(scope="module")
def lighteval_configs(arabculture_hub_dir: Path) -> dict:
    return {c.name: c for c in build_tasks_table(paths={"arabculture": str(arabculture_hub_dir)})}


@pytest.mark.parametrize("name", sorted(ARABCULTURE))
def test_lm_eval_and_lighteval_agree(name, lm_eval_manager, lighteval_configs):
    import datasets

    spec = ARABCULTURE[name]
    config = lighteval_configs[name]
    # lighteval's own loading call for this task (the whole benchmark, `all` config)
    lighteval_rows = datasets.load_dataset(config.hf_repo, config.hf_subset, split=spec.split)
    lighteval_docs = {row["id"]: config.prompt_function(row, name) for row in lighteval_rows}

    seen = 0
    for subset in spec.subsets:
        (task,) = lm_eval_manager.load([spec.subset_task(subset)])["tasks"].values()
        for doc in task.test_docs():
            ours = lighteval_docs[doc["id"]]
            choices = task.doc_to_choice(doc)
            assert task.doc_to_text(doc) == ours.query
            assert [task.config.target_delimiter + c for c in choices] == ours.choices
            assert task.doc_to_target(doc) == ours.gold_index
            seen += 1
    assert seen == len(lighteval_docs) > 0  # every document of every country compared


GIMMICK = {name: spec for name, spec in all_specs().items() if spec.benchmark == "gimmick"}


@pytest.fixture(scope="module")
def gimmick_harnesses(gimmick_hub_dir: Path):
    from lm_eval.tasks import TaskManager

    manager = TaskManager(
        include_path=str(TASKS_DIR), include_defaults=False, metadata={"gimmick_path": str(gimmick_hub_dir)}
    )
    return manager, {c.name: c for c in build_tasks_table(paths={"gimmick": str(gimmick_hub_dir)})}


@pytest.mark.parametrize("name", sorted(GIMMICK))
def test_gimmick_lm_eval_and_lighteval_agree(name, gimmick_harnesses):
    """Same words (lighteval's without the placeholder lines), same images, same target, every built document."""
    import datasets

    from arab_mm_tasks.core.spec import without_image_placeholders

    manager, configs = gimmick_harnesses
    (task,) = manager.load([name])["tasks"].values()
    config = configs[name]
    rows = datasets.load_dataset(config.hf_repo, config.hf_subset, split="test")
    lighteval_docs = {row["id"]: config.prompt_function(row, name) for row in rows}
    docs = list(task.test_docs())
    assert len(docs) == len(lighteval_docs) > 0
    for doc in docs:
        ours = lighteval_docs[doc["id"]]
        text = task.doc_to_text(doc)
        assert without_image_placeholders(text) == ours.query
        assert [task.doc_to_target(doc)] == ours.get_golds()
        images = task.doc_to_image(doc) if task.config.doc_to_image else []
        assert [im.tobytes() for im in images] == [im.tobytes() for im in ours.images or []]
        assert text.count("<image>") == len(images)
