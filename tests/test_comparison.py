"""The comparison of models with measurements, as a reader's table."""

import numpy as np
import pandas as pd

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
