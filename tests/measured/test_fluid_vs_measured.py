"""The fluid model's metrics beside measured runs (Scherrer et al. §4.3)."""

import json

import numpy as np
import pandas as pd
import pytest

from coexist import data
from coexist.book import aggregate_figures
from coexist.core.params import ParameterError
from coexist.fluid.studies import beside_measured
from coexist.measured import fluid_vs_measured
from coexist.measured import runs as measured

RUN = data.DATA / "runs" / "two_flow" / "50mbit-40ms-b2-cubic1-bbr1-r0"


def test_pair_labels_follow_the_paper_order():
    assert beside_measured.pair_label(["bbr1", "cubic", "bbr1"]) == "CUBIC/BBRv1"
    assert beside_measured.pair_label(["reno"] * 3) == "Reno/Reno"
    assert beside_measured.pair_label(["bbr2", "reno"]) == "Reno/BBRv2"
    with pytest.raises(ParameterError, match="ccas"):
        beside_measured.pair_label(["reno", "cubic", "bbr1"])
    with pytest.raises(ParameterError, match="ccas"):
        beside_measured.pair_label(["vegas"])


@pytest.mark.skipif(not RUN.exists(), reason="bundled run not present")
def test_run_metrics_of_a_stored_run_agree_with_its_summary():
    m = fluid_vs_measured.run_metrics(RUN)
    s = json.loads((RUN / "summary.json").read_text())
    assert m["utilisation"] == s["utilisation"] and m["jain"] == s["jain_index"]
    assert 0 < m["loss_rate"] < 0.05 and 0 < m["queue_share"] <= 1
    # the mean backlog over the buffer, in seconds of the link, is the run's mean queue delay
    p = s["params"]
    delay = m["queue_share"] * p["buffer_bytes"] * 8 / p["capacity_bps"]
    assert delay == pytest.approx(s["mean_queue_delay_s"], rel=1e-9)
    # drops after the warm-up cannot exceed the run's total drops
    q = data.load_table(RUN / data.RUN_FILES["queue"], "queue")
    window = q[(q.t_s >= p["warmup_s"]) & (q.t_s <= p["duration_s"] - 0.5)]
    sent = window.sent_packets.iloc[-1] - window.sent_packets.iloc[0]
    assert m["loss_rate"] * sent <= s["bottleneck_drops"]


@pytest.mark.skipif(not RUN.exists(), reason="bundled run not present")
def test_measured_metrics_group_ten_sender_runs_by_pair(monkeypatch, tmp_path):
    """Campaign rows become one metrics row per run, labelled with the model's pair names;
    runs with another RTT range or flow count are left to other figures."""
    base = measured.campaign_table("two_flow")
    row = base[base.key == RUN.name].iloc[0]
    rows = []
    for key, lo, n in (("a", 0.03, 10), ("b", 0.01, 10), ("c", 0.03, 4)):
        for i in range(n):
            r = row.copy()
            r["key"], r["cca"] = key, ("cubic" if i % 2 == 0 else "bbr")
            r["flow_rtt_s"] = lo + i * 0.01 / max(n - 1, 1)
            rows.append(r)
    table = pd.DataFrame(rows)
    monkeypatch.setattr(measured, "campaign_table", lambda name, data_dir=None: table)
    runs = tmp_path / "runs" / fluid_vs_measured.CAMPAIGN
    for key in "abc":
        (runs / key).mkdir(parents=True)
        for f in ("summary.json", data.RUN_FILES["queue"]):
            (runs / key / f).write_bytes((RUN / f).read_bytes())
    out = fluid_vs_measured.measured_metrics(30.0, data_dir=tmp_path)
    assert out.key.tolist() == ["a"] and out.pair.tolist() == ["CUBIC/BBRv1"]
    assert out.loc[0, "utilisation"] == fluid_vs_measured.run_metrics(RUN)["utilisation"]
    assert fluid_vs_measured.measured_metrics(10.0, data_dir=tmp_path).key.tolist() == ["b"]
    # a page re-run at another setting draws none of these runs
    cap = float(row["capacity_bps"]) / 1e6
    assert fluid_vs_measured.measured_metrics(30.0, data_dir=tmp_path, capacity_mbps=cap,
                                              rtt_max_ms=40.0).key.tolist() == ["a"]
    assert fluid_vs_measured.measured_metrics(30.0, data_dir=tmp_path,
                                              capacity_mbps=2 * cap).empty
    assert fluid_vs_measured.measured_metrics(30.0, data_dir=tmp_path, rtt_max_ms=50.0).empty


