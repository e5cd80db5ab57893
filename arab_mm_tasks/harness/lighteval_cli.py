"""``arab-mm-lighteval``: lighteval 0.13's own command line, started so that it runs our tasks offline.

Commands and options are lighteval's (``arab-mm-lighteval accelerate --help``), plus:

- ``--dataset-path BENCH=PATH`` (repeatable): read a benchmark from a local Hub-layout folder
  (what ``arab-mm-tasks build`` writes) or another repo instead of its Hub default;
- ``--dataset-revision BENCH=REV`` (repeatable);
- ``--judge SETTINGS``: the judge of judged metrics;
- ``--metadata JSON``: the run options, as lm-eval's ``--metadata`` takes them
  (``'{"jeem_dcscore_language": "ar", "gimmick_max_frames": 8}'``; ``<name>_path`` / ``<name>_revision``
  as ``--dataset-path`` / ``--dataset-revision``). Every option is checked before lighteval starts
  (`arab_mm_tasks.core.run_options`): an unknown key, a wrong type, a credential in the judge settings and
  a few-shot count other than 0 on our tasks are one ``arab-mm-lighteval: error:`` line.

``--custom-tasks`` defaults to `arab_mm_tasks.harness.lighteval_tasks`. Examples::

    arab-mm-lighteval accelerate "model_name=Qwen/Qwen2.5-0.5B" "arabculture_mcq|0"
    arab-mm-lighteval accelerate "model_name=/models/m,override_chat_template=False" \\
        "arabculture_mcq|0,arabculture_mcq_en_none:egypt|0" --dataset-path arabculture=/data/arabculture

Before handing over to lighteval it patches (each patch checks that what it replaces exists, so a
lighteval without the bug, or without the attribute, is left alone):

1. Task registry: only the custom tasks module is loaded. lighteval imports every built-in task
   module on each run; one downloads a file at import time (no offline start) and two fail with
   huggingface_hub>=1. ``--load-tasks-multilingual`` is therefore ignored.
2. Task groups: an exact task name is run as itself. lighteval expands ``X`` to every ``X:*``
   task, so ``arabculture_mcq_en_none`` would also run its 13 countries.
3. Details hashing: lighteval hashes ``str`` with xxhash, which xxhash>=4 rejects at the very end
   of a run. Strings are UTF-8 encoded first (what xxhash 3 did itself: same hashes).
4. Response cache: lighteval caches model responses under ``cache_dir / model_name / config hash``.
   An absolute ``model_name`` discards ``cache_dir``, so the cache is written into the model folder,
   and the key ignores the weights, so a model rebuilt in place is served stale responses.
   Local models are cached under ``cache_dir/local/<absolute path>/<fingerprint of the folder's
   files>/`` instead, and when the model args set no ``cache_dir`` it is
   ``$XDG_CACHE_HOME/arab-mm-tasks/lighteval`` (``~/.cache/...``), never lighteval's shared default.
5. Local datasets: `datasets` caches a local folder under its base name and config names only, so
   a rebuilt folder, or another folder with the same name, is served stale data. A local folder is
   cached under ``$HF_DATASETS_CACHE/arab-mm-tasks/<hash of its path and of its files' names,
   sizes and modification times>/``. A folder lacking the config asked for is refused in one line.
6. Default data: a benchmark with no published repo reads the authors' release, built on first use
   into the user cache (`arab_mm_tasks.core.sources`); its task configs name that build folder,
   and the loader builds it when it is not there yet.
7. Media of our tasks: their datasets are loaded with images and videos left undecoded
   (`sources.without_media_decoding`), so a row holds where its media's bytes are stored and
   ``Doc.images`` are lazy images that read and decode them when the model uses them
   (`arab_mm_tasks.core.media_refs`, `arab_mm_tasks.core.lazy_image`): lighteval builds
   every ``Doc`` of a run before the first generation, and eager pixels would all be held at once.
8. Details at the end of a run: lighteval turns every sample's details (its ``Doc``, images
   included) into a `datasets.Dataset` whether or not they are saved, which decoded and encoded
   every image of the run at once. They are built only when ``--save-details``, ``--push-to-hub``
   or wandb will use them (deep copies of lazy images stay lazy, so even then one image is
   decoded at a time).
9. Our log lines: importing ``lighteval.__main__`` runs ``logging.config.dictConfig``, which
   disables every logger created before it, ours included (judge summaries, "no judge model is
   configured", metric warnings). Ours are enabled again after the import.
10. Our groups: lighteval 0.13 defines no task groups (its ``task_groups`` is empty), so the
    names lm-eval runs as groups (families: ``jeem_caption|0``, ``pearl|0``, ``gimmick_coqa_c|0``;
    region groups: ``arabculture_mcq_en_none_gulf|0``) are expanded to the tasks they stand for
    (`lighteval_tasks.task_groups`) as the task list is read, keeping each entry's few-shot count
    and ``@`` metric parameters. lighteval reports the member tasks; a family's average (GIMMICK's
    "Avg.", Pearl-X's pooled accuracy) is lm-eval's only.
"""

