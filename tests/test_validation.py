"""The fluid model's metrics beside measured runs (Scherrer et al. §4.3)."""

import json

import numpy as np
import pandas as pd
import pytest

from coexist import data, measured, validation
from coexist.params import ParameterError

RUN = data.DATA / "runs" / "two_flow" / "50mbit-40ms-b2-cubic1-bbr1-r0"


def test_pair_labels_follow_the_paper_order():
    assert validation.pair_label(["bbr1", "cubic", "bbr1"]) == "CUBIC/BBRv1"
    assert validation.pair_label(["reno"] * 3) == "Reno/Reno"
    assert validation.pair_label(["bbr2", "reno"]) == "Reno/BBRv2"
    with pytest.raises(ParameterError, match="ccas"):
        validation.pair_label(["reno", "cubic", "bbr1"])
    with pytest.raises(ParameterError, match="ccas"):
        validation.pair_label(["vegas"])


@pytest.mark.skipif(not RUN.exists(), reason="bundled run not present")
def test_run_metrics_of_a_stored_run_agree_with_its_summary():
    m = validation.run_metrics(RUN)
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
    runs = tmp_path / "runs" / validation.CAMPAIGN
    for key in "abc":
        (runs / key).mkdir(parents=True)
        for f in ("summary.json", data.RUN_FILES["queue"]):
            (runs / key / f).write_bytes((RUN / f).read_bytes())
    out = validation.measured_metrics(30.0, data_dir=tmp_path)
    assert out.key.tolist() == ["a"] and out.pair.tolist() == ["CUBIC/BBRv1"]
    assert out.loc[0, "utilisation"] == validation.run_metrics(RUN)["utilisation"]
    assert validation.measured_metrics(10.0, data_dir=tmp_path).key.tolist() == ["b"]


def test_spread_and_accuracy():
    per_run = pd.DataFrame({"pair": ["CUBIC/BBRv1"] * 2, "buffer_bdp": [2.0, 2.0],
                            "repeat": [0, 1], "key": ["x", "y"], "jain": [0.8, 0.9],
                            "loss_rate": [0.01, 0.03], "queue_share": [0.5, 0.7],
                            "utilisation": [0.98, 1.0]})
    s = validation.spread(per_run)
    jain = s[s.metric == "jain"].iloc[0]
    assert (jain["mean"], jain["min"], jain["max"], jain["n_runs"]) == pytest.approx(
        (0.85, 0.8, 0.9, 2))
    model = pd.DataFrame({"pair": ["CUBIC/BBRv1"] * 2, "aqm": ["droptail", "red"],
                          "buffer_bdp": [2.0, 2.0], "jain": [0.95, 0.1],
                          "loss_rate": [0.0, 0.5], "queue_share": [0.6, 0.1],
                          "utilisation": [1.0, 1.0], "jitter_ms": [1.0, 1.0]})
    acc = validation.accuracy(model, s).set_index("metric")
    assert acc.loc["jain", "mean_error"] == pytest.approx(0.10)  # drop-tail only
    assert acc.loc["loss_rate", "mean_abs_error"] == pytest.approx(0.02)
    assert (acc["buffers"] == 1).all()
    assert validation.accuracy(model, validation.spread(per_run.iloc[:0])).empty


def test_model_metrics_cover_every_pair_in_range():
    t = validation.model_metrics(capacity_mbps=20.0, rtt_min_ms=10.0, rtt_max_ms=20.0,
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
    tr = validation.run_trace(RUN, flow=1)
    assert set(tr.quantity) == set(validation.TRACE_QUANTITIES)
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
        validation.run_trace(RUN, flow=2)
