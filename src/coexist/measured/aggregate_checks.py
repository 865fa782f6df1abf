"""The checks that decide each of Scherrer et al.'s statements on their Figs. 6-10 on a table
of aggregate metrics per pair, queueing discipline and buffer (measured runs or the fluid
model's alike): the thresholds the readings name, the groups of algorithms the paper names
(loss-sensitive are Reno, CUBIC and BBRv2; loss-based are Reno and CUBIC), and one function
per statement that returns its :class:`~coexist.measured.statement_verdicts.Verdict`. The
statements themselves, with the readings these checks test, are in
:mod:`coexist.measured.aggregate_readings`."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pandas as pd

from .statement_verdicts import Verdict, missing

LOSS_SENSITIVE = ("Reno", "CUBIC", "BBRv2")
LOSS_BASED = ("Reno", "CUBIC")

#: Jain's index below which a pair counts as unfair in a reading: two equal groups reach
#: it when one takes about four fifths of the link ((x + y)^2 / (2 (x^2 + y^2)) = 0.75 at
#: x = 0.79, y = 0.21)
UNFAIR_JAIN = 0.75
#: Jain's index below which a pair counts as unfair at all: one group takes more than two
#: thirds of the link (x = 2/3, y = 1/3 gives 0.9)
FAIR_JAIN = 0.9
#: the smallest change of a metric over the buffers that a reading counts as a rise
RISE = 0.01
#: utilisation a reading counts as full
FULL = 0.99
#: a loss rate a reading counts as zero
NO_LOSS = 0.001
#: how far apart the largest and smallest RED loss rate of a pair may be for "roughly
#: consistent across buffer sizes": within this factor, or within this many percentage
#: points (the paper's axis runs to 20 %, where a sub-percent rate is flat either way)
CONSISTENT_FACTOR = 2.0
CONSISTENT_POINTS = 0.01
#: how much lower a mean Jain index under RED than under drop-tail reads as "unfair"
UNFAIRER = 0.05
#: "grows": the larger of two values at least this factor of the smaller
GROWS = 1.1


def members(pair: str) -> tuple[str, str]:
    a, b = pair.split("/")
    return a, b


def _against_bbr1(pair: str) -> bool:
    """A loss-sensitive algorithm against BBRv1 (the paper's least fair setting)."""
    a, b = members(pair)
    return "BBRv1" in (a, b) and a != b and ({a, b} - {"BBRv1"}) <= set(LOSS_SENSITIVE)


def _only(pair: str, names: Sequence[str]) -> bool:
    return set(members(pair)) <= set(names)


def _fmt(x: float) -> str:
    return f"{x:.3f}"


def _at(table: pd.DataFrame, aqm: str) -> pd.DataFrame:
    return table[table["aqm"] == aqm]


def _series(table: pd.DataFrame, pair: str, metric: str) -> pd.Series:
    """The metric of one pair against the buffer (BDP), sorted by buffer."""
    rows = table[table["pair"] == pair].sort_values("buffer_bdp")
    return pd.Series(rows[metric].to_numpy(), index=rows["buffer_bdp"].to_numpy())


def _droptail_series(t: pd.DataFrame, pair: str, metric: str) -> pd.Series | Verdict:
    """One pair's metric against the buffer under drop-tail, or the verdict that says
    what the table lacks for a trend (the pair, or a second buffer)."""
    dt = _at(t, "droptail")
    if pair not in set(dt["pair"]):
        return missing(f"no {pair} runs under drop-tail")
    s = _series(dt, pair, metric)
    return s if len(s) >= 2 else missing("needs two buffers or more")


def _droptail_pairs(t: pd.DataFrame, keep: Callable[[str], bool],
                    what: str) -> tuple[pd.DataFrame, list[str]] | Verdict:
    """The drop-tail rows and the pairs ``keep`` picks (``what`` names them), for a trend
    over the buffers; or the verdict that says what the table lacks."""
    dt = _at(t, "droptail")
    pairs = _pairs(dt, keep)
    if not pairs:
        return missing(f"no {what} under drop-tail")
    if dt["buffer_bdp"].nunique() < 2:
        return missing("needs two buffers or more")
    return dt, pairs


def _loss_sensitive_droptail(t: pd.DataFrame) -> tuple[pd.DataFrame, list[str]] | Verdict:
    return _droptail_pairs(t, lambda p: _only(p, LOSS_SENSITIVE),
                           "pair of loss-sensitive CCAs")


def _pairs(table: pd.DataFrame, keep: Callable[[str], bool]) -> list[str]:
    return [p for p in dict.fromkeys(table["pair"]) if keep(p)]


def least_fair_shallow(t: pd.DataFrame) -> Verdict:
    dt = _at(t, "droptail")
    if dt.empty:
        return missing("no drop-tail runs")
    shallow = dt["buffer_bdp"].min()
    at = dt[dt["buffer_bdp"] == shallow].set_index("pair")["jain"]
    against = [p for p in at.index if _against_bbr1(p)]
    others = [p for p in at.index if not _against_bbr1(p)]
    if not against or not others:
        return missing("needs a loss-sensitive/BBRv1 pair and another pair")
    worst_other = at[others].idxmin()
    best_against = at[against].idxmax()
    ok = bool(at[against].max() < at[others].min())
    return Verdict(ok, f"at {shallow:g} BDP, {best_against} {_fmt(at[best_against])} "
                       f"{'<' if ok else '>='} {worst_other} {_fmt(at[worst_other])}")


def fairness_higher_from_4(t: pd.DataFrame) -> Verdict:
    dt = _at(t, "droptail")
    pairs = _pairs(dt, _against_bbr1)
    if not pairs:
        return missing("no loss-sensitive/BBRv1 pair under drop-tail")
    out = []
    for p in pairs:
        s = _series(dt, p, "jain")
        deep = s[s.index >= 4]
        if deep.empty or s.index[0] >= 4:
            return missing("needs a buffer of 4 BDP or more and a smaller one")
        out.append((p, s.iloc[0], s.index[0], deep.min()))
    ok = all(lo_deep - shallow > RISE for _, shallow, _, lo_deep in out)
    return Verdict(ok, "; ".join(f"{p} {_fmt(shallow)} at {b:g} BDP, at least "
                                 f"{_fmt(lo_deep)} from 4 BDP" for p, shallow, b, lo_deep in out))


def bbr2_fairer_than_bbr1(t: pd.DataFrame) -> Verdict:
    mean = _at(t, "droptail").groupby("pair")["jain"].mean()
    compared = [(x, f"{x}/BBRv1", f"{x}/BBRv2") for x in LOSS_BASED
                if f"{x}/BBRv1" in mean.index and f"{x}/BBRv2" in mean.index]
    if not compared:
        return missing("needs Reno or CUBIC against both BBRv1 and BBRv2 under drop-tail")
    ok = all(mean[v2] > mean[v1] and mean[v2] >= FAIR_JAIN for _, v1, v2 in compared)
    return Verdict(ok, "mean over the buffers: " + "; ".join(
        f"{v2} {_fmt(mean[v2])}, {v1} {_fmt(mean[v1])}" for _, v1, v2 in compared))


def bbr2_unfair_under_red(t: pd.DataFrame) -> Verdict:
    mean = t.groupby(["aqm", "pair"])["jain"].mean()
    pairs = [f"{x}/BBRv2" for x in LOSS_BASED
             if ("red", f"{x}/BBRv2") in mean.index and ("droptail", f"{x}/BBRv2") in mean.index]
    if not pairs:
        return missing("needs Reno or CUBIC against BBRv2 under drop-tail and RED")
    ok = all(mean["red", p] < FAIR_JAIN and mean["droptail", p] - mean["red", p] >= UNFAIRER
             for p in pairs)
    return Verdict(ok, "mean over the buffers: " + "; ".join(
        f"{p} {_fmt(mean['red', p])} under RED, {_fmt(mean['droptail', p])} under drop-tail"
        for p in pairs))


def bbr1_less_fair_deep(t: pd.DataFrame) -> Verdict:
    s = _droptail_series(t, "BBRv1/BBRv1", "jain")
    if isinstance(s, Verdict):
        return s
    return Verdict(bool(s.iloc[0] - s.iloc[-1] > RISE),
                   f"{_fmt(s.iloc[0])} at {s.index[0]:g} BDP, {_fmt(s.iloc[-1])} at "
                   f"{s.index[-1]:g}")


def not_testable(why: str) -> Callable[[pd.DataFrame], Verdict]:
    return lambda t: missing(why)


def red_unfair(t: pd.DataFrame) -> Verdict:
    red = _at(t, "red")
    pairs = _pairs(red, _against_bbr1)
    if not pairs:
        return missing("no RED runs" if red.empty else "no loss-sensitive/BBRv1 pair")
    highest = {p: _series(red, p, "jain").max() for p in pairs}
    ok = all(v < UNFAIR_JAIN for v in highest.values())
    return Verdict(ok, "highest: " + "; ".join(f"{p} {_fmt(v)}" for p, v in highest.items()))


def loss_sensitive_low_loss(t: pd.DataFrame) -> Verdict:
    found = _loss_sensitive_droptail(t)
    if isinstance(found, Verdict):
        return found
    dt, pairs = found
    loss = {p: _series(dt, p, "loss_rate") for p in pairs}
    worst = max(pairs, key=lambda p: loss[p].max())
    peak = loss[worst].max()
    deep = max(pairs, key=lambda p: loss[p].iloc[-1])
    s = loss[deep]
    ok = bool(peak < 0.01 and s.iloc[-1] < NO_LOSS)
    return Verdict(ok, f"highest {100 * peak:.2f} % ({worst}); at the largest buffer, "
                       f"{s.index[-1]:g} BDP, at most {100 * s.iloc[-1]:.2f} % ({deep})")


def _bbr1_extreme(t: pd.DataFrame, metric: str, highest: bool) -> pd.Series | None:
    """The row of a pair with BBRv1 (any discipline, any buffer) where ``metric`` is
    highest (or lowest); None without such a pair."""
    rows = t[t["pair"].isin(_pairs(t, lambda p: "BBRv1" in members(p)))]
    if rows.empty:
        return None
    return rows.loc[rows[metric].idxmax() if highest else rows[metric].idxmin()]


def _where(row: pd.Series) -> str:
    return (f"{row['pair']}, {'drop-tail' if row['aqm'] == 'droptail' else 'RED'}, "
            f"{row['buffer_bdp']:g} BDP")


def bbr1_loss_at_most_20(t: pd.DataFrame) -> Verdict:
    top = _bbr1_extreme(t, "loss_rate", highest=True)
    if top is None:
        return missing("no pair with BBRv1")
    return Verdict(bool(top["loss_rate"] <= 0.20),
                   f"highest {100 * top['loss_rate']:.1f} % ({_where(top)})")


def bbr1_loss_falls(t: pd.DataFrame) -> Verdict:
    found = _droptail_pairs(t, lambda p: "BBRv1" in members(p), "pair with BBRv1")
    if isinstance(found, Verdict):
        return found
    dt, pairs = found
    parts, ok = [], True
    for p in pairs:
        s = _series(dt, p, "loss_rate")
        ok &= bool(s.iloc[-1] < s.iloc[0])
        parts.append(f"{p} {100 * s.iloc[0]:.1f} % at {s.index[0]:g} BDP, "
                     f"{100 * s.iloc[-1]:.1f} % at {s.index[-1]:g}")
    return Verdict(ok, "; ".join(parts))


def red_loss_consistent(t: pd.DataFrame) -> Verdict:
    red = _at(t, "red")
    if red.empty:
        return missing("no RED runs")
    if red["buffer_bdp"].nunique() < 2:
        return missing("needs two buffers or more")
    loss = {p: _series(red, p, "loss_rate") for p in dict.fromkeys(red["pair"])}
    apart = {p: (s.min(), s.max()) for p, s in loss.items()  # neither close in points
             if s.max() - s.min() > CONSISTENT_POINTS  # nor in ratio
             and s.max() > CONSISTENT_FACTOR * max(s.min(), 1e-12)}
    widest = max(loss, key=lambda p: loss[p].max() - loss[p].min())
    s = loss[widest]
    if apart:
        return Verdict(False, "; ".join(f"{p} {100 * a:.2f} % to {100 * b:.2f} %"
                                        for p, (a, b) in apart.items()))
    return Verdict(True, f"widest range: {widest}, {100 * s.min():.2f} % to {100 * s.max():.2f} %")


def loss_based_bloat(t: pd.DataFrame) -> Verdict:
    dt = _at(t, "droptail")
    pairs = _pairs(dt, lambda p: _only(p, LOSS_BASED))
    if not pairs:
        return missing("no Reno or CUBIC pair under drop-tail")
    lowest = {p: _series(dt, p, "queue_share").min() for p in pairs}
    ok = all(v >= 0.5 for v in lowest.values())
    return Verdict(ok, "lowest: " + "; ".join(f"{p} {_fmt(v)}" for p, v in lowest.items()))


def bbr2_alone_queues_less(t: pd.DataFrame) -> Verdict:
    dt = _at(t, "droptail")
    mean = dt.groupby("pair")["queue_share"].mean()
    mixed = [f"{a}/BBRv2" for a in LOSS_BASED if f"{a}/BBRv2" in mean.index]
    if "BBRv2/BBRv2" not in mean.index or not mixed:
        return missing("needs BBRv2/BBRv2 and BBRv2 with Reno or CUBIC under drop-tail")
    ok = bool(all(mean["BBRv2/BBRv2"] < mean[p] and mean[p] >= 0.5 for p in mixed))
    return Verdict(ok, f"mean over the buffers: BBRv2/BBRv2 {_fmt(mean['BBRv2/BBRv2'])}; "
                       + "; ".join(f"{p} {_fmt(mean[p])}" for p in mixed))


def bbr1_queues_most(t: pd.DataFrame) -> Verdict:
    dt = _at(t, "droptail")
    mean = dt.groupby("pair")["queue_share"].mean()
    compared = []  # (BBRv1 setting, loss-sensitive setting it must exceed)
    for x in LOSS_SENSITIVE:
        homo = f"{x}/{x}"
        if homo not in mean.index:
            continue
        if "BBRv1/BBRv1" in mean.index:
            compared.append(("BBRv1/BBRv1", homo))
        mixed = next((p for p in mean.index if set(members(p)) == {x, "BBRv1"}), None)
        if mixed:
            compared.append((mixed, homo))
    if not compared:
        return missing("needs BBRv1 pairs beside pairs of loss-sensitive algorithms")
    fails = [(a, b) for a, b in compared if not mean[a] > mean[b]]
    shown = fails or compared[:2]
    return Verdict(not fails, ("below: " if fails else "e.g. ") + "; ".join(
        f"{a} {_fmt(mean[a])} {'<=' if fails else '>'} {b} {_fmt(mean[b])}"
        for a, b in shown))


def bbr1_fills_buffer(t: pd.DataFrame) -> Verdict:
    s = _droptail_series(t, "BBRv1/BBRv1", "queue_share")
    if isinstance(s, Verdict):
        return s
    ok = bool(s.min() >= 0.5)
    absolute = s * s.index
    return Verdict(ok, f"lowest {_fmt(s.min())} of the buffer, at {s.idxmin():g} BDP; a "
                       f"queue of {absolute.min():.2f}-{absolute.max():.2f} BDP")


def bbr2_constant_queue(t: pd.DataFrame) -> Verdict:
    dt = _at(t, "droptail")
    if "BBRv2/BBRv2" not in set(dt["pair"]):
        return missing("no BBRv2/BBRv2 runs under drop-tail")
    s = _series(dt, "BBRv2/BBRv2", "queue_share")
    s = s[s.index <= 4]
    if len(s) < 2:
        return missing("needs two buffers of 4 BDP or less")
    absolute = s * s.index
    ok = bool(absolute.max() <= 1.25 * absolute.min())
    return Verdict(ok, "queue " + ", ".join(f"{q:.2f} BDP at {b:g}"
                                           for b, q in absolute.items()))


def bbr2_queue_grows_deep(t: pd.DataFrame) -> Verdict:
    dt = _at(t, "droptail")
    if "BBRv2/BBRv2" not in set(dt["pair"]):
        return missing("no BBRv2/BBRv2 runs under drop-tail")
    s = _series(dt, "BBRv2/BBRv2", "queue_share")
    deep = s[s.index >= 4]
    if len(deep) < 2:
        return missing("needs two buffers of 4 BDP or more")
    absolute = deep * deep.index
    return Verdict(bool(absolute.iloc[-1] > GROWS * absolute.iloc[0]),
                   f"queue {absolute.iloc[0]:.2f} BDP at {deep.index[0]:g} BDP, "
                   f"{absolute.iloc[-1]:.2f} at {deep.index[-1]:g}")


def bbr1_full(t: pd.DataFrame) -> Verdict:
    low = _bbr1_extreme(t, "utilisation", highest=False)
    if low is None:
        return missing("no pair with BBRv1")
    return Verdict(bool(low["utilisation"] >= FULL),
                   f"lowest {low['utilisation']:.4f} ({_where(low)})")


def loss_sensitive_utilisation_rises(t: pd.DataFrame) -> Verdict:
    found = _loss_sensitive_droptail(t)
    if isinstance(found, Verdict):
        return found
    dt, pairs = found
    ends = {p: (s.iloc[0], s.iloc[-1]) for p in pairs for s in [_series(dt, p, "utilisation")]}
    ok = all(b - a > RISE / 10 for a, b in ends.values())
    return Verdict(ok, "; ".join(f"{p} {a:.4f} to {b:.4f}" for p, (a, b) in ends.items()))


def bbr2_lowest_utilisation(t: pd.DataFrame) -> Verdict:
    dt = _at(t, "droptail")
    if "BBRv2/BBRv2" not in set(dt["pair"]):
        return missing("no BBRv2/BBRv2 runs under drop-tail")
    mean = dt.groupby("pair")["utilisation"].mean()
    lowest = dt[dt["pair"] == "BBRv2/BBRv2"]["utilisation"].min()
    ok = bool(mean.idxmin() == "BBRv2/BBRv2" and lowest >= 0.97)
    return Verdict(ok, f"lowest mean: {mean.idxmin()} {_fmt(mean.min())}; BBRv2/BBRv2 at "
                       f"least {_fmt(lowest)}")


def jitter(t: pd.DataFrame) -> Verdict:
    return missing("it needs measured per-packet delays, which the testbed does not record")
