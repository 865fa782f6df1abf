"""Scherrer et al.'s Insights in the fluid model (coexist.fluid.studies.insights): each insight's
settings, evidence rows and rule, driven by a stand-in for the runs whose answers are
chosen; and the run one setting makes."""

import numpy as np
import pandas as pd
import pytest

from coexist.fluid.studies import insights
from coexist.measured import fluid_vs_measured


def _fake(values: dict):
    """A run that returns fixed metrics, keyed by its arguments, and records the calls."""
    calls = []

    def run(a, b, buffer_bdp, **kw):
        calls.append((a, b, buffer_bdp, tuple(sorted(kw.items()))))
        return values(a, b, buffer_bdp, **kw)

    return run, calls


def test_insight_1_is_reproduced_only_when_bbr1_alone_loses_much_more():
    def values(a, b, buf, aqm):
        return {"loss_rate": 0.15 if a == "bbr1" else 0.005}

    run, calls = _fake(values)
    rows, v = insights.insight_1(run)
    assert len(rows) == len(calls) == 8 and v.verdict == "reproduced"
    assert {c[3] for c in calls} == {(("aqm", "droptail"),), (("aqm", "red"),)}
    run, _ = _fake(lambda a, b, buf, aqm: {"loss_rate": 0.03})
    assert insights.insight_1(run)[1].verdict == "not reproduced"


def test_insight_2_reads_cubic_share_against_bbr1_at_each_buffer_and_aqm():
    def values(a, b, buf, aqm):
        assert (a, b) == ("cubic", "bbr1")
        return {"share_a": 0.1 if aqm == "red" or buf < 2 else 0.4}

    rows, v = insights.insight_2(_fake(values)[0])
    assert len(rows) == 8 and v.verdict == "reproduced"
    assert {r["metric"] for r in rows} == {"CUBIC share"}


def test_insights_3_to_6_follow_their_rules():
    def values(a, b, buf, aqm="droptail", capacity_bps=100e6, inflight_hi_factor=None):
        return {"utilisation": 0.99, "queue_share": (0.5 if a == "bbr1" else 0.2)
                * (2.0 if inflight_hi_factor == 4.0 and buf == 7.0 else 1.0),
                "loss_rate": 0.1 if a == "bbr1" or b == "bbr1" else 0.01,
                "jain": 0.9 if b == "bbr2" else 0.6,
                "share_a": 0.2 if capacity_bps == 1e9 else 0.45}

    run = _fake(values)[0]
    for fn in (insights.insight_3, insights.insight_4, insights.insight_5,
               insights.insight_6):
        rows, v = fn(run)
        assert rows and v.verdict == "reproduced", fn.__name__
        assert all(r["insight"] == v.insight for r in rows)


def test_model_insights_give_six_verdicts_with_their_rules(monkeypatch):
    seen = []

    def setting(a, b, buffer_bdp, *, rtts_s, duration_s, warmup_s, **kw):
        seen.append((tuple(rtts_s), duration_s, warmup_s))
        return {"loss_rate": 0.0, "share_a": 0.5, "utilisation": 1.0, "queue_share": 0.0,
                "jain": 1.0}

    monkeypatch.setattr(insights, "setting", setting)
    rows, verdicts = insights.model_insights(30.0, 40.0, 7.0, 2.0)
    assert [v.insight for v in verdicts] == [1, 2, 3, 4, 5, 6]
    assert all(v.rule for v in verdicts)
    assert {s[1:] for s in seen} == {(7.0, 2.0)}
    np.testing.assert_allclose(seen[0][0], np.linspace(0.03, 0.04, 10))


def test_one_setting_runs_ten_alternating_flows_and_reports_the_first_algorithms_share(
        monkeypatch):
    monkeypatch.setenv("COEXIST_FLUID_CACHE", "off")
    r = insights.setting("cubic", "bbr1", 2.0, rtts_s=insights.rtts_between(30.0, 40.0),
                         duration_s=2.0, warmup_s=0.5)
    assert r["pair"] == "cubic/bbr1" and r["buffer_bdp"] == 2.0
    assert 0 < r["share_a"] < 1
    assert 0 < r["utilisation"] <= 1.0 + 1e-9


def test_insights_7_and_8_are_open_without_enough_measured_settings(monkeypatch):
    few = pd.DataFrame({"pair": ["cubic/bbr"], "buffer_bdp": [2.0]})
    monkeypatch.setattr(fluid_vs_measured, "measured_metrics", lambda *a, **k: few)
    monkeypatch.setattr(fluid_vs_measured, "spread", lambda t: t)
    monkeypatch.setattr(fluid_vs_measured, "model_metrics", lambda **k: few)
    monkeypatch.setattr(fluid_vs_measured, "trend_agreement",
                        lambda m, s: pd.DataFrame({"agree": [True]}))
    monkeypatch.setattr(fluid_vs_measured, "ranking_agreement",
                        lambda m, s: pd.DataFrame({"metric": ["jain"], "rho": [1.0]}))
    monkeypatch.setattr(fluid_vs_measured, "error_by_metric", lambda m, s: pd.DataFrame(
        {"metric": ["loss_rate"], "mean_abs_error": [0.01]}))
    rows, verdicts, _, _ = fluid_vs_measured.insights_7_8(30.0, 40.0, 7.0, 2.0)
    assert rows == [] and [v[1] for v in verdicts] == ["open", "open"]
    assert "(1)" in verdicts[0][2]


def test_insight_8_is_reproduced_when_loss_has_the_smallest_error(monkeypatch):
    many = pd.DataFrame({"pair": ["a", "b", "c", "d", "e"], "buffer_bdp": [1.0] * 5})
    monkeypatch.setattr(fluid_vs_measured, "measured_metrics", lambda *a, **k: many)
    monkeypatch.setattr(fluid_vs_measured, "spread", lambda t: t)
    monkeypatch.setattr(fluid_vs_measured, "model_metrics", lambda **k: many)
    monkeypatch.setattr(fluid_vs_measured, "trend_agreement",
                        lambda m, s: pd.DataFrame({"agree": [True, True, False, False, True,
                                                             None]}))
    monkeypatch.setattr(fluid_vs_measured, "ranking_agreement",
                        lambda m, s: pd.DataFrame({"metric": ["jain"] * 5,
                                                   "rho": [0.2, 0.6, 0.7, 0.8, 0.9]}))
    monkeypatch.setattr(fluid_vs_measured, "error_by_metric", lambda m, s: pd.DataFrame(
        {"metric": ["loss_rate", "queue_share", "jain", "utilisation"],
         "mean_abs_error": [0.01, 0.05, 0.2, 0.1]}))
    rows, verdicts, _, _ = fluid_vs_measured.insights_7_8(30.0, 40.0, 7.0, 2.0)
    assert [v[1] for v in verdicts] == ["not reproduced", "reproduced"]
    share = next(r for r in rows if r["metric"] == "share agreeing")
    assert share["value"] == pytest.approx(3 / 5)  # the undecided trend is not judged
