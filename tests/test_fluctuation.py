"""The fluctuation's per-run numbers (coexist.analysis.fluctuation): Jain's index, the remedy's
interval spread, the summary of a synthetic run whose answers are known, the stored runs
read as P-F1-2 reads them, and the remedy acting in the fluid model."""

import numpy as np
import pandas as pd
import pytest

from coexist.analysis import fluctuation
from coexist.book import ledger
from coexist.core.params import ParameterError
from coexist.fluid import fluctuation as fluid_fluctuation
from coexist.measured import fluctuation as measured_fluctuation

EST = dict(bin_s=0.5, warmup_s=20.0, min_period_s=2.0, max_period_s=60.0, sync_flows=5)


def test_jain_is_one_for_equal_shares_and_one_over_n_for_a_monopoly():
    assert fluctuation.jain([3.0, 3.0, 3.0, 3.0]) == pytest.approx(1.0)
    assert fluctuation.jain([5.0, 0.0, 0.0, 0.0]) == pytest.approx(0.25)
    assert fluctuation.jain([1.0, 3.0]) == pytest.approx(16 / 20)
    with pytest.raises(ParameterError, match="'x'"):
        fluctuation.jain([0.0, 0.0])


def test_spread_intervals_run_evenly_from_the_published_ten_seconds():
    assert fluctuation.spread_intervals(10, 0.0) == (10.0,) * 10
    got = fluctuation.spread_intervals(5, 4.0)
    assert got == pytest.approx((10.0, 11.0, 12.0, 13.0, 14.0))
    with pytest.raises(ParameterError, match=r"'spread_s' = -1.0 is invalid"):
        fluctuation.spread_intervals(5, -1.0)


def test_a_synthetic_run_gives_its_known_period_amplitude_and_synchronisation():
    """BBR's total dips from 60 to 30 for one bin in every 20 (a 10-s period in 0.5-s
    bins); eight flows enter ProbeRTT together at each dip, plus one flow alone between
    dips. The period is 10 s, the amplitude is the series' own std over mean, every dip is
    a synchronised entry 10 s apart, the shares and Jain's index follow from the means."""
    t = np.arange(1, 361) * 0.5 + 20.0
    bbr = np.where(np.arange(360) % 20 == 0, 30.0, 60.0)
    cubic = np.full(360, 20.0)
    dips = t[np.arange(360) % 20 == 0]
    entries = np.concatenate([np.repeat(dips, 8), dips[:-1] + 5.0])
    row = fluctuation.summarise(t, bbr, cubic, np.array([6.0, 6.0, 2.0, 2.0]), entries,
                                capacity_bps=100.0, **{k: v for k, v in EST.items()
                                                       if k != "warmup_s"})
    assert row["acf_period_s"] == pytest.approx(10.0)
    assert row["amplitude"] == pytest.approx(bbr.std() / bbr.mean())
    assert row["synchronised_entries"] == len(dips)
    assert row["probe_rtt_entries"] == len(entries)
    assert row["sync_gap_s"] == pytest.approx(10.0)
    assert row["bbr_share"] == pytest.approx(bbr.mean() / (bbr.mean() + 20.0))
    assert row["utilisation"] == pytest.approx((bbr.mean() + 20.0) / 100.0)
    assert row["jain"] == pytest.approx(16.0 ** 2 / (4 * 80.0))


def test_the_stored_runs_read_as_p_f1_2_reads_them():
    """The same campaign and estimates as P-F1-2 give the synchronised-entry counts its
    committed claims state (notebooks/expected/P-F1-2.claims.csv)."""
    claims = pd.read_csv(ledger.EXPECTED / "P-F1-2.claims.csv").set_index("key")["value"]
    t = measured_fluctuation.measured_table(["fluctuation"], [2.0, 5.0], **EST)
    assert len(t) == 6 and set(t.capacity_mbps) == {100.0}
    for rtt in (2.0, 5.0):
        n = t[t.rtt_ms == rtt].synchronised_entries
        span = f"{n.min()}-{n.max()}" if n.min() != n.max() else f"{n.min()}"
        assert span == claims[f"pf1_sync_{rtt:g}ms"]


def test_spread_probe_rtt_intervals_end_the_synchronised_entries_in_the_model(monkeypatch):
    """The remedy in the fluid model (5 ms, 100 Mbit/s, 10 CUBIC + 10 BBRv1, 60 s): with
    the published 10 s every BBR flow enters ProbeRTT together; with intervals spread over
    [10, 15] s no five enter within a second of each other after the first round."""
    monkeypatch.setenv("COEXIST_FLUID_CACHE", "off")
    kw = dict(capacity_bps=100e6, rtt_s=0.005, duration_s=60.0, step_s=5e-5,
              **{**EST, "warmup_s": 15.0, "max_period_s": 20.0})
    published = fluid_fluctuation.fluid_run(**kw)
    spread = fluid_fluctuation.fluid_run(
        probe_rtt_interval_s=fluctuation.spread_intervals(10, 5.0), **kw)
    assert published["synchronised_entries"] >= 4
    assert spread["synchronised_entries"] == 0
    assert spread["probe_rtt_entries"] > 0
    with pytest.raises(ParameterError, match="one per BBR flow"):
        fluid_fluctuation.fluid_run(probe_rtt_interval_s=(10.0, 12.0), **kw)
