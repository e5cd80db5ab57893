"""Run options, checked up front by one validator for every way in.

A run option is a key of lm-eval's ``--metadata``, of ``arab-mm-lighteval --metadata`` and of
``arab-mm-tasks evaluate --metadata``. Each is declared once (`RunOption`: name, kind, range, help):
`JUDGE` here, and every benchmark's ``<name>_path`` / ``<name>_revision`` and own options in its
declaration (`Benchmark.options`). `validate_run_options` checks a run's options against those
declarations before any data is read, and refuses, in one line naming the option:

- an unknown key (a typo such as ``arabculture_paht`` would otherwise fall back to the default
  source), with the closest valid name and the list of valid ones;
- a value of the wrong type or out of range (an int path, ``gimmick_max_frames: "eight"``,
  ``gimmick_max_side: -5``, an int revision, a judge setting that is not a number);
- a path that is a file, or does not exist, where a folder is meant;
- a credential: lm-eval writes ``--metadata`` into ``results_*.json``, so a judge URL with
  ``user:password@`` or a ``?key=`` parameter, or an ``api_key=`` setting, is refused with the
  safe way to give it (``ARAB_MM_JUDGE_BASE_URL``, ``api_key_env``).

lm-eval hands a task its ``--metadata`` merged with its own YAML metadata (``version``,
``description``, ``config_source``) and with the model's ``--model_args`` (``pretrained=...``,
any key a model class takes). There, only keys named like ours are checked (`is_ours`): a
benchmark's prefix (``arabculture_...``, or a near miss of one) or close to an option without a
prefix (``judge``); everything else belongs to lm-eval or the model.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from arab_mm_tasks.core.benchmark import RunOption

JUDGE = RunOption(
    "judge",
    "the judge of judged metrics: settings 'model=...,base_url=...' (docs/judge.md); credentials come from "
    "ARAB_MM_JUDGE_BASE_URL and the variable api_key_env names, never from here",
    kind="judge",
)

SAFE_CREDENTIALS = (
    "run options are saved with the results (lm-eval writes --metadata into results_*.json): put a URL that carries "
    "credentials in ARAB_MM_JUDGE_BASE_URL and the key in an environment variable named by api_key_env "
    "(default OPENAI_API_KEY)"
)

# A setting or query parameter with one of these words in its name holds a secret (``api_key``, ``?key=``,
# ``access_token``, ``sig``); ``api_key_env`` names a variable and is not one.
_SECRET_NAME = re.compile(
    r"(?:^|[_-])(?:api[_-]?key|apikey|key|token|access[_-]?token|secret|password|passwd|pwd|auth|authorization|"
    r"bearer|sig|signature|credentials?)(?:$|[_-])",
    re.IGNORECASE,
)
_VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PATH_PREFIXES = (".", "/", "~")
_CLOSE = 0.8  # difflib ratio from which an unknown key is taken for a typo of one of ours
_ONE_EDIT = 0.85  # the ratio of one edit to a key of 7 or more characters (declared keys are longer)


class RunOptionError(ValueError):
    """A run option that cannot be used; the message is one line naming the option and what it takes."""


def declared_options() -> dict[str, RunOption]:
    """Every run option, by key: `JUDGE`, then each benchmark's (`Benchmark.options`)."""
    from arab_mm_tasks.core.registry import all_benchmarks

    options = [JUDGE, *(o for benchmark in all_benchmarks().values() for o in benchmark.options)]
    return {option.key: option for option in options}


def is_ours(key: str, options: Mapping[str, RunOption] | None = None) -> bool:
    """Whether `key` is named like one of our run options (a benchmark's prefix, or near an unprefixed one)."""
    from arab_mm_tasks.core.registry import all_benchmarks

    options = declared_options() if options is None else options
    if key in options:
        return True
    lowered = key.lower()
    names = list(all_benchmarks())
    head = re.split(r"[_\-.]", lowered, maxsplit=1)[0]
    if lowered != head and difflib.get_close_matches(head, names, n=1, cutoff=_CLOSE):
        return True
    prefixed = tuple(f"{name}_" for name in names)
    unprefixed = [k for k in options if not k.startswith(prefixed)]
    if difflib.get_close_matches(lowered, unprefixed, n=1, cutoff=_CLOSE):
        return True
    # one letter off a whole key (``arbpath``, ``xrb_path``); stricter: a model's ``revision`` is no ``arb_revision``
    return bool(difflib.get_close_matches(lowered, [k.lower() for k in options], n=1, cutoff=_ONE_EDIT))


