"""The tests of Scherrer et al.'s statements on Figs. 6-10 (§4.3), on tables made to hold
or break each one: a test must say 'does not hold' when the statement is false, and
'not testable' when the table lacks what it needs."""

from __future__ import annotations

import itertools

import pandas as pd
import pytest

from coexist.measured import aggregate_statements as st

ALGOS = ("Reno", "CUBIC", "BBRv1", "BBRv2")
PAIRS = [f"{a}/{b}" for a, b in itertools.combinations_with_replacement(ALGOS, 2)]
BUFFERS = (1.0, 2.0, 4.0, 7.0)


def table(over: dict | None = None) -> pd.DataFrame:
    """Every pair under both disciplines at every buffer, with metrics that make every
    statement hold; ``over`` maps (pair, aqm, metric) to a function of the buffer."""
    rows = []
    for pair, aqm, b in itertools.product(PAIRS, ("droptail", "red"), BUFFERS):
        a, c = pair.split("/")
        bbr1 = "BBRv1" in (a, c)
        mixed_bbr1 = bbr1 and a != c
        jain = (0.5 if aqm == "red" or b == 1.0 else 0.6 + 0.04 * b) if mixed_bbr1 else 0.99
        if pair == "BBRv1/BBRv1" and aqm == "droptail":
            jain = 1.0 - 0.02 * b  # less fair in deep buffers, as the paper's model
        if pair in ("Reno/BBRv2", "CUBIC/BBRv2") and aqm == "red":
            jain = 0.85  # BBRv2 unfair towards loss-based CCAs under RED
        loss = ((0.15 if aqm == "red" else 0.1 / b ** 3) if bbr1
                else 0.002 if aqm == "red" else 0.001 / b)
        queue = 0.95 if bbr1 else 0.9 if (pair in ("Reno/Reno", "CUBIC/CUBIC", "Reno/CUBIC",
                                         "Reno/BBRv2", "CUBIC/BBRv2")) else 0.2
        if pair == "BBRv2/BBRv2":
            queue = 0.4 / b if b <= 4 else 0.1
        util = 0.975 + 0.001 * b if pair == "BBRv2/BBRv2" else (
            1.0 if bbr1 else 0.99 + 0.001 * b)
        row = {"pair": pair, "aqm": aqm, "buffer_bdp": b, "jain": jain, "loss_rate": loss,
               "queue_share": queue, "utilisation": util, "jitter_ms": 0.1}
        for (p, q, metric), f in (over or {}).items():
            if p == pair and q == aqm:
                row[metric] = f(b)
        rows.append(row)
    return pd.DataFrame(rows)


def verdict(statement_short: str, t: pd.DataFrame) -> st.Verdict:
    (s,) = [s for s in st.STATEMENTS if s.short == statement_short]
    return s.test(t)


def test_every_statement_holds_on_a_table_made_to_bear_them_out():
    t = table()
    held = {s.short: s.test(t).holds for s in st.STATEMENTS}
    assert held.pop("the model's jitter") is None  # no measured per-packet delays
    for untestable in ("the model's low RED loss", "no ProbeRTT among ten senders",
                       "the model's low BBRv2/Reno utilisation under RED"):
        assert held.pop(untestable) is None
    assert all(held.values()), [k for k, v in held.items() if not v]


