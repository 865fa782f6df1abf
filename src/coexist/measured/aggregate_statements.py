"""What Scherrer et al. say about their Figs. 6-10, as tests on the aggregate metrics.

Section 4.3 of the paper reads its fairness, loss, queue, utilisation and jitter figures in
sentences ("the least fairness arises when ...", "BBRv1 uses most of the buffer
independent of buffer size"). Each sentence here is one :class:`Statement`: what the paper
says, the reading of it that is tested (stated here and shown on the page beside the
verdict; the readings were written with the model's tables in view, not registered before),
and the test. A test runs on a table of the metrics per
pair, queueing discipline and buffer, the fluid model's or our measurements' alike
(:func:`wide_measured` brings the measured spread into that shape), and returns a
:class:`Verdict`: whether the statement holds in that table, or why it cannot be tested
there (a pair, a discipline or a buffer range it needs is missing), with the numbers that
decide it.

Groups of algorithms, as the paper names them: loss-sensitive are Reno, CUBIC and BBRv2;
loss-based are Reno and CUBIC.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pandas as pd

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


#: how a verdict is written, by whether it holds (None: not testable)
WORDS = {True: "holds", False: "does not hold", None: "not testable"}


@dataclass(frozen=True)
class Verdict:
    holds: bool | None  # None: the table lacks what the test needs
    evidence: str       # the numbers that decide it, or what is missing

    def text(self) -> str:
        return f"{WORDS[self.holds]}: {self.evidence}"


@dataclass(frozen=True)
class Statement:
    figure: str
    short: str    # a few words that name it in a sentence
    says: str     # the paper's statement, in brief
    reading: str  # what is tested
    test: Callable[..., Verdict]  # the table (and what else a kind of table needs)
    both: bool = False  # the reading covers drop-tail and RED: a table without RED
    #                     tests it on drop-tail only, and its verdict says so
    model_only: bool = False  # the paper finds it in its model, not in its experiments


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


def _missing(what: str) -> Verdict:
    return Verdict(None, what)


def _series(table: pd.DataFrame, pair: str, metric: str) -> pd.Series:
    """The metric of one pair against the buffer (BDP), sorted by buffer."""
    rows = table[table["pair"] == pair].sort_values("buffer_bdp")
    return pd.Series(rows[metric].to_numpy(), index=rows["buffer_bdp"].to_numpy())


def _droptail_series(t: pd.DataFrame, pair: str, metric: str) -> pd.Series | Verdict:
    """One pair's metric against the buffer under drop-tail, or the verdict that says
    what the table lacks for a trend (the pair, or a second buffer)."""
    dt = _at(t, "droptail")
    if pair not in set(dt["pair"]):
        return _missing(f"no {pair} runs under drop-tail")
    s = _series(dt, pair, metric)
    return s if len(s) >= 2 else _missing("needs two buffers or more")


def _droptail_pairs(t: pd.DataFrame, keep: Callable[[str], bool],
                    what: str) -> tuple[pd.DataFrame, list[str]] | Verdict:
    """The drop-tail rows and the pairs ``keep`` picks (``what`` names them), for a trend
    over the buffers; or the verdict that says what the table lacks."""
    dt = _at(t, "droptail")
    pairs = _pairs(dt, keep)
    if not pairs:
        return _missing(f"no {what} under drop-tail")
    if dt["buffer_bdp"].nunique() < 2:
        return _missing("needs two buffers or more")
    return dt, pairs


def _loss_sensitive_droptail(t: pd.DataFrame) -> tuple[pd.DataFrame, list[str]] | Verdict:
    return _droptail_pairs(t, lambda p: _only(p, LOSS_SENSITIVE),
                           "pair of loss-sensitive CCAs")


def _pairs(table: pd.DataFrame, keep: Callable[[str], bool]) -> list[str]:
    return [p for p in dict.fromkeys(table["pair"]) if keep(p)]


def _least_fair_shallow(t: pd.DataFrame) -> Verdict:
    dt = _at(t, "droptail")
    if dt.empty:
        return _missing("no drop-tail runs")
    shallow = dt["buffer_bdp"].min()
    at = dt[dt["buffer_bdp"] == shallow].set_index("pair")["jain"]
    against = [p for p in at.index if _against_bbr1(p)]
    others = [p for p in at.index if not _against_bbr1(p)]
    if not against or not others:
        return _missing("needs a loss-sensitive/BBRv1 pair and another pair")
    worst_other = at[others].idxmin()
    best_against = at[against].idxmax()
    ok = bool(at[against].max() < at[others].min())
    return Verdict(ok, f"at {shallow:g} BDP, {best_against} {_fmt(at[best_against])} "
                       f"{'<' if ok else '>='} {worst_other} {_fmt(at[worst_other])}")


def _fairness_higher_from_4(t: pd.DataFrame) -> Verdict:
    dt = _at(t, "droptail")
    pairs = _pairs(dt, _against_bbr1)
    if not pairs:
        return _missing("no loss-sensitive/BBRv1 pair under drop-tail")
    out = []
    for p in pairs:
        s = _series(dt, p, "jain")
        deep = s[s.index >= 4]
        if deep.empty or s.index[0] >= 4:
            return _missing("needs a buffer of 4 BDP or more and a smaller one")
        out.append((p, s.iloc[0], s.index[0], deep.min()))
    ok = all(lo_deep - shallow > RISE for _, shallow, _, lo_deep in out)
    return Verdict(ok, "; ".join(f"{p} {_fmt(shallow)} at {b:g} BDP, at least "
                                 f"{_fmt(lo_deep)} from 4 BDP" for p, shallow, b, lo_deep in out))


def _bbr2_fairer_than_bbr1(t: pd.DataFrame) -> Verdict:
    mean = _at(t, "droptail").groupby("pair")["jain"].mean()
    compared = [(x, f"{x}/BBRv1", f"{x}/BBRv2") for x in LOSS_BASED
                if f"{x}/BBRv1" in mean.index and f"{x}/BBRv2" in mean.index]
    if not compared:
        return _missing("needs Reno or CUBIC against both BBRv1 and BBRv2 under drop-tail")
    ok = all(mean[v2] > mean[v1] and mean[v2] >= FAIR_JAIN for _, v1, v2 in compared)
    return Verdict(ok, "mean over the buffers: " + "; ".join(
        f"{v2} {_fmt(mean[v2])}, {v1} {_fmt(mean[v1])}" for _, v1, v2 in compared))


def _bbr2_unfair_under_red(t: pd.DataFrame) -> Verdict:
    mean = t.groupby(["aqm", "pair"])["jain"].mean()
    pairs = [f"{x}/BBRv2" for x in LOSS_BASED
             if ("red", f"{x}/BBRv2") in mean.index and ("droptail", f"{x}/BBRv2") in mean.index]
    if not pairs:
        return _missing("needs Reno or CUBIC against BBRv2 under drop-tail and RED")
    ok = all(mean["red", p] < FAIR_JAIN and mean["droptail", p] - mean["red", p] >= UNFAIRER
             for p in pairs)
    return Verdict(ok, "mean over the buffers: " + "; ".join(
        f"{p} {_fmt(mean['red', p])} under RED, {_fmt(mean['droptail', p])} under drop-tail"
        for p in pairs))


def _bbr1_less_fair_deep(t: pd.DataFrame) -> Verdict:
    s = _droptail_series(t, "BBRv1/BBRv1", "jain")
    if isinstance(s, Verdict):
        return s
    return Verdict(bool(s.iloc[0] - s.iloc[-1] > RISE),
                   f"{_fmt(s.iloc[0])} at {s.index[0]:g} BDP, {_fmt(s.iloc[-1])} at "
                   f"{s.index[-1]:g}")


def _not_testable(why: str) -> Callable[[pd.DataFrame], Verdict]:
    return lambda t: _missing(why)


def _red_unfair(t: pd.DataFrame) -> Verdict:
    red = _at(t, "red")
    pairs = _pairs(red, _against_bbr1)
    if not pairs:
        return _missing("no RED runs" if red.empty else "no loss-sensitive/BBRv1 pair")
    highest = {p: _series(red, p, "jain").max() for p in pairs}
    ok = all(v < UNFAIR_JAIN for v in highest.values())
    return Verdict(ok, "highest: " + "; ".join(f"{p} {_fmt(v)}" for p, v in highest.items()))


def _loss_sensitive_low_loss(t: pd.DataFrame) -> Verdict:
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


def _bbr1_loss_at_most_20(t: pd.DataFrame) -> Verdict:
    top = _bbr1_extreme(t, "loss_rate", highest=True)
    if top is None:
        return _missing("no pair with BBRv1")
    return Verdict(bool(top["loss_rate"] <= 0.20),
                   f"highest {100 * top['loss_rate']:.1f} % ({_where(top)})")


def _bbr1_loss_falls(t: pd.DataFrame) -> Verdict:
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


def _red_loss_consistent(t: pd.DataFrame) -> Verdict:
    red = _at(t, "red")
    if red.empty:
        return _missing("no RED runs")
    if red["buffer_bdp"].nunique() < 2:
        return _missing("needs two buffers or more")
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


def _loss_based_bloat(t: pd.DataFrame) -> Verdict:
    dt = _at(t, "droptail")
    pairs = _pairs(dt, lambda p: _only(p, LOSS_BASED))
    if not pairs:
        return _missing("no Reno or CUBIC pair under drop-tail")
    lowest = {p: _series(dt, p, "queue_share").min() for p in pairs}
    ok = all(v >= 0.5 for v in lowest.values())
    return Verdict(ok, "lowest: " + "; ".join(f"{p} {_fmt(v)}" for p, v in lowest.items()))


def _bbr2_alone_queues_less(t: pd.DataFrame) -> Verdict:
    dt = _at(t, "droptail")
    mean = dt.groupby("pair")["queue_share"].mean()
    mixed = [f"{a}/BBRv2" for a in LOSS_BASED if f"{a}/BBRv2" in mean.index]
    if "BBRv2/BBRv2" not in mean.index or not mixed:
        return _missing("needs BBRv2/BBRv2 and BBRv2 with Reno or CUBIC under drop-tail")
    ok = bool(all(mean["BBRv2/BBRv2"] < mean[p] and mean[p] >= 0.5 for p in mixed))
    return Verdict(ok, f"mean over the buffers: BBRv2/BBRv2 {_fmt(mean['BBRv2/BBRv2'])}; "
                       + "; ".join(f"{p} {_fmt(mean[p])}" for p in mixed))


def _bbr1_queues_most(t: pd.DataFrame) -> Verdict:
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
        return _missing("needs BBRv1 pairs beside pairs of loss-sensitive algorithms")
    fails = [(a, b) for a, b in compared if not mean[a] > mean[b]]
    shown = fails or compared[:2]
    return Verdict(not fails, ("below: " if fails else "e.g. ") + "; ".join(
        f"{a} {_fmt(mean[a])} {'<=' if fails else '>'} {b} {_fmt(mean[b])}"
        for a, b in shown))


def _bbr1_fills_buffer(t: pd.DataFrame) -> Verdict:
    s = _droptail_series(t, "BBRv1/BBRv1", "queue_share")
    if isinstance(s, Verdict):
        return s
    ok = bool(s.min() >= 0.5)
    absolute = s * s.index
    return Verdict(ok, f"lowest {_fmt(s.min())} of the buffer, at {s.idxmin():g} BDP; a "
                       f"queue of {absolute.min():.2f}-{absolute.max():.2f} BDP")


def _bbr2_constant_queue(t: pd.DataFrame) -> Verdict:
    dt = _at(t, "droptail")
    if "BBRv2/BBRv2" not in set(dt["pair"]):
        return _missing("no BBRv2/BBRv2 runs under drop-tail")
    s = _series(dt, "BBRv2/BBRv2", "queue_share")
    s = s[s.index <= 4]
    if len(s) < 2:
        return _missing("needs two buffers of 4 BDP or less")
    absolute = s * s.index
    ok = bool(absolute.max() <= 1.25 * absolute.min())
    return Verdict(ok, "queue " + ", ".join(f"{q:.2f} BDP at {b:g}"
                                           for b, q in absolute.items()))


def _bbr2_queue_grows_deep(t: pd.DataFrame) -> Verdict:
    dt = _at(t, "droptail")
    if "BBRv2/BBRv2" not in set(dt["pair"]):
        return _missing("no BBRv2/BBRv2 runs under drop-tail")
    s = _series(dt, "BBRv2/BBRv2", "queue_share")
    deep = s[s.index >= 4]
    if len(deep) < 2:
        return _missing("needs two buffers of 4 BDP or more")
    absolute = deep * deep.index
    return Verdict(bool(absolute.iloc[-1] > GROWS * absolute.iloc[0]),
                   f"queue {absolute.iloc[0]:.2f} BDP at {deep.index[0]:g} BDP, "
                   f"{absolute.iloc[-1]:.2f} at {deep.index[-1]:g}")


def _bbr1_full(t: pd.DataFrame) -> Verdict:
    low = _bbr1_extreme(t, "utilisation", highest=False)
    if low is None:
        return _missing("no pair with BBRv1")
    return Verdict(bool(low["utilisation"] >= FULL),
                   f"lowest {low['utilisation']:.4f} ({_where(low)})")


def _loss_sensitive_utilisation_rises(t: pd.DataFrame) -> Verdict:
    found = _loss_sensitive_droptail(t)
    if isinstance(found, Verdict):
        return found
    dt, pairs = found
    ends = {p: (s.iloc[0], s.iloc[-1]) for p in pairs for s in [_series(dt, p, "utilisation")]}
    ok = all(b - a > RISE / 10 for a, b in ends.values())
    return Verdict(ok, "; ".join(f"{p} {a:.4f} to {b:.4f}" for p, (a, b) in ends.items()))


def _bbr2_lowest_utilisation(t: pd.DataFrame) -> Verdict:
    dt = _at(t, "droptail")
    if "BBRv2/BBRv2" not in set(dt["pair"]):
        return _missing("no BBRv2/BBRv2 runs under drop-tail")
    mean = dt.groupby("pair")["utilisation"].mean()
    lowest = dt[dt["pair"] == "BBRv2/BBRv2"]["utilisation"].min()
    ok = bool(mean.idxmin() == "BBRv2/BBRv2" and lowest >= 0.97)
    return Verdict(ok, f"lowest mean: {mean.idxmin()} {_fmt(mean.min())}; BBRv2/BBRv2 at "
                       f"least {_fmt(lowest)}")


def _jitter(t: pd.DataFrame) -> Verdict:
    return _missing("it needs measured per-packet delays, which the testbed does not record")


STATEMENTS: tuple[Statement, ...] = (
    # Fig. 6, fairness (§4.3.1)
    Statement("Fig. 6", "the least fairness against BBRv1 in shallow buffers",
              "The least fairness arises when a loss-sensitive CCA (Reno, CUBIC, BBRv2) "
              "competes with BBRv1 in shallow buffers.",
              "Drop-tail, smallest buffer: every loss-sensitive/BBRv1 pair has a lower "
              "Jain index than every other pair.", _least_fair_shallow),
    Statement("Fig. 6", "higher fairness from 4 BDP",
              "From 4 BDP up, the fairness of these settings increases.",
              f"Drop-tail: each loss-sensitive/BBRv1 pair's index at every buffer of 4 BDP "
              f"or more exceeds its index at the smallest buffer by more than {RISE:g}.",
              _fairness_higher_from_4),
    Statement("Fig. 6", "RED's low fairness towards BBRv1",
              "Under RED, BBRv1's fairness towards loss-sensitive CCAs is "
              "consistently low.",
              f"RED: each loss-sensitive/BBRv1 pair stays below an index of {UNFAIR_JAIN:g} "
              "at every buffer (one group taking about four fifths of the link).",
              _red_unfair),
    Statement("Fig. 6", "BBRv2 fairer than BBRv1",
              "BBRv1's fairness issues appear largely resolved with BBRv2, in the model and "
              "in experiments.",
              f"Drop-tail, averaged over the buffers: Reno/BBRv2 fairer than Reno/BBRv1 and "
              f"CUBIC/BBRv2 than CUBIC/BBRv1, each at an index of {FAIR_JAIN:g} or more "
              "(neither group taking more than two thirds of the link).",
              _bbr2_fairer_than_bbr1),
    Statement("Fig. 6", "BBRv2's unfairness under RED",
              "BBRv2 is still unfair towards loss-based CCAs in RED buffers.",
              f"Averaged over the buffers: Reno/BBRv2's and CUBIC/BBRv2's index under RED "
              f"below {FAIR_JAIN:g} (one group taking more than two thirds of the link) and "
              f"at least {UNFAIRER:g} below drop-tail's.", _bbr2_unfair_under_red),
    Statement("Fig. 6", "BBRv1's falling fairness in deep buffers",
              "Fairness among BBRv1 flows decreases in deep drop-tail buffers, in the model "
              "only: the experiments do not show it.",
              f"Drop-tail, BBRv1/BBRv1: more than {RISE:g} lower at the largest buffer than "
              "at the smallest. The paper expects it to hold in the model and not in our "
              "measurements.", _bbr1_less_fair_deep, model_only=True),
    # Fig. 7, loss (§4.3.2)
    Statement("Fig. 7", "low loss of loss-sensitive CCAs",
              "The loss rate of loss-sensitive CCAs in drop-tail buffers is below 1 % and "
              "goes to 0 % as the buffer grows.",
              "Drop-tail, every pair of loss-sensitive CCAs: below 1 % at every buffer, and "
              f"below {100 * NO_LOSS:g} % at the largest.", _loss_sensitive_low_loss),
    Statement("Fig. 7", "BBRv1's loss of at most 20 %",
              "BBRv1 leads to a considerable loss of at most 20 %.",
              "Every pair with BBRv1, both disciplines, every buffer: at most 20 %.",
              _bbr1_loss_at_most_20, both=True),
    Statement("Fig. 7", "BBRv1's loss falling with the buffer",
              "With BBRv1 under drop-tail, the loss rate is inversely related to the buffer "
              "size.",
              "Drop-tail, every pair with BBRv1: lower at the largest buffer than at the "
              "smallest.", _bbr1_loss_falls),
    Statement("Fig. 7", "RED's even loss rates",
              "A RED queue keeps loss rates roughly consistent across buffer sizes.",
              f"RED, every pair: its largest loss rate at most {CONSISTENT_FACTOR:g} times its "
              f"smallest, or at most {100 * CONSISTENT_POINTS:g} percentage point above it.",
              _red_loss_consistent),
    Statement("Fig. 7", "the model's low RED loss",
              "The model underestimates the loss of loss-sensitive CCAs under RED.",
              "Model against measured loss under RED.",
              _not_testable("needs measured RED runs; this kernel has no RED module")),
    # Fig. 8, queue (§4.3.3)
    Statement("Fig. 8", "bufferbloat by Reno and CUBIC",
              "Reno and CUBIC cause bufferbloat: consistently high buffer utilisation.",
              "Drop-tail, every pair of Reno and CUBIC: a mean queue of at least half the "
              "buffer at every buffer.", _loss_based_bloat),
    Statement("Fig. 8", "BBRv2 queueing less alone",
              "BBRv2 beside loss-based CCAs shows high buffer use too; BBRv2 alone uses "
              "less.",
              "Drop-tail, queue over buffer averaged over the buffers: Reno/BBRv2 and "
              "CUBIC/BBRv2 at least half, BBRv2/BBRv2 below both.", _bbr2_alone_queues_less),
    Statement("Fig. 8", "BBRv1 queueing more than loss-sensitive CCAs",
              "BBRv1 uses the buffer more intensely than loss-sensitive CCAs, alone or "
              "beside them.",
              "Drop-tail, averaged over the buffers: BBRv1/BBRv1 and each X/BBRv1 above "
              "X/X, for X each loss-sensitive CCA.", _bbr1_queues_most),
    Statement("Fig. 8", "BBRv1 filling any buffer",
              "Under drop-tail, BBRv1 uses most of the buffer independent of the buffer "
              "size.",
              "Drop-tail, BBRv1/BBRv1: a mean queue of at least half the buffer at every "
              "buffer.", _bbr1_fills_buffer),
    Statement("Fig. 8", "BBRv2's constant queue up to 4 BDP",
              "BBRv2 alone under drop-tail keeps a constant absolute queue up to 4 BDP.",
              "Drop-tail, BBRv2/BBRv2, buffers up to 4 BDP: the largest queue (in BDP) at "
              "most 1.25 times the smallest.", _bbr2_constant_queue),
    Statement("Fig. 8", "BBRv2's queue growing in large buffers",
              "In large buffers BBRv2's queue grows again, set by its start-up; the model "
              "shows it when inflight_hi starts from a buffer-dependent value.",
              f"Drop-tail, BBRv2/BBRv2 (the model's inflight_hi starts, as the authors' code "
              f"sets it, from a value that grows with the buffer): the queue in BDP at the "
              f"largest buffer at least {GROWS:g} times that at the smallest of 4 BDP or "
              "more.", _bbr2_queue_grows_deep),
    # Fig. 9, utilisation (§4.3.4)
    Statement("Fig. 9", "full utilisation with BBRv1",
              "BBRv1 and combinations with it fully use the link, under drop-tail and RED.",
              f"Every pair with BBRv1, both disciplines, every buffer: utilisation of "
              f"{FULL:g} or more.", _bbr1_full, both=True),
    Statement("Fig. 9", "utilisation rising with the buffer",
              "Under drop-tail, the utilisation of loss-sensitive CCAs increases with the "
              "buffer.",
              f"Drop-tail, every pair of loss-sensitive CCAs: more than {RISE / 10:g} higher "
              "at the largest buffer than at the smallest.", _loss_sensitive_utilisation_rises),
    Statement("Fig. 9", "BBRv2's lowest utilisation",
              "BBRv2 gives the lowest utilisation under drop-tail, wasting at most 3 %.",
              "Drop-tail: BBRv2/BBRv2 has the lowest mean utilisation of all pairs and at "
              "least 0.97 at every buffer.", _bbr2_lowest_utilisation),
    Statement("Fig. 9", "no ProbeRTT among ten senders",
              "Under RED, BBRv2 does not enter ProbeRTT with ten senders; neither does BBRv1 "
              "under either discipline.",
              "The senders' ProbeRTT modes in the ten-sender runs.",
              _not_testable("the book's aggregate runs keep their metrics, not the senders' "
                            "modes")),
    Statement("Fig. 9", "the model's low BBRv2/Reno utilisation under RED",
              "The model underestimates the utilisation of BBRv2 with Reno in shallow RED "
              "buffers.",
              "Model against measured utilisation of Reno/BBRv2 under RED.",
              _not_testable("needs measured RED runs and BBRv2, which this kernel lacks")),
    # Fig. 10, jitter (§4.3.5)
    Statement("Fig. 10", "the model's jitter",
              "The fluid model fails to predict jitter.",
              "Model jitter against measured jitter.", _jitter),
)


def wide_measured(spread: pd.DataFrame) -> pd.DataFrame:
    """The measured spread (pair, buffer_bdp, metric, mean, ...) as one row per pair and
    buffer with a column per metric (the repeats' mean), all under drop-tail."""
    if spread.empty:
        return pd.DataFrame(columns=["pair", "aqm", "buffer_bdp"])
    wide = spread.pivot_table(index=["pair", "buffer_bdp"], columns="metric",
                              values="mean").reset_index()
    wide.columns.name = None
    return wide.assign(aqm="droptail")


def _on(s: Statement, table: pd.DataFrame, empty_why: str) -> Verdict:
    """``s`` tested on ``table``; a reading of both disciplines on a table without RED
    says that its verdict covers drop-tail only."""
    if table.empty:
        return _missing(empty_why)
    v = s.test(table)
    if s.both and v.holds is not None and "red" not in set(table["aqm"]):
        return Verdict(v.holds, f"{v.evidence}; drop-tail only (no RED runs)")
    return v


def verdicts(model: pd.DataFrame, measured: pd.DataFrame,
             like_for_like: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every statement with its reading and its verdict on the model's table (the paper's
    setting), on the model over our measurements' window and scope (``like_for_like``:
    the pairs, buffers and discipline measured; None or empty when nothing is measured)
    and on the measured one (:func:`wide_measured`)."""
    like = like_for_like if like_for_like is not None else pd.DataFrame()
    rows = []
    for s in STATEMENTS:
        on_model = s.test(model)
        on_like = _on(s, like, "nothing measured at this setting")
        on_meas = _on(s, measured, "nothing measured at this setting")
        rows.append({"figure": s.figure, "short": s.short,
                     "the paper says": f"{s.figure}: {s.says}", "our reading": s.reading,
                     "model": on_model.text(), "model, like for like": on_like.text(),
                     "measured": on_meas.text(), "model_only": s.model_only,
                     "model_holds": on_model.holds, "like_holds": on_like.holds,
                     "measured_holds": on_meas.holds})
    return pd.DataFrame(rows)


def _of(holds: pd.Series) -> str:
    tested = holds.dropna()
    return f"{int(tested.astype(bool).sum())} of {len(tested)}"


def _names(v: pd.DataFrame) -> str:
    return "; ".join(v["short"]) if len(v) else "none"


@dataclass(frozen=True)
class Tally:
    model: str     # "k of n": the statements that hold among those the model tests
    measured: str  # the same for the measurements
    agree: str     # among the statements both the like-for-like model and the measurements
    #                test, on how many their verdicts agree
    neither: str   # the statements both test and neither bears out, by their short names
    only_model: str  # both test it, only the like-for-like model bears it out
    only_measured: str


def tally(v: pd.DataFrame) -> Tally:
    """Count :func:`verdicts`: how many statements hold in the model at the paper's setting
    and in our measurements (there without the paper's model-only finding, which it
    expects not to hold in experiments), and, where the model over our measurements'
    window and scope and the measurements both test a statement, where they part. A
    statement the paper finds in its model only is left out of the comparison."""
    both = v[v["like_holds"].notna() & v["measured_holds"].notna() & ~v["model_only"]]
    m, x = both["like_holds"].astype(bool), both["measured_holds"].astype(bool)
    theirs = v[~v["model_only"]]  # the paper expects a model-only finding not to hold there
    return Tally(_of(v["model_holds"]), _of(theirs["measured_holds"]),
                 f"{int((m == x).sum())} of {len(both)}", _names(both[~m & ~x]),
                 _names(both[m & ~x]), _names(both[~m & x]))


SIDES = {"model_holds": "model", "like_holds": "like-for-like model",
         "measured_holds": "measured"}


def differences(before: pd.DataFrame, after: pd.DataFrame) -> str:
    """The statements whose verdict on a side differs between two :func:`verdicts` tables
    (another setting's and this one's), where both test it: 'short (side: holds there, not
    here)', or 'none'."""
    out = []
    for (_, b), (_, a) in zip(before.iterrows(), after.iterrows(), strict=True):
        for col, side in SIDES.items():
            if pd.notna(b[col]) and pd.notna(a[col]) and bool(b[col]) != bool(a[col]):
                out.append(f"{a['short']} ({side}: {WORDS[bool(b[col])]} there, "
                           f"{WORDS[bool(a[col])]} here)")
    return "; ".join(out) or "none"


def model_only_text(v: pd.DataFrame) -> str:
    """What the like-for-like model and the measurements say of each statement the paper
    finds in its model only: 'short: holds in the like-for-like model and does not hold in
    our measurements, as the paper found', or 'none'."""
    word = {**WORDS, None: "is not testable"}
    out = []
    for _, r in v[v["model_only"]].iterrows():
        like = None if pd.isna(r["like_holds"]) else bool(r["like_holds"])
        meas = None if pd.isna(r["measured_holds"]) else bool(r["measured_holds"])
        out.append(f"{r['short']}: {word[like]} in the like-for-like model and {word[meas]} "
                   "in our measurements" + (", as the paper found" if like is True
                                            and meas is False else ""))
    return "; ".join(out) or "none"
