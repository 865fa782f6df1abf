"""How a run meets signals: while the testbed is up, SIGTERM and SIGHUP raise
:class:`Interrupted` so that the ``finally`` blocks tear it down; while it is torn down,
SIGINT, SIGTERM and SIGHUP are held, then acted on, so the teardown is never cut short."""

from __future__ import annotations

import os
import signal
import threading
from contextlib import contextmanager


class Interrupted(Exception):
    """The run was stopped by a signal; the topology has been removed."""


@contextmanager
def _signals_raise():
    """Turn SIGTERM/SIGHUP into an exception so ``finally`` blocks tear the testbed down."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, _frame):
        raise Interrupted(f"stopped by signal {signal.Signals(signum).name}")

    old = {s: signal.signal(s, handler) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


@contextmanager
def _signals_deferred():
    """Hold SIGINT, SIGTERM and SIGHUP while the testbed is torn down, then act on the first
    one that came (through the handler that was in place, which raises).

    A signal that lands inside the teardown would abort it halfway and leave the run's
    namespaces behind: a campaign interrupted just as a run stopped early once did that.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    sigs = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    old = {s: signal.signal(s, lambda signum, _frame: caught.append(signum)) for s in sigs}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        if caught:
            first = caught[0]
            handler = old[first]
            if callable(handler):
                handler(first, None)
            elif handler == signal.SIG_DFL:
                os.kill(os.getpid(), first)
