"""How long does the book's reading take in Sphinx's batches, in alphabetical order and in
batches of equal cost? Sphinx's own scheduler, each page replaced by a sleep of its time.

Every page of the book (the ``_toc.yml`` order Sphinx sorts alphabetically) sleeps for the
seconds it took to execute in a recorded build (``--seconds``, default the committed
``benchmarks/page_seconds.json``), scaled by ``--scale``, and Sphinx 7's ``ParallelTasks``
runs them on ``--jobs`` processes: once in Sphinx's own batches (``make_chunks``) and once
in the order :func:`coexist.book.build.reading_order` gives them (Sphinx's own batches of
it, as the book's extension arranges them through ``env-before-read-docs``). The pages of a
real build share fluid-model runs through the memo (a page that finds a run stored reads it,
one that finds it being computed waits for it), which a sleep cannot show; the build itself
is the final measure. Each batch also costs a fork, which a small ``--scale`` magnifies (at
0.005 it erased the difference).

    python benchmarks/reading_order.py [--scale 0.05] [--jobs 2]
"""

from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path

from sphinx.util.parallel import ParallelTasks, make_chunks

from coexist.book import build as book

ROOT = Path(__file__).resolve().parents[1]


def pages() -> list[str]:
    """Every page of the table of contents, as Sphinx names and sorts them."""
    toc = (ROOT / "_toc.yml").read_text()
    return sorted(set(re.findall(r"(?:root|file):\s*(\S+)", toc)))


def makespan(batches: list[list[str]], seconds: dict[str, float], scale: float,
             jobs: int) -> float:
    """Wall seconds (unscaled) for Sphinx's scheduler to run ``batches`` of sleeps."""
    def work(batch: list[str]) -> None:
        for page in batch:
            time.sleep(seconds.get(page, 0.0) * scale)

    tasks = ParallelTasks(jobs)
    start = time.perf_counter()
    for batch in batches:
        tasks.add_task(work, batch)
    tasks.join()
    return (time.perf_counter() - start) / scale


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=Path, default=ROOT / book.SECONDS_COMMITTED,
                    help="a build's page-seconds record (default: the committed one)")
    ap.add_argument("--scale", type=float, default=0.05, help="sleep seconds per page second")
    ap.add_argument("--jobs", type=int, default=2, help="reader processes")
    args = ap.parse_args(argv)
    seconds = json.loads(args.seconds.read_text())
    names = pages()
    total = sum(seconds.get(p, 0.0) for p in names)
    own = makespan(make_chunks(names, args.jobs), seconds, args.scale, args.jobs)
    ours = makespan(make_chunks(book.reading_order(names, args.jobs, seconds), args.jobs),
                    seconds, args.scale, args.jobs)
    print(f"{len(names)} pages, {total:.0f} s of execution on {args.jobs} processes "
          f"(at best {total / args.jobs:.0f} s, the longest page "
          f"{max(seconds.get(p, 0.0) for p in names):.0f} s)")
    print(f"Sphinx's batches:   {own:.0f} s")
    print(f"balanced batches:   {ours:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
