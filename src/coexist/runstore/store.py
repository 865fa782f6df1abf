"""The committed store of fluid-model runs: content-addressed, verified, read by the book.

A fluid-model run is a deterministic function of the model's code and its inputs, so its
result can be committed beside the data it is read with, as a reproducible paper commits
its cached computations. The store lives in ``data/model-runs/`` (:data:`ROOT_DEFAULT`;
``COEXIST_MODEL_RUNS`` names another):

- ``index.jsonl``: one line per run, sorted by kind and key: the run's ``key`` (the memo key
  of :func:`.lookup.key`: sha256 of its kind, inputs and the model's code), ``kind``,
  ``inputs`` (in :mod:`.codec`'s encoding, so the run can be computed again), the
  ``object`` holding its result, the ``pages`` of the book that read it, and its
  ``provenance`` (commit, kernel, CPU, versions, wall time, date).
- ``objects/<aa>/<sha256>.json.gz``: each result as :func:`.codec.dumps` text, gzip'd
  deterministically and named by the sha256 of that text. Loading cannot execute code.

Because results are named by their content, a change of the model's code that leaves a
result's bits alone (a refactoring, a docstring) gives the run a new key in the index but
the same object: the repository's history grows by the index's changed lines, not by the
results again. An entry whose object is missing, truncated or not what its name says is
refused with one line naming it (:class:`StoreError`); a run that the store lacks is
computed and kept in the build's local memo (:mod:`.lookup`), never written here except by
``coexist store refresh`` (``make store``), which also drops what no page reads.
Verification recomputes entries from their inputs with the memo bypassed and requires the
same bits (:func:`.refresh.verify`): CI a seeded sample (:func:`sample`), ``make
verify-store`` all of them.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
import math
import random
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core import paths, settings
from ..core.files import atomic_write
from . import codec

ENV = "COEXIST_MODEL_RUNS"
ROOT_DEFAULT = paths.DATA / "model-runs"
INDEX = "index.jsonl"
OBJECTS = "objects"
#: the command that adds what the book needs and the store lacks
REFRESH = "make store"
#: what to do about a committed object that cannot be read
RESTORE = "restore it from the repository (git checkout -- data/model-runs)"


class StoreError(RuntimeError):
    """A stored run that cannot be trusted, or a run the book needs that the store lacks."""


def root() -> Path:
    return settings.directory(ENV) or ROOT_DEFAULT


@dataclass(frozen=True)
class Entry:
    """One line of the index."""

    key: str
    kind: str
    inputs: Any  # encoded (codec)
    object: str
    pages: tuple[str, ...]
    provenance: dict

    def line(self) -> str:
        # not sorted: the inputs keep their order (a computation may iterate over them)
        return json.dumps({"key": self.key, "kind": self.kind, "inputs": self.inputs,
                           "object": self.object, "pages": list(self.pages),
                           "provenance": self.provenance},
                          separators=(",", ":"), allow_nan=False)


def object_path(where: Path, digest: str) -> Path:
    return where / OBJECTS / digest[:2] / f"{digest}.json.gz"


def read_index(where: Path | None = None) -> dict[str, Entry]:
    """The index of the store at ``where`` (default :func:`root`), by key; empty when the
    store has none. A malformed line is refused naming the file and line."""
    where = root() if where is None else where
    path = where / INDEX
    try:
        stat = path.stat()
    except FileNotFoundError:
        return {}
    # a file replaced within one timestamp tick keeps mtime and size, not its inode
    return dict(_read_index(str(path), stat.st_ino, stat.st_mtime_ns, stat.st_ctime_ns,
                            stat.st_size))


@functools.lru_cache(maxsize=4)
def _read_index(path: str, *_identity: int) -> tuple[tuple[str, Entry], ...]:
    out = []
    try:
        lines = Path(path).read_bytes().decode("utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise StoreError(f"{path}: unreadable ({type(exc).__name__}: {exc})") from None
    for n, line in enumerate(lines, 1):
        try:
            d = json.loads(line)
            e = Entry(d["key"], d["kind"], d["inputs"], d["object"], tuple(d["pages"]),
                      d["provenance"])
            if not (isinstance(e.key, str) and isinstance(e.object, str)):
                raise TypeError("key and object must be text")
        except (ValueError, KeyError, TypeError) as exc:
            raise StoreError(f"{path}:{n}: not an index entry "
                             f"({type(exc).__name__}: {exc})") from None
        out.append((e.key, e))
    return tuple(out)


def read_object(where: Path, digest: str, what: str = "") -> Any:
    """The result stored as object ``digest``; refused (one line naming the file) when it
    is missing, truncated or its content's sha256 is not its name."""
    path = object_path(where, digest)
    label = f"{path}{f' ({what})' if what else ''}"
    try:
        text = gzip.decompress(path.read_bytes())
    except FileNotFoundError:
        raise StoreError(f"{label}: missing from the store; {RESTORE}") from None
    except (OSError, EOFError, zlib.error) as exc:  # gzip.BadGzipFile is an OSError
        raise StoreError(f"{label}: unreadable ({type(exc).__name__}: {exc}); "
                         f"{RESTORE}") from None
    if hashlib.sha256(text).hexdigest() != digest:
        raise StoreError(f"{label}: its content's sha256 is not its name (edited or "
                         f"corrupted); {RESTORE}")
    try:
        return codec.loads(text.decode("utf-8"))
    except (ValueError, KeyError, TypeError, codec.CodecError) as exc:
        raise StoreError(f"{label}: not a stored result ({type(exc).__name__}: {exc})") from None


