"""A disk memo for fluid-model results.

The solver is deterministic, so a result is a function of its inputs and of the model's
code. Several figures ask for the same runs, and the book build and the figure check both
execute every notebook; the memo computes each run once per build. Keys hash the inputs
together with the source of the fluid-model package, so any change to the model's code
misses the memo. The memo lives in the book's build directory (``_build/fluid-cache``), so
a clean checkout starts empty; ``COEXIST_FLUID_CACHE`` names another directory, or ``off``
disables it. ``COEXIST_FLUID_LOG`` names a file to which every lookup appends one JSON line
(kind, inputs, hit or computed, seconds), the census from which a build's runs and their
cost are counted (``benchmarks/memo_census.py``).
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import os
import pickle
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from .. import paths
from ..params import invalid

PACKAGE = Path(__file__).resolve().parent
ROOT = paths.ROOT
ENV = "COEXIST_FLUID_CACHE"
LOG_ENV = "COEXIST_FLUID_LOG"


#: modules of the package that compute no stored value: this memo, and where runs execute
NOT_MODEL = ("cache.py", "fanout.py")


@functools.lru_cache(maxsize=1)
def code_hash() -> str:
    """sha256 over the fluid-model package's source files (those that compute values:
    scheduling the runs elsewhere does not change them, :data:`NOT_MODEL`)."""
    h = hashlib.sha256()
    for path in sorted(p for p in PACKAGE.glob("*.py") if p.name not in NOT_MODEL):
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def directory() -> Path | None:
    """Where the memo lives, or None when it is off (or there is no book checkout)."""
    value = os.environ.get(ENV, "")
    if value.lower() == "off":
        return None
    if value:
        where = Path(value)
        if where.exists() and not where.is_dir():
            raise invalid(ENV, value, "a directory (or a path to create), 'off' to disable "
                          "the memo")
        return where
    return paths.BUILD / "fluid-cache" if (ROOT / "_config.yml").exists() else None


def key(kind: str, inputs: dict[str, Any], shaped_by: Sequence[ModuleType] = ()) -> str:
    """The memo key of ``inputs`` for one kind of result under the current model code, and
    under the source of every module in ``shaped_by`` (modules outside the fluid-model
    package whose code shapes the stored value, e.g. the algorithm labels of
    :mod:`coexist.nash` in a mix's table)."""
    parts: dict[str, Any] = {"kind": kind, "inputs": inputs, "code": code_hash()}
    if shaped_by:
        parts["shaped_by"] = {m.__name__: _source_hash(m) for m in shaped_by}
    text = json.dumps(parts, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()


@functools.cache
def _source_hash(module: ModuleType) -> str:
    return hashlib.sha256(Path(module.__file__).read_bytes()).hexdigest()


def memo(kind: str, inputs: dict[str, Any], compute: Callable[[], Any], *,
         shaped_by: Sequence[ModuleType] = ()) -> Any:
    """``compute()``, or its stored result for the same kind, inputs and model code (and
    the source of the modules in ``shaped_by``, :func:`key`).

    Results are written atomically (a temporary file renamed into place), so concurrent
    threads or processes never read half a file; an unreadable entry is computed again.
    A caller that finds the same result being computed by another thread or process (the
    book executes pages in parallel, and several figures share runs) waits for it instead
    of computing it a second time: each key has a lock file held while it is computed.
    """
    where = directory()
    if where is None:
        return _timed(kind, inputs, compute)
    path = where / kind / f"{key(kind, inputs, shaped_by)}.pkl"
    found = _load(path)
    if found is not _MISSING:
        _log(kind, inputs, None)
        return found
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.with_suffix(".lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        found = _load(path)  # computed by whoever held the lock before us
        if found is not _MISSING:
            _log(kind, inputs, None)
            return found
        value = _timed(kind, inputs, compute)
        _store(path, value)
    return value


def stored(kind: str, inputs: dict[str, Any], *,
           shaped_by: Sequence[ModuleType] = ()) -> bool:
    """Whether the memo holds a result of ``kind`` for ``inputs`` (False when it is off):
    a caller that can compute several results in one run computes only the missing ones."""
    where = directory()
    return where is not None and (where / kind / f"{key(kind, inputs, shaped_by)}.pkl").exists()


def put(kind: str, inputs: dict[str, Any], value: Any, *,
        shaped_by: Sequence[ModuleType] = ()) -> None:
    """Store ``value`` as the result of ``kind`` for ``inputs``, unless the memo has it or
    is off: for a run that yields two kinds of result, the one not asked for yet. The
    value must be what :func:`memo`'s ``compute`` would return for these inputs."""
    where = directory()
    if where is None:
        return
    path = where / kind / f"{key(kind, inputs, shaped_by)}.pkl"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        _store(path, value)


def _timed(kind: str, inputs: dict[str, Any], compute: Callable[[], Any]) -> Any:
    started = time.perf_counter()
    value = compute()
    _log(kind, inputs, time.perf_counter() - started)
    return value


def _log(kind: str, inputs: dict[str, Any], seconds: float | None) -> None:
    """Append one line to the census file named by :data:`LOG_ENV`, if any: ``seconds``
    is the compute time, None for a result found in the memo."""
    where = os.environ.get(LOG_ENV, "")
    if not where:
        return
    line = json.dumps({"kind": kind, "inputs": inputs, "hit": seconds is None,
                       "seconds": seconds, "pid": os.getpid()}, sort_keys=True, default=repr)
    with open(where, "a") as f:  # one short append per line: lines never interleave
        f.write(line + "\n")


_MISSING = object()


def _load(path: Path) -> Any:
    if path.exists():
        try:
            with path.open("rb") as f:
                return pickle.load(f)
        except (OSError, EOFError, pickle.UnpicklingError):
            pass
    return _MISSING


def _store(path: Path, value: Any) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            pickle.dump(value, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
