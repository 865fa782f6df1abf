import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


@pytest.fixture
def root() -> Path:
    return ROOT


@pytest.fixture
def no_campaigns_read():
    """An empty record of the campaigns read (:func:`coexist.data.campaigns_read`) for the
    test; the record as it was before comes back after it."""
    from coexist import data

    before = data.campaigns_read()
    data.forget_reads()
    yield
    data.forget_reads()
    for name in before:
        data.note_read(name)


#: what every stored run's summary.json holds (coexist.data.SUMMARY), for tests that
#: fake a run's files: a 2-flow run at 20 Mbit/s and 20 ms
SUMMARY_PARAMS = {"capacity_bps": 20e6, "rtt_s": 0.02, "buffer_bdp": 1.0, "buffer_bytes": 50_000,
                  "flows": "cubic:1,bbr:1", "duration_s": 5.0, "warmup_s": 1.0}


def summary_doc(**fields) -> dict:
    """A summary.json document with every field :data:`coexist.data.SUMMARY` requires,
    ``fields`` replacing them (a bookkeeping fake, not data)."""
    return {"run_id": "aaaaaa", "params": dict(SUMMARY_PARAMS), "flows": [], "gates": [],
            "valid": True, "invalid_reasons": [], "wall_s": 10.0, "utilisation": None,
            "jain_index": None, "bbr_share": None, "mean_queue_delay_s": None,
            "bottleneck_drops": 0, "delay_line": None,
            "provenance": {"commit": "abc", "kernel": "6.x", "cpu": "cpu", "tools": {},
                           "time_utc": "2026-11-21T00:00:00+00:00"}, **fields}


def built_tables(tmp_path: Path, bundled_only: bool = True) -> Path:
    """A tables directory as `coexist book` leaves it, filled from the committed tables."""
    import json
    import shutil

    from coexist.book import build as book
    from coexist.book import ledger

    out = tmp_path / "figures"
    shutil.copytree(ledger.EXPECTED, out)
    (out / book.MANIFEST).write_text(json.dumps({"bundled_only": bundled_only}))
    return out

