"""Keeps Numba's on-disk cache of the two kernels true to the equations they inline.

Numba caches a compiled function beside its source (``__pycache__``, or under
``NUMBA_CACHE_DIR``) and reuses it while that one file is unchanged: its caching notes
list, as a known limitation, that a change to a function defined in another file does not
invalidate the cache, and they clear a cache by removing its files. The kernels of
:mod:`.published` and :mod:`.solve` inline every equation of :mod:`.bbr`, :mod:`.bbr1`,
:mod:`.bbr2` and :mod:`.smooth`, so an edited equation would otherwise be ignored by a
cached kernel, and its runs stored under the new code's key. :func:`forget_stale_kernels`
runs when :mod:`.published` is imported (:mod:`.solve` imports it): it hashes the
inlined modules' source and, if the hash differs from the one recorded at the last
compile, deletes the kernels' cache files, so that they are compiled again. One case
escapes it: a process that imported the old equations and compiles its kernels after the
new stamp was written stores stale kernels under the new stamp; edit the equations with no
run in progress, or clear ``__pycache__``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from ...core import settings

HERE = Path(__file__).resolve().parent
#: the modules the kernels inline
INLINED = ("bbr.py", "bbr1.py", "bbr2.py", "smooth.py")
#: the cache files' prefixes: Numba names them ``<module>.<function>-<line>.py<ver>.nb?``
KERNELS = ("published.integrate-", "printed.integrate-")


def inlined_digest() -> str:
    """sha256 of the inlined modules' source, in order."""
    h = hashlib.sha256()
    for name in INLINED:
        h.update(name.encode() + b"\0" + (HERE / name).read_bytes() + b"\0")
    return h.hexdigest()


def cache_dirs() -> list[Path]:
    """Where Numba keeps this package's cache: ``__pycache__`` beside the source; this
    directory's mirror under ``NUMBA_CACHE_DIR`` when it is set; and its mirror under
    Numba's user-wide cache (``~/.cache/numba``, or ``$XDG_CACHE_HOME/numba``), which Numba
    takes when the source's directory cannot be written."""
    dirs = [HERE / "__pycache__"]
    user = settings.user_cache_dir() / "numba"
    for root in (settings.directory("NUMBA_CACHE_DIR"), user):
        if root:  # Numba mirrors the source directory's absolute path beneath the root
            dirs.append(Path(root) / HERE.relative_to(HERE.anchor))
    return [d for d in dict.fromkeys(dirs) if d.is_dir()]


def forget_stale_kernels() -> list[Path]:
    """Delete the kernels' cache files where they were compiled from other inlined
    equations than these; return what was deleted."""
    digest = inlined_digest()
    removed = []
    for d in cache_dirs():
        stamp = d / "coexist-inlined.sha256"
        try:
            if stamp.read_text() == digest:
                continue
        except OSError:
            pass
        kept = False
        for p in d.iterdir():
            if p.name.startswith(KERNELS) and p.suffix in (".nbi", ".nbc"):
                try:
                    p.unlink(missing_ok=True)
                    removed.append(p)
                except OSError:  # not ours to remove: Numba's own check still applies
                    kept = True
        if not kept:
            try:
                stamp.write_text(digest)
            except OSError:
                pass
    return removed
