"""The registered judge prompts, one import per benchmark module: easy to grep, nothing built lazily."""

from __future__ import annotations

from metric_plugins.judge.prompts.arb import ARB_FINAL_ANSWER, ARB_STEPS
from metric_plugins.judge.prompts.base import JudgePrompt
from metric_plugins.judge.prompts.dcscore import DCSCORE_PROMPTS
from metric_plugins.judge.prompts.gimmick import GIMMICK_CKQA
from metric_plugins.judge.prompts.jeem import JEEM_PROMPTS
from metric_plugins.judge.prompts.pearl import PEARL_PROMPTS

PROMPTS: dict[str, JudgePrompt] = {
    prompt.id: prompt
    for prompt in (
        GIMMICK_CKQA,
        *(p for stages in DCSCORE_PROMPTS.values() for p in stages),
        *PEARL_PROMPTS,
        *JEEM_PROMPTS,
        ARB_FINAL_ANSWER,
        ARB_STEPS,
    )
}


def get_prompt(prompt_id: str) -> JudgePrompt:
    """The registered prompt called `prompt_id` (its current version)."""
    if prompt_id not in PROMPTS:
        raise KeyError(f"unknown judge prompt {prompt_id!r}; registered: {sorted(PROMPTS)}")
    return PROMPTS[prompt_id]


__all__ = ["PROMPTS", "JudgePrompt", "get_prompt"]
