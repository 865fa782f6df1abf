"""Nash equilibria from the fluid model: mixes, plumbing into the deviation test, limits."""

import numpy as np
import pandas as pd
import pytest

from coexist.closed_form import nash
from coexist.core.params import ParameterError
from coexist.fluid.studies import equilibria
from coexist.measured import equilibria as measured_equilibria
from coexist.runstore import lookup


def test_mix_flows_lists_every_group():
    ccas, rtts, groups = equilibria.mix_flows((1, 2), 2, [0.01, 0.05], "bbr2")
    assert ccas == ["cubic", "bbr2", "bbr2", "bbr2"]
    assert rtts == [0.01, 0.01, 0.05, 0.05] and groups == [0, 0, 1, 1]


@pytest.mark.parametrize("kw, name", [
    (dict(group_rtts_s=[]), "group_rtts_s"),
    (dict(group_rtts_s=[20.0]), "group_rtts_s"),
    (dict(group_size=0), "group_size"),
    (dict(buffers_bdp=[0.0]), "buffers_bdp"),
    (dict(variant="bbr3"), "variant"),
    (dict(warmup_s=5.0, duration_s=5.0), "warmup_s"),
])
def test_bad_parameters_are_named(kw, name):
    args = dict(group_rtts_s=[0.02], group_size=2, buffers_bdp=[1.0], capacity_bps=10e6,
                progress=False) | kw
    with pytest.raises(ParameterError, match=name):
        equilibria.mix_table(**args)


def _table(rates: dict, size: int, buffer: float = 2.0) -> pd.DataFrame:
    rows = [{"buffer_bdp": buffer, "mix": m, "group": g, "cca": c, "goodput_bps": v,
             "group_size": size} for m, per in rates.items() for (g, c), v in per.items()]
    t = pd.DataFrame(rows)
    t["mix_label"] = t["mix"].map(lambda m: "-".join(map(str, m)))
    return t


def test_equilibria_use_the_deviation_test_one_group():
    # 3 flows; per-flow rates of the closed-form shape: BBR gains while rare
    cub = [10.0, 9.0, 8.0, np.nan]
    bbr = [np.nan, 14.0, 8.5, 6.0]
    rates = {(k,): {**({(0, nash.CUBIC): cub[k]} if k < 3 else {}),
                    **({(0, nash.BBR): bbr[k]} if k > 0 else {})} for k in range(4)}
    ne = equilibria.equilibria(_table(rates, 3))
    assert ne.bbr_flows.tolist() == nash.equilibria(np.nan_to_num(cub), np.nan_to_num(bbr))
    assert ne.bbr_flows.tolist() == [1]


def test_equilibria_list_every_mix_within_the_runs_precision():
    cub = [10.0, 9.0, 8.0, np.nan]
    bbr = [np.nan, 14.0, 8.5, 6.0]
    rates = {(k,): {**({(0, nash.CUBIC): cub[k]} if k < 3 else {}),
                    **({(0, nash.BBR): bbr[k]} if k > 0 else {})} for k in range(4)}
    t = _table(rates, 3)
    # 1 -> 2 would give the CUBIC flow of mix 1 8.5 instead of 9: a loss, so 1 holds; 2 ->
    # 1 gains 0.5 for a BBR flow of mix 2: within two standard errors of 0.3 each
    assert equilibria.equilibria(t.assign(goodput_se_bps=0.3)).bbr_flows.tolist() == [1, 2]
    assert equilibria.equilibria(t.assign(goodput_se_bps=0.3), z=0).bbr_flows.tolist() == [1]
    assert equilibria.equilibria(t.assign(goodput_se_bps=0.0)).bbr_flows.tolist() == [1]


