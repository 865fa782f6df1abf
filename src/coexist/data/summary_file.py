"""A stored run's ``summary.json``: the schema its readers rely on (:data:`SUMMARY`) and
the reader that checks a file against it (:func:`read_summary`)."""

from __future__ import annotations

from pathlib import Path

from ..core import sidecars
from ..core.sidecars import DataError
from .schemas import CCAS, UTILISATION_MAX


def _delay_line(record: dict) -> str | None:
    if not record:
        return None  # no delay line (netem)
    late = record.get("lateness_us")
    ok = (isinstance(late, dict) and all(isinstance(late.get(k), (int, float))
                                         and not isinstance(late.get(k), bool)
                                         for k in ("p50", "p999", "max"))
          and isinstance(record.get("cpu_fraction"), (int, float)))
    return None if ok else "a delay line record needs lateness_us p50, p999, max and cpu_fraction"


_POSITIVE = sidecars.positive()
_SHARE = sidecars.number(0.0, 1.0)
#: the schema of a run's ``summary.json`` (:func:`read_summary`): what the readers of a
#: summary use. Other fields are allowed (the record grew as the harness did).
SUMMARY = sidecars.obj({
    "run_id": sidecars.text(nonempty=True),
    "params": sidecars.obj({
        "capacity_bps": _POSITIVE, "rtt_s": _POSITIVE, "buffer_bdp": _POSITIVE,
        "buffer_bytes": sidecars.integer(low=1), "flows": sidecars.text(nonempty=True),
        "duration_s": _POSITIVE, "warmup_s": sidecars.number(low=0.0),
    }),
    "flows": sidecars.listing(sidecars.obj({
        "flow": sidecars.integer(low=0), "cca": sidecars.text(CCAS),
        "rtt_s": _POSITIVE, "goodput_bps": sidecars.number(low=0.0), "share": _SHARE,
        "retransmits": sidecars.integer(low=0),
    })),
    "gates": sidecars.listing(sidecars.obj({"name": sidecars.text(),
                                            "passed": sidecars.Key((bool,))})),
    "valid": sidecars.Key((bool,)),
    "invalid_reasons": sidecars.listing(sidecars.text()),
    "provenance": sidecars.obj({"time_utc": sidecars.text(), "kernel": sidecars.text()}),
    "wall_s": sidecars.number(low=0.0),
    "utilisation": sidecars.number(0.0, UTILISATION_MAX, nullable=True),
    "bbr_share": sidecars.number(0.0, 1.0, nullable=True),
    "jain_index": sidecars.number(0.0, 1.0, nullable=True),
    "mean_queue_delay_s": sidecars.number(low=0.0, nullable=True),
    "bottleneck_drops": sidecars.integer(low=0),
    "delay_line": sidecars.obj(nullable=True, test=_delay_line),
    "campaign": sidecars.obj(required=False, nullable=True),
})
#: the fields every stored run's summary.json has (:data:`SUMMARY`'s required ones)
SUMMARY_FIELDS: tuple[str, ...] = tuple(k for k, v in SUMMARY.fields.items() if v.required)


def read_summary(path: Path) -> dict:
    """A run's ``summary.json``, checked against :data:`SUMMARY`: a regular file of UTF-8
    JSON, every field its readers use present with its type and in its range
    (``"valid": "false"`` is not a boolean, a share above 1 or a ``buffer_bytes`` of 0 is
    refused), and valid only if every gate passed. Anything else raises
    :class:`DataError` naming the file and the field."""
    summary = sidecars.read_json(Path(path), SUMMARY, "run summary")
    if summary["valid"] and not all(g["passed"] for g in summary["gates"]):
        raise DataError(f"{path}: 'valid' is true but a gate failed")
    return summary
