"""ARB's two judge prompts: the final answer (0/1) and the reasoning steps (10 attributes, 1-10).

Final answer (``arb_final_answer``): the authors' released judge, ``evaluation/judge-llm-evaluation.py``
in github.com/mbzuai-oryx/ARB @ 3933760 (`compare_results`): its system line and user text, word
for word, with the code's indentation removed and one line added, ``Choices: {CHOICES}``. The
script has a ``choices`` argument but does not pass it; a gold answer that is only an option
letter cannot be matched without them (a documented deviation, docs/fidelity.md). The script
asks GPT-4o with ``max_tokens=10`` and casts the reply to a float: `BinaryPercent` reads it (0 or 100).

Reasoning steps (``arb_steps``): a LABELLED RECONSTRUCTION. The paper's judge prompt is an image
(Figures 9/10, L451-454); its text is not available. The reconstruction is in Arabic ("Arabic
prompts exclusively", L460), lists the 10 rubric rows of Figure 11 with their Arabic definitions
verbatim (L475-484), scores each 1-10 with "higher is better" for the detection metrics and the
five anchor bands of LLaMAV-o1, whose judge ARB adapts (L177), and asks for strict JSON with
LLaMAV-o1's English keys. The judge sees the question, the reference chain and the model's
steps, text only. Its own ``Overall Score`` is ignored: `RubricScores` recomputes the overall as
the mean of the 10 and reports it as a percentage (mean x 10, LLaMAV-o1's normalisation, the
paper's Table 3 "Reasoning Steps (%)").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from metric_plugins.judge.parsing import BinaryDigit, JsonScores, Parsed
from metric_plugins.judge.prompts.base import JudgePrompt, read_text

STEP_ATTRIBUTES = (
    "Faithfulness-Step",
    "Faithfulness-Token",
    "Informativeness-Step",
    "Repetition-Token",
    "Hallucination",
    "Redundancy",
    "Semantic Coverage-Step",
    "Reasoning Alignment",
    "Commonsense",
    "Missing Step",
)
OVERALL = "reasoning_steps"


@dataclass(frozen=True)
class RubricScores:
    """The 10 attributes (integers 1-10) from a JSON reply, and first `OVERALL`: their mean x 10, in %."""

    names: tuple[str, ...] = STEP_ATTRIBUTES

    @property
    def score_names(self) -> tuple[str, ...]:
        return (OVERALL, *self.names)

    def parse(self, text: str) -> Parsed:
        parsed = JsonScores(self.names, low=1, high=10).parse(text)
        if parsed.scores is None:
            return parsed
        overall = 10.0 * sum(parsed.scores.values()) / len(self.names)
        return Parsed({OVERALL: overall, **parsed.scores})

    def spec(self) -> dict[str, Any]:
        return {"format": "rubric_mean_x10", "names": list(self.names), "low": 1, "high": 10}


@dataclass(frozen=True)
class BinaryPercent:
    """The authors' bare 0/1 reply (`BinaryDigit`), reported x100 so a mean is the paper's "Final Answer (%)"."""

    name: str = "correct"

    @property
    def score_names(self) -> tuple[str, ...]:
        return (self.name,)

    def parse(self, text: str) -> Parsed:
        parsed = BinaryDigit(self.name).parse(text)
        return parsed if parsed.scores is None else Parsed({self.name: 100.0 * parsed.scores[self.name]})

    def spec(self) -> dict[str, Any]:
        return {"format": "binary_digit_x100", "name": self.name}


ARB_FINAL_ANSWER = JudgePrompt(
    id="arb_final_answer",
    version=1,
    system=read_text("arb_final_answer_system.txt"),
    user_template=read_text("arb_final_answer_user.txt"),
    reply_format=BinaryPercent(),
    fields=("QUESTION", "CHOICES", "GROUND_TRUTH", "PREDICTION"),
    source="mbzuai-oryx/ARB@3933760 evaluation/judge-llm-evaluation.py compare_results; + Choices line (ours)",
)

ARB_STEPS = JudgePrompt(
    id="arb_steps",
    version=1,
    system=read_text("arb_steps_system.txt"),
    user_template=read_text("arb_steps_user.txt"),
    reply_format=RubricScores(),
    fields=("QUESTION", "REFERENCE_STEPS", "MODEL_STEPS"),
    source="RECONSTRUCTION (ARB Figures 9/10 are images): rubric L474-484, scale L177, LLaMAV-o1 anchors",
)
