"""A judge configuration a command line or a task can carry: serialisable, printable, free of secrets.

It names the API key's environment variable, never the key, and its repr and `to_dict` show the
base URL without user info or query string (where some gateways take a key), so a config can go
into results files, logs and harness metadata as it is. Harness metrics and the generate-then-judge
command build their judge from one:

    JudgeConfig.from_args("model=gpt-4o-2024-11-20")
    JudgeConfig.from_args("base_url=http://localhost:8000/v1,model=Qwen/Qwen2.5-72B-Instruct,concurrency=64")
    JudgeConfig.from_args({"backend": "transformers", "model": "/models/judge"})
    JudgeConfig.from_env_or_args(args)  # ARAB_MM_JUDGE_MODEL=... etc. fill what `args` leaves out

Environment variables are read only when `from_env_or_args` is called, never at import, and the
resolved config is what `to_dict` records.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

from metric_plugins.judge.aggregate import RUN_POLICIES
from metric_plugins.judge.backends.base import JudgeBackend
from metric_plugins.judge.backends.openai_chat import public_url
from metric_plugins.judge.cache import JudgeCache
from metric_plugins.judge.prompts.base import JudgePrompt
from metric_plugins.judge.retry import RetryPolicy
from metric_plugins.judge.schema import Sampling

ENV_PREFIX = "ARAB_MM_JUDGE_"
BACKENDS = ("openai", "transformers")


@dataclass(frozen=True)
class JudgeConfig:
    """Everything needed to build a judge, as plain values.

    Args:
        backend: ``openai`` (any OpenAI-compatible endpoint) or ``transformers`` (in-process).
        model: the endpoint's model name, or a model folder / Hub id for ``transformers``.
        base_url: endpoint up to ``/v1``; None means OpenAI.
        api_key_env: the NAME of the environment variable holding the key.
        concurrency: requests in flight.
        cache_path: the SQLite cache; None means ``$XDG_CACHE_HOME/arab-mm-tasks/judge.sqlite``.
        timeout: seconds for a whole request, connecting to the last byte of the reply.
        max_retries: retries per request for transient errors.
        reasks: extra requests for an unparsable reply.
        temperature, max_tokens, top_p, seed: sampling (`Sampling`).
        device: torch device for ``transformers``.
        invalid_policy: what an invalid judgement counts as in a harness metric (``exclude``,
            ``zero``, ``minus_one``, ``authors``; `metric_plugins.judge.aggregate`); None: the metric's own default.
        unreachable_limit: requests with no answer at all (refused connection, or a timeout before any
            response) before the endpoint ever answered that stop the run with one message.
    """

    backend: str = "openai"
    model: str = ""
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    concurrency: int = 8
    cache_path: str | None = None
    timeout: float = 60.0
    max_retries: int = 6
    reasks: int = 2
    temperature: float = 0.0
    max_tokens: int = 1024
    top_p: float | None = None
    seed: int | None = None
    device: str = "cpu"
    invalid_policy: str | None = None
    unreachable_limit: int = 8

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise ValueError(f"judge backend must be one of {BACKENDS}, got {self.backend!r}")
        if self.invalid_policy is not None and self.invalid_policy not in RUN_POLICIES:
            raise ValueError(f"invalid_policy must be one of {', '.join(RUN_POLICIES)}, got {self.invalid_policy!r}")

    @classmethod
    def from_args(cls, args: str | Mapping[str, Any] | None = None) -> JudgeConfig:
        """From ``"key=value,key=value"`` (lm-eval ``--model_args`` style) or a mapping; strings are converted."""
        return cls(**_coerce(parse_settings(args)))

    @classmethod
    def from_env_or_args(
        cls, args: str | Mapping[str, Any] | None = None, environ: Mapping[str, str] | None = None
    ) -> JudgeConfig:
        """`args` first, then ``ARAB_MM_JUDGE_<FIELD>`` variables (``ARAB_MM_JUDGE_BASE_URL``...), then defaults."""
        environ = os.environ if environ is None else environ
        values = {
            f.name: environ[ENV_PREFIX + f.name.upper()] for f in fields(cls) if ENV_PREFIX + f.name.upper() in environ
        }
        values.update(parse_settings(args))
        return cls(**_coerce(values))

    def to_dict(self) -> dict[str, Any]:
        """The settings for results files: the base URL without its credentials (see `public_url`)."""
        out = asdict(self)
        if self.base_url is not None:
            out["base_url"] = public_url(self.base_url)
        return out

    def __repr__(self) -> str:
        return f"JudgeConfig({', '.join(f'{k}={v!r}' for k, v in self.to_dict().items())})"

    def sampling(self) -> Sampling:
        return Sampling(temperature=self.temperature, max_tokens=self.max_tokens, top_p=self.top_p, seed=self.seed)

    def build_backend(self) -> JudgeBackend:
        if not self.model:
            raise ValueError("the judge config needs a model (model=...)")
        if self.backend == "transformers":
            from metric_plugins.judge.backends.transformers_local import TransformersBackend

            return TransformersBackend(self.model, device=self.device)
        from metric_plugins.judge.backends.openai_chat import OpenAIChatBackend

        return OpenAIChatBackend(self.model, base_url=self.base_url, api_key_env=self.api_key_env, timeout=self.timeout)

    def build_judge(self, prompt: JudgePrompt, *, progress: bool = True) -> Any:
        """A `Judge` for `prompt` with this backend, cache, concurrency, retries and sampling."""
        from metric_plugins.judge.judge import Judge

        return Judge(
            self.build_backend(),
            prompt,
            cache=JudgeCache(self.cache_path) if self.cache_path else None,
            concurrency=self.concurrency,
            sampling=self.sampling(),
            retry=RetryPolicy(max_retries=self.max_retries),
            reasks=self.reasks,
            progress=progress,
            unreachable_limit=self.unreachable_limit,
        )


def parse_settings(args: str | Mapping[str, Any] | None) -> dict[str, Any]:
    """``"key=value,key=value"`` (or a mapping, or None) as a dict of strings; values are converted later."""
    if args is None:
        return {}
    if isinstance(args, Mapping):
        return dict(args)
    out: dict[str, Any] = {}
    for part in filter(None, (p.strip() for p in args.split(","))):
        name, sep, value = part.partition("=")
        if not sep:
            raise ValueError(f"judge argument {part!r} is not key=value")
        out[name.strip()] = value.strip()
    return out


def _coerce(values: Mapping[str, Any]) -> dict[str, Any]:
    """Strings to the field types; unknown names are an error that lists the known ones."""
    types = {f.name: f.type for f in fields(JudgeConfig)}
    unknown = sorted(set(values) - set(types))
    if unknown:
        raise ValueError(f"unknown judge setting(s) {unknown}; known: {sorted(types)}")
    out: dict[str, Any] = {}
    for name, value in values.items():
        kind = str(types[name])
        if isinstance(value, str):
            if "None" in kind and value.lower() in ("", "none", "null"):
                value = None
            elif kind.startswith("int"):
                value = int(value)
            elif kind.startswith("float"):
                value = float(value)
        out[name] = value
    return out