def test_spread_and_accuracy():
    per_run = pd.DataFrame({"pair": ["CUBIC/BBRv1"] * 2, "buffer_bdp": [2.0, 2.0],
                            "repeat": [0, 1], "key": ["x", "y"], "jain": [0.8, 0.9],
                            "loss_rate": [0.01, 0.03], "queue_share": [0.5, 0.7],
                            "utilisation": [0.98, 1.0]})
    s = fluid_vs_measured.spread(per_run)
    jain = s[s.metric == "jain"].iloc[0]
    assert (jain["mean"], jain["min"], jain["max"], jain["n_runs"]) == pytest.approx(
        (0.85, 0.8, 0.9, 2))
    model = pd.DataFrame({"pair": ["CUBIC/BBRv1"] * 2, "aqm": ["droptail", "red"],
                          "buffer_bdp": [2.0, 2.0], "jain": [0.95, 0.1],
                          "loss_rate": [0.0, 0.5], "queue_share": [0.6, 0.1],
                          "utilisation": [1.0, 1.0], "jitter_ms": [1.0, 1.0]})
    acc = fluid_vs_measured.accuracy(model, s).set_index("metric")
    assert acc.loc["jain", "mean_error"] == pytest.approx(0.10)  # drop-tail only
    assert acc.loc["loss_rate", "mean_abs_error"] == pytest.approx(0.02)
    assert (acc["buffers"] == 1).all()
    assert fluid_vs_measured.accuracy(model, fluid_vs_measured.spread(per_run.iloc[:0])).empty


def test_model_metrics_cover_every_pair_in_range():
    t = beside_measured.model_metrics(capacity_mbps=20.0, rtt_min_ms=10.0, rtt_max_ms=20.0,
                                 n_flows=4, buffers_bdp=[2.0], duration_s=3.0, warmup_s=1.0,
                                 aqms=("droptail",))
    assert len(t) == 10 and t.pair.nunique() == 10
    for col in ("jain", "queue_share", "utilisation"):
        assert t[col].between(0, 1 + 1e-9).all()
    assert (t.loss_rate >= 0).all() and np.isfinite(t.jitter_ms).all()


@pytest.mark.skipif(not RUN.exists(), reason="bundled run not present")
def test_run_trace_is_normalised_like_the_paper():
    s = json.loads((RUN / "summary.json").read_text())
    p = s["params"]
    tr = fluid_vs_measured.run_trace(RUN, flow=1)
    assert set(tr.quantity) == set(fluid_vs_measured.TRACE_QUANTITIES)
    late = tr[(tr.t_s > p["warmup_s"]) & (tr.t_s <= p["duration_s"])]
    by = late.groupby("quantity").percent
    # the mean goodput over the intervals is the flow's goodput, in % of the capacity
    assert by.mean()["rate_pct"] == pytest.approx(
        s["flows"][1]["goodput_bps"] / p["capacity_bps"] * 100, rel=0.03)
    assert by.max()["queue_pct"] <= 100 + 1e-9 and by.min()["queue_pct"] >= 0
    assert by.min()["rtt_excess_pct"] > -5  # no sender sees less than the base RTT
    assert 0 <= by.mean()["loss_pct"] < 5
    assert by.mean()["window_pct"] > 50  # BBR keeps at least about one BDP in flight
    with pytest.raises(ParameterError, match="flow"):
        fluid_vs_measured.run_trace(RUN, flow=2)


def _long(pair, buffers, values, metric="jain"):
    return pd.DataFrame({"pair": pair, "buffer_bdp": buffers, "metric": metric,
                         "mean": values})


def _model(rows):
    """Model rows (drop-tail and a RED row that must be ignored) from (pair, buffer, jain)."""
    out = []
    for pair, buf, jain in rows:
        for aqm, j in (("droptail", jain), ("red", 1.0 - jain)):
            out.append({"pair": pair, "aqm": aqm, "buffer_bdp": buf, "jain": j,
                        "loss_rate": 0.0, "queue_share": 0.5, "utilisation": 1.0,
                        "jitter_ms": 0.0})
    return pd.DataFrame(out)


