"""Period estimates and ProbeRTT events (the periodic-fluctuation chapter)."""

import numpy as np
import pandas as pd
import pytest

from coexist.analysis import periodicity
from coexist.core.params import ParameterError


def _pulses(period_s: float, dt: float = 0.5, n: int = 400, seed: int = 1) -> np.ndarray:
    """Dips of one sample every ``period_s`` (as ProbeRTT makes) on noise."""
    rng = np.random.default_rng(seed)
    t = np.arange(n) * dt
    x = 85 + rng.normal(0, 1.0, n)
    x[np.isclose(np.mod(t, period_s), 0, atol=dt / 2)] -= 10
    return x


@pytest.mark.parametrize("period", [10.0, 20.0])
def test_both_methods_find_a_pulse_period(period):
    x = _pulses(period)
    spec = periodicity.spectral_period(x, 0.5, 2, 60)
    acf = periodicity.acf_period(x, 0.5, 2, 60)
    assert acf.period_s == pytest.approx(period)
    # a pulse train puts power in every harmonic; the strongest line is one of them
    assert np.isclose(period / spec.period_s, np.round(period / spec.period_s), atol=0.05)
    assert spec.p_white < 1e-3


def test_white_noise_has_no_significant_line():
    x = np.random.default_rng(3).normal(0, 1, 400)
    spec = periodicity.spectral_period(x, 0.5, 2, 60)
    assert spec.p_white > 0.01


def test_a_sine_is_found_exactly():
    t = np.arange(0, 200, 0.5)
    x = np.sin(2 * np.pi * t / 20)
    assert periodicity.spectral_period(x, 0.5, 2, 60).period_s == pytest.approx(20.0)
    assert periodicity.acf_period(x, 0.5, 2, 60).period_s == pytest.approx(20.0)


@pytest.mark.parametrize("args, name", [
    ((np.ones(4), 0.5, 2, 60), "'x'"),
    ((np.ones(400), 0.0, 2, 60), "'dt'"),
    ((np.ones(400), 0.5, 0.5, 60), "search range"),
    ((np.ones(400), 0.5, 2, 150), "search range"),
])
def test_bad_inputs_are_named(args, name):
    with pytest.raises(ParameterError, match=name):
        periodicity.spectral_period(*args)


def test_binned_sums_per_algorithm_and_drops_partial_intervals():
    rows = []
    for flow, cca in ((0, "cubic"), (1, "bbr"), (2, "bbr")):
        for i in range(4):
            rows.append({"flow": flow, "cca": cca, "t_start_s": i * 0.5 + 0.01 * flow,
                         "t_end_s": (i + 1) * 0.5 + 0.01 * flow, "goodput_bps": 1e6 * (flow + 1)})
        rows.append({"flow": flow, "cca": cca, "t_start_s": 2.0 + 0.01 * flow,
                     "t_end_s": 2.05 + 0.01 * flow, "goodput_bps": 9e9})  # short tail
    b = periodicity.binned(pd.DataFrame(rows), 0.5)
    assert b.t_s.tolist() == [0.5, 1.0, 1.5, 2.0]
    assert (b.bbr == 5e6).all() and (b.cubic == 1e6).all()


def test_probe_rtt_entries_and_clusters():
    s = pd.DataFrame({"flow": [1] * 6 + [2] * 3, "cca": "bbr",
                      "t_s": [0, .2, .4, .6, .8, 1.0, 0.3, 0.5, 0.7],
                      "cwnd_gain": [2, 1, 1, 2, 1, 2, 1, 2, 2]})
    e = periodicity.probe_rtt_entries(s)
    assert e.values.tolist() == [[1, 0.2], [1, 0.8], [2, 0.3]]
    assert periodicity.clusters(e.t_s.to_numpy(), 0.5).tolist() == [0.2, 0.8]


def test_event_average_recovers_the_dip():
    t = np.arange(0, 100, 0.5)
    x = np.full(len(t), 80.0)
    events = np.array([20.0, 40.0, 60.0])
    x[np.isin(t, events + 0.5)] = 70.0
    ea = periodicity.event_average(t, x, events, 2, 5)
    assert ea.events.iloc[0] == 3
    assert ea.loc[np.isclose(ea.lag_s, 0.5), "mean"].item() == 70.0
    assert ea.loc[~np.isclose(ea.lag_s, 0.5), "mean"].eq(80.0).all()


def test_band_relation_places_a_period_against_the_probe_rtt_band():
    assert periodicity.band_relation(10.0) == "1x"
    assert periodicity.band_relation(10.6) == "1x"
    assert periodicity.band_relation(30.5) == "3x"
    assert periodicity.band_relation(20.5) == "2x"
    assert periodicity.band_relation(2.535) == "1/4"
    assert periodicity.band_relation(9.5) == "unrelated"  # below the band: not the cycle
    assert periodicity.band_relation(36.0) == "unrelated"
    assert periodicity.band_relation(np.nan) == "unrelated"
    with pytest.raises(ParameterError, match="'band_s'"):
        periodicity.band_relation(10.0, (11.0, 9.5))