from __future__ import annotations

import logging
import sys
import types
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from arab_mm_tasks.core.preflight import require_lighteval
from arab_mm_tasks.core.run_options import RunOptionError
from arab_mm_tasks.core.sources import (
    DataSourceError,
    check_config,
    ensure_built,
    fingerprint,
    local_dataset_cache_dir,
    release_source_at,
    user_cache_dir,
    without_media_decoding,
)
from arab_mm_tasks.harness.lighteval_tasks import MODULE, task_groups

logger = logging.getLogger(__name__)

PROG = "arab-mm-lighteval"
OUR_OPTIONS = {"--dataset-path": "paths", "--dataset-revision": "revisions"}


class UsageError(ValueError):
    """A bad ``--dataset-path`` / ``--dataset-revision``; reported like a command-line error."""


def default_cache_dir() -> Path:
    return user_cache_dir() / "lighteval"


# ------------------------------------------------------------------------------------ our options


def split_options(args: Sequence[str]) -> tuple[list[str], dict[str, dict[str, str]]]:
    """Remove our options from `args`; returns lighteval's argv and ``{"paths": {...}, "revisions": {...}}``."""
    rest: list[str] = []
    found: dict[str, dict[str, str]] = {"paths": {}, "revisions": {}}
    it = iter(args)
    for arg in it:
        option, sep, inline = arg.partition("=")
        if option not in OUR_OPTIONS:
            rest.append(arg)
            continue
        value = inline if sep else next(it, None)
        bench, eq, target = (value or "").partition("=")
        if not (bench and eq and target):
            raise UsageError(f"{option} takes BENCHMARK=VALUE, e.g. {option} arabculture=..., got {value!r}")
        found[OUR_OPTIONS[option]][bench] = target
    return rest, found


def pop_judge(args: Sequence[str]) -> tuple[list[str], str | None]:
    """Remove ``--judge SETTINGS`` (the judge of judged metrics, `arab_mm_tasks.core.judging`) from `args`."""
    rest: list[str] = []
    judge: str | None = None
    it = iter(args)
    for arg in it:
        if arg == "--judge" or arg.startswith("--judge="):
            judge = arg.partition("=")[2] if "=" in arg else next(it, None)
            if not judge:
                raise UsageError('--judge takes judge settings, e.g. --judge "model=gpt-4o-2024-11-20"')
        else:
            rest.append(arg)
    return rest, judge


def pop_metadata(args: Sequence[str]) -> tuple[list[str], dict[str, Any]]:
    """Remove ``--metadata JSON`` (the benchmarks' run options, as lm-eval takes them) from `args`."""
    import json

    rest: list[str] = []
    metadata: dict[str, Any] = {}
    it = iter(args)
    for arg in it:
        if arg != "--metadata" and not arg.startswith("--metadata="):
            rest.append(arg)
            continue
        text = arg.partition("=")[2] if "=" in arg else next(it, None)
        try:
            value = json.loads(text or "")
        except json.JSONDecodeError as error:
            example = '{"jeem_dcscore_language": "ar"}'
            raise UsageError(f"--metadata takes a JSON object, e.g. '{example}': {error}") from None
        if not isinstance(value, dict):
            raise UsageError(f"--metadata takes a JSON object, got {text!r}")
        metadata.update(value)
    return rest, metadata