def test_trend_agreement_judges_only_clear_measured_trends():
    bufs = [1.0, 2.0, 3.0, 4.0]
    model = _model([(p, b, v) for p, vals in (("Reno/Reno", [0.5, 0.6, 0.7, 0.8]),
                                              ("CUBIC/CUBIC", [0.5, 0.6, 0.7, 0.8]),
                                              ("Reno/CUBIC", [0.5, 0.6, 0.7, 0.8]))
                    for b, v in zip(bufs, vals, strict=True)])
    meas = pd.concat([_long("Reno/Reno", bufs, [0.1, 0.2, 0.3, 0.9]),      # same direction
                      _long("CUBIC/CUBIC", bufs, [0.9, 0.8, 0.2, 0.1]),    # opposite
                      _long("Reno/CUBIC", bufs, [0.5, 0.5, 0.5, 0.5])])    # no trend
    t = fluid_vs_measured.trend_agreement(model, meas).set_index("pair")
    assert t.loc["Reno/Reno", "agree"] is True and t.loc["Reno/Reno", "rho_measured"] == 1.0
    assert t.loc["CUBIC/CUBIC", "agree"] is False
    assert t.loc["CUBIC/CUBIC", "rho_measured"] == pytest.approx(-1.0)
    assert t.loc["Reno/CUBIC", "agree"] is None  # constant measured side: no verdict
    assert (t["rho_model"] == 1.0).all() and (t["buffers"] == 4).all()
    # two buffers are too few to call a trend
    short = fluid_vs_measured.trend_agreement(model, meas[meas.buffer_bdp <= 2.0])
    assert short["agree"].isna().all()


def test_ranking_agreement_and_error_by_metric():
    pairs = ["Reno/Reno", "CUBIC/CUBIC", "Reno/CUBIC"]
    model = _model([(p, 2.0, v) for p, v in zip(pairs, [0.9, 0.5, 0.7], strict=True)])
    same = pd.concat([_long(p, [2.0], [v]) for p, v in zip(pairs, [0.8, 0.4, 0.6], strict=True)])
    rev = pd.concat([_long(p, [2.0], [v]) for p, v in zip(pairs, [0.4, 0.8, 0.6], strict=True)])
    assert fluid_vs_measured.ranking_agreement(model, same)["rho"].tolist() == [pytest.approx(1.0)]
    assert fluid_vs_measured.ranking_agreement(model, rev)["rho"].tolist() == [pytest.approx(-1.0)]
    assert fluid_vs_measured.ranking_agreement(model, same.iloc[:2]).empty  # too few pairs
    err = fluid_vs_measured.error_by_metric(model, same).set_index("metric")
    assert err.loc["jain", "mean_abs_error"] == pytest.approx(0.1)  # drop-tail rows only
    assert err.loc["jain", "settings"] == 3


def test_tiny_changes_and_spreads_are_not_judged():
    bufs = [1.0, 2.0, 3.0, 4.0]
    model = _model([("Reno/Reno", b, v) for b, v in zip(bufs, [0.9, 0.8, 0.7, 0.6],
                                                        strict=True)])
    creep = _long("Reno/Reno", bufs, [0.97, 0.98, 0.985, 0.99])  # ordered, 2 % of its scale
    (row,) = fluid_vs_measured.trend_agreement(model, creep).itertuples()
    assert row.rho_measured == 1.0 and row.agree is None
    agree = fluid_vs_measured.trend_agreement(model, creep, min_change=0.01)["agree"]
    assert agree.tolist() == [False]
    # loss rates: small numbers, but a clear trend on their own scale
    loss = _long("Reno/Reno", bufs, [0.04, 0.02, 0.01, 0.0])
    assert fluid_vs_measured.trend_agreement(model, loss)["agree"].tolist() == [True]
    noise = _long("Reno/Reno", bufs, [0.0004, 0.0003, 0.0001, 0.0])  # below the floor
    assert fluid_vs_measured.trend_agreement(model, noise)["agree"].isna().all()
    pairs = ["Reno/Reno", "CUBIC/CUBIC", "Reno/CUBIC"]
    flat = _model([(p, 2.0, v) for p, v in zip(pairs, [0.99, 0.995, 1.0], strict=True)])
    wide = pd.concat([_long(p, [2.0], [v]) for p, v in zip(pairs, [0.2, 0.5, 0.9],
                                                           strict=True)])
    assert fluid_vs_measured.ranking_agreement(flat, wide).empty  # the model spreads them by 0.01
    assert len(fluid_vs_measured.ranking_agreement(flat, wide, min_spread=0.005)) == 1


