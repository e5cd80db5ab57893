"""COQA_R and COQA_C rows: one per (CEF, target region or country), with 4 options frozen at build time.

Rules, from the paper (L158) and the authors' code (``tasks/coqa.py``, spec §7.3):

- **COQA_R.** CEFs with more than 3 regions are dropped (too few regions left for 3 negatives;
  Table 5 has 0 COQA_R rows for them). Each of the CEF's regions is a target once. Negatives:
  3 regions drawn from the 6 minus all of the CEF's regions. Option texts are `REGION_NAME`.
- **COQA_C.** Each of the CEF's countries is a target once, under its Table 4 name
  (`short_country_name`). Negatives: the Table 4 countries of *all* the CEF's regions minus
  *all* its countries; when fewer than 3 remain, every Table 4 country minus the CEF's (the
  code's top-up rule). A country Table 4 does not know stays a target (under its own name) and
  is reported; it can never be a negative.
- **Sampling.** 3 negatives are drawn from the sorted pool, the target appended and the 4 shuffled,
  as the code does; the answer is the target's letter. Each row has its own ``random.Random``
  seeded from (seed, config, row id), so a row's options depend on nothing but the seed and its
  own CEF: not on row order, nor on other rows being skipped or absent. The default seed is the
  authors' 1312.
"""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from arab_mm_tasks.gimmick.vocabulary import (
    ALL_COUNTRIES,
    COUNTRIES_BY_REGION,
    REGION_CODES,
    REGION_NAME,
    REGION_OF_COUNTRY,
    short_country_name,
)

LETTERS = "ABCD"
MAX_COQA_R_REGIONS = 3


def option_rng(seed: int, config: str, row_id: str) -> random.Random:
    """The row's own generator: seeded from a SHA-256 of (seed, config, row id), stable across Pythons."""
    digest = hashlib.sha256(f"{seed}\n{config}\n{row_id}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def choose_options(target: str, pool: Sequence[str], rng: random.Random) -> tuple[list[str], int]:
    """Target plus 3 negatives from `pool` (sorted first), shuffled; returns (options, index of target)."""
    candidates = sorted(set(pool) - {target})
    if len(candidates) < 3:
        raise ValueError(f"only {len(candidates)} negatives for {target!r}: {candidates}")
    options = [*rng.sample(candidates, 3), target]
    rng.shuffle(options)
    return options, options.index(target)


def _mc_row(cef: Mapping[str, Any], config: str, target: str, pool: Sequence[str], seed: int) -> dict[str, Any]:
    row_id = f"{cef['sample_uuid']}/{target}"
    options, index = choose_options(target, pool, option_rng(seed, config, row_id))
    return {"id": row_id, "target": target, "options": options, "answer": LETTERS[index], "answer_index": index}


def coqa_r_rows(cef: Mapping[str, Any], *, seed: int) -> list[dict[str, Any]]:
    """The CEF's COQA_R option fields, one dict per region; [] for a CEF with more than 3 regions."""
    codes = cef["region_codes"]
    if len(codes) > MAX_COQA_R_REGIONS:
        return []
    pool = [REGION_NAME[c] for c in REGION_CODES if c not in codes]
    return [_mc_row(cef, "coqa_r", REGION_NAME[code], pool, seed) for code in codes]


def country_pool(countries: Sequence[str], codes: Sequence[str]) -> tuple[list[str], bool]:
    """Negatives for any of the CEF's `countries` (Table 4 names) and whether the top-up rule applied."""
    own = set(countries)
    pool = sorted({c for code in codes for c in COUNTRIES_BY_REGION[code]} - own)
    if len(pool) >= 3:
        return pool, False
    return sorted(set(ALL_COUNTRIES) - own), True


def coqa_c_rows(cef: Mapping[str, Any], *, seed: int, stats: Counter[str], unknown: Counter[str]) -> list[dict]:
    """The CEF's COQA_C option fields, one dict per distinct country; counts duplicates, top-ups, unknowns."""
    targets = list(dict.fromkeys(short_country_name(c) for c in cef["countries"]))
    stats["coqa_c_duplicate_countries"] += len(cef["countries"]) - len(targets)
    for name in targets:
        if name not in REGION_OF_COUNTRY:
            unknown[name] += 1
    pool, topped_up = country_pool(targets, cef["region_codes"])
    stats["coqa_c_rows_topped_up"] += topped_up * len(targets)
    return [_mc_row(cef, "coqa_c", target, pool, seed) for target in targets]
