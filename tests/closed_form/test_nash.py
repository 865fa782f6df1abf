import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coexist.closed_form import nash
from coexist.core.params import ParameterError

NAN = np.nan


def test_one_equilibrium():
    assert nash.equilibria([9, 8, 7, 6, NAN], [NAN, 12, 9, 6, 5]) == [2]


def test_several_equilibria():
    assert nash.equilibria([9, 8, 7, 6, NAN], [NAN, 12, 7, 7, 5]) == [1, 3]


def test_all_bbr_equilibrium_when_bbr_always_wins():
    assert nash.equilibria([5, 5, 5, NAN], [NAN, 9, 8, 7]) == [3]


def test_all_cubic_equilibrium_when_bbr_always_loses():
    assert nash.equilibria([5, 5, 5, NAN], [NAN, 1, 1, 1]) == [0]


def test_tolerance_widens_the_set():
    c, b = [10, 10, 10, NAN], [NAN, 10.5, 9.0, 8.0]
    assert nash.equilibria(c, b) == [1]
    assert nash.equilibria(c, b, tol=0.06) == [0, 1]


def test_standard_errors_admit_the_mixes_the_averages_cannot_tell_apart():
    c, b = [10, 10, 10, NAN], [NAN, 10.5, 9.0, 8.0]
    zero = [0.0] * 4
    assert nash.equilibria(c, b, cubic_se=zero, bbr_se=zero) == nash.equilibria(c, b) == [1]
    # 0 -> 1 gains 0.5; with standard errors of 0.2 each, 2 x hypot = 0.57 hides it
    se = [0.2] * 4
    assert nash.equilibria(c, b, cubic_se=se, bbr_se=se) == [0, 1]
    assert nash.equilibria(c, b, cubic_se=se, bbr_se=se, z=1.0) == [1]
    # 2 -> 1 (a BBR flow back to CUBIC) gains 1.0: hidden only by a wider spread
    wide = [0.4] * 4
    assert nash.equilibria(c, b, cubic_se=wide, bbr_se=wide) == [0, 1, 2]


def test_standard_errors_are_checked():
    c, b = [10, 10, NAN], [NAN, 9.0, 8.0]
    with pytest.raises(ParameterError, match="give both or neither"):
        nash.equilibria(c, b, cubic_se=[0, 0, 0])
    with pytest.raises(ParameterError, match="'bbr_se' must be finite"):
        nash.equilibria(c, b, cubic_se=[0, 0, 0], bbr_se=[0, -1, 0])
    with pytest.raises(ParameterError, match="shape"):
        nash.equilibria(c, b, cubic_se=[0, 0], bbr_se=[0, 0])
    with pytest.raises(ParameterError, match="'z'"):
        nash.equilibria(c, b, cubic_se=[0] * 3, bbr_se=[0] * 3, z=-1)


@settings(max_examples=200, deadline=None)
@given(st.integers(2, 12).flatmap(lambda n: st.tuples(
    *(st.lists(st.floats(0, 100), min_size=n + 1, max_size=n + 1) for _ in range(3)),
    st.floats(0, 3), st.floats(0, 3))))
def test_property_wider_spread_never_removes_an_equilibrium(tables):
    """The set within z standard errors grows with z and holds the point equilibria."""
    cubic, bbr, se, z1, z2 = tables
    cubic[-1], bbr[0] = NAN, NAN
    lo, hi = sorted((z1, z2))
    small = set(nash.equilibria(cubic, bbr, cubic_se=se, bbr_se=se, z=lo))
    large = set(nash.equilibria(cubic, bbr, cubic_se=se, bbr_se=se, z=hi))
    assert set(nash.equilibria(cubic, bbr)) <= small <= large


def test_grouped_spread_equals_the_1d_test():
    c, b = [10, 10, 10, NAN], [NAN, 10.5, 9.0, 8.0]
    se = [0.2] * 4
    rates = {(k,): {(0, cca): v[k] for cca, v in (("cubic", c), ("bbr", b))
                    if not np.isnan(v[k])} for k in range(4)}
    spread = {m: {key: 0.2 for key in r} for m, r in rates.items()}
    assert [m[0] for m in nash.grouped_equilibria(rates, [3], spread=spread)] == \
        nash.equilibria(c, b, cubic_se=se, bbr_se=se)
    with pytest.raises(ParameterError, match="spread table lacks"):
        nash.grouped_equilibria(rates, [3], spread={m: {} for m in rates})