def apply_metadata(metadata: dict[str, Any]) -> dict[str, dict[str, str]]:
    """Check the run options in `metadata` (`arab_mm_tasks.core.run_options`) and apply them as lm-eval's dataset
    hook does: the judge and each benchmark's own options. Returns the ``<name>_path`` / ``<name>_revision``
    sources among them as ``{"paths": {bench: path}, "revisions": {bench: rev}}``, which ``--dataset-path`` /
    ``--dataset-revision`` override. Raises `RunOptionError` (one line) before anything is applied."""
    from arab_mm_tasks.core import judging
    from arab_mm_tasks.core.registry import all_benchmarks
    from arab_mm_tasks.core.run_options import validate_run_options

    options = validate_run_options(metadata)
    if "judge" in options:
        judging.configure(options["judge"])
    sources: dict[str, dict[str, str]] = {"paths": {}, "revisions": {}}
    for benchmark in all_benchmarks().values():
        if benchmark.configure is not None:
            benchmark.configure(options)
        if benchmark.path_key in options:
            sources["paths"][benchmark.name] = options[benchmark.path_key]
        if benchmark.revision_key in options:
            sources["revisions"][benchmark.name] = options[benchmark.revision_key]
    return sources


def check_dataset_options(options: dict[str, dict[str, str]]) -> None:
    """``--dataset-path`` / ``--dataset-revision`` values checked as the run options they stand for
    (``<name>_path``, ``<name>_revision``); an unknown benchmark is left to `tasks_module`'s error."""
    from arab_mm_tasks.core.registry import all_benchmarks
    from arab_mm_tasks.core.run_options import validate_run_options

    benchmarks = all_benchmarks()
    validate_run_options(
        {benchmarks[b].path_key: v for b, v in options["paths"].items() if b in benchmarks}
        | {benchmarks[b].revision_key: v for b, v in options["revisions"].items() if b in benchmarks}
    )


def refuse_few_shot(argv: Sequence[str]) -> None:
    """Refuse ``"<our task>|N"`` with N > 0 in the task list before lighteval loads the model (zero-shot only)."""
    from arab_mm_tasks.harness.lighteval_tasks import TASKS_TABLE

    ours = {config.name for config in TASKS_TABLE} | set(task_groups())
    for arg in argv:
        for entry in arg.split(",") if "|" in arg else ():
            parts = entry.strip().split("|")
            name = parts[1 if len(parts) == 3 else 0].partition("@")[0]
            shots = parts[-1].strip()
            if len(parts) > 1 and name in ours and shots.isdigit() and int(shots) > 0:
                raise RunOptionError(
                    f"{entry.strip()}: arab-mm-tasks tasks are zero-shot only (the benchmarks have a test split "
                    f"alone, so few-shot examples would leak test items); run it as '{name}|0'"
                )


# lighteval 0.13's API models whose `loglikelihood` raises NotImplementedError (TGI and inference endpoints have one)
_NO_LOGLIKELIHOOD = ("litellm", "inference-providers")


def refuse_on_endpoints(argv: Sequence[str]) -> None:
    """Refuse, in one line before anything loads, what lighteval's API models (``endpoint litellm|tgi|
    inference-endpoint|inference-providers``) cannot do with our tasks: an image or video task (lighteval 0.13
    builds their messages from the document's text alone, `PromptManager.prepare_prompt_api`, so the model would
    answer, and be scored, without its images), and a log-likelihood task (ArabCulture) on litellm or inference
    providers, which raise NotImplementedError mid-run."""
    if len(argv) < 2 or argv[0] != "endpoint":
        return
    from arab_mm_tasks.core.preflight import tasks_of_names
    from arab_mm_tasks.core.registry import all_specs

    names: list[str] = []
    for arg in argv[2:]:
        if arg.endswith(".txt") and Path(arg).is_file():
            names += Path(arg).read_text(encoding="utf-8").split()
        elif "|" in arg:
            names += arg.split(",")
    tasks = [all_specs()[task] for task in tasks_of_names(names)]
    with_images = [spec.name for spec in tasks if spec.has_media]
    if with_images:
        raise UsageError(
            f"{', '.join(with_images)}: need images, and lighteval's endpoint models send the text alone; run "
            "them on the served model with lm-eval's local-chat-completions or lmms-eval's openai model "
            "(docs/scale-out.md)"
        )
    scored_by_likelihood = [spec.name for spec in tasks if spec.output_type != "generate_until"]
    if scored_by_likelihood and argv[1] in _NO_LOGLIKELIHOOD:
        raise UsageError(
            f"{', '.join(scored_by_likelihood)}: log-likelihood tasks, and lighteval's `endpoint {argv[1]}` gives no "
            "log-likelihoods; run them with lm-eval's local-completions on a server with logprobs, or an "
            "in-process model (docs/scale-out.md)"
        )