def lookup(key: str) -> tuple[bool, Any]:
    """``(True, result)`` for a key in the committed store, else ``(False, None)``."""
    where = root()
    entry = read_index(where).get(key)
    if entry is None:
        return False, None
    return True, read_object(where, entry.object, f"{entry.kind} run {key[:12]}")


def write_object(where: Path, text: str) -> str:
    """Store the canonical text of a result; return its name (idempotent)."""
    raw = text.encode("utf-8")
    digest = hashlib.sha256(raw).hexdigest()
    path = object_path(where, digest)
    try:
        intact = hashlib.sha256(gzip.decompress(path.read_bytes())).hexdigest() == digest
    except (OSError, EOFError, zlib.error):
        intact = False
    if not intact:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, gzip.compress(raw, compresslevel=9, mtime=0))
    return digest


def write_index(where: Path, entries: Iterable[Entry]) -> Path:
    lines = sorted((e.kind, e.key, e.line()) for e in entries)
    path = where / INDEX
    where.mkdir(parents=True, exist_ok=True)
    atomic_write(path, "".join(line + "\n" for _, _, line in lines).encode("utf-8"))
    _read_index.cache_clear()
    return path


def prune(where: Path, entries: Iterable[Entry]) -> int:
    """Remove objects no entry names; return how many."""
    keep = {e.object for e in entries}
    gone = 0
    for path in sorted((where / OBJECTS).glob("*/*.json.gz")):
        if path.name.removesuffix(".json.gz") not in keep:
            path.unlink()
            gone += 1
    return gone


# --- checks --------------------------------------------------------------------------------


def integrity(where: Path | None = None) -> list[str]:
    """Every object the index names, read and hash-checked: the problems (empty if none)."""
    where = root() if where is None else where
    problems = []
    for e in read_index(where).values():
        try:
            read_object(where, e.object, f"{e.kind} run {e.key[:12]}")
        except StoreError as exc:
            problems.append(str(exc))
    return problems


def sample(entries: Sequence[Entry], seed: str, share: float = 0.05) -> list[Entry]:
    """A seeded sample of the entries: at least ``share`` of them (rounded up) and at least
    one read by every page, drawn with ``random.Random(seed)`` so that every commit checks
    a different sample and anyone can repeat one."""
    if not 0 < share <= 1:
        raise StoreError(f"share {share!r}: a fraction in (0, 1]")
    rng = random.Random(seed)
    ordered = sorted(entries, key=lambda e: e.key)
    chosen: dict[str, Entry] = {}
    pages = sorted({p for e in ordered for p in e.pages})
    for page in pages:
        on_page = [e for e in ordered if page in e.pages]
        if not any(e.key in chosen for e in on_page):
            pick = rng.choice(on_page)
            chosen[pick.key] = pick
    rest = [e for e in ordered if e.key not in chosen]
    need = max(0, math.ceil(share * len(ordered)) - len(chosen))
    for e in rng.sample(rest, min(need, len(rest))):
        chosen[e.key] = e
    return sorted(chosen.values(), key=lambda e: (e.kind, e.key))


