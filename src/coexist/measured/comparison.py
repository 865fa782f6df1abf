"""Measured values beside a model's: their spread over repeats, a model's value at each
measured point, its error per range of a setting, and whether a measurement lies inside the
band a model predicts."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..closed_form import mishra, ware


def spread(per_run: pd.DataFrame, by: list[str], value: str) -> pd.DataFrame:
    """Mean, min, max and count of ``value`` over repeats of each setting in ``by``."""
    if per_run.empty:
        return pd.DataFrame(columns=[*by, "mean", "min", "max", "n_runs"])
    g = per_run.groupby(by)[value]
    return pd.DataFrame({"mean": g.mean(), "min": g.min(), "max": g.max(),
                         "n_runs": g.size()}).reset_index()


def error_by_range(measured: pd.DataFrame, predicted: dict[str, np.ndarray],
                   edges: tuple[float, ...] = (1.0, 2.0, 5.0, 30.0)) -> pd.DataFrame:
    """Mean absolute and mean signed error of each model against measured means, per buffer
    range ``(edges[i], edges[i+1]]`` (the first range includes its lower edge).

    ``measured`` has columns buffer_bdp and mean; ``predicted`` maps a model name to its
    prediction at those buffers (NaN outside the model's domain, which is then not counted).
    """
    rows = []
    b = measured["buffer_bdp"].to_numpy(dtype=float)
    m = measured["mean"].to_numpy(dtype=float)
    for lo, hi in zip(edges, edges[1:], strict=False):
        sel = ((b > lo) | (b == edges[0]) & (lo == edges[0])) & (b <= hi)
        for model, pred in predicted.items():
            err = np.asarray(pred, dtype=float)[sel] - m[sel]
            ok = np.isfinite(err)
            rows.append({"buffer_range_bdp": f"{lo:g}-{hi:g}", "model": model,
                         "points": int(ok.sum()), "not_in_domain": int((~ok).sum()),
                         "mean_abs_error": float(np.abs(err[ok]).mean()) if ok.any() else np.nan,
                         "mean_error": float(err[ok].mean()) if ok.any() else np.nan})
    return pd.DataFrame(rows)


def error_table(accuracy: pd.DataFrame, digits: int = 3) -> pd.DataFrame:
    """:func:`error_by_range` as a reader's table: one row per model, one column per buffer
    range holding the mean absolute error with the mean signed error in brackets (empty
    where the range has no point in the model's domain); the ranges' headers count their
    measured points, and a model scored on fewer of them (outside its domain, or not
    settled) says on how many ("… on 5 of 7")."""
    out = {}
    for rng, g in accuracy.groupby("buffer_range_bdp", sort=False):
        n = int((g["points"] + g["not_in_domain"]).max())
        cells = [(f"{a:.{digits}f} ({m:+.{digits}f})" + (f" on {k} of {n}" if k < n else ""))
                 if np.isfinite(a) else ""
                 for a, m, k in zip(g["mean_abs_error"], g["mean_error"], g["points"],
                                    strict=True)]
        header = f"{rng} BDP ({n} point{'s' if n != 1 else ''})"
        out[header] = pd.Series(cells, index=g["model"].to_numpy())
    table = pd.DataFrame(out)
    table.index.name = "model"
    return table.reset_index()


def model_at(model: pd.DataFrame, points: pd.DataFrame, on: list[str],
             value: str) -> np.ndarray:
    """A model's ``value`` at each row of ``points`` (the settings are matched exactly on
    the columns ``on``), NaN where the model was not run: the prediction array
    :func:`error_by_range` takes, for models computed at a grid rather than as a curve."""
    dup = model.duplicated(on)
    if dup.any():
        raise ValueError(f"model has {int(dup.sum())} duplicate row(s) for the settings {on}; "
                         "one value per setting is needed")
    return points[on].merge(model[[*on, value]], on=on, how="left")[value].to_numpy(dtype=float)


def two_flow_predictions(points: pd.DataFrame, fluid: pd.DataFrame, models: Sequence[str], *,
                         capacity_bps: float, rtt_s: float, duration_s: float,
                         packet_bytes: int) -> dict[str, np.ndarray]:
    """BBR's share against one CUBIC flow, as each model predicts it at the measured points
    (``points``' ``buffer_bdp``) of one capacity and RTT: Mishra et al.'s closed form (eqs.
    5-20; NaN at or below 1 BDP, outside its domain), Ware et al.'s (eq. 2; NaN where it
    leaves [0, 1]) and each fluid-model version of ``models`` (``fluid``'s rows of that
    ``model`` at the same buffers; NaN where it was not run). The arrays
    :func:`error_by_range` takes, in that order."""
    b = points["buffer_bdp"].to_numpy(dtype=float)
    closed = np.full(b.shape, np.nan)
    closed[b > 1] = mishra.bbr_share(b[b > 1])
    baseline = ware.bbr_share(b, capacity_bps=capacity_bps, rtt_s=rtt_s, duration_s=duration_s,
                              packet_bytes=packet_bytes, outside="nan")
    return {"Mishra et al.": closed, "Ware et al.": baseline,
            **{name: model_at(fluid[fluid.model == name], points, ["buffer_bdp"], "bbr_share")
               for name in models}}


def inside_multi_flow_band(buffer_bdp: Sequence[float], flows_per_cca: Sequence[int],
                           cca: Sequence[str], per_flow_bps: Sequence[float], *,
                           capacity_bps: float) -> np.ndarray:
    """Whether each measured per-flow goodput lies inside the band Mishra et al.'s multi-flow
    model predicts for N CUBIC against N BBR flows (eqs. 21-24: between its bounds with the
    CUBIC flows synchronised and de-synchronised, ends included), for the flow's algorithm
    (``"BBR"`` or ``"CUBIC"``). NaN at and below 1 BDP, where the model has no answer."""
    out = np.full(len(buffer_bdp), np.nan)
    for i, (b, n, c, v) in enumerate(zip(buffer_bdp, flows_per_cca, cca, per_flow_bps,
                                         strict=True)):
        if c not in ("BBR", "CUBIC"):
            raise ValueError(f"cca = {c!r} is invalid; valid: 'BBR' or 'CUBIC'")
        if b <= 1:
            continue
        bounds = []
        for sync in (True, False):
            res = mishra.multi_flow(np.array([float(b)]), n, n, capacity_bps=capacity_bps,
                                    synchronised=sync)
            bounds.append(float((res.bbr_per_flow_bps if c == "BBR"
                                 else res.cubic_per_flow_bps)[0]))
        out[i] = min(bounds) <= v <= max(bounds)
    return out


def holds_from(buffers: np.ndarray, holds: np.ndarray) -> float | None:
    """The smallest buffer from which ``holds`` is true at that and every larger buffer
    (e.g. "measured below the model from 10 BDP on"); None where it never does."""
    order = np.argsort(buffers)
    buffers, holds = buffers[order], holds[order]
    starts = [buffers[i] for i in range(len(buffers)) if holds[i:].all()]
    return min(starts) if starts else None


def span_in_band(table: pd.DataFrame, column: str, lo: float, hi: float, scale: float = 1.0,
                 fmt: str = "{:.2f}") -> str:
    """A column's values over the rows whose index (a buffer, BDP) lies in [lo, hi], times
    ``scale``, as "min–max" in ``fmt`` (one value where they agree, "–" where none)."""
    v = table[(table.index >= lo) & (table.index <= hi)][column].dropna() * scale
    return "–" if v.empty else (fmt.format(v.min()) if np.isclose(v.min(), v.max())
                                else f"{fmt.format(v.min())}–{fmt.format(v.max())}")


def multi_flow_predictions(points: pd.DataFrame, n: int, fluid: pd.DataFrame,
                           models: Sequence[str], *, capacity_bps: float, rtt_s: float,
                           duration_s: float, packet_bytes: int) -> dict[str, np.ndarray]:
    """BBR's share of the goodput with ``n`` CUBIC and ``n`` BBR flows, as each model
    predicts it at the measured points (``points``' ``buffer_bdp``): Mishra et al.'s
    multi-flow bounds, synchronised and not (eqs. 21-22; NaN at or below 1 BDP), Ware et
    al.'s (eq. 2; NaN where it leaves [0, 1]) and each fluid-model version of ``models``
    (``fluid``'s per-flow goodputs: ``series``, ``flows_per_cca``, ``cca``, ``buffer_bdp``,
    ``per_flow_mbps``; equal flow counts, so the share is BBR's per-flow goodput over the
    sum of both). The arrays :func:`error_by_range` takes, in that order."""
    b = points["buffer_bdp"].to_numpy(dtype=float)
    pred = {}
    for bound, sync in (("sync", True), ("desync", False)):
        p = np.full(len(b), np.nan)
        p[b > 1] = mishra.aggregate_bbr_share(b[b > 1], n, n, synchronised=sync)
        pred[f"Mishra et al. ({bound})"] = p
    pred["Ware et al."] = n * ware.per_flow_bbr_bps(
        b, capacity_bps=capacity_bps, rtt_s=rtt_s, n_bbr=n, duration_s=duration_s,
        packet_bytes=packet_bytes, outside="nan") / capacity_bps
    for name in models:
        f = fluid[(fluid.series == name) & (fluid.flows_per_cca == n)].pivot_table(
            index="buffer_bdp", columns="cca", values="per_flow_mbps")
        f = (f["BBR"] / (f["BBR"] + f["CUBIC"])).rename("share").reset_index()
        pred[name] = model_at(f, points, ["buffer_bdp"], "share")
    return pred


def no_longer_than(predicted: dict[str, np.ndarray], models: Sequence[str],
                   run_s: Sequence[float], duration_s: float) -> dict[str, np.ndarray]:
    """``predicted`` (as :func:`error_by_range` takes it) with each of ``models`` set to NaN
    at the points whose measured runs (``run_s``, one per point) last longer than the
    model's own runs (``duration_s``): a model run is set beside no longer measurement."""
    longer = np.asarray(run_s, dtype=float) > duration_s
    return {name: np.where(longer, np.nan, pred) if name in models else pred
            for name, pred in predicted.items()}


def longer_run_moves(runs: pd.DataFrame, longer: pd.DataFrame, on: Sequence[str],
                     value: str = "bbr_share") -> pd.DataFrame:
    """How far each model run's ``value`` moves in a run of the same setting twice as long,
    averaged over the same share of its length: the run-length check of a model's time
    average (a value that still moves when the run is doubled is not converged at the
    shorter length). ``runs`` and ``longer`` hold one row per setting (the columns ``on``;
    a setting listed twice, as a reader may list a buffer twice, must have the same value
    both times, as a deterministic model's runs do, and counts once); the result has
    ``on``, ``value``, ``longer`` (NaN where the longer run is missing) and ``move``, the
    absolute difference."""
    on = list(on)
    tables = []
    for name, table in (("runs", runs), ("longer", longer)):
        table = table[[*on, value]].drop_duplicates()
        if table.duplicated(on).any():
            raise ValueError(f"{name} has two different values of {value!r} for a setting "
                             f"of {on}")
        tables.append(table)
    out = tables[0].merge(tables[1].rename(columns={value: "longer"}), on=on, how="left")
    out["move"] = (out["longer"] - out[value]).abs()
    return out.reset_index(drop=True)


def settled_model(runs: pd.DataFrame, moves: pd.DataFrame, on: Sequence[str],
                  tolerance: float, value: str = "bbr_share") -> pd.DataFrame:
    """``runs`` with ``value`` set to NaN where :func:`longer_run_moves` finds it moving by
    more than ``tolerance`` in a run twice as long: a model value that has not settled is
    scored against nothing, as a measured point the run-length study does not settle is
    not. A run whose move is unknown (no longer run) is kept."""
    on = list(on)
    moved = moves.loc[moves["move"] > tolerance, on].drop_duplicates()
    hit = runs[on].merge(moved.assign(_moved=True), on=on, how="left")["_moved"]
    out = runs.copy()
    out.loc[hit.fillna(False).astype(bool).to_numpy(), value] = np.nan
    return out


def settled_everywhere(runs: pd.DataFrame, by: Sequence[str],
                       value: str = "bbr_share") -> pd.Series:
    """For each row of ``runs`` (as :func:`settled_model` returns it, unsettled values NaN),
    whether every row of its group (the columns ``by``, e.g. a point and a reading, whose
    rows are the model's versions) has a ``value``: versions compared at the same points
    only, so that one version's unsettled runs do not leave it scored on easier points
    than another's."""
    if runs.empty:
        return pd.Series([], dtype=bool, index=runs.index)
    return runs[value].notna().groupby([runs[c] for c in by]).transform("all").astype(bool)


def longer_run_text(moves: pd.DataFrame, tolerance: float, *, duration_s: float,
                    warmup_s: float, where: Sequence[str] = ("buffer_bdp", "model"),
                    listed: int = 3,
                    left_out: str = "drawn, but left out of the errors below") -> str:
    """:func:`longer_run_moves` in one or two sentences: the largest move of BBR's share in
    runs twice as long (``duration_s``, ``warmup_s``: the shorter runs') and where (the
    columns ``where``), and the runs that move by more than ``tolerance`` (the share the
    book resolves), which :func:`settled_model` leaves out of the scores: each named, up to
    ``listed`` of them, else counted per series (the columns of ``where`` other than the
    buffer and the setting) with the buffers they lie between. ``left_out`` says what the
    page does with those runs."""
    m = moves.dropna(subset=["move"])
    if m.empty:
        return ("No fluid-model run has a value at both lengths, so its convergence in run "
                "length is not checked here.")
    worst = m.loc[m["move"].idxmax()]

    def at(row: pd.Series) -> str:
        return ", ".join(f"{row[c]:g} BDP" if c == "buffer_bdp" else str(row[c])
                         for c in where)

    head = (f"In runs twice as long ({2 * duration_s:,.0f} s, averaged after "
            f"{2 * warmup_s:,.0f} s), the fluid model's BBR share moves by at most "
            f"{worst['move']:.3f} ({at(worst)})")
    over = m[m["move"] > tolerance]
    if over.empty:
        return head + f": every run of the figure is within {tolerance:g} of its longer run."
    tail = f": {left_out}."
    if len(over) == 1:
        return (head + f", the only one of its {len(m)} runs to move by more than "
                f"{tolerance:g}" + tail)
    if len(over) <= listed:
        which = "; ".join(f"{at(r)}: {r['move']:.3f}" for _, r in over.iterrows())
    else:  # too many to list in a sentence: how many per series, between which buffers
        series = [c for c in where if c not in ("buffer_bdp", "setting")]
        parts = []
        for key, g in over.groupby(series, sort=False) if series else [("", over)]:
            name = ", ".join(map(str, key)) if isinstance(key, tuple) else str(key)
            lo, hi = g["buffer_bdp"].min(), g["buffer_bdp"].max()
            span = f"at {lo:g} BDP" if lo == hi else f"between {lo:g} and {hi:g} BDP"
            parts.append(f"{name + ': ' if name else ''}{len(g)} "
                         f"{'run' if len(g) == 1 else 'runs'} {span}")
        which = "; ".join(parts)
    return (head + f"; {len(over)} of its {len(m)} runs move by more than {tolerance:g} ("
            + which + ")" + tail)