@pytest.mark.parametrize("short, over", [
    # Fig. 6: a CUBIC/CUBIC pair less fair in the shallowest buffer than CUBIC/BBRv1
    ("the least fairness against BBRv1 in shallow buffers",
     {("CUBIC/CUBIC", "droptail", "jain"): lambda b: 0.3}),
    # Fig. 6: from 4 BDP no fairer than in the shallowest buffer
    ("higher fairness from 4 BDP",
     {("CUBIC/BBRv1", "droptail", "jain"): lambda b: 0.809 if b in (1.0, 7.0) else 0.9}),
    ("BBRv2 fairer than BBRv1", {("CUBIC/BBRv2", "droptail", "jain"): lambda b: 0.6}),
    ("BBRv2's unfairness under RED", {("Reno/BBRv2", "red", "jain"): lambda b: 0.99}),
    ("BBRv1's falling fairness in deep buffers",
     {("BBRv1/BBRv1", "droptail", "jain"): lambda b: 0.97}),
    ("RED's low fairness towards BBRv1", {("Reno/BBRv1", "red", "jain"): lambda b: 0.8}),
    # Fig. 7: 20.7 % is more than "at most 20 %"
    ("BBRv1's loss of at most 20 %", {("BBRv1/BBRv1", "red", "loss_rate"): lambda b: 0.207}),
    ("BBRv1's loss falling with the buffer",
     {("Reno/BBRv1", "droptail", "loss_rate"): lambda b: 0.01 * b}),
    # apart by a factor 7 and by 2.4 points: neither close in ratio nor in points
    ("RED's even loss rates", {("CUBIC/BBRv2", "red", "loss_rate"): lambda b: 0.004 * b}),
    ("low loss of loss-sensitive CCAs",
     {("Reno/Reno", "droptail", "loss_rate"): lambda b: 0.012}),
    # below 1 % but growing with the buffer
    ("low loss of loss-sensitive CCAs",
     {("CUBIC/CUBIC", "droptail", "loss_rate"): lambda b: 0.001 * b}),
    # Fig. 8: the queue of BBRv1 held near one BDP, so a share of 1/B
    ("BBRv1 filling any buffer", {("BBRv1/BBRv1", "droptail", "queue_share"): lambda b: 1 / b}),
    ("bufferbloat by Reno and CUBIC",
     {("CUBIC/CUBIC", "droptail", "queue_share"): lambda b: 0.1}),
    ("BBRv2 queueing less alone",
     {("CUBIC/BBRv2", "droptail", "queue_share"): lambda b: 0.05}),
    ("BBRv1 queueing more than loss-sensitive CCAs",
     {("BBRv1/BBRv1", "droptail", "queue_share"): lambda b: 0.5}),
    # the mixed pair below the homogeneous one, BBRv1/BBRv1 still above
    ("BBRv1 queueing more than loss-sensitive CCAs",
     {("Reno/BBRv1", "droptail", "queue_share"): lambda b: 0.8}),
    ("BBRv2's constant queue up to 4 BDP",
     {("BBRv2/BBRv2", "droptail", "queue_share"): lambda b: 0.4}),
    # a queue held at 1.5 BDP beyond 4 BDP: no growth
    ("BBRv2's queue growing in large buffers",
     {("BBRv2/BBRv2", "droptail", "queue_share"): lambda b: 1.5 / b}),
    # fairer than BBRv1, but one group takes more than two thirds
    ("BBRv2 fairer than BBRv1", {("Reno/BBRv2", "droptail", "jain"): lambda b: 0.88}),
    # lower under RED by more than 0.05, but not below two thirds' split
    ("BBRv2's unfairness under RED", {("CUBIC/BBRv2", "red", "jain"): lambda b: 0.92}),
    # BBRv2 alone below both, but beside CUBIC the buffer only a third full
    ("BBRv2 queueing less alone",
     {("CUBIC/BBRv2", "droptail", "queue_share"): lambda b: 0.3}),
    # Fig. 9
    ("full utilisation with BBRv1", {("BBRv1/BBRv1", "droptail", "utilisation"): lambda b: 0.986}),
    ("utilisation rising with the buffer",
     {("Reno/Reno", "droptail", "utilisation"): lambda b: 1.0}),
    ("BBRv2's lowest utilisation", {("BBRv2/BBRv2", "droptail", "utilisation"): lambda b: 0.96}),
    # at least 0.97, but another pair lower still
    ("BBRv2's lowest utilisation", {("Reno/Reno", "droptail", "utilisation"): lambda b: 0.972}),
])
def test_each_statement_fails_where_the_table_contradicts_it(short, over):
    v = verdict(short, table(over))
    assert v.holds is False, v.evidence
    assert verdict(short, table()).holds is True


def test_evidence_gives_the_deciding_numbers():
    v = verdict("BBRv1 filling any buffer",
                table({("BBRv1/BBRv1", "droptail", "queue_share"): lambda b: 1 / b}))
    assert "a queue of 1.00-1.00 BDP" in v.evidence
    assert "lowest 0.143 of the buffer, at 7 BDP" in v.evidence
    v = verdict("BBRv1's loss of at most 20 %",
                table({("BBRv1/BBRv1", "red", "loss_rate"): lambda b: 0.207}))
    assert v.text() == "does not hold: highest 20.7 % (BBRv1/BBRv1, RED, 1 BDP)"