def test_equilibria_use_the_deviation_test_two_groups():
    # group 0 (short RTT) always better off with CUBIC, group 1 always with BBR
    rates = {}
    for m in [(a, b) for a in range(2) for b in range(2)]:
        per = {}
        for g in range(2):
            if m[g] < 1:
                per[(g, nash.CUBIC)] = 10.0 if g == 0 else 4.0
            if m[g] > 0:
                per[(g, nash.BBR)] = 5.0 if g == 0 else 8.0
        rates[m] = per
    ne = equilibria.equilibria(_table(rates, 1))
    assert ne.mix.tolist() == [(0, 1)]


def test_fluid_mixes_conserve_capacity_and_are_deterministic(monkeypatch):
    monkeypatch.setenv(lookup.ENV, "off")  # both tables computed, none read from the memo
    kw = dict(capacity_bps=20e6, duration_s=6.0, warmup_s=2.0, step_s=5e-5, progress=False)
    a = equilibria.mix_table([0.01, 0.03], 1, [1.0], workers=1, **kw)
    b = equilibria.mix_table([0.01, 0.03], 1, [1.0], workers=2, **kw)
    pd.testing.assert_frame_equal(a, b)  # threads change nothing
    assert len(a.mix_label.unique()) == 4
    total = (a.goodput_bps * a.flows).groupby(a.mix_label).sum()
    # within 1 %: fluid in flight or queued at the window edges is counted once
    assert (total <= 20e6 * 1.01).all() and (total > 0.8 * 20e6).all()
    assert (a.rtt_s == a.group.map({0: 0.01, 1: 0.03})).all()
    # eq. (3)'s queueing delay q/C against the queue share of a buffer of 1 BDP of the
    # shortest RTT (10 ms): delay = share x buffer / C = share x 10 ms, and never above it
    assert np.allclose(a.queue_delay_s, a.queue_share * 1.0 * 0.01, rtol=1e-9)
    assert (a.queue_delay_s > 0).all() and (a.queue_delay_s <= 0.01).all()


def test_shallow_buffer_limit_bbr1_takes_over():
    """Scherrer Insight 1 / Mishra §3: in a buffer below 1 BDP BBRv1 dominates CUBIC, so the
    only equilibrium of a 2-flow game there is all-BBR."""
    t = equilibria.mix_table([0.02], 2, [0.5], capacity_bps=50e6, duration_s=12.0,
                             warmup_s=4.0, progress=False)
    assert equilibria.equilibria(t).bbr_flows.tolist() == [2]


def test_observed_grouped_equilibria_from_a_campaign_table():
    rows = []
    for a in range(2):
        for b in range(2):
            key = f"k{a}{b}"
            for g, (rtt, is_bbr) in enumerate(((0.01, a), (0.03, b))):
                cca = "bbr" if is_bbr else "cubic"
                rate = {(0, "cubic"): 10.0, (0, "bbr"): 5.0, (1, "cubic"): 4.0,
                        (1, "bbr"): 8.0}[(g, cca)]
                rows.append({"key": key, "capacity_bps": 1e8, "buffer_bdp": 2.0,
                             "flow_rtt_s": rtt, "cca": cca, "goodput_bps": rate})
    t = pd.DataFrame(rows)
    ne = measured_equilibria.observed_grouped_equilibria(t, [0.01, 0.03], 1)
    assert ne.mix.tolist() == [(0, 1)]
    partial = measured_equilibria.observed_grouped_equilibria(t[t.key != "k11"], [0.01, 0.03], 1)
    assert partial.mixes.tolist() == [3] and partial.mix.isna().all()
    status = measured_equilibria.mix_status_table(t[t.key != "k11"], [0.01, 0.03], 1)
    verdicts = dict(zip(status.mix_label, status.status, strict=True))
    # (0, 0): the 30 ms CUBIC flow doubles as BBR; (0, 1): its BBR flow would lose 50 % as
    # CUBIC and the 10 ms CUBIC flow's move to (1, 1) is not stored
    assert verdicts == {"0-0": "not an equilibrium", "0-1": "undecided",
                        "1-0": "not an equilibrium"}
    reasons = dict(zip(status.mix_label, status.reason, strict=True))
    assert reasons["0-0"] == "a cubic flow of the 30 ms group gains 100.0% as bbr"
    complete = measured_equilibria.mix_status_table(t, [0.01, 0.03], 1)
    assert complete[complete.status == "equilibrium"].mix.tolist() == [(0, 1)]


