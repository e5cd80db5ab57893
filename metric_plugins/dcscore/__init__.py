"""
DCScore: detailed-caption precision, recall and F1 over atomic facts, judged by a (vision) language model.

JEEM reports DCScore (Ye et al., 2025, "Painting with Words"; papers/jeem.txt L182, Appendix I
L837-L882) next to the human ratings: captions are decomposed into primitive information units
(PIUs, "short, self-contained statements about objects, attributes, or relationships"), and
"DCScore is computed as an F1 score over the precision and recall of matched PIUs". JEEM's
Table 3 prints Precision, Recall and F1 (x100); "All results are based on the official
implementation" (L882), MAGAer13/DeCapBench, whose prompts and formula this module follows.

Per caption, on the judge framework (`metric_plugins.judge`: any backend, cached, concurrent,
resumable, unparsable replies re-asked then counted invalid):

1. extraction (prompt ``dcscore_extract``, temperature 1, one sample): the candidate caption and
   the reference caption each become a list of ``{"fact", "identifier", "relevance"}``. The
   reference's facts are the oracle facts: DeCapBench compares with human-written oracle facts,
   JEEM has none and says DCScore "decomposes the candidate and reference captions into PIUs"
   (L182). A reference keeps its first valid extraction, so every model meets the same oracle.
2. matching (``dcscore_match``, temperature 1, ``n_match=3`` samples): each predicted fact to an
   oracle id or "None".
3. verification (``dcscore_verify``, temperature 0.3, ``n_verify=3`` samples): each predicted
   fact checked against the **image** and the reference caption (1/0).
4. every (verification, matching) pair is a trial scored as upstream's ``compute_precision_recall``
   (`metric_plugins.dcscore.formula`): precision = verified / predicted; recall = (verified
   matched facts, 1/k each when k facts share an oracle fact, + verified unmatched facts) /
   (oracle facts + verified unmatched facts); F1; and the same over ``relevance == 1`` facts.
   The caption's values are the means over its trials, ``dcscore = (f1 + f1_relevant) / 2``
   (upstream ``compute_results.py``), all x100. A caption whose stages fail in all
   ``max_attempts=5`` attempts (upstream ``MAX_TRIES``) is **invalid**: reported, never scored 0.

``language="ar"`` uses the ``_ar`` prompt variants (upstream's English instructions plus a
paragraph on Arabic captions and an Arabic extraction example); ``"en"`` (default) is upstream
unchanged, which is what JEEM's "official implementation" implies.

Example with a stand-in judge model (a real one: ``judge="model=gpt-4o-2024-05-13"`` or a `Judge`):

    >>> from PIL import Image
    >>> from metric_plugins.judge import Judge, JudgeCache, Reply
    >>> from metric_plugins.judge.prompts.dcscore import DCSCORE_EXTRACT
    >>> class Scripted:  # replies per stage: two facts; the cat matched and verified, "white" neither
    ...     identity = {"backend": "doctest"}
    ...     max_concurrency = 1
    ...     def complete(self, messages, sampling):
    ...         text = messages[-1].text
    ...         if "extracting atomic facts" in text:
    ...             return Reply('[{"fact": "A cat.", "relevance": 1}, {"fact": "It is white.", "relevance": 1}]')
    ...         if "matching two set" in text:
    ...             return Reply('[{"fact": "A cat.", "matched_oracle_id": 0}, '
    ...                          '{"fact": "It is white.", "matched_oracle_id": "None"}]')
    ...         return Reply('[{"fact": "A cat.", "verification": 1}, {"fact": "It is white.", "verification": 0}]')
    >>> judge = Judge(Scripted(), DCSCORE_EXTRACT, cache=JudgeCache.in_memory(), progress=False)
    >>> report = score_captions(["A white cat."], ["A cat on a mat."], [Image.new("RGB", (8, 8))], judge=judge)
    >>> [round(report.summary.precision, 2), round(report.summary.recall, 2), round(report.summary.f1, 2)]
    [50.0, 50.0, 50.0]
    >>> report.summary.n_valid, report.summary.n_invalid, len(report.captions[0].trials)
    (1, 0, 9)
"""

from __future__ import annotations

from metric_plugins.dcscore.formula import TrialError, trial_scores
from metric_plugins.dcscore.pipeline import (
    METRICS,
    CaptionScore,
    DCScoreOptions,
    DCScoreReport,
    DCScoreSummary,
    score_captions,
)

__all__ = [
    "METRICS",
    "CaptionScore",
    "DCScoreOptions",
    "DCScoreReport",
    "DCScoreSummary",
    "TrialError",
    "score_captions",
    "trial_scores",
]