def _ar1(phi: float, n: int, seed: int) -> np.ndarray:
    """A red series without a period: x[i] = phi x[i-1] + white noise."""
    e = np.random.default_rng(seed).standard_normal(n)
    x = np.zeros(n)
    for i in range(1, n):
        x[i] = phi * x[i - 1] + e[i]
    return x


def test_the_continuum_drops_a_line_and_keeps_the_background():
    p = np.linspace(10.0, 1.0, 60)
    spiked = p.copy()
    spiked[30] = 500.0
    c = periodicity.continuum(spiked)
    assert c[30] == pytest.approx(p[30], rel=0.05)
    assert c[0] == spiked[0] and c[-1] == spiked[-1]  # the window shrinks to the line itself
    far = np.r_[5:25, 36:55]  # beyond the spike's window, a straight line is its own median
    np.testing.assert_allclose(c[far], p[far], rtol=1e-12)
    with pytest.raises(ParameterError, match="'lines'"):
        periodicity.continuum(p, 4)


def test_surrogates_have_the_series_continuum_and_not_its_line():
    """Averaged over many surrogates, the periodogram is the continuum of the series'
    own (a red background), and the series' line is gone."""
    t = np.arange(360) * 0.5
    x = _ar1(0.8, 360, 3) + 3 * np.sin(2 * np.pi * t / 10.0)
    s = periodicity.surrogates(x, 4000, seed=1)
    assert s.shape == (4000, 360)
    mean = (np.abs(np.fft.rfft(s, axis=1)) ** 2)[:, 1:].mean(axis=0)
    power = (np.abs(np.fft.rfft(x - x.mean())) ** 2)[1:]
    cont = periodicity.continuum(power)
    line = 18 - 1  # 10 s in 180 s is the 18th line after the mean
    np.testing.assert_allclose(mean[:-1], cont[:-1], rtol=0.12)
    assert power[line] > 20 * mean[line]


def test_the_period_test_finds_the_interval_a_multiple_and_a_harmonic_apart():
    rng = np.random.default_rng(5)
    t = np.arange(360) * 0.5
    noise = rng.standard_normal(360)
    for period, verdict in ((10.2, "interval"), (20.4, "multiple (2x)"),
                            (2.55, "harmonic (1/4)"), (7.0, "other period")):
        got = periodicity.period_test(noise + np.sin(2 * np.pi * t / period), 0.5, 2, 60)
        assert got.verdict == verdict, (period, got)
        assert got.p_surrogate == pytest.approx(1 / 1000)
    flat = periodicity.period_test(noise, 0.5, 2, 60)
    assert flat.verdict == "not significant" and flat.p_surrogate > periodicity.TEST_ALPHA


def test_the_period_test_keeps_its_level_on_red_noise():
    """A red series without a period (AR(1) with the lag-1 correlation of 0.9 of a
    throughput series in 0.5-s bins) passes the test about as often as its level allows:
    measured 2 of 200 at the test's level of 0.01, so more than 6 would mean the null
    no longer holds the background."""
    hits = sum(periodicity.period_test(_ar1(0.9, 360, 1000 + s), 0.5, 2, 60,
                                       seed=s).verdict != "not significant"
               for s in range(200))
    assert hits <= 6


def test_the_period_test_is_reproducible_and_refuses_bad_levels():
    x = _ar1(0.5, 200, 2)
    assert periodicity.period_test(x, 0.5, 2, 40) == periodicity.period_test(x, 0.5, 2, 40)
    with pytest.raises(ParameterError, match="'alpha'"):
        periodicity.period_test(x, 0.5, 2, 40, alpha=1.5)
    with pytest.raises(ParameterError, match="'n_surrogates'"):
        periodicity.period_test(x, 0.5, 2, 40, n_surrogates=0)


def test_synchronised_groups_entries_and_counts_each_group():
    from coexist.analysis.periodicity import synchronised

    starts, size = synchronised([30.2, 10.0, 10.4, 10.9, 20.0, 20.5, 31.0])
    assert starts.tolist() == [10.0, 20.0, 30.2]
    assert size.tolist() == [3, 2, 2]


def test_model_probe_rtt_entries_are_upward_crossings_of_one_half():
    from coexist.analysis.periodicity import model_probe_rtt_entries

    t = np.arange(6.0)
    m = np.array([[0, 0], [1, 0], [1, 0], [0, 1], [1, 1], [0, 0]], dtype=float)
    assert model_probe_rtt_entries(t, m).tolist() == [1.0, 3.0, 4.0]