def test_measured_window_is_the_campaigns_and_the_stored_runs():
    """The model can be run over the window the measured runs are averaged over: the
    campaign's warm-up to 0.5 s before its end, as every stored 10-sender run has it."""
    for rtt_min in (30.0, 10.0):
        start, end = fluid_vs_measured.measured_window(rtt_min)
        for key in fluid_vs_measured.measured_metrics(rtt_min)["key"][:5]:
            p = json.loads((data.DATA / "runs" / fluid_vs_measured.CAMPAIGN / key / "summary.json")
                           .read_text())["params"]
            assert (start, end) == (p["warmup_s"], p["duration_s"] - 0.5)
    assert fluid_vs_measured.measured_window(30.0) == (5.0, 19.5)
    with pytest.raises(ParameterError, match="'rtt_min_ms' = 25.0"):
        fluid_vs_measured.measured_window(25.0)


def test_model_metrics_for_chosen_pairs_only():
    t = beside_measured.model_metrics(capacity_mbps=20.0, rtt_min_ms=10.0, rtt_max_ms=20.0,
                                 n_flows=4, buffers_bdp=[2.0], duration_s=2.0, warmup_s=1.0,
                                 aqms=("droptail",), pairs={"CUBIC/BBRv1", "Reno/Reno"})
    assert sorted(t.pair) == ["CUBIC/BBRv1", "Reno/Reno"]
    with pytest.raises(ParameterError, match="'pairs'"):
        beside_measured.model_metrics(capacity_mbps=20.0, rtt_min_ms=10.0, rtt_max_ms=20.0,
                                 n_flows=4, buffers_bdp=[2.0], duration_s=2.0, warmup_s=1.0,
                                 pairs={"CUBIC/BBRv3"})


def test_ten_cubic_senders_settle_slowly_in_the_model():
    """The printed reading's start-up transient behind its low CUBIC queue over the paper's
    window:
    ten CUBIC senders (eqs. 40-41) starting at equal shares of one BDP lose together, and
    the first shared loss episode cuts the aggregate window far below CUBIC's beta = 0.7
    although each sender loses less than one packet; later episodes cut less and less, so
    the mean queue grows from window to window until the buffer stays nearly full."""
    shares, ep = beside_measured.model_queue_transient(
        "CUBIC/CUBIC", capacity_mbps=100.0, rtt_min_ms=30.0, rtt_max_ms=40.0, n_flows=10,
        buffers_bdp=[2.0], windows=[(2.0, 7.0), (5.0, 19.5), (20.0, 40.0), (40.0, 60.0)],
        reading="printed")
    q = shares.sort_values("start_s")["queue_share"].to_numpy()
    assert q[0] < 0.5 and np.all(np.diff(q) > 0.05) and q[-1] > 0.95
    first = ep.iloc[0]
    assert first["dropped_per_flow"] < 1 and first["window_trough_ratio"] < 0.5
    troughs = ep["window_trough_ratio"].to_numpy()[:8]
    assert np.all(np.diff(troughs) > 0)
    with pytest.raises(ParameterError, match="'pairs'"):
        beside_measured.model_queue_transient("CUBIC/BBRv3", capacity_mbps=100.0, rtt_min_ms=30.0,
                                         rtt_max_ms=40.0, n_flows=10, buffers_bdp=[2.0],
                                         windows=[(2.0, 7.0)])