def test_grouped_rates_average_repeats_and_drop_flows_off_the_groups():
    """The measured per-flow goodput table: one row per (mix, group, algorithm), averaged
    over the repeats of a mix, its RTT the group's, flows of an RTT no group has left out."""
    rows = []
    for key, rate in (("r0", 4.0), ("r1", 6.0)):  # two repeats of mix (1, 0)
        rows += [{"key": key, "capacity_bps": 1e8, "buffer_bdp": 10.0, "flow_rtt_s": 0.01,
                  "cca": "bbr", "goodput_bps": rate},
                 {"key": key, "capacity_bps": 1e8, "buffer_bdp": 10.0, "flow_rtt_s": 0.03,
                  "cca": "cubic", "goodput_bps": 2 * rate},
                 {"key": key, "capacity_bps": 1e8, "buffer_bdp": 10.0, "flow_rtt_s": 0.02,
                  "cca": "bbr", "goodput_bps": 99.0}]
    g = measured_equilibria.grouped_rates(pd.DataFrame(rows), [0.01, 0.03])
    assert g.mix.tolist() == [(1, 0), (1, 0)] and g.mix_label.tolist() == ["1-0", "1-0"]
    assert g.set_index("cca").goodput_bps.to_dict() == {"bbr": 5.0, "cubic": 10.0}
    assert g.rtt_s.tolist() == [0.01, 0.03] and g.runs.tolist() == [2, 2]
    assert measured_equilibria.grouped_rates(pd.DataFrame(), [0.01]).empty


def test_mixes_can_be_restricted_and_are_checked():
    kw = dict(capacity_bps=20e6, duration_s=4.0, warmup_s=1.0, progress=False)
    t = equilibria.mix_table([0.02], 3, [1.0], mixes=[(1,), (2,)], **kw)
    assert sorted(t.mix_label.unique()) == ["1", "2"]
    with pytest.raises(ParameterError, match="mixes"):
        equilibria.mix_table([0.02], 3, [1.0], mixes=[(4,)], **kw)


def test_rtprop_expiry_reaches_the_solver():
    """With the expiring RTprop filter a lone BBRv1 flow keeps a share of a deep buffer
    that the paper's filter (eq. 9) starves it of (the equations read as printed)."""
    kw = dict(capacity_bps=50e6, duration_s=25.0, warmup_s=12.0, progress=False,
              mixes=[(1,)], reading="printed")
    share = {}
    for expiry in (False, True):
        t = equilibria.mix_table([0.04], 2, [5.0], rtprop_expiry=expiry, **kw)
        rate = t.set_index("cca").goodput_bps
        share[expiry] = rate[nash.BBR] / rate.sum()
    assert share[False] < 0.25 and share[True] > 0.4


def test_two_flow_bbr_share_is_bbr_over_both():
    kw = dict(buffer_bdp=2.0, capacity_bps=20e6, duration_s=4.0, warmup_s=1.0)
    share = equilibria.two_flow_bbr_share(rtt_s=0.02, **kw)
    t = equilibria.simulate_mix((1,), group_size=2, group_rtts_s=[0.02], **kw).set_index("cca")
    assert share == pytest.approx(t.goodput_bps[nash.BBR] / t.goodput_bps.sum(), rel=1e-12)
    assert 0 < share < 1


