"""Where the fluid model's independent runs execute: this process's threads, or a Dask
cluster.

A sweep (every mix of every buffer, every two-flow setting) is a list of independent runs.
By default they run on this machine's threads (the compiled kernel releases the GIL, so a
2-core machine runs two at once). With :data:`SCHEDULER_ENV` set to a Dask scheduler's
address (``coexist figures --scheduler``, ``coexist book --scheduler``, which pass it to
every notebook's kernel), they go to that cluster instead, one run per task, and a reader
with a cluster re-runs the book's sweeps in the time of its slowest runs.

A worker computes with its own copy of the package, so each task carries the hash of the
caller's model code (:func:`coexist.runstore.lookup.code_hash`) and a worker whose code differs
refuses the task, naming both hashes: a cluster never mixes two versions of the model. A
worker memoises what it computes in its own store (:mod:`.lookup`); on one machine that is
the caller's store.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from . import lookup

#: the environment variable naming the Dask scheduler the sweeps use
SCHEDULER_ENV = "COEXIST_SCHEDULER"

J = TypeVar("J")
R = TypeVar("R")


def scheduler() -> str | None:
    """The Dask scheduler address the sweeps use, or None for this machine's threads."""
    from ..core import settings

    return settings.text(SCHEDULER_ENV)


def reach(address: str, timeout_s: float = 10.0) -> int:
    """Connect to the scheduler at ``address`` once, before any work starts; return its
    number of workers. A scheduler that does not answer, or has no worker, is refused with
    one line naming the address."""
    from distributed import Client

    from ..core.params import invalid

    try:
        with Client(address, timeout=timeout_s, set_as_default=False) as client:
            workers = len(client.scheduler_info()["workers"])
    except OSError as exc:
        raise invalid("scheduler", address, f"a Dask scheduler that answers within "
                      f"{timeout_s:g} s ({type(exc).__name__}: {exc})") from None
    if workers == 0:
        raise invalid("scheduler", address, "a Dask scheduler with at least one worker")
    return workers


def _on_worker(fn: Callable[[J], R], job: J, code: str) -> R:
    """Run one job on a Dask worker whose model code is the caller's."""
    here = lookup.code_hash()
    if here != code:
        raise RuntimeError(f"this worker's fluid-model code (sha256 {here[:12]}) is not the "
                           f"caller's ({code[:12]}): install the same commit on every worker")
    return fn(job)


def imap(fn: Callable[[J], R], jobs: Sequence[J], workers: int | None = None) -> Iterator[R]:
    """``fn`` over ``jobs``, results in the jobs' order: on the Dask cluster of
    :func:`scheduler` if one is named, else on ``workers`` threads (default: one per CPU)."""
    address = scheduler()
    if address is None:
        with ThreadPoolExecutor(max_workers=workers or os.cpu_count() or 1) as pool:
            yield from pool.map(fn, jobs)
        return
    from distributed import Client

    code = lookup.code_hash()
    with Client(address, set_as_default=False) as client:
        futures = [client.submit(_on_worker, fn, job, code, pure=False) for job in jobs]
        for fut in futures:
            yield fut.result()


def map_list(fn: Callable[[J], R], jobs: Iterable[J], workers: int | None = None) -> list[R]:
    """:func:`imap` as a list."""
    return list(imap(fn, list(jobs), workers))


__all__ = ["SCHEDULER_ENV", "imap", "map_list", "reach", "scheduler"]
