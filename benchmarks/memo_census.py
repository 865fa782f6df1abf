"""Benchmark: which fluid-model runs a build computes, and what they cost.

Run a build or the figure check with an empty memo and the census on::

    COEXIST_FLUID_CACHE=/tmp/memo COEXIST_FLUID_LOG=/tmp/census.jsonl \\
        coexist figures --check --jobs 2
    python benchmarks/memo_census.py /tmp/census.jsonl

Every memo lookup is one line of the census (:mod:`coexist.runstore.lookup`). This prints, per
kind of result, the runs computed, the lookups the memo answered, and their compute time
(thread time while other runs share the cores, so the shares matter, not the sum); then,
for the mix runs, the runs that differ from another computed run only in their length or
warm-up (a shorter run is the first part of a longer one: the kernel's steps do not
depend on the run's length), and the settings and run lengths that cost the most.
"""

from __future__ import annotations

import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

import pandas as pd


def load(path: Path) -> pd.DataFrame:
    """One row per lookup: kind, hit, seconds, and the inputs as one JSON text."""
    rows = []
    for line in path.read_text().splitlines():
        d = json.loads(line)
        rows.append({"kind": d["kind"], "hit": d["hit"], "seconds": d["seconds"] or 0.0,
                     "inputs": d["inputs"]})
    return pd.DataFrame(rows)


def by_kind(t: pd.DataFrame) -> pd.DataFrame:
    """Per kind: runs computed, lookups answered by the memo, compute seconds and share."""
    out = (t.groupby("kind")
           .agg(computed=("hit", lambda h: int((~h).sum())),
                found=("hit", lambda h: int(h.sum())), seconds=("seconds", "sum"))
           .sort_values("seconds", ascending=False))
    out["share"] = out["seconds"] / out["seconds"].sum()
    return out


def prefixes(t: pd.DataFrame) -> pd.DataFrame:
    """Computed mix runs grouped by everything but their length and warm-up: one row per
    group with more than one computed run (the shorter could be read from the longest)."""
    groups: dict[str, list[tuple[float, float, float]]] = defaultdict(list)
    for r in t[(t.kind == "mix") & ~t.hit].itertuples():
        rest = {k: v for k, v in r.inputs.items() if k not in ("duration_s", "warmup_s")}
        groups[json.dumps(rest, sort_keys=True)].append(
            (r.inputs["duration_s"], r.inputs["warmup_s"], r.seconds))
    rows = []
    for rest, runs in groups.items():
        if len(runs) > 1:
            longest = max(d for d, _, _ in runs)
            rows.append({"setting": rest, "runs": len(runs),
                         "lengths": sorted({(d, w) for d, w, _ in runs}),
                         "seconds_not_longest": sum(s for d, _, s in runs if d < longest)})
    return pd.DataFrame(rows, columns=["setting", "runs", "lengths", "seconds_not_longest"])


def main(path: str) -> None:
    t = load(Path(path))
    pd.set_option("display.width", 140)
    print(by_kind(t).round(3).to_string(), "\n")
    mix = t[(t.kind == "mix") & ~t.hit]
    lengths = Counter((r["duration_s"], r["warmup_s"]) for r in mix.inputs)
    print("computed mix runs by (length, warm-up) in s:", dict(lengths))
    p = prefixes(t)
    print(f"mix settings computed at more than one length: {len(p)}, "
          f"{p['seconds_not_longest'].sum():.0f} s of compute in their shorter runs "
          f"(of {mix['seconds'].sum():.0f} s for every mix run)")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/tmp/census.jsonl")
