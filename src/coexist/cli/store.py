"""``coexist store status|check|refresh|verify``: the committed fluid-model runs."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from ..core import settings
from .options import (
    MAX_JOBS,
    check_scheduler,
    command_group,
    commit_seed,
    number,
)


def _store(args: argparse.Namespace) -> int:
    """``coexist store status|check|refresh|verify``: the committed fluid-model runs."""
    from .. import fluid  # noqa: F401  (declares the model whose runs the store keeps)
    from ..core import paths
    from ..runstore import lookup, refresh, store

    where = store.root()
    entries = list(store.read_index(where).values())
    if args.what == "status":
        stale = refresh.stale(entries)
        kinds = Counter(e.kind for e in entries)
        pages = sorted({p for e in entries for p in e.pages})
        print(f"{where}: {len(entries)} runs, {store.size_bytes(where) / 1e6:.1f} MB, "
              f"read by {len(pages)} pages; {len(stale)} stale under the current code")
        for kind, n in sorted(kinds.items()):
            print(f"  {kind}: {n}")
        return 0
    if args.what == "check":
        problems = store.integrity(where)
        if problems:
            print(f"coexist store: {problems[0]}" + (f" (and {len(problems) - 1} more)"
                                                     if len(problems) > 1 else ""),
                  file=sys.stderr)
            return 1
        stale = refresh.stale(entries)
        if stale or not entries:
            print(f"coexist store: {store.needs_refresh_message(stale)}" if stale else
                  f"coexist store: {where} holds no runs: run `{store.REFRESH}`",
                  file=sys.stderr)
            return 1
        print(f"store: {len(entries)} runs, every object intact and every key current")
        return 0
    if args.scheduler:
        check_scheduler(args.scheduler)
        settings.export("COEXIST_SCHEDULER", args.scheduler)
    if args.what == "verify":
        problems = store.integrity(where)
        if problems:
            for p in problems:
                print(f"coexist store: {p}", file=sys.stderr)
            return 1
        if args.all:
            chosen = sorted(entries, key=lambda e: (e.kind, e.key))
        else:
            seed = args.seed or commit_seed()
            chosen = store.sample(entries, seed, args.share)
            print(f"store: checking {len(chosen)} of {len(entries)} runs (seed {seed}, at "
                  f"least {args.share:.0%} and one per page)", flush=True)
        stale = refresh.stale(chosen)
        if stale:
            print(f"coexist store: {store.needs_refresh_message(stale)}", file=sys.stderr)
            return 1
        problems = refresh.verify(chosen, workers=args.jobs, progress=not args.quiet)
        for p in problems:
            print(f"coexist store: {p}", file=sys.stderr)
        if problems:
            return 1
        print(f"store: {len(chosen)} runs recomputed, every one bit-identical to its "
              f"stored result")
        return 0
    # refresh; a census given is read first, so a bad file is refused before any run
    given = store.read_census(Path(args.census)) if args.census else None
    stale = refresh.stale(entries)
    computed = refresh.recompute_stale(stale, workers=args.jobs, progress=not args.quiet)
    print(f"store: {len(stale)} stale runs, {computed} computed again", flush=True)
    if given is not None:
        census = given
    elif args.no_book:
        census = refresh.census_from_index(entries)
    else:
        from ..book import build as book

        log = paths.BUILD / "store-census.jsonl"
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text("")
        settings.export(lookup.LOG_ENV, str(log))
        # the book runs here: a cluster's workers would compute its new runs out of the
        # census's sight (the stale ones above went to the cluster and are kept locally)
        settings.export("COEXIST_SCHEDULER", None)
        status = book.build(paths.ROOT, jobs=args.jobs, bundled_only=True, fresh=True)
        if status:
            print("coexist store: the book build failed; the store is unchanged (the runs "
                  "it computed are kept locally, so the next refresh resumes)",
                  file=sys.stderr)
            return 1
        census = store.read_census(log)
    counts = store.commit(census, lookup.local_entries(), where, keep_unread=args.keep_unread)
    from ..data import datapackage

    datapackage.write_datapackage()
    print(f"store: {counts['entries']} runs ({counts['added']} added, {counts['kept']} kept, "
          f"{counts['dropped']} no longer read; {counts['objects_pruned']} objects pruned), "
          f"{store.size_bytes(where) / 1e6:.1f} MB; commit data/model-runs and "
          f"data/datapackage.json")
    return 0


def add_parsers(sub) -> None:
    """Add this module's commands to the ``coexist`` parser's subcommands."""
    ssub = command_group(sub, "store", "the committed fluid-model runs (data/model-runs)")
    ssub.add_parser("status", help="runs, size, pages, and how many are stale").set_defaults(
        func=_store)
    ssub.add_parser("check", help="fail unless every object is intact and every key "
                                  "current (no run is missing)").set_defaults(func=_store)
    for name, text in (("refresh", "compute what the book needs that the store lacks, "
                                   "drop what no page reads (make store)"),
                       ("verify", "recompute stored runs and require the same bits")):
        p = ssub.add_parser(name, help=text)
        p.add_argument("--jobs", type=number("jobs", int, low=1, high=MAX_JOBS), default=None,
                       help="runs computed at once (default: one per CPU)")
        p.add_argument("--scheduler", metavar="ADDRESS",
                       help="Dask scheduler address: the runs go to its cluster")
        p.add_argument("--quiet", action="store_true", help="no progress bar")
        p.set_defaults(func=_store)
        if name == "refresh":
            p.add_argument("--no-book", action="store_true",
                           help="recompute stale runs only; keep the pages the index records "
                                "instead of building the book to learn them")
            p.add_argument("--keep-unread", action="store_true",
                           help="keep runs that no page read")
            p.add_argument("--census", metavar="FILE",
                           help="the census of a book build already made with "
                                "COEXIST_FLUID_LOG=FILE, instead of building the book again")
        else:
            p.add_argument("--all", action="store_true", help="every run (make verify-store)")
            p.add_argument("--share", type=number("share", float, low=0.0, high=1.0,
                                                   low_open=True), default=0.05,
                           help="the sample's least share of the runs (default 0.05)")
            p.add_argument("--seed", help="the sample's seed (default: the commit)")