def test_two_flow_shares_cover_every_setting_in_both_models():
    kw = dict(duration_s=4.0, warmup_s=1.0, step_s=1e-4)
    t = equilibria.two_flow_shares([10e6, 20e6], [0.02], [1.5, 3.0], **kw)
    assert len(t) == 2 * 1 * 2 * 2 and set(t.rtprop_expiry) == {False, True}
    for r in t.itertuples():  # each row is the two-flow run of its setting
        assert r.bbr_share == pytest.approx(equilibria.two_flow_bbr_share(
            rtt_s=r.rtt_s, buffer_bdp=r.buffer_bdp, capacity_bps=r.capacity_bps,
            rtprop_expiry=r.rtprop_expiry, **kw), rel=1e-12)
        assert 0 < r.bbr_share < 1
    with pytest.raises(ParameterError, match="capacities_bps"):
        equilibria.two_flow_shares([0.0], [0.02], [2.0], **kw)
    with pytest.raises(ParameterError, match="buffers_bdp"):
        equilibria.two_flow_shares([10e6], [0.02], [], **kw)
    one = equilibria.two_flow_shares([10e6], [0.02], [1.5], versions=[False], **kw)
    assert one.rtprop_expiry.tolist() == [False]
    assert one.bbr_share.iloc[0] == t[(t.capacity_bps == 10e6) & (t.buffer_bdp == 1.5)
                                      & ~t.rtprop_expiry].bbr_share.iloc[0]
    with pytest.raises(ParameterError, match="versions"):
        equilibria.two_flow_shares([10e6], [0.02], [1.5], versions=[], **kw)
    state = equilibria.two_flow_bbr_state(rtt_s=0.02, buffer_bdp=1.5, capacity_bps=10e6, **kw)
    keys = ["capacity_bps", "rtt_s", "buffer_bdp", "rtprop_expiry", "cubic_recovery", "reading"]
    assert one.drop(columns=keys).iloc[0].to_dict() == {
        ("bbr_share" if k == "share" else k): v for k, v in state.items()}
    assert not t.cubic_recovery.any()
    rec = equilibria.two_flow_shares([10e6], [0.02], [1.5], versions=[True],
                                     cubic_recovery=True, **kw)
    assert rec.cubic_recovery.tolist() == [True] and rec.rtprop_expiry.tolist() == [True]
    assert rec.bbr_share.iloc[0] == equilibria.two_flow_bbr_share(
        rtt_s=0.02, buffer_bdp=1.5, capacity_bps=10e6, rtprop_expiry=True,
        cubic_recovery=True, **kw)


def test_two_flow_bbr_state_reads_the_same_run_and_eq9_only_lowers_rtprop():
    """The state comes from the run behind two_flow_bbr_share (same share). Read as printed,
    eq. (9) only ever lowers τmin from the propagation delay, and no queue is below zero,
    so BBR's RTprop stays exactly the base RTT; with Linux's expiry it takes samples with
    the queue in them and rises above it in a deep buffer."""
    kw = dict(buffer_bdp=10.0, capacity_bps=20e6, duration_s=25.0, warmup_s=5.0, step_s=1e-4,
              reading="printed")
    plain = equilibria.two_flow_bbr_state(rtt_s=0.02, **kw)
    assert plain["share"] == pytest.approx(
        equilibria.two_flow_bbr_share(rtt_s=0.02, **kw), rel=1e-12)
    assert plain["rtprop_s"] == pytest.approx(0.02, abs=1e-12)
    assert 0 <= plain["probe_rtt_share"] <= 1 and plain["inflight_over_cwnd"] > 0
    # eq. (15): the rate is at most w/τ, so rate x RTT never exceeds the window in force
    for state in (plain, equilibria.two_flow_bbr_state(rtt_s=0.02, rtprop_expiry=True, **kw)):
        assert state["inflight_over_cwnd"] <= 1 + 1e-9
    expiry = equilibria.two_flow_bbr_state(rtt_s=0.02, rtprop_expiry=True, **kw)
    assert expiry["rtprop_s"] > 0.02 * 1.5  # CUBIC keeps a queue of several BDP
    assert 0 < expiry["probe_rtt_share"] < 1  # ProbeRTT at least once per 10 s filter