def test_grouped_no_equilibrium_when_incentives_cycle():
    cycle = {
        (0, 0): {(0, "cubic"): 1, (1, "cubic"): 5},
        (1, 0): {(0, "bbr"): 2, (1, "cubic"): 1},
        (1, 1): {(0, "bbr"): 1, (1, "bbr"): 2},
        (0, 1): {(0, "cubic"): 2, (1, "bbr"): 1},
    }
    assert nash.grouped_equilibria(cycle, [1, 1]) == []


def test_grouped_with_one_group_equals_1d():
    c, b = [9, 8, 7, 6, NAN], [NAN, 12, 7, 7, 5]
    table = {(k,): {(0, "cubic"): c[k], (0, "bbr"): b[k]} for k in range(5)}
    for k in range(5):  # absent flows are simply not consulted
        table[(k,)] = {key: v for key, v in table[(k,)].items() if not np.isnan(v)}
    assert [m[0] for m in nash.grouped_equilibria(table, [4])] == nash.equilibria(c, b)


def test_grouped_missing_mix_is_an_error():
    with pytest.raises(ParameterError, match="lacks 1 mix"):
        nash.grouped_equilibria({(0,): {(0, "cubic"): 1}}, [1])


def test_rates_by_mix_reads_a_long_table_as_the_grouped_test_takes_it():
    long = pd.DataFrame({"mix": [(0, 1), (0, 1), (1, 1)], "group": [0, 1, 0],
                         "cca": ["cubic", "bbr", "bbr"], "goodput_bps": [3.0, 7.0, 2.0]})
    assert nash.rates_by_mix(long) == {(0, 1): {(0, "cubic"): 3.0, (1, "bbr"): 7.0},
                                       (1, 1): {(0, "bbr"): 2.0}}
    assert nash.rates_by_mix(long.iloc[:0]) == {}


def test_partial_table_verdicts_name_the_gaining_deviation():
    cycle = {
        (0, 0): {(0, "cubic"): 1, (1, "cubic"): 5},
        (1, 0): {(0, "bbr"): 2, (1, "cubic"): 1},
        (0, 1): {(0, "cubic"): 2, (1, "bbr"): 1},
    }
    v = nash.grouped_mix_status(cycle, [1, 1])
    # (0, 0): the group-0 CUBIC flow doubles its rate as BBR
    assert v[(0, 0)] == (nash.NOT_EQUILIBRIUM, "a cubic flow of group 0 gains 100.0% as bbr")
    # (1, 0): its BBR flow does not gain by going back, the (1, 1) deviation is not stored
    assert v[(1, 0)][0] == nash.UNDECIDED and "(1, 1)" in v[(1, 0)][1]
    assert set(v) == set(cycle)  # every stored mix, and only those, gets a verdict
    one_group = {(0,): {(0, "cubic"): 5}, (1,): {(0, "bbr"): 4}}
    assert nash.grouped_mix_status(one_group, [1]) == {
        (0,): (nash.EQUILIBRIUM, "no single flow gains by switching"),
        (1,): (nash.NOT_EQUILIBRIUM, "a bbr flow of group 0 gains 25.0% as cubic")}


def test_partial_table_rejects_mixes_outside_the_groups():
    with pytest.raises(ParameterError, match=r"mix \(2, 0\), outside"):
        nash.grouped_mix_status({(2, 0): {(0, "bbr"): 1}}, [1, 1])
    with pytest.raises(ParameterError, match="group_sizes"):
        nash.grouped_mix_status({}, [0])
    with pytest.raises(ParameterError, match="'group_names' has 1 names; valid: one per group"):
        nash.grouped_mix_status({}, [1, 1], group_names=["10 ms"])


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_property_partial_verdicts_hold_once_the_table_is_complete(data):
    """A verdict reached on part of a campaign stands when the rest arrives, and on the
    complete table the equilibria are those of grouped_equilibria."""
    sizes = data.draw(st.lists(st.integers(1, 3), min_size=1, max_size=3))
    mixes = list(itertools.product(*(range(s + 1) for s in sizes)))
    rate = st.floats(0.1, 100)
    full = {m: {(g, cca): data.draw(rate) for g in range(len(sizes))
                for cca in ("cubic", "bbr")} for m in mixes}
    kept = data.draw(st.lists(st.sampled_from(mixes), unique=True))
    partial = nash.grouped_mix_status({m: full[m] for m in kept}, sizes)
    complete = nash.grouped_mix_status(full, sizes)
    assert all(v[0] != nash.UNDECIDED for v in complete.values())
    for m, (status, _) in partial.items():
        if status != nash.UNDECIDED:
            assert complete[m][0] == status
    assert [m for m, v in complete.items() if v[0] == nash.EQUILIBRIUM] == \
        nash.grouped_equilibria(full, sizes)


