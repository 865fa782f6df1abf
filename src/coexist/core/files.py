"""Writing a committed file so that a reader never sees half of it.

Tables, summaries and indexes under ``data/`` are read by other processes (a book build, a
campaign's next run, CI) while they are rewritten. Each is written to a hidden temporary file
beside its destination and moved into place with :func:`os.replace`, which is atomic on one
file system: a crash leaves the old file or the new one, never a mixture, and no temporary
file is left behind.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def atomic_write(path: Path, data: bytes | str) -> None:
    """Replace ``path`` by ``data`` (text is written as UTF-8) in one step."""
    path = Path(path)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    tmp = Path(name)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.chmod(tmp, 0o644)  # readable as any other committed file (mkstemp makes it 0600)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