def test_two_flow_bbr_state_refuses_a_warmup_outside_the_run():
    with pytest.raises(ParameterError, match="warmup_s"):
        equilibria.two_flow_bbr_state(rtt_s=0.02, buffer_bdp=2.0, capacity_bps=20e6,
                                      duration_s=4.0, warmup_s=4.0, step_s=1e-4)


def test_printed_reading_keeps_bbr_only_where_cubic_drains_the_queue():
    """1 CUBIC vs 1 BBRv1, 100 Mbit/s, 2 BDP, the equations read as printed. At 20 ms the
    queue never drops under one BDP, so BBR's window (eq. 23) keeps its estimate falling and it
    starves. At 80 ms CUBIC's window falls to a few percent of its highest, far below one
    cut to beta = 0.7 (the per-loss cuts of eqs. 40a-b compound), the queue drains under
    one BDP, and that is when BBR's estimate grows: it keeps a large share."""
    kw = dict(buffer_bdp=2.0, capacity_bps=100e6, duration_s=60.0, warmup_s=20.0,
              reading="printed")
    short = equilibria.two_flow_bbr_state(rtt_s=0.02, **kw)
    assert short["share"] < 0.01 and short["queue_below_bdp"] < 0.05
    long = equilibria.two_flow_bbr_state(rtt_s=0.08, **kw)
    assert long["share"] > 0.4 and long["queue_below_bdp"] > 0.3
    assert long["cubic_low_over_high"] < 0.1 < 0.7 * short["cubic_low_over_high"]
    assert long["btl_growth_below_bdp"] > 0.9


def test_printed_lone_cubic_fills_the_link_at_20ms_and_swings_at_80ms():
    """One CUBIC flow (eqs. 40-41 read as printed), 100 Mbit/s, 2 BDP. At 20 ms it keeps a
    standing queue and the link busy (utilisation 1, §4.3.4); at 80 ms its window swings to
    a fraction of a percent of its peak and the link idles for long stretches."""
    kw = dict(buffer_bdp=2.0, capacity_bps=100e6, duration_s=60.0, warmup_s=20.0,
              reading="printed")
    short = equilibria.cubic_alone_state(rtt_s=0.02, **kw)
    assert short["utilisation"] > 0.99 and short["queue_below_bdp"] == 0.0
    assert short["cubic_low_over_high"] > 0.7  # never below one cut to beta
    long = equilibria.cubic_alone_state(rtt_s=0.08, **kw)
    assert long["utilisation"] < 0.7 and long["queue_below_bdp"] > 0.5
    assert long["cubic_low_over_high"] < 0.05
    with pytest.raises(ParameterError, match="warmup_s"):
        equilibria.cubic_alone_state(rtt_s=0.02, buffer_bdp=2.0, capacity_bps=100e6,
                                     duration_s=10.0, warmup_s=10.0)


def test_one_cut_per_episode_removes_the_printed_readings_80ms_regime():
    """The intervention behind the 80-ms regime: the same run as above with CUBIC cutting
    once per loss episode. Its window no longer falls below one cut to beta, the queue
    stays over one BDP, and BBR, as published (eqs. 9, 23), starves at 80 ms as it does at
    20 ms. Alone, that CUBIC flow fills the link."""
    kw = dict(buffer_bdp=2.0, capacity_bps=100e6, duration_s=60.0, warmup_s=20.0,
              cubic_recovery=True, reading="printed")
    two = equilibria.two_flow_bbr_state(rtt_s=0.08, **kw)
    assert two["share"] < 0.01 and two["queue_below_bdp"] < 0.05
    assert two["cubic_low_over_high"] > 0.6
    alone = equilibria.cubic_alone_state(rtt_s=0.08, **kw)
    assert alone["utilisation"] > 0.99 and alone["queue_below_bdp"] == 0.0
    assert alone["cubic_low_over_high"] == pytest.approx(0.7, abs=0.02)


