"""Judge backends: an OpenAI-compatible endpoint and an in-process transformers model, behind one protocol.

Each backend module imports its heavy dependency (openai, torch, transformers) only when it
first sends a request, so importing the judge costs nothing on a bare install.
"""

from __future__ import annotations

from metric_plugins.judge.backends.base import (
    BackendError,
    JudgeBackend,
    JudgeStopped,
    RequestRejected,
    TransientError,
)
from metric_plugins.judge.backends.openai_chat import OpenAIChatBackend
from metric_plugins.judge.backends.transformers_local import TransformersBackend

__all__ = [
    "BackendError",
    "JudgeBackend",
    "JudgeStopped",
    "OpenAIChatBackend",
    "RequestRejected",
    "TransformersBackend",
    "TransientError",
]
