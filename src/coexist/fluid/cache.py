"""The memo of fluid-model results: the committed store first, then a local layer.

The solver is deterministic, so a result is a function of its inputs and of the model's
code. Every kind of result is computed by one registered function of its inputs alone
(:func:`computes`), so any stored result can be computed again from what is stored with it.
Keys hash the kind and inputs together with the model's source: the fluid-model package and
the two packages beneath it that its results read (:data:`MODEL_PACKAGES`: the closed form's
labels and equilibria, the series analysis), so any change to that code misses the memo.

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

import ast
import contextlib
import fcntl
import functools
import gzip
import hashlib
import importlib
import io
import json
import os
import platform
import threading
import time
import tokenize
import zlib
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..core import files, paths, settings
from . import codec, store

PACKAGE = Path(__file__).resolve().parent
#: the packages whose source is the model's code: this one and those it imports (the layers
#: beneath it): a change to any of their modules changes every key, so no stored result
#: outlives the code that computed it
MODEL_PACKAGES = (PACKAGE, PACKAGE.parent / "closed_form", PACKAGE.parent / "analysis")
ROOT = paths.ROOT
ENV = "COEXIST_FLUID_CACHE"
LOG_ENV = "COEXIST_FLUID_LOG"
STRICT_ENV = "COEXIST_STORE_STRICT"
PAGE_ENV = "COEXIST_PAGE"

#: modules of the package that compute no stored value: the memo and store, their format,
#: and where runs execute
NOT_MODEL = ("cache.py", "codec.py", "fanout.py", "kernel_cache.py", "refresh.py", "store.py")

#: the modules whose import registers every kind of stored result (:func:`load_kinds`)
KIND_MODULES = ("coexist.fluid.equilibria", "coexist.fluid.run_length",
                "coexist.fluid.convergence", "coexist.fluid.authors", "coexist.fluid.fluctuation",
                "coexist.fluid.beside_measured", "coexist.fluid.insights")


#: every kind of stored result, by name: the function of its inputs that computes it
KINDS: dict[str, Callable[[dict], Any]] = {}


def computes(kind: str) -> Callable:
    """Register the decorated function of a run's inputs as the computation of ``kind``:
    :func:`memo` calls it on a miss and the store's verification calls it again. It must
    live in the fluid-model package, whose source is part of every key."""
    def register(fn: Callable[[dict], Any]) -> Callable[[dict], Any]:
        if kind in KINDS and KINDS[kind] is not fn:
            raise RuntimeError(f"two computations registered for kind {kind!r}")
        if not fn.__module__.startswith(__package__ + "."):
            raise RuntimeError(f"kind {kind!r} is computed outside {__package__} "
                               f"({fn.__module__}), whose source no key covers")
        KINDS[kind] = fn
        return fn
    return register


def load_kinds() -> None:
    for name in KIND_MODULES:
        importlib.import_module(name)


def model_sources() -> list[Path]:
    """The source files of :data:`MODEL_PACKAGES` that compute values (storing and
    scheduling the runs does not change them, :data:`NOT_MODEL`)."""
    return sorted(p for top in MODEL_PACKAGES for p in top.glob("*.py")
                  if not (top == PACKAGE and p.name in NOT_MODEL))


def _docstring_starts(tree: ast.AST) -> list[tuple[int, int]]:
    """Where each docstring begins, as (line, byte column) of its string: the first
    statement of the module, a class or a function when it is a string alone."""
    starts = []
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
                and body and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            starts.append((body[0].lineno, body[0].col_offset))
    return starts


def _tokens(source: str) -> list[tuple[str, str, tuple[int, int]]]:
    """The source's tokens as (kind, text, start), an f-string as one
    ``STRING`` token whichever Python reads it: 3.12 splits an f-string into
    ``FSTRING_START`` ... ``FSTRING_END``, which are joined here into the literal's text."""
    lines = io.StringIO(source).readlines()

    def text(start: tuple[int, int], end: tuple[int, int]) -> str:
        if start[0] == end[0]:
            return lines[start[0] - 1][start[1]:end[1]]
        return (lines[start[0] - 1][start[1]:] + "".join(lines[start[0]:end[0] - 1])
                + lines[end[0] - 1][:end[1]])

    out, depth, opened = [], 0, None
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        kind = tokenize.tok_name[tok.type]
        if kind == "FSTRING_START":
            depth += 1
            if depth == 1:
                opened = tok
            continue
        if depth:
            if kind == "FSTRING_END":
                depth -= 1
                if depth == 0:
                    out.append(("STRING", text(opened.start, tok.end), opened.start))
            continue
        out.append((kind, tok.string, tok.start))
    return out


#: tokens that are layout, not code: comments, line breaks inside brackets, the file's end
_LAYOUT = frozenset({"COMMENT", "NL", "ENCODING", "ENDMARKER"})


def code_of(source: str) -> str:
    """What a module computes, as text: its tokens without docstrings, comments or layout,
    one per line as kind and text (indentation as ``INDENT``/``DEDENT``, a statement's end
    as ``NEWLINE``). Rewording a docstring or a comment, or re-wrapping a line, leaves it
    unchanged, so the stored runs keep their keys; any change to a statement or an
    expression changes it (adding redundant brackets too, which is conservative).

    Tokens, not the syntax tree: ``ast.dump``'s text changes between Python minor versions
    (new fields, 3.13 leaves out empty ones), so a tree-keyed store would miss on every run
    under another Python. Python's tokens are the language's lexical grammar, which
    releases extend rather than re-spell; the one change in how existing code tokenizes,
    3.12's split f-strings, is joined back into one string token (:func:`_tokens`)."""
    starts = set(_docstring_starts(ast.parse(source)))
    lines = io.StringIO(source).readlines()
    kept, skipping, own_line = [], False, False
    for kind, text, start in _tokens(source):
        if kind in _LAYOUT:
            continue
        column_bytes = len(lines[start[0] - 1][:start[1]].encode()) if kind == "STRING" else 0
        if kind == "STRING" and (start[0], column_bytes) in starts:
            # the docstring and its implicit continuations; its NEWLINE too where it is a
            # statement of its own (``def f(): "doc"`` keeps the NEWLINE that ends the def)
            skipping = True
            own_line = not kept or kept[-1].split(" ", 1)[0] in ("NEWLINE", "INDENT", "DEDENT")
            continue
        if skipping:
            if kind == "STRING":
                continue
            skipping = False
            if kind == "NEWLINE" and own_line:
                continue
        if kind in ("INDENT", "DEDENT", "NEWLINE"):
            text = ""
        kept.append(f"{kind} {text}")
    return "\n".join(kept)


def source_digest(paths: Sequence[Path], base: Path) -> str:
    """sha256 over ``paths`` in order: each file's path under ``base`` and its code
    (:func:`code_of`)."""
    h = hashlib.sha256()
    for path in paths:
        h.update(path.relative_to(base).as_posix().encode() + b"\0")
        h.update(code_of(path.read_text(encoding="utf-8")).encode() + b"\0")
    return h.hexdigest()


#: one thread at a time parses the model's source: ``ast.parse`` run in two threads at once
#: can fail on this CPython 3.11 ("SystemError: AST constructor recursion depth mismatch",
#: as in cpython#106905), and runs are looked up from several threads (the reference test
#: met it on a clean clone)
_PARSING = threading.Lock()


@functools.lru_cache(maxsize=1)
def code_hash() -> str:
    """sha256 over the model's source files (:func:`model_sources`), each named by its path
    under the ``coexist`` package and read for its code alone (:func:`code_of`)."""
    with _PARSING:
        return source_digest(model_sources(), PACKAGE.parent)


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
