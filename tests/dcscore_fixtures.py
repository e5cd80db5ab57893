"""DCScore's scripted loopback judge and its hand-computed caption, shared by the tests that score DCScore.

`ScriptedServer` answers each request from a script keyed by the stage (recognised from the prompt text by
`stage_of`), the caption or reference it is about, and the request's seed; `hand_script` is the script of the
hand-computed caption below, whose every score (`EXPECTED`) is worked out from the replies.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from metric_plugins.judge import loopback as loopback_module
from metric_plugins.judge.loopback import LoopbackServer

Script = Callable[[str, str, dict[str, Any]], "str | None"]


class ScriptedServer(LoopbackServer):
    """The loopback server; a reply comes from `script(stage, user_text, request)` unless the text has markers."""

    def __init__(self, script: Script) -> None:
        super().__init__()
        base = self._httpd.RequestHandlerClass

        def answer(handler: Any, request: dict[str, Any], user_text: str, markers: dict, fault: str | None) -> None:
            text = None if (fault or markers) else script(stage_of(user_text), user_text, request)
            if text is None:
                base._answer(handler, request, user_text, markers, fault)
                return
            handler._send(200, json.dumps(loopback_module._completion(request, text)).encode())

        self._httpd.RequestHandlerClass = type("ScriptedHandler", (base,), {"_answer": answer})

    def bodies(self, stage: str) -> list[dict[str, Any]]:
        return [json.loads(r.body) for r in self.requests if stage_of(r.user_text) == stage]


def stage_of(user_text: str) -> str:
    if "extracting atomic facts" in user_text:
        return "extract"
    if "matching two set of atomic facts" in user_text:
        return "match"
    if "verifying the correctness" in user_text:
        return "verify"
    return "other"  # another judge's prompt (a task's own judge in the same run): its script answers


def caption_in(user_text: str) -> str:
    return user_text.rsplit("### Caption\n", 1)[1].split("\n### Atomic Facts")[0]


def as_json(facts: list[dict[str, Any]]) -> str:
    return "```json\n" + json.dumps(facts, ensure_ascii=False, indent=1) + "\n```"


# --- the hand-computed caption -------------------------------------------------------------------
# Candidate facts A, B (relevant) and C (not relevant); reference (oracle) facts O0, O1.
# Matching (every sample): A -> 0, B -> 0, C -> "None". Verification: seeds 0 and 2 verify all
# three, seed 1 rejects B. With k(0) = 2 (A and B share O0), upstream's compute_precision_recall gives:
#   all verified: P = 3/3; R = (1/2 + 1/2 + 1 [C: verified, unmatched]) / (2 oracle + 1 [C]) = 2/3
#                 P_rel = 2/2; R_rel = (1/2 + 1/2) / 2 = 1/2
#   B rejected:   P = 2/3; R = (1/2 + 1) / 3 = 1/2; P_rel = 1/2; R_rel = (1/2) / 2 = 1/4
# 3 matching x 3 verification samples = 9 trials, 6 of the first kind and 3 of the second.
CANDIDATE = "A white cat sits calmly."
REFERENCE = "A white cat on a mat."
CANDIDATE_FACTS = [
    {"fact": "There is a cat_0.", "identifier": "cat_0", "relevance": 1},
    {"fact": "The cat_0 is white.", "relevance": 1},
    {"fact": "The cat_0 looks calm.", "relevance": 0},
]
REFERENCE_FACTS = [
    {"fact": "There is a white cat_0.", "identifier": "cat_0", "relevance": 1},
    {"fact": "There is a mat_0.", "identifier": "mat_0", "relevance": 1},
]
MATCHES = {"There is a cat_0.": 0, "The cat_0 is white.": 0, "The cat_0 looks calm.": "None"}


def f1(p: Fraction, r: Fraction) -> Fraction:
    return 2 * p * r / (p + r)


TRIAL_ALL = (Fraction(1), Fraction(2, 3), Fraction(1), Fraction(1, 2))
TRIAL_B_REJECTED = (Fraction(2, 3), Fraction(1, 2), Fraction(1, 2), Fraction(1, 4))
EXPECTED = {}
for position, name in enumerate(("precision", "recall", "precision_relevant", "recall_relevant")):
    EXPECTED[name] = (2 * TRIAL_ALL[position] + TRIAL_B_REJECTED[position]) / 3
EXPECTED["f1"] = (2 * f1(*TRIAL_ALL[:2]) + f1(*TRIAL_B_REJECTED[:2])) / 3
EXPECTED["f1_relevant"] = (2 * f1(*TRIAL_ALL[2:]) + f1(*TRIAL_B_REJECTED[2:])) / 3
EXPECTED["dcscore"] = (EXPECTED["f1"] + EXPECTED["f1_relevant"]) / 2


def hand_script(stage: str, user_text: str, request: dict[str, Any]) -> str | None:
    if stage == "extract":
        return as_json(REFERENCE_FACTS if caption_in(user_text) == REFERENCE else CANDIDATE_FACTS)
    facts = [{k: v for k, v in f.items() if k != "relevance"} for f in CANDIDATE_FACTS]
    if stage == "match":
        return as_json([{**f, "matched_oracle_id": MATCHES[f["fact"]]} for f in facts])
    rejected = "The cat_0 is white." if request["seed"] == 1 else None
    return as_json([{**f, "verification": int(f["fact"] != rejected)} for f in facts])