def test_what_a_table_lacks_is_named_not_guessed():
    t = table()
    measured_like = t[(t["aqm"] == "droptail") & ~t["pair"].str.contains("BBRv2")]
    assert verdict("RED's low fairness towards BBRv1", measured_like).holds is None
    assert "no RED runs" in verdict("RED's even loss rates", measured_like).evidence
    assert verdict("BBRv2's lowest utilisation", measured_like).holds is None
    one_buffer = t[t["buffer_bdp"] == 2.0]
    for short in ("BBRv1 filling any buffer",
                  "utilisation rising with the buffer", "BBRv1's loss falling with the buffer"):
        assert verdict(short, one_buffer).holds is None, short
    shallow = t[t["buffer_bdp"] < 4]
    assert "4 BDP or more" in verdict("higher fairness from 4 BDP", shallow).evidence
    # a reading of both disciplines on a drop-tail table says what it covered
    v = st.verdicts(t, measured_like)
    row = v[v["short"] == "BBRv1's loss of at most 20 %"].iloc[0]
    assert row["measured"].startswith("holds:") and row["measured"].endswith(
        "drop-tail only (no RED runs)")


def test_tally_compares_the_like_for_like_model_with_the_measurements():
    """The agreement is counted between the model over the measured scope and the
    measurements; the statement the paper finds in its model only is left out."""
    t = table({("BBRv1/BBRv1", "droptail", "queue_share"): lambda b: 1 / b})
    scope = (t["aqm"] == "droptail") & ~t["pair"].str.contains("BBRv2")
    measured = t[scope]
    like = table()[scope]  # the model over the measured window: BBRv1 fills the buffer
    v = st.verdicts(table(), measured, like)
    c = st.tally(v)
    n_model = sum(s.test(table()).holds is not None for s in st.STATEMENTS)
    assert c.model == f"{n_model} of {n_model}"
    assert c.only_model == ("BBRv1 queueing more than loss-sensitive CCAs; "
                            "BBRv1 filling any buffer")
    assert c.neither == "none" and c.only_measured == "none"
    both = v[v["like_holds"].notna() & v["measured_holds"].notna()]
    assert "BBRv1's falling fairness in deep buffers" in set(both["short"])
    assert c.agree.endswith(f"of {len(both) - 1}")  # without the model-only statement
    nothing = st.tally(st.verdicts(table(), st.wide_measured(pd.DataFrame())))
    assert nothing.measured == "0 of 0" and nothing.agree == "0 of 0"


def test_differences_name_the_statements_whose_verdict_moved():
    a = st.verdicts(table(), pd.DataFrame())
    b = st.verdicts(table({("BBRv1/BBRv1", "red", "loss_rate"): lambda x: 0.25}),
                    pd.DataFrame())
    assert st.differences(a, b) == ("BBRv1's loss of at most 20 % (model: holds there, "
                                    "does not hold here)")
    assert st.differences(a, a) == "none"
    # measured and like-for-like sides; a side testable on one setting only is no change
    scope = lambda t: t[(t["aqm"] == "droptail") & ~t["pair"].str.contains("BBRv2")]  # noqa: E731
    bloat = {("CUBIC/CUBIC", "droptail", "queue_share"): lambda x: 0.1}
    c = st.verdicts(table(), scope(table()), scope(table()))
    d = st.verdicts(table(), scope(table(bloat)), scope(table()))
    assert st.differences(c, d) == ("bufferbloat by Reno and CUBIC (measured: holds there, "
                                    "does not hold here)")
    assert st.differences(a, c) == "none"  # a has no measured side at all
    e = st.verdicts(table(), scope(table()), scope(table(bloat)))
    assert "like-for-like model: holds there, does not hold here" in st.differences(c, e)


def test_model_only_finding_is_read_as_the_paper_expects():
    scope = lambda t: t[(t["aqm"] == "droptail") & ~t["pair"].str.contains("BBRv2")]  # noqa: E731
    flat = {("BBRv1/BBRv1", "droptail", "jain"): lambda b: 0.97}
    v = st.verdicts(table(), scope(table(flat)), scope(table()))
    assert st.model_only_text(v) == (
        "BBRv1's falling fairness in deep buffers: holds in the like-for-like model and does "
        "not hold in our measurements, as the paper found")
    c = st.tally(v)
    n = sum(1 for s in st.STATEMENTS if not s.model_only
            and s.test(scope(table(flat))).holds is not None)
    assert c.measured == f"{n} of {n}"  # the model-only finding is not counted against them
