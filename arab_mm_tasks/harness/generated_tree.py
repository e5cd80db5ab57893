"""Writing and checking a generated task tree (lm-eval's and lmms-eval's YAML files): one rule for both."""

from __future__ import annotations

from pathlib import Path


def write_tree(tree: dict[str, str], out_dir: Path, pattern: str = "*.yaml") -> list[Path]:
    """Write `tree` (relative path -> text) under `out_dir`, removing generated files it no longer holds."""
    for old in sorted(out_dir.rglob(pattern)) if out_dir.exists() else []:
        if old.relative_to(out_dir).as_posix() not in tree:
            old.unlink()
    written = []
    for rel, text in tree.items():
        path = out_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def drift(tree: dict[str, str], out_dir: Path, pattern: str = "*.yaml") -> list[str]:
    """The files under `out_dir` that differ from `tree`: stale ones first, then changed or missing ones."""
    on_disk = {p.relative_to(out_dir).as_posix() for p in out_dir.rglob(pattern)} if out_dir.exists() else set()
    stale = sorted(on_disk - set(tree))
    changed = [
        rel for rel, text in tree.items() if not (out_dir / rel).exists() or (out_dir / rel).read_text("utf-8") != text
    ]
    return stale + changed