def validate_run_options(
    metadata: Mapping[str, Any], *, from_lm_eval_task: bool = False, missing_folders: bool = False
) -> dict[str, Any]:
    """The run options in `metadata`, checked, with integers given as digit strings converted.

    Raises `RunOptionError` (one line) for the first bad key. `from_lm_eval_task`: `metadata` is what
    lm-eval passes a task's dataset hook, so keys not named like ours (`is_ours`) are lm-eval's or the
    model's and are let through; otherwise (``arab-mm-lighteval``, ``evaluate``) every key must be ours.
    `missing_folders`: a data folder that does not exist passes here (``evaluate``'s preflight lists it with
    every other problem at once); a file, a malformed value or a wrong type is still refused.
    """
    options = declared_options()
    checked: dict[str, Any] = {}
    for key, value in metadata.items():
        option = options.get(key)
        if option is None:
            if from_lm_eval_task and not is_ours(str(key), options):
                continue
            raise RunOptionError(_unknown(str(key), list(options), "run option"))
        checked[key] = check_value(option, value, missing_folders=missing_folders)
    return checked


def check_value(option: RunOption, value: Any, *, missing_folders: bool = False) -> Any:
    """`value` for `option`, checked (and an integer string converted); raises `RunOptionError`."""
    if option.kind == "judge":
        return check_judge(value, option.key)
    if isinstance(value, str):
        _refuse_credentials(option.key, option.key, value)
    if option.kind == "int":
        return _int_in_range(option, value)
    if not isinstance(value, str) or not value.strip():
        raise RunOptionError(f"run option '{option.key}' takes {option.expects}, got {_shown(value)}")
    if option.kind == "choice" and value not in option.choices:
        raise RunOptionError(f"run option '{option.key}' takes {option.expects}, got {value!r}")
    if option.kind == "source":
        _check_source(option.key, value, missing_folders)
    if option.kind == "revision" and any(c.isspace() for c in value):
        raise RunOptionError(f"run option '{option.key}' takes {option.expects}, got {value!r} (it has spaces)")
    return value


def check_judge(value: Any, where: str = "judge") -> dict[str, Any]:
    """Judge settings (a ``key=value,...`` string or a mapping), checked setting by setting, as a dict.

    Refused in one line: a credential in any setting, an unknown setting (with the closest one), a value
    of the wrong type or sign, and what `JudgeConfig` itself refuses (an unknown backend...).
    """
    from dataclasses import fields

    from metric_plugins.judge.config import JudgeConfig, parse_settings

    if not isinstance(value, str | Mapping):
        raise RunOptionError(f"run option '{where}' takes {JUDGE.expects}, got {_shown(value)}")
    try:
        settings = parse_settings(value)
    except ValueError as error:
        raise RunOptionError(f"run option '{where}': {error}") from None
    types = {f.name: str(f.type) for f in fields(JudgeConfig)}
    for name, setting in settings.items():
        _refuse_credentials(where, str(name), setting)
        if name not in types:
            raise RunOptionError(f"run option '{where}': " + _unknown(str(name), list(types), "judge setting"))
        _check_judge_setting(where, name, types[name], setting)
    try:
        JudgeConfig.from_args(settings)
    except (ValueError, TypeError) as error:
        raise RunOptionError(f"run option '{where}': {error}") from None
    return settings


# ------------------------------------------------------------------------------------------ helpers


def _unknown(key: str, valid: list[str], what: str) -> str:
    close = difflib.get_close_matches(key, valid, n=1, cutoff=0.6)
    hint = f"; did you mean '{close[0]}'?" if close else ";"
    return f"unknown {what} '{key}'{hint} valid: {', '.join(sorted(valid))}"


def _shown(value: Any) -> str:
    """A value and its JSON type, short: ``[1, 2] (list)``."""
    text = repr(value)
    return f"{text[:60] + '...' if len(text) > 60 else text} ({type(value).__name__})"