def _leaf_command(argv: Sequence[str]) -> Any:
    """The command that `argv` runs (descending through subcommand groups), or None for a group."""
    import typer

    app = import_lighteval_app()
    # duck-typed: typer 0.29 vendors click (typer._click), so its groups are not `click.Group`s
    command: Any = typer.main.get_command(app)
    for arg in argv:
        commands = getattr(command, "commands", None)
        if commands is None:
            break
        command = commands.get(arg, command)
    return None if hasattr(command, "commands") else command


def given_custom_tasks(argv: Sequence[str]) -> str | None:
    for i, arg in enumerate(argv):
        if arg == "--custom-tasks":
            return argv[i + 1] if i + 1 < len(argv) else ""
        if arg.startswith("--custom-tasks="):
            return arg.partition("=")[2]
    return None


def with_default_custom_tasks(argv: list[str]) -> list[str]:
    """Add ``--custom-tasks <our module>`` when the command takes it and the user gave none."""
    if given_custom_tasks(argv) is not None:
        return argv
    command = _leaf_command(argv)
    if command is None or not any(p.name == "custom_tasks" for p in command.params):
        return argv
    end = argv.index("--") if "--" in argv else len(argv)
    return [*argv[:end], "--custom-tasks", MODULE, *argv[end:]]


# ---------------------------------------------------------------------------- lighteval patches


def expand_groups(entries: Sequence[str], groups: dict[str, list[str]] | None = None) -> list[str]:
    """Task-list entries with our group names replaced by their tasks (patch 10), duplicates dropped.

    An entry is ``[suite|]name[@param=value...][|shots]``; only ``name`` is replaced.

    >>> expand_groups(["jeem_vqa|0", "jeem_vqa_egyptian|0"], {"jeem_vqa": ["jeem_vqa_egyptian", "jeem_vqa_emirati"]})
    ['jeem_vqa_egyptian|0', 'jeem_vqa_emirati|0']
    """
    groups = task_groups() if groups is None else groups
    expanded: list[str] = []
    for entry in entries:
        parts = entry.split("|")
        at = 1 if len(parts) == 3 else 0  # lighteval's deprecated suite|task|shots
        name, sep, params = parts[at].partition("@")
        members = groups.get(name)
        if members is None:
            expanded.append(entry)
            continue
        logger.info("%s: running group %s as %s", PROG, name, ", ".join(members))
        expanded += ["|".join([*parts[:at], f"{member}{sep}{params}", *parts[at + 1 :]]) for member in members]
    return list(dict.fromkeys(expanded))


def patch_registry(modules: dict[str, types.ModuleType]) -> None:
    """Patches 1, 2 and 10 (module docstring). `modules` maps a ``--custom-tasks`` value to a module object."""
    from lighteval.tasks.registry import Registry

    needed = ("load_all_task_configs", "_extract_configs", "create_custom_tasks_module")
    if not all(hasattr(Registry, name) for name in needed):
        return  # another lighteval: leave its registry alone

    def load_all_task_configs(custom_tasks: Any = None, load_multilingual: bool = False) -> dict[str, Any]:
        if load_multilingual:
            logger.warning("%s loads only the custom tasks; --load-tasks-multilingual is ignored", PROG)
        if custom_tasks is None:
            return {}
        module = modules.get(str(custom_tasks)) or Registry.create_custom_tasks_module(custom_tasks)
        return Registry._extract_configs(module)

    Registry.load_all_task_configs = staticmethod(load_all_task_configs)

    expand = getattr(Registry, "_expand_task_definition", None)
    if expand is not None and not getattr(expand, "_arab_mm", False):

        def expand_task_definition(self: Any, task_definition: str) -> list[str]:
            if task_definition in getattr(self, "_task_registry", {}):
                return [task_definition]
            return expand(self, task_definition)

        expand_task_definition._arab_mm = True  # type: ignore[attr-defined]
        Registry._expand_task_definition = expand_task_definition

    read_list = getattr(Registry, "_get_full_task_list_from_input_string", None)
    if read_list is not None and not getattr(read_list, "_arab_mm", False):

        def task_list_with_our_groups(self: Any, tasks: Any) -> list[str]:
            return expand_groups(read_list(self, tasks))

        task_list_with_our_groups._arab_mm = True  # type: ignore[attr-defined]
        Registry._get_full_task_list_from_input_string = task_list_with_our_groups


