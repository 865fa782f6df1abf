"""The rule that settles a measured run: whether the run-length study vouches for a run at a
deep buffer, scored over its own campaign's window. A run from :data:`DEEP_FROM_BDP` on
counts only where the study's buffers on either side have all their planned runs, a share
that settles before the study's longest read, and, read over the run's window, a share
within the tolerance of that longest read's; otherwise it is :data:`NOT_SETTLED`, with the
reason."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .run_length_study import LENGTHS_S, SCORED, TOLERANCE, WindowShare, study_reader

#: From this buffer on (in BDP), a measured point is a deep-buffer point: where BBR's share
#: was seen to keep growing for minutes (T-F5), so a run there counts only once the study
#: declares its length settled (:func:`settle`).
DEEP_FROM_BDP = 10.0
#: what a page calls a deep-buffer point the study does not declare settled
NOT_SETTLED = "not settled (run-length study)"


def _needs(capacity_mbps: float, rtt_ms: float, buffer_bdp: float, start_s: float,
           end_s: float, study: pd.DataFrame, read: WindowShare,
           tolerance: float) -> tuple[float, str]:
    """Whether the study vouches for a run at this setting scored over ``[start_s, end_s)``:
    the study's buffers on either side at the same capacity and RTT (the buffer itself
    where the study measured it) must each have all their planned runs, a share that has
    settled before the study's longest read, and, read over the same window, a share
    within ``tolerance`` of that longest read's. Returns the longer of their settled
    lengths (NaN where the study cannot say) and the reason it does not vouch ("" where
    it does)."""
    same = study[np.isclose(study["capacity_mbps"], capacity_mbps)
                 & np.isclose(study["rtt_ms"], rtt_ms)]
    where = f"{capacity_mbps:g} Mbit/s, {rtt_ms:g} ms"
    if same.empty:
        return np.nan, f"the run-length study did not measure {where}"
    if not np.isfinite(buffer_bdp):
        return np.nan, "the buffer is not known"
    buffers = same["buffer_bdp"].to_numpy(dtype=float)
    if buffer_bdp > buffers.max() + 1e-9:
        return np.nan, (f"deeper than the run-length study's deepest buffer at {where} "
                        f"({buffers.max():g} BDP)")
    needs, longest_s = 0.0, LENGTHS_S[-1]
    for b in sides(buffers, buffer_bdp):
        row = same[np.isclose(same["buffer_bdp"], b)].iloc[0]
        if row["repeats"] < row["planned"]:
            return np.nan, (f"the run-length study has {int(row['repeats'])} of its "
                            f"{int(row['planned'])} runs at {where}, {b:g} BDP")
        if not bool(row["before_longest"]):
            return np.nan, (f"at {where}, {b:g} BDP the study's share still moves at its "
                            f"longest read ({row['settled_s']:g} s)")
        needs = max(needs, float(row["settled_s"]))
        if start_s >= longest_s:  # scored wholly after the study's runs end: their longest read
            start, end = (1.0 - SCORED) * longest_s, longest_s
        else:
            start, end = start_s, min(end_s, longest_s)
        share = read(capacity_mbps, rtt_ms, b, start, end)
        if not np.isfinite(share):
            return np.nan, (f"the study's runs at {where}, {b:g} BDP have no goodput over "
                            f"{start:g}-{end:g} s")
        if not abs(share - float(row["longest_share"])) <= tolerance:
            return np.nan, (f"scored over {start:g}-{end:g} s as these runs are, the study's "
                            f"runs at {b:g} BDP give BBR {share:.2f}, against "
                            f"{float(row['longest_share']):.2f} over {longest_s:,.0f} s")
    return needs, ""


def sides(buffers: Sequence[float], buffer_bdp: float) -> list[float]:
    """The study's buffers (BDP) a point at ``buffer_bdp`` leans on: the nearest at or below
    it and the nearest at or above it (one, where the study measured the buffer itself;
    the shallowest, below the study's range). ``buffer_bdp`` must not be deeper than the
    deepest of ``buffers``."""
    b = np.asarray(buffers, dtype=float)
    lower = b[b <= buffer_bdp + 1e-9]
    upper = b[b >= buffer_bdp - 1e-9]
    if not len(upper):
        raise ValueError(f"buffer_bdp = {buffer_bdp:g} is deeper than the study's deepest "
                         f"buffer ({b.max():g} BDP)")
    return sorted({float(lower.max()) if len(lower) else float(upper.min()),
                   float(upper.min())})


def settle(per_run: pd.DataFrame, study: pd.DataFrame,
           deep_from_bdp: float = DEEP_FROM_BDP, tolerance: float = TOLERANCE,
           read: WindowShare | None = None) -> pd.DataFrame:
    """``per_run`` (capacity_bps, rtt_s, buffer_bdp and each run's ``run_s`` and
    ``warmup_s``: it is scored over ``[warmup_s, run_s)``) with whether each run counts:
    ``deep`` (from ``deep_from_bdp`` on), ``needs_s`` (the settled length of the study's
    :func:`~coexist.measured.run_length_study.verdict` there, NaN where it cannot say),
    ``settled``, and a ``status``, :data:`NOT_SETTLED` with its ``reason`` for a deep run the
    study does not vouch for (:func:`_needs`). Shallower runs are outside the study's
    question and count as measured. ``read`` gives the study's share over a window (default
    :func:`~coexist.measured.run_length_study.study_reader`)."""
    read = read or study_reader()
    out = per_run.copy()
    cap = out["capacity_bps"].astype(float).to_numpy() / 1e6
    rtt = out["rtt_s"].astype(float).to_numpy() * 1e3
    buf = out["buffer_bdp"].astype(float).to_numpy()
    run_s = out["run_s"].astype(float).to_numpy()
    warm = out["warmup_s"].astype(float).to_numpy()
    needs, reasons = [], []
    for c, r, b, s, w in zip(cap, rtt, buf, run_s, warm, strict=True):
        if b < deep_from_bdp:
            needs.append(np.nan)
            reasons.append("")
            continue
        if not (np.isfinite(s) and np.isfinite(w)):
            needs.append(np.nan)
            reasons.append("the runs' scored window is not known")
            continue
        n, why = _needs(c, r, b, w, s, study, read, tolerance)
        needs.append(n)
        reasons.append(why)
    out["deep"] = np.asarray(buf >= deep_from_bdp, dtype=bool)
    out["needs_s"] = np.asarray(needs, dtype=float)
    out["settled"] = np.array([not why for why in reasons], dtype=bool)
    out["status"] = ["measured" if not why else NOT_SETTLED for why in reasons]
    out["reason"] = reasons
    return out
