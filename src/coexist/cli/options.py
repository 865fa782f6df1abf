"""What every ``coexist`` command shares: the ranges of its numeric options, the parser
whose errors are one line, argparse types that name the parameter, and the checks made
before any run."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from ..book import ledger
from ..core.params import Param, ParameterError, invalid

#: Ware et al.'s competition time d (:data:`coexist.book.ledger.DURATION`'s range)
DURATION_S = (ledger.DURATION.low, ledger.DURATION.high)
#: a fluid run's simulated time (the metric figures' range,
#: :func:`coexist.book.ledger.specs._metrics_spec`),
#: its base RTTs and capacity (the fluid notebooks': :data:`coexist.book.ledger.TRACE_RTT`,
#: :data:`coexist.book.ledger.FLUID_CAPACITY`)
FLUID_DURATION_S = (0.5, 600.0)
FLUID_RTT_S = (ledger.TRACE_RTT.low / 1e3, ledger.TRACE_RTT.high / 1e3)
FLUID_CAPACITY_BPS = (ledger.FLUID_CAPACITY.low * 1e6, ledger.FLUID_CAPACITY.high * 1e6)
#: at most this many runs or pages at once (more threads than any machine has cores)
MAX_JOBS = 256


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2, as for ParameterError
        self.exit(2, f"{self.prog}: error: {message}\n")


def command_group(sub, name: str, help: str):
    """A command with subcommands of its own (``coexist <name> <what>``): the subparsers to
    add them to."""
    return sub.add_parser(name, help=help).add_subparsers(dest="what", required=True,
                                                          parser_class=Parser)


def number(name: str, kind: type, **limits) -> callable:
    """An argparse type that checks range and names the parameter in its error."""
    return quantity(Param(name, kind, None, **limits).parse, name)


def quantity(parse: callable, name: str) -> callable:
    """An argparse type from a parser raising :class:`ParameterError` (a
    :mod:`coexist.core.quantities` parser for a number with its unit, or a parameter's own)."""
    def convert(text: str):
        try:
            return parse(text)
        except ParameterError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    convert.__name__ = name
    return convert


def commit_seed() -> str:
    """The seed of CI's sample: the commit being tested (so each commit checks another
    sample), or 'uncommitted' outside a git checkout."""
    from ..core.provenance import git_commit

    return git_commit().get("commit") or "uncommitted"


def finite(value) -> float | None:
    v = float(value)
    return v if v == v else None


def stoppable() -> None:
    """Long-running commands stop cleanly on SIGINT, SIGTERM and SIGHUP, even when started
    with SIGINT ignored (as background jobs of a non-interactive shell are)."""
    import signal

    from ..testbed.experiment import Interrupted

    def stop(signum, _frame):
        raise Interrupted(f"stopped by signal {signal.Signals(signum).name}")

    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGHUP, stop)


def check_out_dir(out: Path) -> None:
    """Refuse an output directory that could not be written to, before any work: a file,
    a path below a file, or a directory (or its nearest existing parent) where a file
    cannot be created, which is tried (root passes every permission check, not a
    read-only file system or /proc)."""
    import tempfile

    if out.exists() and not out.is_dir():
        raise invalid("out", str(out), "a directory (or a path to create), not a file")
    parent = next((p for p in (out, *out.parents) if p.exists()), None)
    valid = "a directory this user can create or write into"
    if parent is None or not parent.is_dir():
        raise invalid("out", str(out), valid)
    try:
        fd, probe = tempfile.mkstemp(dir=parent, prefix=".coexist-write-test-")
    except OSError as exc:
        raise invalid("out", str(out), valid, exc.strerror or type(exc).__name__) from None
    os.close(fd)
    os.unlink(probe)


def check_scheduler(address: str) -> None:
    """A Dask scheduler address: ``[tcp|tls|inproc|ucx]://HOST:PORT`` or ``HOST:PORT``."""
    import re

    if not re.fullmatch(r"(?:(?:tcp|tls|ucx|inproc)://)?[\w.\-\[\]:]+:\d{1,5}", address):
        raise invalid("scheduler", address, "a Dask scheduler address such as "
                      "tcp://10.0.0.1:8786 or 10.0.0.1:8786")
