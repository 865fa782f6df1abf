"""Periods in throughput time series, and BBR's ProbeRTT events that may set them.

The periodic-fluctuation paper reports that 10 CUBIC + 10 BBR flows on a small-delay
network see their throughput swing with a period of about 20 s. This module estimates such
a period two independent ways (the highest autocorrelation peak and the strongest line of
the periodogram, both within a stated search range) and finds the ProbeRTT entries of Linux
BBRv1 flows, so a trace can be averaged around them (an event-triggered average).

Linux BBRv1 reports ``cwnd_gain`` 1 only in ProbeRTT (2 in ProbeBW, 2.89 in Startup and
Drain; ``tcp_bbr.c``), which is how :func:`probe_rtt_entries` recognises the mode in
``ss -tin`` samples. Sampling every ``dt`` seconds sees a 200 ms ProbeRTT only when a
sample falls inside it, so entries can be missed; the count of samples is reported.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core.params import invalid


@dataclass(frozen=True)
class Period:
    """An estimated period and how strongly the series shows it."""

    method: str         # "autocorrelation" or "periodogram"
    period_s: float     # NaN when nothing in the search range stands out
    strength: float     # ACF value at the peak, or the peak's power over the in-range mean
    search_s: tuple[float, float]
    p_white: float = np.nan  # periodogram only: chance of so strong a line in white noise


def _check_series(x: np.ndarray, dt: float, min_s: float, max_s: float) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    if x.ndim != 1 or len(x) < 8 or not np.all(np.isfinite(x)):
        raise invalid("x", f"array of shape {x.shape}", "a finite 1-D series of >= 8 samples")
    if not dt > 0:
        raise invalid("dt", dt, "> 0 s")
    if not 2 * dt <= min_s < max_s <= len(x) * dt / 2:
        raise invalid("search range", (min_s, max_s),
                      f"2 dt = {2 * dt:g} s <= min < max <= half the series = "
                      f"{len(x) * dt / 2:g} s")
    return x - x.mean()


def acf_period(x, dt: float, min_s: float, max_s: float) -> Period:
    """The first local maximum of the autocorrelation within [min_s, max_s] that reaches 80 %
    of the highest one there.

    A periodic series has autocorrelation peaks at every multiple of its period, of nearly
    equal height; taking the first tall one returns the period, not a multiple. The
    (biased) estimator divides every lag by the full length, as usual.
    """
    y = _check_series(x, dt, min_s, max_s)
    n = len(y)
    f = np.fft.rfft(y, 2 * n)
    ac = np.fft.irfft(f * np.conj(f))[:n]
    if ac[0] <= 0:
        return Period("autocorrelation", np.nan, 0.0, (min_s, max_s))
    ac = ac / ac[0]
    lo, hi = int(np.ceil(min_s / dt)), int(np.floor(max_s / dt))
    peaks = [i for i in range(max(lo, 1), min(hi, n - 2) + 1)
             if ac[i] >= ac[i - 1] and ac[i] >= ac[i + 1] and ac[i] > 0]
    if not peaks:
        return Period("autocorrelation", np.nan, 0.0, (min_s, max_s))
    top = max(ac[i] for i in peaks)
    first = next(i for i in peaks if ac[i] >= 0.8 * top)
    return Period("autocorrelation", first * dt, float(ac[first]), (min_s, max_s))


def periodogram(x, dt: float) -> pd.DataFrame:
    """Power of the mean-removed series per frequency (Hz) and period (s), DC left out."""
    y = np.asarray(x, dtype=float)
    y = y - y.mean()
    freq = np.fft.rfftfreq(len(y), dt)[1:]
    power = (np.abs(np.fft.rfft(y)) ** 2)[1:] / len(y)
    return pd.DataFrame({"frequency_hz": freq, "period_s": 1 / freq, "power": power})


def spectral_period(x, dt: float, min_s: float, max_s: float) -> Period:
    """The period of the strongest periodogram line within [min_s, max_s].

    Its strength is the line's power over the mean power of the lines in the range. For
    white noise the lines are independent exponentials, so a ratio ``r`` among ``m`` lines
    is exceeded by chance with probability ``1 - (1 - exp(-r)) ** m`` (Fisher's test),
    reported as ``p_white``. Throughput series are autocorrelated (red), which makes this
    probability optimistic; it screens out noise, it does not prove a period.
    """
    _check_series(x, dt, min_s, max_s)
    p = periodogram(x, dt)
    sel = p[(p.period_s >= min_s) & (p.period_s <= max_s)]
    if sel.empty or sel.power.sum() <= 0:
        return Period("periodogram", np.nan, 0.0, (min_s, max_s))
    i = sel.power.idxmax()
    ratio = float(sel.power[i] / sel.power.mean())
    p_white = float(1 - (1 - np.exp(-ratio)) ** len(sel))
    return Period("periodogram", float(sel.period_s[i]), ratio, (min_s, max_s), p_white)


def binned(series: pd.DataFrame, width_s: float, t_from: float = 0.0) -> pd.DataFrame:
    """Per-algorithm total goodput on a common grid of ``width_s`` bins.

    ``series`` is a run's per-flow interval table (``t_end_s``, ``cca``, ``goodput_bps``);
    iperf3 intervals of different flows end at slightly different times, so each interval is
    assigned to the bin holding its midpoint. An interval less than half the median length (the
    short last one iperf3 reports when a run ends) would read as a rate spike and is left
    out; so is a bin in which some flow reported nothing. Columns: ``t_s`` (bin end) and one
    per algorithm.
    """
    if not width_s > 0:
        raise invalid("width_s", width_s, "> 0 s")
    length = series.t_end_s - series.t_start_s
    mid = (series.t_start_s + series.t_end_s) / 2
    keep = (mid > t_from) & (length >= 0.5 * length.median())
    s = series[keep]
    b = (np.floor((mid[keep] - t_from) / width_s) + 1) * width_s + t_from
    out = s.assign(t_s=b).groupby(["t_s", "cca"]).goodput_bps.sum().unstack(fill_value=0.0)
    n = series.groupby("cca").flow.nunique()
    counts = s.assign(t_s=b).groupby(["t_s", "cca"]).flow.nunique().unstack(fill_value=0)
    complete = (counts == n.reindex(counts.columns)).all(axis=1)  # every flow reported
    return out[complete].reset_index().rename_axis(columns=None)


def probe_rtt_entries(sockets: pd.DataFrame) -> pd.DataFrame:
    """The samples at which a BBR flow is first seen in ProbeRTT (``cwnd_gain`` 1 after a
    sample with another gain): one row per entry with ``flow`` and ``t_s``."""
    b = sockets[sockets.cca == "bbr"].sort_values(["flow", "t_s"])
    in_prt = pd.Series(np.isclose(b.cwnd_gain.astype(float), 1.0), index=b.index)
    before = in_prt.groupby(b.flow).shift(fill_value=False)
    return b.loc[in_prt & ~before, ["flow", "t_s"]].reset_index(drop=True)


def model_probe_rtt_entries(t: np.ndarray, m_prt: np.ndarray) -> np.ndarray:
    """The times at which a fluid-model BBR flow enters ProbeRTT (its mode ``m_prt``,
    samples x flows, crosses 1/2 upwards), every flow's together, sorted."""
    m = np.asarray(m_prt, dtype=float)
    t = np.asarray(t, dtype=float)
    return np.sort(np.concatenate([t[1:][(m[1:, i] > 0.5) & (m[:-1, i] <= 0.5)]
                                   for i in range(m.shape[1])]))


def synchronised(times: np.ndarray, window_s: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """The groups of ProbeRTT entries (:func:`clusters`) and how many entries each holds
    within ``window_s`` of its start; a group of enough flows is a synchronised entry."""
    t = np.sort(np.asarray(times, dtype=float))
    starts = clusters(t, window_s)
    return starts, np.array([((t >= s) & (t < s + window_s)).sum() for s in starts],
                            dtype=int)


def event_average(t: np.ndarray, x: np.ndarray, events: np.ndarray,
                  before_s: float, after_s: float) -> pd.DataFrame:
    """Mean, 10th and 90th percentile of ``x`` at each lag around the events that have the
    whole window inside the series (an event-triggered average)."""
    t = np.asarray(t, dtype=float)
    dt = float(np.median(np.diff(t)))
    lags = np.arange(-round(before_s / dt), round(after_s / dt) + 1) * dt
    rows = [np.interp(e + lags, t, x) for e in np.asarray(events, dtype=float)
            if e - before_s >= t[0] and e + after_s <= t[-1]]
    if not rows:
        return pd.DataFrame(columns=["lag_s", "mean", "p10", "p90", "events"])
    m = np.vstack(rows)
    return pd.DataFrame({"lag_s": lags, "mean": m.mean(axis=0),
                         "p10": np.percentile(m, 10, axis=0),
                         "p90": np.percentile(m, 90, axis=0), "events": len(rows)})


def clusters(times: np.ndarray, window_s: float) -> np.ndarray:
    """Start times of groups of events: a group starts at an event and takes every later
    event within ``window_s`` of that start. Many BBR flows entering ProbeRTT together
    count as one synchronised entry."""
    starts: list[float] = []
    for x in np.sort(np.asarray(times, dtype=float)):
        if not starts or x > starts[-1] + window_s:
            starts.append(float(x))
    return np.array(starts)


# The period test (P-F1-2, P-F3). Its band, level, null and resolution are fixed here, once,
# and every run, measured or modelled, is read by them unchanged; the pages' verdicts follow
# from it alone.

#: one ProbeRTT cycle of Linux BBRv1 at the RTTs of these runs, s. BBRv1 enters ProbeRTT
#: when its minimum-RTT estimate is 10 s old and restamps the estimate when it leaves,
#: after at least 200 ms and one round trip at 4 packets, so a cycle lasts 10.2 s plus a
#: round trip or two
PROBE_RTT_CYCLE_S = (10.2, 10.5)
#: how finely a period is estimated, s: the larger of a 0.5-s bin (the autocorrelation) and
#: the spacing of periodogram lines near 10 s in 180 s of samples (0.56 s), rounded up
PERIOD_RESOLUTION_S = 0.6
#: where a dominant period counts as BBRv1's ProbeRTT clock, s: the cycle widened by the
#: resolution on each side. Derived from BBRv1's timers and the estimates' resolution, not
#: from the runs it reads
PROBE_RTT_BAND_S = (PROBE_RTT_CYCLE_S[0] - PERIOD_RESOLUTION_S,
                    PROBE_RTT_CYCLE_S[1] + PERIOD_RESOLUTION_S)
#: the level at which the dominant line must beat its null
TEST_ALPHA = 0.01
#: surrogates per series: the smallest p-value they can give is 1 / (1 + this)
TEST_SURROGATES = 999
#: neighbouring periodogram lines over which the continuum is a running median (odd)
CONTINUUM_LINES = 11
#: the surrogates' seed, so a run's verdict is reproducible
TEST_SEED = 20261202


@dataclass(frozen=True)
class PeriodTest:
    """The period test of one series: its dominant periodogram line in the search range,
    how it stands out (its power over the range's mean power), the chance of a line that
    strong in surrogates without it, and the verdict."""

    period_s: float
    ratio: float
    p_surrogate: float
    relation: str   # the dominant period against the band: "1x", "2x", "1/4", "unrelated"
    verdict: str    # see :func:`period_test`


def continuum(power, lines: int = CONTINUUM_LINES) -> np.ndarray:
    """The periodogram's continuum: a running median over ``lines`` neighbouring lines,
    centred on each line (near the ends the window shrinks symmetrically, so a steep red
    background is not read from lines on one side only). A narrow line barely moves a
    median, so the continuum keeps a series' red, autocorrelated background and drops its
    periodic lines."""
    p = np.asarray(power, dtype=float)
    if lines < 1 or lines % 2 == 0:
        raise invalid("lines", lines, "an odd number >= 1")
    n = len(p)
    return np.array([np.median(p[i - h:i + h + 1])
                     for i in range(n) for h in [min(lines // 2, i, n - 1 - i)]])


def surrogates(x, n: int, seed: int = TEST_SEED, lines: int = CONTINUUM_LINES) -> np.ndarray:
    """``n`` series (rows) of the length of ``x`` whose expected periodogram is the
    continuum of ``x``'s and whose phases are random: Gaussian noise with the series' own
    red background and none of its lines, the null of :func:`period_test`.

    Randomising the phases of ``x``'s own spectrum would keep every line (a phase-randomised
    surrogate has the very periodogram of its series), so it could not test one; the
    continuum is what the null keeps instead."""
    y = np.asarray(x, dtype=float)
    y = y - y.mean()
    m = len(y)
    power = np.abs(np.fft.rfft(y)) ** 2
    amp = np.sqrt(np.concatenate([[0.0], continuum(power[1:], lines)]) / 2)
    rng = np.random.default_rng(seed)
    f = amp * (rng.standard_normal((n, len(amp))) + 1j * rng.standard_normal((n, len(amp))))
    f[:, 0] = 0.0
    if m % 2 == 0:  # the Nyquist line of a real series is real
        f[:, -1] = amp[-1] * np.sqrt(2) * rng.standard_normal(n)
    return np.fft.irfft(f, m, axis=1)


def band_relation(period_s: float, band_s: tuple[float, float] = PROBE_RTT_BAND_S,
                  max_n: int = 6) -> str:
    """Where ``period_s`` lies against a clock known to lie in ``band_s``: ``"1x"`` inside
    it, ``"3x"`` inside three times it (a multiple), ``"1/4"`` inside a quarter of it (a
    harmonic), ``"unrelated"`` elsewhere."""
    lo, hi = band_s
    if not 0 < lo < hi:
        raise invalid("band_s", band_s, "0 < low < high (s)")
    if not np.isfinite(period_s):
        return "unrelated"
    for n in range(1, max_n + 1):
        if n * lo <= period_s <= n * hi:
            return f"{n}x"
        if n > 1 and lo / n <= period_s <= hi / n:
            return f"1/{n}"
    return "unrelated"


def period_test(x, dt: float, min_s: float, max_s: float, *,
                band_s: tuple[float, float] = PROBE_RTT_BAND_S, alpha: float = TEST_ALPHA,
                n_surrogates: int = TEST_SURROGATES, seed: int = TEST_SEED) -> PeriodTest:
    """Is the series' dominant period the clock of ``band_s``?

    The statistic is the strongest periodogram line in [min_s, max_s] over the mean power
    there (as :func:`spectral_period`). Its null is the same statistic in
    :func:`surrogates` of the series, with ``p = (1 + #{surrogate >= observed}) /
    (1 + n_surrogates)``. The verdict: ``"not significant"`` when ``p > alpha``, else by
    where the dominant period lies (:func:`band_relation`): ``"interval"`` inside the band,
    ``"multiple (2x)"``, ``"harmonic (1/4)"``, or ``"other period"``. Multiples and
    harmonics are reported as such, never as the interval.

    The statistic is the raw strongest line, so on a red spectrum long periods compete
    with the band, and a train of short dips, whose power is shared among the interval's
    harmonics, stands out less than a sine of the same energy: the test is conservative for
    the ProbeRTT dips it looks for, and a verdict of "not significant" says the series
    does not show one dominant period, not that no dips occur.
    """
    if not 0 < alpha < 1:
        raise invalid("alpha", alpha, "0 < alpha < 1")
    if n_surrogates < 1:
        raise invalid("n_surrogates", n_surrogates, ">= 1")
    line = spectral_period(x, dt, min_s, max_s)
    if not np.isfinite(line.period_s):
        return PeriodTest(np.nan, 0.0, 1.0, "unrelated", "not significant")
    freq = np.fft.rfftfreq(len(np.asarray(x)), dt)[1:]
    with np.errstate(divide="ignore"):
        period = 1 / freq
    sel = (period >= min_s) & (period <= max_s)
    power = (np.abs(np.fft.rfft(surrogates(x, n_surrogates, seed), axis=1)) ** 2)[:, 1:][:, sel]
    null = power.max(axis=1) / power.mean(axis=1)
    p = float((1 + np.count_nonzero(null >= line.strength)) / (1 + n_surrogates))
    rel = band_relation(line.period_s, band_s)
    if p > alpha:
        verdict = "not significant"
    elif rel == "1x":
        verdict = "interval"
    elif rel.endswith("x"):
        verdict = f"multiple ({rel})"
    elif rel.startswith("1/"):
        verdict = f"harmonic ({rel})"
    else:
        verdict = "other period"
    return PeriodTest(line.period_s, line.strength, p, rel, verdict)