def test_initial_windows_paper_and_post_loss():
    """The paper's start is an equal share of one BDP (a single value, as before); the
    post-loss start puts CUBIC at beta = 0.7 (eq. 41) and Reno at 1/2 (eq. 39) of an equal
    share of BDP + buffer, and BBR at the paper's start."""
    ccas = ["cubic", "reno", "bbr1", "bbr2"]
    assert beside_measured.initial_windows(ccas, bdp_pkts=250.0, buffer_pkts=500.0,
                                      start="paper") == 62.5
    assert beside_measured.initial_windows(ccas, bdp_pkts=250.0, buffer_pkts=500.0,
                                      start="post_loss") == pytest.approx(
        (0.7 * 750 / 4, 0.5 * 750 / 4, 62.5, 62.5))
    assert beside_measured.initial_windows(["reno"] * 100, bdp_pkts=10.0, buffer_pkts=10.0,
                                      start="post_loss") == (1.0,) * 100  # at least 1 packet
    with pytest.raises(ParameterError, match="'start'.*paper, post_loss"):
        beside_measured.initial_windows(ccas, bdp_pkts=250.0, buffer_pkts=500.0, start="random")
    cfg = beside_measured._config(("cubic", "cubic"), capacity_mbps=100.0, rtt_min_ms=30.0,
                             rtt_max_ms=40.0, n_flows=10, buffer_bdp=2.0, duration_s=1.0,
                             reading="printed")
    assert cfg.initial_window == pytest.approx(250.0 / 10)  # 100 Mbit/s x 30 ms: 250 packets


def test_a_post_loss_start_removes_most_of_the_cubic_transient():
    """From the post-loss start the printed reading's ten CUBIC senders cut no deeper than CUBIC's
    own decrease in their first shared loss episode, and their queue over the paper's
    window is far above the paper start's (below 0.5 there)."""
    kw = dict(capacity_mbps=100.0, rtt_min_ms=30.0, rtt_max_ms=40.0, n_flows=10,
              buffers_bdp=[2.0], windows=[(2.0, 7.0)], reading="printed")
    paper, ep_paper = beside_measured.model_queue_transient("CUBIC/CUBIC", **kw)
    post, ep_post = beside_measured.model_queue_transient("CUBIC/CUBIC", start="post_loss", **kw)
    assert ep_paper.iloc[0]["window_trough_ratio"] < 0.5
    assert ep_post.iloc[0]["window_trough_ratio"] > 0.65
    assert post["queue_share"].iloc[0] > paper["queue_share"].iloc[0] + 0.3


def test_start_comparison_sets_each_start_and_window_against_the_measured_spread():
    """Every (start, window) column is the model run from that start, averaged over that
    window, against the measured settings only; the queue table is the per-pair mean error
    of accuracy()."""
    per_run = pd.DataFrame({"pair": ["CUBIC/CUBIC"] * 2, "buffer_bdp": [2.0, 2.0],
                            "repeat": [0, 1], "key": ["x", "y"], "jain": [0.9, 0.95],
                            "loss_rate": [0.01, 0.02], "queue_share": [0.8, 0.9],
                            "utilisation": [0.99, 1.0]})
    meas = fluid_vs_measured.spread(per_run)
    kw = dict(capacity_mbps=20.0, rtt_min_ms=10.0, rtt_max_ms=20.0, n_flows=4)
    by_metric, by_pair = fluid_vs_measured.start_comparison(meas, windows=[(1.0, 2.0), (1.0, 3.0)],
                                                     **kw)
    assert list(by_metric.columns) == [("paper", "1-2 s"), ("paper", "1-3 s"),
                                       ("post_loss", "1-2 s"), ("post_loss", "1-3 s")]
    assert list(by_pair.index) == ["CUBIC/CUBIC"]
    for start in beside_measured.STARTS:
        m = beside_measured.model_metrics(buffers_bdp=[2.0], duration_s=3.0, warmup_s=1.0,
                                     aqms=("droptail",), pairs={"CUBIC/CUBIC"}, start=start,
                                     **kw)
        assert by_pair.loc["CUBIC/CUBIC", (start, "1-3 s")] == pytest.approx(
            m["queue_share"].iloc[0] - 0.85)
        assert by_metric.loc["jain", (start, "1-3 s")] == pytest.approx(
            abs(m["jain"].iloc[0] - 0.925))
    with pytest.raises(ParameterError, match="'measured_spread'"):
        fluid_vs_measured.start_comparison(meas.iloc[:0], windows=[(1.0, 2.0)], **kw)
    with pytest.raises(ParameterError, match="'windows'"):
        fluid_vs_measured.start_comparison(meas, windows=[], **kw)


