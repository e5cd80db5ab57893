"""DCScore precision, recall and F1 of one trial: one verification result crossed with one matching result.

The definition is upstream's ``compute_precision_recall`` (MAGAer13/DeCapBench@9f3fb10,
``eval/evaluation_decapbench.py``), re-implemented here. With P the predicted facts as the
verifier returned them, ``k(o)`` the number of facts in P matched to oracle id ``o``, and
``V`` the verified ones (``verification == 1``):

- precision = |V| / |P|
- recall = (sum over matched f in V of 1/k(o_f)  +  |V unmatched|) / (|oracle| + |V unmatched|):
  a fact the oracle set lacks but the image confirms counts as found, and enlarges the oracle set;
  k facts on one oracle fact share its credit.
- the relevant variants take the facts whose extraction said ``relevance == 1`` and the oracle
  facts marked relevant; upstream weights them with the counts ``k`` of *all* facts (it builds
  ``predict_weights_relevant`` but divides by ``predict_weights``), and so does this code.
- F1 = 2PR / (P + R + 1e-8), upstream's epsilon.

A trial upstream could not compute (the two replies list different facts, nothing to divide by)
raises `TrialError`; the caller counts the attempt as failed, as upstream's ``valid: False``.

Example (3 predicted facts, 2 oracle facts; A and B both matched to oracle 0, C unmatched):

>>> facts = [{"fact": "A", "relevance": 1}, {"fact": "B", "relevance": 1}, {"fact": "C", "relevance": 0}]
>>> verified = [{"fact": "A", "verification": 1}, {"fact": "B", "verification": 0}, {"fact": "C", "verification": 1}]
>>> scores = trial_scores(facts, [1, 1], verified, {"A": 0, "B": 0, "C": "None"})
>>> scores["precision"], scores["recall"], scores["precision_relevant"], scores["recall_relevant"]
(0.6666666666666666, 0.5, 0.5, 0.25)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

EPSILON = 1e-8  # upstream's f1 denominator guard


class TrialError(ValueError):
    """A trial upstream's computation would have raised on."""


def oracle_key(value: Any) -> Hashable | None:
    """A ``matched_oracle_id`` as a key: None for upstream's unmatched values (None, "None"), ints for ids.

    Ids come back as ``3`` or ``"3"``; both name oracle fact 3, so they are counted together
    (upstream would count them apart, a difference only when one reply mixes the two).
    """
    if value is None or value == "None":
        return None
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    return value


def trial_scores(
    predicted_facts: Sequence[Mapping[str, Any]],
    oracle_relevance: Sequence[Any],
    verification: Sequence[Mapping[str, Any]],
    mapping: Mapping[str, Any],
) -> dict[str, float]:
    """Upstream's eight numbers for one (verification, mapping) pair, as fractions (0-1).

    Args:
        predicted_facts: the extraction's facts (``fact``, ``relevance``).
        oracle_relevance: one ``relevance`` value per oracle fact (1 counts as relevant).
        verification: the verifier's list (``fact``, ``verification``): the predicted facts scored.
        mapping: fact text -> ``matched_oracle_id`` from one matching reply.
    """
    if set(mapping) != {d["fact"] for d in verification}:
        raise TrialError("the matching and the verification list different facts")
    matched = [(d, oracle_key(mapping[d["fact"]])) for d in verification]
    counts = Counter(key for _, key in matched if key is not None)  # upstream predict_ids, over all facts
    relevant_facts = {x["fact"] for x in predicted_facts if x["relevance"] == 1}

    def score(rows: list[tuple[Mapping[str, Any], Hashable | None]], n_oracle: int, label: str) -> tuple[float, ...]:
        found = 0.0  # upstream `correct`
        verified = 0  # upstream `correct_prec`
        total = n_oracle
        for fact, key in rows:
            if fact["verification"] != 1:
                continue
            verified += 1
            if key is None:  # verified but in no oracle fact: found, and one more fact to find
                found += 1
                total += 1
            else:
                found += 1 / counts[key]
        if not rows:
            raise TrialError(f"no {label}predicted facts")
        if total == 0:
            raise TrialError(f"no {label}oracle facts and no verified unmatched fact")
        precision, recall = verified / len(rows), found / total
        return precision, recall, 2 * precision * recall / (precision + recall + EPSILON), float(total)

    precision, recall, f1, total = score(matched, len(oracle_relevance), "")
    relevant_rows = [(d, key) for d, key in matched if d["fact"] in relevant_facts]
    n_oracle_relevant = sum(1 for value in oracle_relevance if value == 1)
    precision_r, recall_r, f1_r, total_r = score(relevant_rows, n_oracle_relevant, "relevant ")
    return {
        "precision": precision,
        "recall": recall,
        "f1_score": f1,
        "total_atomic_facts": total,
        "precision_relevant": precision_r,
        "recall_relevant": recall_r,
        "f1_score_relevant": f1_r,
        "total_atomic_facts_relevant": total_r,
    }
