"""Keeping the committed store whole: which entries are stale under the current code,
computing them again, and verifying stored results bit for bit (:mod:`.store`, whose
format this module reads; :mod:`.lookup`, whose registered computations it calls)."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable, Sequence

from . import codec, lookup
from .store import Entry, StoreError


def current_key(entry: Entry) -> str | None:
    """The key of the entry's inputs under the current code (None for a kind no module
    registers any more)."""
    lookup.load_kinds()
    known = entry.kind in lookup.KINDS
    return lookup.key(entry.kind, codec.decode(entry.inputs)) if known else None


def stale(entries: Iterable[Entry]) -> list[Entry]:
    """Entries whose key is not the key of their inputs under the current code: the model
    changed since they were computed."""
    return [e for e in entries if current_key(e) != e.key]


def recompute(entry: Entry) -> str:
    """The canonical text of the entry's result computed again from its inputs, with every
    memo bypassed (nothing read, nothing written)."""
    lookup.load_kinds()
    compute = lookup.KINDS.get(entry.kind)
    if compute is None:
        raise StoreError(f"{entry.kind} run {entry.key[:12]}: no computation registered for "
                         f"kind {entry.kind!r} (known: {', '.join(sorted(lookup.KINDS))})")
    with lookup.bypassed():
        value = compute(codec.decode(entry.inputs))
    return codec.dumps(value)


def verify(entries: Sequence[Entry], *, workers: int | None = None,
           progress: bool = True) -> list[str]:
    """Recompute ``entries`` (on this machine's threads, or the Dask cluster named by
    ``COEXIST_SCHEDULER``) and compare each with its stored object bit for bit: the
    problems, one line each naming the entry (empty when every one matches)."""
    from ..core.progress import tqdm
    from . import fanout

    def one(e: Entry) -> str:
        return hashlib.sha256(recompute(e).encode("utf-8")).hexdigest()

    problems = []
    results = fanout.imap(one, list(entries), workers)
    for e, digest in tqdm(zip(entries, results, strict=True), total=len(entries),
                          desc="store check", unit="run", disable=not progress):
        if digest != e.object:
            problems.append(f"{e.kind} run {e.key[:12]} (pages {', '.join(e.pages) or '-'}): "
                            f"recomputed result differs from stored object {e.object[:12]}")
    return problems


def recompute_stale(entries: Sequence[Entry], *, workers: int | None = None,
                    progress: bool = True) -> int:
    """Compute, under the current code, every stale entry's run that neither the store
    nor the local layer holds yet, into the local layer (on threads or the Dask cluster;
    what is already there is never computed again, so an interrupted refresh resumes).
    Returns how many were computed."""
    from ..core.progress import tqdm
    from . import fanout

    if lookup.directory() is None:
        raise StoreError(f"the local memo is off ({lookup.ENV}=off): nowhere to keep the runs")
    jobs = []
    for e in entries:
        if current_key(e) is None:
            raise StoreError(f"{e.kind} run {e.key[:12]}: no computation registered for "
                             f"kind {e.kind!r}")
        if not lookup.stored(e.kind, codec.decode(e.inputs)):  # in the store or kept locally
            jobs.append(e)

    def one(e: Entry) -> tuple[str, float]:
        started = time.perf_counter()
        text = recompute(e)
        return text, time.perf_counter() - started

    results = fanout.imap(one, jobs, workers)
    for e, (text, wall_s) in tqdm(zip(jobs, results, strict=True), total=len(jobs),
                                  desc="store refresh", unit="run", disable=not progress):
        lookup.put(e.kind, codec.decode(e.inputs), codec.loads(text), wall_s=wall_s)
    return len(jobs)


def census_from_index(entries: Iterable[Entry]) -> dict[str, dict]:
    """The census the index itself records, keyed under the current code: what a refresh
    without a book build commits (the same pages read the same runs)."""
    out: dict[str, dict] = {}
    for e in entries:
        k = current_key(e)
        if k is not None:
            out.setdefault(k, {"kind": e.kind, "pages": set()})["pages"].update(e.pages)
    return out