def _int_in_range(option: RunOption, value: Any) -> int:
    number: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str) and re.fullmatch(r"[+-]?\d{1,18}", value.strip()):
        number = int(value)
    if number is None:
        raise RunOptionError(f"run option '{option.key}' takes {option.expects}, got {_shown(value)}")
    if (option.minimum is not None and number < option.minimum) or (
        option.maximum is not None and number > option.maximum
    ):
        raise RunOptionError(f"run option '{option.key}' takes {option.expects}, got {number}")
    return number


def _check_source(key: str, value: str, missing_folders: bool = False) -> None:
    """A folder that exists (not a file), or a well-formed Hub repo id."""
    folder = Path(value).expanduser()
    if folder.is_file():
        raise RunOptionError(
            f"run option '{key}': {value!r} is a file, not a folder (give the folder `arab-mm-tasks build` wrote)"
        )
    if folder.is_dir():
        return
    if value.startswith(_PATH_PREFIXES):
        if missing_folders:
            return
        raise RunOptionError(f"run option '{key}': folder {value!r} does not exist")
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    try:
        validate_repo_id(value)
    except HFValidationError:
        raise RunOptionError(
            f"run option '{key}': {value!r} is neither a folder nor a Hub repo id ('org/name')"
        ) from None


def _refuse_credentials(where: str, name: str, value: Any) -> None:
    """Refuse a setting whose name says it is a secret, or a URL value that carries user info or a key."""
    if _SECRET_NAME.search(name) and not name.lower().endswith("_env"):
        raise RunOptionError(f"run option '{where}': '{name}' is a credential; {SAFE_CREDENTIALS}")
    if isinstance(value, str) and "://" in value:
        found = _url_credentials(value)
        if found:
            raise RunOptionError(f"run option '{where}': '{name}' carries a credential ({found}); {SAFE_CREDENTIALS}")


def _url_credentials(url: str) -> str:
    """What credential `url` carries, as `url_credentials.credentials_client` would send it; '' when none."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return ""
    if parts.username or parts.password or "@" in parts.netloc:
        return "user info in the URL"
    secret = [name for name, _ in parse_qsl(parts.query, keep_blank_values=True) if _SECRET_NAME.search(name)]
    return f"query parameter '{secret[0]}'" if secret else ""


def _check_judge_setting(where: str, name: str, kind: str, value: Any) -> None:
    """A judge setting's type from `JudgeConfig`'s annotation; numbers are never negative, counts above 0."""
    if "None" in kind and (value is None or (isinstance(value, str) and value.lower() in ("", "none", "null"))):
        return  # an optional setting left unset
    number: float | None = None
    if kind.startswith(("int", "float")):
        is_int = kind.startswith("int")
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            number = None
        elif isinstance(value, str):
            pattern = r"[+-]?\d{1,18}" if is_int else r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?"
            number = float(value) if re.fullmatch(pattern, value.strip()) else None
        elif is_int and isinstance(value, float):
            number = value if value.is_integer() else None
        else:
            number = float(value)
        if number is None or not math.isfinite(number):
            expected = "an integer" if is_int else "a number"
            raise RunOptionError(f"run option '{where}': setting '{name}' takes {expected}, got {_shown(value)}")
        if number < 0 or (number == 0 and name in _POSITIVE_JUDGE_SETTINGS):
            bound = "> 0" if name in _POSITIVE_JUDGE_SETTINGS else ">= 0"
            raise RunOptionError(f"run option '{where}': setting '{name}' takes a number {bound}, got {value}")
        return
    if not isinstance(value, str):
        raise RunOptionError(f"run option '{where}': setting '{name}' takes a string, got {_shown(value)}")
    if name == "api_key_env" and not _VARIABLE_NAME.fullmatch(value):
        raise RunOptionError(
            f"run option '{where}': api_key_env takes the NAME of an environment variable, not a key; "
            f"{SAFE_CREDENTIALS}"
        )


# A judge with no concurrency, no time or no tokens cannot answer at all.
_POSITIVE_JUDGE_SETTINGS = frozenset({"concurrency", "timeout", "max_tokens"})
