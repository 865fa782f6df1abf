import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coexist import nash
from coexist.params import ParameterError

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


def test_chapter_table_matches_model(root):
    """The numbers printed in the closed-form chapter come from the model, not from memory."""
    text = (root / "chapters" / "closed_form.md").read_text()
    row = re.search(r"\| BBR share, 1 CUBIC vs 1 BBR \|(.+)\|", text).group(1)
    printed = [float(v) for v in row.split("|")]
    from coexist import mishra

    assert printed == np.round(mishra.bbr_share(np.array([2.0, 5, 10, 30])), 3).tolist()
    numbers = [float(v) for v in re.findall(r"between (\d+\.\d) \(CUBIC synchronised\)"
                                            r" and (\d+\.\d)", text)[0]]
    r2 = nash.predicted_region(2.0, 50)
    assert numbers == [round(float(r2["bbr_flows_sync"]), 1),
                       round(float(r2["bbr_flows_desync"]), 1)]