class _StrSafeXXHash:
    """The `xxhash` module, except that ``xxh64`` also takes ``str`` (patch 3)."""

    def __init__(self, module: Any) -> None:
        self._module = module

    def xxh64(self, data: Any, *args: Any, **kwargs: Any) -> Any:
        return self._module.xxh64(data.encode("utf-8") if isinstance(data, str) else data, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._module, name)


def patch_details_hashing() -> None:
    from lighteval.logging import info_loggers

    module = getattr(info_loggers, "xxhash", None)
    if module is not None and not isinstance(module, _StrSafeXXHash):
        info_loggers.xxhash = _StrSafeXXHash(module)


def cache_config(model_config: Any) -> Any:
    """The model config that `SampleCache` should see (patch 4); the model itself keeps the user's."""
    if not hasattr(model_config, "model_copy"):
        return model_config  # not the pydantic config this patch knows
    updates: dict[str, str] = {}
    if "cache_dir" not in getattr(model_config, "model_fields_set", {"cache_dir"}):
        updates["cache_dir"] = str(default_cache_dir())
    name = getattr(model_config, "model_name", None)
    folder = Path(name).expanduser() if isinstance(name, str) and name else None
    if folder is not None and folder.is_dir():
        resolved = folder.resolve()
        # relative to cache_dir: drop the anchor ("/" or "C:\\") that would make the join discard cache_dir
        updates["model_name"] = str(Path("local", *resolved.parts[1:], fingerprint(resolved)))
    return model_config.model_copy(update=updates) if updates else model_config


def patch_response_cache() -> None:
    from lighteval.utils import cache_management

    cls = getattr(cache_management, "SampleCache", None)
    init = getattr(cls, "__init__", None)
    if cls is None or getattr(init, "_arab_mm", False) or not hasattr(cls, "get_model_hash"):
        return

    def __init__(self: Any, model_config: Any, *args: Any, **kwargs: Any) -> None:
        init(self, cache_config(model_config), *args, **kwargs)

    __init__._arab_mm = True  # type: ignore[attr-defined]
    cls.__init__ = __init__


def patch_unused_details() -> None:
    """Patch 8: `EvaluationTracker.save` builds the details datasets only when something uses them."""
    from lighteval.logging.evaluation_tracker import EvaluationTracker

    save = getattr(EvaluationTracker, "save", None)
    if save is None or getattr(save, "_arab_mm", False):
        return

    def save_details_only_when_used(self: Any) -> None:
        logger = getattr(self, "details_logger", None)
        used = any(getattr(self, flag, True) for flag in ("should_save_details", "should_push_to_hub", "use_wandb"))
        if used or logger is None or not hasattr(logger, "details"):
            return save(self)
        details, logger.details = logger.details, {}  # results and summaries do not read them
        try:
            return save(self)
        finally:
            logger.details = details

    save_details_only_when_used._arab_mm = True  # type: ignore[attr-defined]
    EvaluationTracker.save = save_details_only_when_used


OUR_LOGGERS = ("arab_mm_tasks", "metric_plugins", "dataset_builders")


def import_lighteval_app() -> Any:
    """lighteval's typer app, with our loggers enabled again after its logging setup (patch 9)."""
    import logging

    from lighteval.__main__ import app

    for name, logger in list(logging.Logger.manager.loggerDict.items()):
        if isinstance(logger, logging.Logger) and name.partition(".")[0] in OUR_LOGGERS:
            logger.disabled = False
    return app


UNDECODED_MEDIA: set[str] = set()  # patch 7: the dataset paths (``hf_repo``) of our tasks in this process


