"""`evaluate` wrapper of `metric_plugins.dcscore.score_captions`: its docstring is the card."""

from __future__ import annotations

from typing import Any

import evaluate

from metric_plugins import dcscore
from metric_plugins.evaluate_info import metric_info

_KWARGS = """
Args:
    predictions: candidate captions.
    references: one reference caption per prediction (its atomic facts are the oracle facts).
    images: one PIL image or encoded image bytes per prediction, shown to the verifier.
    judge: the judge: a `metric_plugins.judge.Judge`, a `JudgeConfig`, settings as
        "base_url=...,model=...,cache_path=..." or a mapping; None reads ARAB_MM_JUDGE_* variables.
    language: "en" (upstream's prompts, default) or "ar" (the Arabic-handling variants).
    n_match, n_verify, extract_temperature, match_temperature, verify_temperature, max_tokens,
    max_attempts, oracle_relevance: `metric_plugins.dcscore.DCScoreOptions` (upstream defaults).
Returns:
    precision, recall, f1, precision_relevant, recall_relevant, f1_relevant, dcscore: means over
    the valid captions, x100 (NaN when none is valid); n_valid, n_invalid, n_failed.
"""

_CITATION = """\
@inproceedings{ye2025painting, title={Painting with Words: Elevating Detailed Image Captioning with Benchmark and
  Alignment Learning}, author={Ye, Qinghao and Zeng, Xianhan and Li, Fu and Li, Chunyuan and Fan, Haoqi},
  booktitle={The Thirteenth International Conference on Learning Representations (ICLR)}, year={2025}}
"""


class DCScore(evaluate.Metric):
    """DCScore (DeCapBench) of detailed captions, judged stage by stage by a vision-language model."""

    def _info(self) -> evaluate.MetricInfo:
        return metric_info(dcscore, _CITATION, _KWARGS)

    def _compute(
        self,
        predictions: list[str],
        references: list[str],
        images: list[Any] | None = None,
        judge: Any = None,
        language: str = "en",
        **options: Any,
    ) -> dict[str, float | int]:
        if images is None:
            raise ValueError("DCScore needs images=[...], one per prediction (the verifier sees the image)")
        report = dcscore.score_captions(predictions, references, images, judge=judge, language=language, **options)
        summary = report.summary
        out: dict[str, float | int] = {name: getattr(summary, name) for name in dcscore.METRICS}
        out.update(n_valid=summary.n_valid, n_invalid=summary.n_invalid, n_failed=summary.n_failed)
        return out