def test_measured_queue_by_window_agrees_with_run_metrics():
    """Over the measurement window, the per-window queue share is run_metrics' queue share
    (both the mean backlog over the buffer), run by run."""
    start, end = fluid_vs_measured.measured_window(30.0)
    per_window = fluid_vs_measured.measured_queue_by_window("CUBIC/CUBIC", [(start, end + 1e-9)],
                                                     rtt_min_ms=30.0)
    runs = fluid_vs_measured.measured_metrics(30.0)
    runs = runs[runs["pair"] == "CUBIC/CUBIC"]
    if runs.empty:
        pytest.skip("no ten-CUBIC run stored")
    assert len(per_window) == len(runs)
    merged = per_window.merge(runs, on=["buffer_bdp", "repeat"], suffixes=("", "_run"))
    assert np.allclose(merged["queue_share"], merged["queue_share_run"], rtol=1e-9)


def test_queue_by_window_sets_one_column_per_window_in_order_and_averages_repeats():
    """One row per buffer, one labelled column per window in the order the windows came
    (not sorted: 10-20 s before 2-5 s here), the mean of repeats; an empty table stays empty."""
    shares = pd.DataFrame({"buffer_bdp": [2.0, 2.0, 2.0, 2.0, 1.0, 1.0],
                           "repeat": [0, 0, 1, 1, 0, 0],
                           "start_s": [10.0, 2.0, 10.0, 2.0, 10.0, 2.0],
                           "end_s": [20.0, 5.0, 20.0, 5.0, 20.0, 5.0],
                           "queue_share": [0.8, 0.4, 0.9, 0.6, 0.7, 0.3]})
    view = fluid_vs_measured.queue_by_window(shares, "measured")
    assert list(view.columns) == ["measured 10-20 s", "measured 2-5 s"]
    assert list(view.index) == [1.0, 2.0]
    assert view.loc[2.0, "measured 10-20 s"] == pytest.approx(0.85)
    assert view.loc[2.0, "measured 2-5 s"] == pytest.approx(0.5)
    assert view.loc[1.0, "measured 2-5 s"] == pytest.approx(0.3)
    assert fluid_vs_measured.queue_by_window(shares.iloc[:0], "model").empty


def test_metrics_figures_config_in_the_published_reading():
    """The ten-flow dumbbell of the metric figures in the published reading starts as the
    authors' code does; our post-loss start sets only the senders' initial windows."""
    kw = dict(capacity_mbps=100.0, rtt_min_ms=30.0, rtt_max_ms=40.0, n_flows=10,
              buffer_bdp=2.0, duration_s=2.0)
    cfg = beside_measured._config(("cubic", "bbr2"), reading="published", rtprop_expiry=True,
                                    **kw)
    assert cfg.reading == "published" and cfg.initial_window is None and cfg.rtprop_expiry
    assert len(cfg.bbr2_phase) == 10
    post = beside_measured._config(("cubic", "bbr2"), reading="published",
                                     start="post_loss", **kw)
    assert post.reading == "published" and post.bbr2_phase == cfg.bbr2_phase
    assert post.initial_window == beside_measured.initial_windows(
        ["cubic", "bbr2"] * 5, bdp_pkts=250.0, buffer_pkts=500.0, start="post_loss")


def test_start_claims_name_every_metric_pair_start_and_window(tmp_path):
    from coexist.book import claims

    cols = pd.MultiIndex.from_tuples([("paper", "2-7 s"), ("paper", "5-19.5 s"),
                                      ("post_loss", "2-7 s"), ("post_loss", "5-19.5 s")],
                                     names=["start", "window"])
    by_metric = pd.DataFrame([[0.3, 0.2, 0.15, 0.1], [0.001, 0.002, np.nan, 0.001]],
                             index=pd.Index(["queue_share", "loss_rate"], name="metric"),
                             columns=cols)
    by_pair = pd.DataFrame([[-0.6, -0.4, -0.1, 0.05]],
                           index=pd.Index(["CUBIC/CUBIC"], name="pair"), columns=cols)
    aggregate_figures.start_claims("S-Test", "st", by_metric, by_pair, str(tmp_path))
    made = claims.read(tmp_path / "S-Test.claims.csv")
    assert made["st_mae_queue_share_paper_paper"].text == "0.30"
    assert made["st_mae_queue_share_post_loss_ours"].text == "0.10"
    assert made["st_mae_loss_rate_paper_ours"].text == "0.0020"
    assert "st_mae_loss_rate_post_loss_paper" not in made  # NaN: no claim, never a guess
    assert made["st_queue_cubic_cubic_post_loss_ours"].text == "0.05"
    assert len(made) == 4 + 3 + 4