def patch_local_dataset_cache() -> None:
    """Patches 5 and 6, and 7 for the paths in `UNDECODED_MEDIA`."""
    from lighteval.tasks import lighteval_task

    load = getattr(lighteval_task, "load_dataset", None)
    if load is None or getattr(load, "_arab_mm", False):
        return

    def load_dataset(path: str, *args: Any, **kwargs: Any) -> Any:
        if path in UNDECODED_MEDIA:
            import datasets

            loaded = load_dataset_cached(path, *args, **kwargs)
            if isinstance(loaded, datasets.DatasetDict):
                return datasets.DatasetDict({split: without_media_decoding(ds) for split, ds in loaded.items()})
            return without_media_decoding(loaded)
        return load_dataset_cached(path, *args, **kwargs)

    def load_dataset_cached(path: str, *args: Any, **kwargs: Any) -> Any:
        release = release_source_at(path, kwargs.get("revision"))
        if release is not None:  # patch 6: the authors' release, built on first use
            path = str(ensure_built(release, kwargs.get("name") or args[0]))
            kwargs.pop("revision", None)  # the revision was the release's; the built folder has none
        folder = Path(path).expanduser()
        if "cache_dir" not in kwargs and folder.is_dir():
            check_config(folder, kwargs.get("name") or args[0])
            kwargs["cache_dir"] = str(local_dataset_cache_dir(folder))
        return load(path, *args, **kwargs)

    load_dataset._arab_mm = True  # type: ignore[attr-defined]
    lighteval_task.load_dataset = load_dataset


# ------------------------------------------------------------------------------------- entry point


def tasks_module(paths: dict[str, str], revisions: dict[str, str]) -> types.ModuleType:
    """Our tasks module, or a copy whose table reads the overridden dataset sources."""
    import importlib

    module = importlib.import_module(MODULE)
    if not paths and not revisions:
        return module
    copy = types.ModuleType(MODULE, module.__doc__)
    copy.TASKS_TABLE = module.build_tasks_table(paths, revisions)  # type: ignore[attr-defined]
    return copy


def run(args: Sequence[str]) -> int:
    """Run one ``arab-mm-lighteval`` command line in this process (patches stay applied); returns its rc."""
    try:
        args, metadata = pop_metadata(args)
        sources = apply_metadata(metadata) if metadata else {"paths": {}, "revisions": {}}
        args, judge = pop_judge(args)
        if judge:
            from arab_mm_tasks.core import judging
            from arab_mm_tasks.core.run_options import check_judge

            judging.configure(check_judge(judge, "--judge"))  # wins over ARAB_MM_JUDGE_* variables
        argv, options = split_options(args)
        for kind in ("paths", "revisions"):  # --dataset-path/--dataset-revision win over --metadata's
            options[kind] = {**sources[kind], **options[kind]}
        check_dataset_options(options)
        refuse_few_shot(argv)
        refuse_on_endpoints(argv)
        custom = given_custom_tasks(argv)
        if (options["paths"] or options["revisions"]) and custom not in (None, MODULE):
            raise UsageError(f"--dataset-path/--dataset-revision apply to {MODULE}, not --custom-tasks {custom}")
        module = tasks_module(options["paths"], options["revisions"])
        require_lighteval(argv, options["paths"], options["revisions"])  # data, metric models, judge: all at once
    except (UsageError, KeyError, FileNotFoundError, ValueError, DataSourceError) as err:
        print(f"{PROG}: error: {err.args[0] if err.args else err}", file=sys.stderr)
        return 2
    if "--help" in argv or not argv:
        print(
            f"{PROG}: lighteval's commands, plus --dataset-path/--dataset-revision BENCH=VALUE, --judge SETTINGS "
            "and --metadata JSON (run options)",
            file=sys.stderr,
        )

    patch_registry({MODULE: module})
    patch_details_hashing()
    patch_response_cache()
    patch_unused_details()
    UNDECODED_MEDIA.update(config.hf_repo for config in module.TASKS_TABLE)
    patch_local_dataset_cache()
    app = import_lighteval_app()

    try:
        app(args=with_default_custom_tasks(argv), prog_name=PROG)
    except (DataSourceError, RunOptionError) as err:  # no data for a task, a few-shot entry: one line, what to do
        print(f"{PROG}: error: {err}", file=sys.stderr)
        return 2
    except SystemExit as exit_:
        code = exit_.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    return 0


def main() -> None:
    sys.exit(run(sys.argv[1:]))


if __name__ == "__main__":
    main()
