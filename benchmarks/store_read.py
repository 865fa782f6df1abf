"""Benchmark: reading a fluid-model run from the committed store against computing it.

    python benchmarks/store_read.py [--runs 20] [--seed S]

For a seeded sample of the store's runs (the same draw as CI's check, :func:`.store.sample`),
times reading each result from ``data/model-runs`` (decompress, check its sha256, decode)
and computing it again from its inputs with the memo bypassed, in this one process, one
run at a time; prints both and their ratio. The ratio is what the store buys a build per
run; the store's check fails if a recomputed result is not the stored one.
"""

from __future__ import annotations

import argparse
import hashlib
import time

from coexist.runstore import refresh, store


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--seed", default="benchmark")
    args = parser.parse_args()
    entries = list(store.read_index().values())
    chosen = store.sample(entries, args.seed, share=min(1.0, args.runs / len(entries)))
    chosen = chosen[: args.runs]
    read_s = compute_s = 0.0
    for e in chosen:
        t0 = time.perf_counter()
        store.read_object(store.root(), e.object)
        t1 = time.perf_counter()
        text = refresh.recompute(e)
        t2 = time.perf_counter()
        if hashlib.sha256(text.encode()).hexdigest() != e.object:
            raise SystemExit(f"{e.kind} run {e.key[:12]}: recomputed result differs")
        read_s += t1 - t0
        compute_s += t2 - t1
    print(f"{len(chosen)} runs of {len(entries)}: read {read_s:.3f} s, computed {compute_s:.1f} s;"
          f" computing costs {compute_s / read_s:.0f} times reading")


if __name__ == "__main__":
    main()
