"""The record of the campaigns whose data this process has read: the loaders note each
campaign they read (:func:`note_read`), and a figure checks what was read against the
campaigns its ledger entry declares (:func:`coexist.book.figures.check_campaigns`). The
record itself stays here; it is read with :func:`campaigns_read` and emptied with
:func:`forget_reads`."""

from __future__ import annotations

from pathlib import Path

from ..core.paths import DATA

#: the campaigns whose data this process has read (``*``: every stored run)
_CAMPAIGNS_READ: set[str] = set()


def note_read(campaign: str) -> None:
    """Record that this process read data of ``campaign`` (``*``: of every campaign)."""
    _CAMPAIGNS_READ.add(campaign)


def campaigns_read() -> frozenset[str]:
    """The campaigns whose data this process has read so far (``*``: every stored run)."""
    return frozenset(_CAMPAIGNS_READ)


def forget_reads() -> None:
    """Empty the record of campaigns read, as if no data had been read yet."""
    _CAMPAIGNS_READ.clear()


def _note_path(path: Path, schema: str) -> None:
    """Note the campaign a table under the bundled data belongs to (a run's table, or a
    campaign table); a table elsewhere is not noted."""
    try:
        parts = Path(path).resolve().relative_to(DATA.resolve()).parts
    except ValueError:
        return  # outside the bundled data
    if len(parts) > 2 and parts[0] == "runs":
        note_read(parts[1])
    elif len(parts) == 1 and schema == "campaign":
        note_read(Path(parts[0]).name.split(".")[0])
