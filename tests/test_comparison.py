"""The comparison of models with measurements, as a reader's table."""

import numpy as np
import pandas as pd
import pytest

from coexist.measured import comparison


def test_the_error_table_puts_each_model_in_a_row_and_each_range_in_a_column():
    points = pd.DataFrame({"buffer_bdp": [1.0, 1.5, 3.0, 10.0], "mean": [0.5, 0.4, 0.3, 0.2]})
    acc = comparison.error_by_range(points, {
        "m": np.array([np.nan, 0.5, 0.2, 0.2]), "n": np.array([0.6, 0.4, 0.3, 0.3])})
    table = comparison.error_table(acc)
    assert list(table["model"]) == ["m", "n"]
    assert list(table.columns[1:]) == ["1-2 BDP (2 points)", "2-5 BDP (1 point)",
                                       "5-30 BDP (1 point)"]
    assert table.iloc[0, 1] == "0.100 (+0.100)"  # 1 BDP is outside m's domain: one point
    assert table.iloc[1, 1] == "0.050 (+0.050)"
    assert table.iloc[0, 2] == "0.100 (-0.100)"


def test_a_measurement_is_inside_the_band_between_the_multi_flow_bounds():
    """Eqs. 21-24: at 3 BDP with 5 + 5 flows the band of BBR's per-flow goodput runs between
    the synchronised and de-synchronised bounds; a value on a bound counts as inside."""
    from coexist.closed_form import mishra

    cap = 100e6
    sync, desync = (float(mishra.multi_flow(np.array([3.0]), 5, 5, capacity_bps=cap,
                                            synchronised=s).bbr_per_flow_bps[0])
                    for s in (True, False))
    lo, hi = sorted((sync, desync))
    assert lo < hi
    got = comparison.inside_multi_flow_band(
        [3.0, 3.0, 3.0, 3.0, 1.0], [5] * 5, ["BBR"] * 5,
        [(lo + hi) / 2, lo, hi * 1.01, lo * 0.99, (lo + hi) / 2], capacity_bps=cap)
    assert got[:4].tolist() == [1.0, 1.0, 0.0, 0.0]
    assert np.isnan(got[4])  # at 1 BDP the closed form has no answer


def test_the_band_of_a_cubic_flow_is_the_cubic_bounds():
    from coexist.closed_form import mishra

    cap = 50e6
    b = [(float(mishra.multi_flow(np.array([10.0]), 2, 2, capacity_bps=cap,
                                  synchronised=s).cubic_per_flow_bps[0])) for s in (True, False)]
    mid = sum(b) / 2
    assert comparison.inside_multi_flow_band([10.0], [2], ["CUBIC"], [mid],
                                             capacity_bps=cap).tolist() == [1.0]
    with pytest.raises(ValueError, match="cca = 'bbr'"):
        comparison.inside_multi_flow_band([10.0], [2], ["bbr"], [mid], capacity_bps=cap)
