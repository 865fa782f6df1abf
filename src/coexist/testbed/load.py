"""Deliberate background load during a run, to measure how much concurrent work on the
same machine shifts a result (campaigns run one experiment at a time because of this).

Kinds:

- ``none``: nothing.
- ``cpu``: one busy-looping process per core, at normal priority.
- ``book``: the book being built in a loop (``jupyter-book build`` into a scratch directory),
  the heaviest thing this project itself does.
- ``experiment``: a second experiment with the same parameters, in its own namespaces; its
  measurements are discarded.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..core.provenance import ROOT
from .spec import Experiment, format_flows

KINDS = ("none", "cpu", "book", "experiment")


def commands(kind: str, exp: Experiment, scratch: Path) -> list[list[str]]:
    """The processes that make up the load (each runs until it is stopped)."""
    if kind not in KINDS:
        raise ValueError(f"load {kind!r}; valid: {', '.join(KINDS)}")
    if kind == "none":
        return []
    if kind == "cpu":
        return [[sys.executable, "-c", "while True: pass"] for _ in range(os.cpu_count() or 1)]
    if kind == "book":
        jb = str(Path(sys.executable).with_name("jupyter-book"))
        loop = (f"while true; do {jb} build --path-output {scratch} {ROOT} "
                f">/dev/null 2>&1; rm -rf {scratch}/_build; done")
        return [["bash", "-c", loop]]
    # a twin experiment, long enough to cover the measured one, started just before it
    twin = [sys.executable, "-m", "coexist.cli", "run", "--quiet",
            "--capacity", f"{exp.capacity_bps:.0f}", "--rtt", f"{exp.rtt_s}",
            "--buffer-bdp", f"{exp.buffer_bdp}", "--flows", format_flows(exp.flows, exp.rtt_s),
            "--duration", f"{exp.duration_s + 10:g}", "--warmup", "0", "--delay", exp.delay]
    return [twin]


@contextmanager
def background(kind: str, exp: Experiment) -> Iterator[list[subprocess.Popen]]:
    """Run the load for the duration of the ``with`` block, then stop all of it."""
    scratch = Path(tempfile.mkdtemp(prefix="coexist-load-"))
    procs = [subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True) for cmd in commands(kind, exp, scratch)]
    try:
        yield procs
    finally:
        for p in procs:
            if p.poll() is None:
                # SIGTERM first: a twin experiment tears its namespaces down on SIGTERM
                os.killpg(p.pid, signal.SIGTERM)
        for p in procs:
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(10)
        shutil.rmtree(scratch, ignore_errors=True)