def test_every_fluid_helper_runs_either_reading_and_refuses_others():
    """The published reading (the authors' code) and the printed one give different runs of
    the same mix; an unknown reading is refused before any run, naming the parameter."""
    kw = dict(group_size=2, group_rtts_s=[0.04], buffer_bdp=2.0, capacity_bps=20e6,
              duration_s=4.0, warmup_s=1.0)
    pub = equilibria.simulate_mix((1,), reading="published", **kw)
    pri = equilibria.simulate_mix((1,), reading="printed", **kw)
    assert set(pub.cca) == set(pri.cca) and not np.allclose(pub.goodput_bps, pri.goodput_bps)
    with pytest.raises(ParameterError, match="'reading'"):
        equilibria.simulate_mix((1,), reading="paper", **kw)
    state = equilibria.two_flow_bbr_state(rtt_s=0.04, buffer_bdp=2.0, capacity_bps=20e6,
                                          duration_s=4.0, warmup_s=1.0, reading="published")
    assert 0 <= state["share"] <= 1
    t = equilibria.two_flow_shares([20e6], [0.04], [2.0], duration_s=4.0, warmup_s=1.0,
                                   reading="published", versions=[False])
    assert list(t.reading) == ["published"]


@pytest.mark.parametrize("first", ["state", "mix"])
def test_one_run_gives_the_two_flow_state_and_its_mix(first, monkeypatch, tmp_path):
    """1 CUBIC vs 1 BBRv1 is both a two-flow state and the mix of one BBR flow of two: one
    kernel run gives both, whichever is asked first, with the values each computes alone."""
    import json

    kw = dict(buffer_bdp=2.0, capacity_bps=20e6, duration_s=4.0, warmup_s=1.0, step_s=5e-5,
              rtprop_expiry=True)
    monkeypatch.setenv(lookup.ENV, "off")
    state_alone = equilibria.two_flow_bbr_state(rtt_s=0.03, **kw)
    mix_alone = equilibria.simulate_mix((1,), group_size=2, group_rtts_s=[0.03], **kw)
    monkeypatch.setenv(lookup.ENV, str(tmp_path / "memo"))
    monkeypatch.setenv(lookup.LOG_ENV, str(tmp_path / "census.jsonl"))
    def ask_state():
        return equilibria.two_flow_bbr_state(rtt_s=0.03, **kw)

    def ask_mix():
        return equilibria.simulate_mix((1,), group_size=2, group_rtts_s=[0.03], **kw)

    if first == "state":
        state, mix = ask_state(), ask_mix()
    else:
        mix, state = ask_mix(), ask_state()
    assert state == state_alone
    pd.testing.assert_frame_equal(mix, mix_alone)
    census = [json.loads(line) for line in (tmp_path / "census.jsonl").read_text().splitlines()]
    assert [(c["kind"], c["hit"]) for c in census] == (
        [("two_flow_state", False), ("mix", True)] if first == "state"
        else [("mix", False), ("two_flow_state", True)])
    # another mix of the group, or a BBRv2 flow, is not that run
    equilibria.simulate_mix((1,), group_size=2, group_rtts_s=[0.03], variant="bbr2", **kw)
    assert not json.loads((tmp_path / "census.jsonl").read_text().splitlines()[-1])["hit"]