@pytest.mark.parametrize("reading", ["published", "printed"])
def test_the_first_part_of_a_long_run_is_the_short_run(reading):
    """The validation pages average one setting over several windows from one run: the
    first part of a long run must be the short run, bit for bit, in both readings, with
    RED and drop-tail, from both starts, also when the short run's length is not a whole
    number of samples."""
    from coexist.fluid.model import solve

    kw = dict(capacity_mbps=20.0, rtt_min_ms=10.0, rtt_max_ms=20.0, n_flows=4,
              buffer_bdp=2.0, reading=reading)
    for pair, aqm, start in ((("cubic", "bbr2"), "red", "paper"),
                             (("reno", "bbr1"), "droptail", "post_loss")):
        long = solve.run(beside_measured._config(pair, duration_s=4.0, aqm=aqm,
                                                   start=start, **kw))
        for d in (1.5, 2.3456):
            cfg = beside_measured._config(pair, duration_s=d, aqm=aqm, start=start, **kw)
            short, cut = solve.run(cfg), solve.first_part(long, cfg)
            assert cut.config == cfg and np.array_equal(short.t, cut.t)
            for name in solve.Trace.OUTPUTS:
                assert np.array_equal(getattr(short, name), getattr(cut, name)), name
            assert short.bbr.keys() == cut.bbr.keys()
            for name in short.bbr:
                assert np.array_equal(short.bbr[name], cut.bbr[name]), name
    other = beside_measured._config(("cubic", "cubic"), duration_s=2.0, **kw)
    with pytest.raises(ParameterError, match="'cfg'"):
        solve.first_part(long, other)
    longer = beside_measured._config(("reno", "bbr1"), duration_s=5.0, aqm="droptail",
                                       start="post_loss", **kw)
    with pytest.raises(ParameterError, match="'cfg'"):
        solve.first_part(long, longer)


def test_window_metrics_are_the_runs_of_each_length(tmp_path, monkeypatch):
    """Each window's metrics equal a run of that window's own length (memo off), exactly;
    one run per setting is computed, and a later page asking for a shorter window reads
    what that run stored."""
    from coexist.runstore import lookup

    kw = dict(capacity_mbps=20.0, rtt_min_ms=10.0, rtt_max_ms=20.0, n_flows=4,
              buffers_bdp=[1.0, 3.0], aqms=("droptail", "red"),
              pairs={"CUBIC/BBRv2", "Reno/BBRv1"}, start="post_loss")
    windows = [(1.0, 2.5), (1.5, 4.0), (2.0, 4.0)]
    monkeypatch.setenv(lookup.ENV, "off")
    alone = {w: beside_measured.model_metrics(warmup_s=w[0], duration_s=w[1], **kw)
             for w in windows}
    assert beside_measured.window_metrics(windows=windows, **kw).keys() == set(windows)
    log = tmp_path / "census.jsonl"
    monkeypatch.setenv(lookup.ENV, str(tmp_path / "memo"))
    monkeypatch.setenv(lookup.LOG_ENV, str(log))
    shared = beside_measured.window_metrics(windows=windows, **kw)
    for w in windows:
        pd.testing.assert_frame_equal(shared[w], alone[w], check_exact=True)
    census = [json.loads(line) for line in log.read_text().splitlines()]
    computed = [c for c in census if c["source"] == "computed"]
    assert len(computed) == 8  # 2 pairs x 2 AQMs x 2 buffers
    assert all("duration_s=4.0" in c["inputs"]["config"] for c in computed)
    # the other windows, read from those runs, are counted as read (the store needs them)
    assert sum(c["source"] == "put" for c in census) == 16
    log.unlink()
    again = beside_measured.model_metrics(warmup_s=1.0, duration_s=2.5, **kw)
    pd.testing.assert_frame_equal(again, alone[(1.0, 2.5)], check_exact=True)
    assert all(json.loads(line)["hit"] for line in log.read_text().splitlines())
    # stored windows are read, a new longer one is run once per setting
    log.unlink()
    more = beside_measured.window_metrics(windows=[(1.0, 2.5), (1.0, 4.5)], **kw)
    pd.testing.assert_frame_equal(more[(1.0, 2.5)], alone[(1.0, 2.5)], check_exact=True)
    census = [json.loads(line) for line in log.read_text().splitlines()]
    assert sorted(c["hit"] for c in census) == [False] * 8 + [True] * 8
    with pytest.raises(ParameterError, match="'windows'"):
        beside_measured.window_metrics(windows=[(3.0, 2.0)], **kw)
    with pytest.raises(ParameterError, match="'warmup_s'"):
        beside_measured.model_metrics(warmup_s=3.0, duration_s=2.0, **kw)