def needs_refresh_message(entries: Sequence[Entry]) -> str:
    """One line naming the pages and a run the book needs that the store lacks."""
    pages = sorted({p for e in entries for p in e.pages})
    first = entries[0]
    return (f"the book needs {len(entries)} fluid-model run(s) the store lacks under the "
            f"current model code (pages: {', '.join(pages) or '-'}; e.g. {first.kind} run "
            f"{first.key[:12]}): run `{REFRESH}` and commit data/model-runs with the change")


# --- keeping it whole ----------------------------------------------------------------------


def read_census(path: Path) -> dict[str, dict]:
    """From a memo census (:data:`.lookup.LOG_ENV`), per key the run's kind and the pages
    that read it. Lookups outside a book page (no page named) are left out."""
    from ..core import sidecars

    runs: dict[str, dict] = {}
    if not Path(path).exists():
        raise StoreError(f"{path}: no census there (a book build with COEXIST_FLUID_LOG "
                         f"naming that file writes one)")
    try:
        text = sidecars.read_text(Path(path), "census")
    except sidecars.DataError as exc:
        raise StoreError(str(exc)) from None
    for n, line in enumerate(text.splitlines(), 1):
        try:
            d = json.loads(line)
        except ValueError:
            raise StoreError(f"{path}:{n}: not a census line") from None
        if not isinstance(d, dict) or not all(isinstance(d.get(k) or "", str)
                                              for k in ("page", "key", "kind")):
            raise StoreError(f"{path}:{n}: a census line is an object whose page, key and "
                             "kind are texts (or null)")
        if d.get("page") and d.get("key"):
            run = runs.setdefault(d["key"], {"kind": d.get("kind", ""), "pages": set()})
            run["pages"].add(d["page"])
    return runs


def commit(census: dict[str, dict], local: Iterable[dict], where: Path | None = None,
           keep_unread: bool = False) -> dict[str, int]:
    """Write the store the census says the book reads: every run in ``census`` from the
    store itself or the local layer's entries ``local`` (:func:`.lookup.local_entries`),
    with the pages that read it; runs no page read are dropped (unless ``keep_unread``)
    and so are objects no entry names. Returns counts of what was kept, added, dropped."""
    where = root() if where is None else where
    old = read_index(where)
    fresh = {e["key"]: e for e in local if e["key"] in census and e["key"] not in old}
    missing = [k for k in census if k not in old and k not in fresh]
    if missing:
        run = census[missing[0]]
        raise StoreError(f"{len(missing)} run(s) read by the book are in neither the store nor "
                         f"the local layer (e.g. {run['kind']} run {missing[0][:12]} of "
                         f"{', '.join(sorted(run['pages']))}): was the memo off?")
    entries: dict[str, Entry] = {}
    for k, run in census.items():
        pages = tuple(sorted(run["pages"]))
        if k in old:
            e = old[k]
            entries[k] = Entry(e.key, e.kind, e.inputs, e.object, pages, e.provenance)
        else:
            e = fresh[k]
            digest = write_object(where, e["value"])
            entries[k] = Entry(k, e["kind"], e["inputs"], digest, pages, e["provenance"])
    if keep_unread:
        for k, e in old.items():
            entries.setdefault(k, e)
    write_index(where, entries.values())
    pruned = prune(where, entries.values())
    return {"entries": len(entries), "kept": sum(k in old for k in entries),
            "added": len(entries) - sum(k in old for k in entries),
            "dropped": len([k for k in old if k not in entries]), "objects_pruned": pruned}


def size_bytes(where: Path | None = None) -> int:
    where = root() if where is None else where
    return sum(p.stat().st_size for p in where.rglob("*") if p.is_file())
