"""The 350-image evaluation sample: which records the judge and DCScore tasks (``*_eval350``) see.

The paper judges (and DCScores) "a 350-image sample": 100 images each for Jordan, Egypt and Morocco
and 50 for the Emirates (L186-188, L178), but publishes no ids. The default is a deterministic
sample stratified by annotating team: each team's records are ordered by the SHA-256 of
``"<seed>:<country>:<image_id>"`` and the first `QUOTAS[country]` are taken (all of them when a
team has fewer). The same release and seed always give the same sample, whatever the record order.
An id list (one record id ``<country>-<image_id>`` or bare image id per line, ``#`` comments)
replaces the sample, e.g. once the authors publish theirs; an id it names that the release lacks is
an error. Either way only valid records are drawn (the builder checks every record first): a
record skipped as bad does not take a place in its team's quota, and an id list naming one is
warned about in the build report.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from pathlib import Path

from dataset_builders.core.reading import SourceError

QUOTAS = {"jordan": 100, "emirates": 50, "egypt": 100, "morocco": 100}  # L186-188
SEED = "jeem-eval350"


def row_id(country: str, image_id: str) -> str:
    """A record's id in every config: the annotating team, then the image (a shared image has one per team)."""
    return f"{country}-{image_id}"


def sample(records: Iterable[tuple[str, str]], seed: str = SEED) -> set[tuple[str, str]]:
    """The default sample: per country, the `QUOTAS` first (country, image_id) pairs by seeded hash."""
    by_country: dict[str, list[str]] = {}
    for country, image_id in records:
        by_country.setdefault(country, []).append(image_id)
    chosen: set[tuple[str, str]] = set()
    for country, ids in by_country.items():
        ranked = sorted(ids, key=lambda i: hashlib.sha256(f"{seed}:{country}:{i}".encode()).hexdigest())
        chosen.update((country, i) for i in ranked[: QUOTAS[country]])
    return chosen


def _id_lines(path: Path) -> list[str]:
    """The lines of an id list, or one `SourceError` line naming it (a folder, missing, not UTF-8)."""
    try:
        return path.read_text("utf-8").splitlines()
    except UnicodeDecodeError as err:
        raise SourceError(f"evaluation id list {path}: not UTF-8 text ({err.reason} at byte {err.start})") from None
    except OSError as err:
        raise SourceError(f"evaluation id list {path}: cannot be read ({err.strerror or err})") from None


def from_id_list(
    path: str | Path, records: Iterable[tuple[str, str]], skipped: Iterable[tuple[str, str]] = ()
) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    """The records an id list names (record ids, or image ids meaning every team's record of the image),
    and those it names among the `skipped` (bad) records, which are left out; an id in neither is an error."""
    known = set(records)
    bad = set(skipped) - known
    by_row = {row_id(c, i): (c, i) for c, i in known | bad}
    by_image: dict[str, list[tuple[str, str]]] = {}
    for pair in known | bad:
        by_image.setdefault(pair[1], []).append(pair)
    named: set[tuple[str, str]] = set()
    unknown = []
    for line in _id_lines(Path(path)):
        entry = line.split("#", 1)[0].strip()
        if not entry:
            continue
        if entry in by_row:
            named.add(by_row[entry])
        elif entry in by_image:
            named.update(by_image[entry])
        else:
            unknown.append(entry)
    if unknown:
        raise SourceError(f"evaluation id list {path}: {len(unknown)} ids are in no record: {unknown[:10]}")
    chosen = named - bad
    if not chosen:
        raise SourceError(f"evaluation id list {path}: no ids" + (" of a valid record" if named else ""))
    return chosen, named & bad


def counts(chosen: Iterable[tuple[str, str]]) -> Mapping[str, int]:
    out: dict[str, int] = dict.fromkeys(QUOTAS, 0)
    for country, _ in chosen:
        out[country] += 1
    return out
