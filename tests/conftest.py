import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


@pytest.fixture
def root() -> Path:
    return ROOT


def built_tables(tmp_path: Path, bundled_only: bool = True) -> Path:
    """A tables directory as `coexist book` leaves it, filled from the committed tables."""
    import json
    import shutil

    from coexist import book, ledger

    out = tmp_path / "figures"
    shutil.copytree(ledger.EXPECTED, out)
    (out / book.MANIFEST).write_text(json.dumps({"bundled_only": bundled_only}))
    return out