@settings(max_examples=300, deadline=None)
@given(st.integers(2, 30).flatmap(lambda n: st.tuples(
    st.lists(st.floats(0, 100), min_size=n + 1, max_size=n + 1),
    st.lists(st.floats(0, 100), min_size=n + 1, max_size=n + 1))))
def test_property_single_group_always_has_an_equilibrium(tables):
    cubic, bbr = tables
    cubic[-1] = NAN
    bbr[0] = NAN
    assert len(nash.equilibria(cubic, bbr)) >= 1


def test_bad_tables_rejected():
    with pytest.raises(ParameterError, match="same shape"):
        nash.equilibria([1, 2], [1, 2, 3])
    with pytest.raises(ParameterError, match="'bbr_bps' must be finite"):
        nash.equilibria([1, 2, NAN], [NAN, -1, 2])


def test_model_crossing_and_deviation_test_agree():
    x = np.linspace(1.1, 50, 60)
    for sync in (True, False):
        cross = nash.predicted_bbr_flows(x, 50, synchronised=sync)
        cubic, bbr = nash.model_table(x, 50, synchronised=sync)
        mask = nash.equilibrium_mask(cubic, bbr)
        for i in range(len(x)):
            found = np.flatnonzero(mask[i])
            assert np.min(np.abs(found - cross[i])) <= 1.0


def test_reported_equilibria_for_50_flows():
    r2 = nash.predicted_region(2.0, 50)
    r10 = nash.predicted_region(10.0, 50)
    assert round(float(r2["bbr_flows_sync"]), 1) == 31.3
    assert round(float(r2["bbr_flows_desync"]), 1) == 37.2
    assert round(float(r10["bbr_flows_sync"]), 1) == 17.1
    assert round(float(r10["bbr_flows_desync"]), 1) == 27.2


def test_equilibrium_fraction_invariant_in_flow_count_scale():
    # sync bound: the NE fraction is the two-flow share, whatever N is
    for n in (10, 25, 50, 200):
        assert float(nash.predicted_bbr_flows(5.0, n, synchronised=True)) / n == pytest.approx(
            0.40558763, rel=1e-6)


def test_region_ordering_and_monotone_in_buffer():
    x = np.geomspace(1.05, 50, 100)
    r = nash.predicted_region(x, 50)
    assert np.all(r["bbr_flows_sync"] <= r["bbr_flows_desync"])
    assert np.all(np.diff(r["bbr_flows_sync"]) < 0)


def test_chapter_numbers_are_the_model_s_claims(root):
    """The closed-form chapter shows the model's numbers through claims (glue roles), and
    the committed claims are the model's values."""
    from coexist.book import claims, ledger
    from coexist.closed_form import mishra

    text = (root / "chapters" / "closed_form.md").read_text()
    shares = claims.read(ledger.EXPECTED / "M-F1.claims.csv")
    for b in (2, 5, 10, 30):
        assert f"fig_m_f1.ipynb::mf1_share_{b}bdp:s" in text
        assert shares[f"mf1_share_{b}bdp"].text == f"{mishra.bbr_share(np.array([b]))[0]:.3f}"
    region = claims.read(ledger.EXPECTED / "M-F9.claims.csv")
    for b in (2, 10):
        r = nash.predicted_region(float(b), 50)
        for bound in ("sync", "desync"):
            key = f"mf9_{bound}_{b}bdp"
            assert f"fig_m_f9.ipynb::{key}:s" in text
            assert region[key].text == f"{float(r[f'bbr_flows_{bound}']):.1f}"