def test_readable_names_starts_and_metrics_as_the_pages_write_them():
    import pandas as pd

    from coexist.measured import fluid_vs_measured as fvm

    t = fvm.readable(pd.DataFrame({"metric": ["jain", "unknown"], "paper, 2-7 s": [0.1, 0.2],
                                   "post_loss, 2-7 s": [0.3, 0.4]}))
    assert list(t.columns) == ["metric", "paper's start, 2-7 s", "post-loss start, 2-7 s"]
    assert t["metric"].tolist() == [fvm.METRIC_TITLES["jain"], "unknown"]


def test_like_for_like_keeps_to_the_pairs_and_buffers_measured():
    """The model beside the measurements runs over their window at just the (pair,
    buffer) settings measured, under drop-tail; a page's buffers select the measurements
    it compares (stored runs of S-F6-10's setting: read, not computed)."""
    spread = pd.DataFrame({"pair": ["CUBIC/CUBIC", "Reno/Reno"], "buffer_bdp": [2.0, 3.0],
                           "metric": ["jain", "jain"], "mean": [0.9, 0.9], "min": [0.8, 0.8],
                           "max": [1.0, 1.0], "n_runs": [3, 3]})
    setting = dict(capacity_mbps=100.0, rtt_min_ms=30.0, rtt_max_ms=40.0, n_flows=10)
    like = fluid_vs_measured.like_for_like(spread, **setting)
    assert sorted(zip(like["pair"], like["buffer_bdp"], strict=True)) == [
        ("CUBIC/CUBIC", 2.0), ("Reno/Reno", 3.0)]
    assert set(like["aqm"]) == {"droptail"}
    window = fluid_vs_measured.measured_window(30.0)
    full = beside_measured.window_metrics(**setting, buffers_bdp=[2.0], windows=[window],
                                            aqms=("droptail",), pairs={"CUBIC/CUBIC"})
    cubic = like[like["pair"] == "CUBIC/CUBIC"].iloc[0]
    assert cubic["jain"] == full[window].iloc[0]["jain"]
    assert fluid_vs_measured.like_for_like(spread.iloc[:0], **setting).empty
    assert fluid_vs_measured.at_buffers(spread, [3.0, 5.0])["pair"].tolist() == ["Reno/Reno"]


def test_the_trace_is_sampled_no_finer_than_the_step():
    """Jitter samples once per virtual packet interval N/C (§4.3.5); above about 1.2 Gbit/s
    per sender that interval is shorter than the solver's step, which bounds it: a
    re-run of S-F13-17 at 4034 Mbit/s and 3 flows was refused by the solver before."""
    from coexist.fluid.model import solve

    setting = dict(rtt_min_ms=1.9, rtt_max_ms=4.1, n_flows=3, buffer_bdp=0.36,
                   duration_s=1.0)
    fast = beside_measured._config(("reno", "cubic"), capacity_mbps=4034.0, **setting)
    assert fast.sample_s == solve.Config.step_s
    slow = beside_measured._config(("reno", "cubic"), capacity_mbps=100.0, **setting)
    assert slow.sample_s == pytest.approx(3 / (100e6 / (8 * solve.PACKET_BYTES)))
