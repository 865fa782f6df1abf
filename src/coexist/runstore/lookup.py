"""The memo of fluid-model results: the committed store first, then a local layer.

The solver is deterministic, so a result is a function of its inputs and of the model's
code. Every kind of result is computed by one registered function of its inputs alone
(:func:`computes`), so any stored result can be computed again from what is stored with it.
Keys hash the kind and inputs together with the model's source (:mod:`.source_key`: the
model's package and the packages beneath it that its results read, as the model declares
them), so any change to that code misses the memo.

A lookup reads, in order:

1. the committed store, ``data/model-runs`` (:mod:`.store`): the runs the book needs, read
   by every build, verified in CI;
2. the local layer, ``_build/fluid-cache`` (``COEXIST_FLUID_CACHE`` names another
   directory, ``off`` disables both layers): what this checkout computed that the store
   lacks, e.g. a reader's new parameters; each entry one gzip'd JSON file with its inputs
   and provenance, never pickle;
3. else the run is computed and kept in the local layer. With ``COEXIST_STORE_STRICT=1``
   (CI's book build) a run missing from the store is an error naming the page, the run and
   the command that adds it.

``COEXIST_FLUID_LOG`` names a file to which every lookup appends one JSON line (page, kind,
key, inputs, where it was found or how long it took): the census from which ``make store``
learns which pages read which runs (``benchmarks/memo_census.py`` counts a build's cost
from it). The page is the book page being executed (``COEXIST_PAGE``, set by the book's
Sphinx extension) or the figure a notebook checks its parameters for.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import gzip
import hashlib
import json
import os
import platform
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..core import files, paths, settings
from . import codec, source_key, store
from .source_key import code_hash, load_kinds

ROOT = paths.ROOT
ENV = "COEXIST_FLUID_CACHE"
LOG_ENV = "COEXIST_FLUID_LOG"
STRICT_ENV = "COEXIST_STORE_STRICT"
PAGE_ENV = "COEXIST_PAGE"

#: every kind of stored result, by name: the function of its inputs that computes it
KINDS: dict[str, Callable[[dict], Any]] = {}


def computes(kind: str) -> Callable:
    """Register the decorated function of a run's inputs as the computation of ``kind``:
    :func:`memo` calls it on a miss and the store's verification calls it again. It must
    live in the declared model's packages (:func:`.source_key.declare_model`), whose source
    is part of every key."""
    def register(fn: Callable[[dict], Any]) -> Callable[[dict], Any]:
        if kind in KINDS and KINDS[kind] is not fn:
            raise RuntimeError(f"two computations registered for kind {kind!r}")
        packages = source_key.model_packages()
        if not any(fn.__module__.startswith(p + ".") for p in packages):
            raise RuntimeError(f"kind {kind!r} is computed outside {', '.join(packages)} "
                               f"({fn.__module__}), whose source no key covers")
        KINDS[kind] = fn
        return fn
    return register


def directory() -> Path | None:
    """Where the local layer lives, or None when the memo is off (or there is no book
    checkout)."""
    if settings.is_set(ENV):
        return settings.directory(ENV, off=True)
    return paths.BUILD / "fluid-cache" if (ROOT / "_config.yml").exists() else None


def key(kind: str, inputs: dict[str, Any]) -> str:
    """The memo key of ``inputs`` for one kind of result under the current model code.
    The inputs must be JSON (a value JSON cannot hold is refused, never keyed by its
    ``repr``); a mapping's keys are sorted, as the inputs name their values."""
    parts: dict[str, Any] = {"kind": kind, "inputs": inputs, "code": code_hash()}
    text = json.dumps(parts, sort_keys=True, allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


_local = threading.local()


def _bypassing() -> bool:
    return getattr(_local, "bypass", 0) > 0


@contextlib.contextmanager
def bypassed() -> Iterator[None]:
    """Within this block (in this thread), results are computed, never read or stored:
    what the store's verification needs. Other threads' lookups are unaffected."""
    _local.bypass = getattr(_local, "bypass", 0) + 1
    try:
        yield
    finally:
        _local.bypass -= 1


def memo(kind: str, inputs: dict[str, Any], compute: Callable[[], Any] | None = None) -> Any:
    """The result of ``kind`` for ``inputs``: from the committed store, else the local
    layer, else computed by ``compute()`` (default: the kind's registered computation) and
    kept locally.

    Local entries are written atomically (a temporary file renamed into place), so
    concurrent threads or processes never read half a file; an unreadable local entry is
    computed again (a committed one is refused: :mod:`.store`). A caller that finds the same
    result being computed by another thread or process (the book executes pages in
    parallel, and several figures share runs) waits for it instead of computing it a
    second time: each key has a lock file held while it is computed.
    """
    if compute is None:
        if kind not in KINDS:
            load_kinds()
        fn = KINDS.get(kind)
        if fn is None:
            raise RuntimeError(f"no computation registered for kind {kind!r}")
        compute = functools.partial(fn, inputs)
    if _bypassing() or directory() is None:
        return _timed(kind, inputs, None, compute)[0]
    k = key(kind, inputs)
    found, value = store.lookup(k)
    if found:
        _log(kind, inputs, k, "store", None)
        return value
    if settings.flag(STRICT_ENV):
        raise store.StoreError(
            f"page {page() or '(no page)'} needs a {kind} run the store lacks (key "
            f"{k[:12]}, inputs {_short(inputs)}): run `{store.REFRESH}` and commit "
            f"data/model-runs")
    where = directory()
    path = where / kind / f"{k}.json.gz"
    found, value = _load(path)
    if found:
        _log(kind, inputs, k, "local", None)
        return value
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.with_suffix(".lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        found, value = _load(path)  # computed by whoever held the lock before us
        if found:
            _log(kind, inputs, k, "local", None)
            return value
        value, wall_s = _timed(kind, inputs, k, compute)
        _store_local(path, kind, k, inputs, value, wall_s)
    return value


def stored(kind: str, inputs: dict[str, Any]) -> bool:
    """Whether the store or the local layer holds a result of ``kind`` for ``inputs``
    (False when the memo is off): a caller that can compute several results in one run
    computes only the missing ones."""
    if _bypassing() or directory() is None:
        return False
    k = key(kind, inputs)
    return k in store.read_index() or (directory() / kind / f"{k}.json.gz").exists()


def put(kind: str, inputs: dict[str, Any], value: Any, *, wall_s: float | None = None,
        read: bool = False) -> None:
    """Keep ``value`` as the result of ``kind`` for ``inputs``, unless the memo has it or
    is off: for a run that yields two kinds of result, the one not asked for yet. The
    value must be what the kind's computation returns for these inputs (the store's
    verification recomputes it so). ``read``: the caller uses ``value`` itself instead of
    looking it up, so the census counts it as read by the page (the store must hold it)."""
    if _bypassing() or directory() is None:
        return
    k = key(kind, inputs)
    if read:
        _log(kind, inputs, k, "put", None)
    if k in store.read_index():
        return
    path = directory() / kind / f"{k}.json.gz"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        _store_local(path, kind, k, inputs, value, wall_s)


def local_entries(where: Path | None = None) -> Iterator[dict]:
    """Every readable entry of the local layer: kind, key, inputs (encoded), value text
    (canonical) and provenance."""
    where = directory() if where is None else where
    if where is None or not where.exists():
        return
    for path in sorted(where.glob("*/*.json.gz")):
        try:
            yield json.loads(gzip.decompress(path.read_bytes()))
        except (OSError, EOFError, ValueError, zlib.error):
            continue


def page() -> str | None:
    return settings.text(PAGE_ENV)


def _short(inputs: dict[str, Any], width: int = 160) -> str:
    text = json.dumps(inputs, sort_keys=True, default=repr)
    return text if len(text) <= width else text[:width - 3] + "..."


def _timed(kind: str, inputs: dict[str, Any], k: str | None,
           compute: Callable[[], Any]) -> tuple[Any, float]:
    """``compute()`` and its wall seconds, logged to the census."""
    started = time.perf_counter()
    value = compute()
    seconds = time.perf_counter() - started
    _log(kind, inputs, k, "computed", seconds)
    return value, seconds


def _log(kind: str, inputs: dict[str, Any], k: str | None, source: str,
         seconds: float | None) -> None:
    """Append one line to the census file named by :data:`LOG_ENV`, if any: ``seconds``
    is the compute time, None for a result found in the store or the local layer."""
    where = settings.file(LOG_ENV)
    if where is None:
        return
    line = json.dumps({"kind": kind, "inputs": inputs, "key": k, "page": page(),
                       "source": source, "hit": seconds is None, "seconds": seconds,
                       "pid": os.getpid()}, sort_keys=True, default=repr)
    with open(where, "a") as f:  # one short append per line: lines never interleave
        f.write(line + "\n")


@functools.cache
def _machine() -> dict:
    import numba
    import numpy
    import pandas

    from ..core import provenance

    return {"kernel": platform.release(), "cpu": provenance.cpu_model(),
            "python": platform.python_version(),
            "numpy": numpy.__version__, "pandas": pandas.__version__,
            "numba": numba.__version__, **provenance.git_commit()}


def _store_local(path: Path, kind: str, k: str, inputs: dict, value: Any,
                 wall_s: float | None) -> None:
    text = codec.dumps(value)
    if codec.dumps(codec.loads(text)) != text:  # never keep what would not read back
        raise codec.CodecError(f"a {kind} result that does not read back bit for bit")
    entry = {"kind": kind, "key": k, "inputs": codec.encode(inputs), "value": text,
             "provenance": {**_machine(), "page": page(),
                            "wall_s": None if wall_s is None else round(wall_s, 3),
                            "time_utc": datetime.now(UTC).isoformat(timespec="seconds")}}
    data = gzip.compress(json.dumps(entry).encode("utf-8"), mtime=0)  # inputs keep their order
    files.atomic_write(path, data)


def _load(path: Path) -> tuple[bool, Any]:
    try:
        entry = json.loads(gzip.decompress(path.read_bytes()))
        return True, codec.loads(entry["value"])
    except FileNotFoundError:
        return False, None
    except (OSError, EOFError, ValueError, KeyError, TypeError, zlib.error, codec.CodecError):
        return False, None  # half-written or damaged: computed again
