"""Scherrer et al. §4.3 aggregate metrics, and ``coexist fluid run``."""

import json

import numpy as np
import pytest

from coexist import cli
from coexist.core.params import ParameterError
from coexist.fluid.model import metrics, solve

PPS = 100e6 / 12000


def test_jain_limits():
    assert metrics.jain([5, 5, 5, 5]) == pytest.approx(1.0)
    assert metrics.jain([1, 0, 0, 0]) == pytest.approx(0.25)
    assert 0.25 < metrics.jain([3, 1, 1, 1]) < 1


def _trace(**kw):
    t = np.arange(0, 1.0, 1e-4)
    n = 2
    cfg = solve.Config(PPS, 100.0, (solve.Flow("reno", 0.01, 0.01),) * n, duration_s=1.0,
                       sample_s=1e-4)
    base = dict(rate_pps=np.full((len(t), n), PPS / 2), window_pkts=np.ones((len(t), n)),
                rtt_s=np.full((len(t), n), 0.02), queue_pkts=np.zeros(len(t)),
                loss=np.zeros(len(t)), arrival_pps=np.full(len(t), PPS))
    base.update(kw)
    return solve.Trace(cfg, t, **base)


def test_aggregate_on_a_hand_made_trace():
    """Exact values on a constructed trace (not a model run): the formulas themselves."""
    m = metrics.aggregate(_trace(), warmup_s=0.0)
    assert m["jain"] == pytest.approx(1.0) and m["loss_rate"] == 0.0
    assert m["utilisation"] == pytest.approx(1.0) and m["queue_share"] == 0.0
    assert m["queue_delay_s"] == 0.0
    assert m["jitter_s"] == 0.0
    t = np.arange(0, 1.0, 1e-4)
    # a queue at half the buffer, 10 % loss, and an RTT that alternates every 0.1 ms
    rtt = np.where((np.arange(len(t)) // 1) % 2 == 0, 0.02, 0.021)[:, None] * np.ones((1, 2))
    m = metrics.aggregate(_trace(queue_pkts=np.full(len(t), 50.0), loss=np.full(len(t), 0.1),
                                 rtt_s=rtt), warmup_s=0.0)
    assert m["queue_share"] == pytest.approx(0.5) and m["loss_rate"] == pytest.approx(0.1)
    assert m["queue_delay_s"] == pytest.approx(50.0 / PPS)  # eq. (3): q/C
    assert m["utilisation"] == pytest.approx(1.0)  # a standing queue keeps the link busy
    assert 0 < m["jitter_s"] <= 0.001 + 1e-12
    with pytest.raises(ParameterError, match="warmup_s"):
        metrics.aggregate(_trace(), warmup_s=5.0)


def test_utilisation_below_capacity_without_queue():
    t = np.arange(0, 1.0, 1e-4)
    m = metrics.aggregate(_trace(arrival_pps=np.full(len(t), 0.6 * PPS)), warmup_s=0.0)
    assert m["utilisation"] == pytest.approx(0.6)


def test_jitter_needs_fine_sampling():
    cfg = solve.dumbbell(["reno"], capacity_bps=100e6, rtt_s=0.02, buffer_bdp=1,
                         duration_s=0.5, sample_s=1e-3)
    with pytest.raises(ParameterError, match="sample_s"):
        metrics.aggregate(solve.run(cfg), warmup_s=0.1)


def test_bbr1_loses_more_than_loss_based_ccas_insight_1():
    out = {}
    for ccas in (["bbr1"] * 4, ["cubic"] * 4, ["reno"] * 4):
        cfg = solve.dumbbell(ccas, capacity_bps=100e6, rtt_s=[0.03, 0.032, 0.034, 0.036],
                             buffer_bdp=1, duration_s=6.0, sample_s=4 / PPS,
                             initial_window=PPS * 0.03 / 4)
        out[ccas[0]] = metrics.aggregate(solve.run(cfg), warmup_s=2.0)
    assert out["bbr1"]["loss_rate"] > 0.02
    assert out["cubic"]["loss_rate"] < 0.01 and out["reno"]["loss_rate"] < 0.01
    assert all(m["utilisation"] > 0.95 for m in out.values())


def test_cli_fluid_run_json_and_errors(capsys):
    assert cli.main(["fluid", "run", "--ccas", "cubic,bbr1", "--capacity", "20mbit", "--rtt",
                     "20ms-30ms", "--buffer-bdp", "2", "--duration", "2", "--warmup", "0.5",
                     "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["flows"] == 2 and out["ccas"] == "cubic,bbr1"
    assert [f["rtt_s"] for f in out["per_flow"]] == pytest.approx([0.02, 0.03])
    assert sum(f["share"] for f in out["per_flow"]) == pytest.approx(1.0)
    for key in ("jain", "loss_rate", "queue_share", "utilisation", "jitter_s"):
        assert np.isfinite(out[key])
    assert out["rtprop_expiry"] is False


def _without_and_with(capsys, args: list[str], flag: str, field: str) -> dict[bool, dict]:
    """``coexist fluid run`` without and with ``flag``; the JSON says which it ran."""
    outs = {}
    for on in (False, True):
        assert cli.main(args + ([flag] if on else [])) == 0
        outs[on] = json.loads(capsys.readouterr().out)
        assert outs[on][field] is on
    return outs


def test_cli_fluid_run_rtprop_expiry(capsys):
    args = ["fluid", "run", "--ccas", "cubic,bbr1", "--capacity", "20mbit", "--rtt", "40ms",
            "--buffer-bdp", "5", "--duration", "25", "--warmup", "12", "--json"]
    out = _without_and_with(capsys, args, "--rtprop-expiry", "rtprop_expiry")
    assert out[True]["per_flow"][1]["share"] > out[False]["per_flow"][1]["share"] + 0.1


def test_cli_fluid_run_cubic_recovery(capsys):
    """A lone CUBIC flow at 80 ms in 2 BDP, the equations read as printed: eqs. (40a-b)
    leave the link partly idle, one cut per loss episode fills it."""
    args = ["fluid", "run", "--ccas", "cubic", "--capacity", "100mbit", "--rtt", "80ms",
            "--buffer-bdp", "2", "--duration", "60", "--warmup", "30", "--json",
            "--reading", "printed"]
    out = _without_and_with(capsys, args, "--cubic-recovery", "cubic_recovery")
    assert out[False]["utilisation"] < 0.8 and out[True]["utilisation"] > 0.97


def test_cli_fluid_run_errors(capsys):
    assert cli.main(["fluid", "run", "--ccas", "bbr3", "--capacity", "20mbit", "--rtt",
                     "20ms", "--buffer-bdp", "2"]) == 2
    assert "'ccas'" in capsys.readouterr().err
    assert cli.main(["fluid", "run", "--ccas", "bbr1", "--capacity", "20mbit", "--rtt",
                     "30ms-20ms", "--buffer-bdp", "2"]) == 2
    assert "'rtt'" in capsys.readouterr().err


def test_goodput_is_the_rate_thinned_by_loss_at_the_queue():
    """Goodput = x_i(t) (1 - p(t + d_f)) (eqs. 1-2): equal to the rate without loss; with a
    loss step the flow's fluid meets it one forward delay (100 samples) later."""
    t = np.arange(0, 1.0, 1e-4)
    pf = metrics.per_flow(_trace(), 0.0)
    assert np.allclose(pf.goodput_bps, pf.rate_bps)
    loss = np.where(t >= 0.5, 0.1, 0.0)
    pf = metrics.per_flow(_trace(loss=loss), 0.0)
    frac_lossy = (len(t) - np.searchsorted(t, 0.5 - 0.01)) / len(t)  # shifted by d_f = 10 ms
    assert pf.goodput_bps.iloc[0] == pytest.approx(pf.rate_bps.iloc[0] * (1 - 0.1 * frac_lossy),
                                                   rel=1e-9)
    assert pf.share.sum() == pytest.approx(1.0)


def test_goodput_matches_the_links_output_in_a_lossy_run():
    """Over a long run all goodput is what the link delivers: sum of goodputs = U C."""
    cfg = solve.dumbbell(["cubic", "bbr1"], capacity_bps=100e6, rtt_s=0.02, buffer_bdp=0.5,
                         duration_s=20.0, step_s=5e-5, sample_s=2e-4)
    tr = solve.run(cfg)
    agg = metrics.aggregate(tr, 5.0)
    pf = metrics.per_flow(tr, 5.0)
    assert agg["loss_rate"] > 1e-3  # loss matters in this setting
    assert pf.goodput_bps.sum() == pytest.approx(agg["utilisation"] * 100e6, rel=0.02)
    assert (pf.goodput_bps < pf.rate_bps).all()


def test_loss_episodes_on_a_hand_made_trace():
    """Two loss pulses of known length and size, the second still running at the end of
    the trace (left out); the window and queue dips after the first are read back."""
    t = np.arange(0, 1.0, 1e-4)
    loss = np.zeros(len(t))
    loss[(t >= 0.2) & (t < 0.25)] = 0.01  # 50 ms at 1 %: y p dt = PPS * 0.01 * 0.05
    loss[t >= 0.9] = 0.02
    window = np.full((len(t), 2), 100.0)
    window[(t >= 0.3) & (t < 0.4)] = 70.0  # the senders back off to 0.7 together
    queue = np.full(len(t), 100.0)
    queue[(t >= 0.3) & (t < 0.5)] = 25.0
    ep = metrics.loss_episodes(_trace(loss=loss, window_pkts=window, queue_pkts=queue))
    assert len(ep) == 1
    e = ep.iloc[0]
    assert e["start_s"] == pytest.approx(0.2) and e["duration_s"] == pytest.approx(0.05)
    assert e["dropped_per_flow"] == pytest.approx(PPS * 0.01 * 0.05 / 2, rel=1e-3)
    assert e["window_trough_ratio"] == pytest.approx(0.7)
    assert e["queue_min_share"] == pytest.approx(0.25)
    assert metrics.loss_episodes(_trace()).empty  # no loss, no episode
    with pytest.raises(ParameterError, match="threshold"):
        metrics.loss_episodes(_trace(), threshold=0.0)


def test_queue_share_between_windows():
    t = np.arange(0, 1.0, 1e-4)
    tr = _trace(queue_pkts=np.where(t < 0.5, 20.0, 80.0))
    assert metrics.queue_share_between(tr, 0.0, 0.5) == pytest.approx(0.2)
    assert metrics.queue_share_between(tr, 0.5, 1.0) == pytest.approx(0.8)
    assert metrics.queue_share_between(tr, 0.25, 0.75) == pytest.approx(0.5)
    for bad in ((0.5, 0.5), (-0.1, 0.5), (0.5, 1.5)):
        with pytest.raises(ParameterError, match="window"):
            metrics.queue_share_between(tr, *bad)


def test_cubic_bbr_regime_on_a_hand_made_trace():
    """A quarter of the time under one BDP of queue, three quarters of the estimate's
    growth made then, CUBIC's window from 100 down to 30 packets; a warm-up that leaves
    only the deep-queue half sees none of it."""
    t = np.arange(0, 1.0, 1e-4)
    flows = (solve.Flow("cubic", 0.01, 0.01), solve.Flow("bbr1", 0.01, 0.01))
    cfg = solve.Config(PPS, 400.0, flows, duration_s=1.0, sample_s=1e-4)
    bdp = PPS * 0.02
    x_btl = np.zeros((len(t), 2))
    x_btl[:, 1] = np.interp(t, [0, 0.25, 0.5, 0.75, 1.0], [0, 3, 2, 3, 3])
    window = np.tile(np.where(t < 0.5, 100.0, 30.0)[:, None], (1, 2))
    tr = solve.Trace(cfg, t, np.full((len(t), 2), PPS / 2), window, np.full((len(t), 2), 0.02),
                     np.where(t < 0.25, 0.5 * bdp, 1.5 * bdp), np.zeros(len(t)),
                     np.full(len(t), PPS), {"x_btl": x_btl})
    r = metrics.cubic_bbr_regime(tr, warmup_s=0.0)
    assert r["queue_below_bdp"] == pytest.approx(0.25, abs=1e-3)
    assert r["btl_growth_below_bdp"] == pytest.approx(0.75, abs=1e-3)
    assert r["cubic_low_over_high"] == pytest.approx(0.3)
    r = metrics.cubic_bbr_regime(tr, warmup_s=0.5)
    assert r["queue_below_bdp"] == 0.0 and r["btl_growth_below_bdp"] == 0.0
    assert r["cubic_low_over_high"] == 1.0
    alone = solve.Trace(solve.Config(PPS, 400.0, flows[:1], duration_s=1.0, sample_s=1e-4),
                        t, tr.rate_pps[:, :1], window[:, :1], tr.rtt_s[:, :1], tr.queue_pkts,
                        tr.loss, tr.arrival_pps, {"x_btl": x_btl[:, :1]})
    r = metrics.cubic_bbr_regime(alone, warmup_s=0.0)  # no BBR sender: no estimate to grow
    assert r["queue_below_bdp"] == pytest.approx(0.25, abs=1e-3) and np.isnan(
        r["btl_growth_below_bdp"])
    with pytest.raises(ParameterError, match="trace"):
        metrics.cubic_bbr_regime(_trace(), warmup_s=0.0)


def test_cli_fluid_run_published_reading(capsys):
    """``--reading published``: the lone CUBIC of the 80-ms case above, as the authors' code
    integrates it, keeps the link full (their reference run shows the same), with or
    without one cut per loss episode; an unknown reading is refused."""
    args = ["fluid", "run", "--ccas", "cubic", "--capacity", "100mbit", "--rtt", "80ms",
            "--buffer-bdp", "2", "--duration", "30", "--warmup", "10", "--json",
            "--reading", "published"]
    out = _without_and_with(capsys, args, "--cubic-recovery", "cubic_recovery")
    assert all(o["reading"] == "published" and o["utilisation"] > 0.99 for o in out.values())
    with pytest.raises(SystemExit) as exit_:  # argparse's one-line error, exit 2
        cli.main(args[:-1] + ["paper"])
    assert exit_.value.code == 2 and "--reading" in capsys.readouterr().err


def test_goodput_batches_split_the_average_and_show_its_spread():
    """Batch means of a hand-made trace: their mean is per_flow's goodput (equal batches),
    a steady rate has no spread, a rate that changes halfway has the spread it should."""
    steady = _trace()
    b = metrics.goodput_batches(steady, warmup_s=0.0, batches=4)
    assert b.shape == (4, 2)
    assert np.allclose(b.mean(axis=0), metrics.per_flow(steady, 0.0)["goodput_bps"])
    assert np.ptp(b, axis=0).max() == 0.0
    t = np.arange(0, 1.0, 1e-4)
    rate = np.where(t[:, None] < 0.5, PPS / 4, 3 * PPS / 4) * np.ones((1, 2))
    step = _trace(rate_pps=rate)
    b = metrics.goodput_batches(step, warmup_s=0.0, batches=2)
    assert np.allclose(b[:, 0], [PPS / 4 * 12000, 3 * PPS / 4 * 12000])
    assert np.allclose(b.mean(axis=0), metrics.per_flow(step, 0.0)["goodput_bps"])
    for bad in (1, 101, 2.5):
        with pytest.raises(ParameterError, match="'batches'"):
            metrics.goodput_batches(steady, 0.0, bad)