def test_grouped_tests_read_only_runs_with_the_asked_flows_per_group():
    """A run of three flows per group says nothing about the mixes of one flow per group
    (its mix (0, 1) is another game), nor does a run with a flow at another RTT: the
    grouped equilibrium tests leave both out instead of reading them as that mix."""
    rows = []

    def run(key, per_group, bbr, extra_rtt=None):
        for g, rtt in enumerate((0.01, 0.03)):
            for f in range(per_group):
                cca = "bbr" if f < bbr[g] else "cubic"
                rows.append({"key": key, "capacity_bps": 1e8, "buffer_bdp": 2.0,
                             "flow_rtt_s": rtt, "cca": cca, "goodput_bps": 1.0 + g})
        if extra_rtt is not None:
            rows.append({"key": key, "capacity_bps": 1e8, "buffer_bdp": 2.0,
                         "flow_rtt_s": extra_rtt, "cca": "bbr", "goodput_bps": 9.0})

    for a in range(2):
        for b in range(2):
            run(f"one{a}{b}", 1, (a, b))
    run("three", 3, (0, 1))
    run("stray", 1, (1, 1), extra_rtt=0.02)
    t = pd.DataFrame(rows)
    rtts = [0.01, 0.03]
    assert measured_equilibria.group_layout_keys(t, rtts, 1) == {"one00", "one01", "one10",
                                                                "one11"}
    assert measured_equilibria.group_layout_keys(t, rtts, 3) == {"three"}
    g = measured_equilibria.grouped_rates(t, rtts, 1)
    assert sorted(set(g.mix)) == [(0, 0), (0, 1), (1, 0), (1, 1)] and set(g.runs) == {1}
    assert measured_equilibria.grouped_rates(t, rtts, 2).empty
    status = measured_equilibria.mix_status_table(t, rtts, 1)
    assert len(status) == 4  # the 3-per-group run's (0, 1) is not read as this game's
    assert measured_equilibria.mix_status_table(t, rtts, 2).empty
    three = measured_equilibria.observed_grouped_equilibria(t, rtts, 3)
    assert three.mixes.tolist() == [1] and three.mix.isna().all()  # 1 of its 16 mixes


def test_share_lines_run_every_flow_count_only_at_the_multi_flow_settings(monkeypatch):
    """WhatIf's fluid lines: two flows at every capacity and RTT, ten only at the multi-flow
    ones, each as published and with RTprop expiring; the share is the BBR flows' total."""
    calls = []

    def fake(group_rtts_s, group_size, buffers_bdp, *, capacity_bps, mixes, rtprop_expiry,
             **kw):
        calls.append((capacity_bps, group_rtts_s[0], group_size, rtprop_expiry))
        rows = [{"buffer_bdp": b, "mix_label": str(k), "cca": cca,
                 "goodput_bps": 1e6 * (k if cca == "bbr" else group_size - k), "flows": 1}
                for b in buffers_bdp for (k,) in mixes for cca in ("bbr", "cubic")]
        return pd.DataFrame(rows)

    monkeypatch.setattr(equilibria, "mix_table", fake)
    t = equilibria.share_lines(capacities_mbps=[50.0, 100.0], rtts_ms=[5.0, 40.0],
                               flow_counts=[2, 10], buffers_bdp=[1.0, 2.0],
                               multi_capacities_mbps=[100.0], multi_rtts_ms=[40.0],
                               duration_s=10.0, warmup_s=2.0, step_s=5e-5)
    ten = {c[:2] for c in calls if c[2] == 10}
    assert ten == {(100e6, 0.04)}
    assert len(calls) == (4 + 1) * 2  # (settings x 2 flows + one 10-flow setting) x variants
    assert set(t.source) == set(equilibria.SHARE_VARIANTS.values())
    r = t[(t.n_flows == 10) & (t.n_bbr == 3)]
    np.testing.assert_allclose(r.share, 0.3)


def test_variant_equilibria_run_and_solve_each_variant(monkeypatch):
    seen = []
    monkeypatch.setattr(equilibria, "mix_table", lambda *a, rtprop_expiry, cubic_recovery,
                        **k: seen.append((rtprop_expiry, cubic_recovery)) or pd.DataFrame(
                            {"variant": [rtprop_expiry]}))
    monkeypatch.setattr(equilibria, "equilibria", lambda t: t.assign(solved=True))
    tables, found = equilibria.variant_equilibria(
        [0.01, 0.03], 2, [2.0], {(False, False): "published", (True, False): "expiry"},
        capacity_bps=100e6, duration_s=10.0, warmup_s=2.0, step_s=5e-5)
    assert seen == [(False, False), (True, False)]
    assert list(tables) == ["published", "expiry"] and bool(found["expiry"].solved.all())
