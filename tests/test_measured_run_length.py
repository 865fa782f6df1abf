"""The run-length study of the testbed: one long run read as its shorter prefixes, each
scored on its last 40 %, and the shortest length whose share has settled."""

import numpy as np
import pandas as pd
import pytest

from coexist.core.params import ParameterError
from coexist.measured import run_length as rl


def _series(bbr_rate, cubic_rate, seconds=1200):
    """A run's 1-s goodput series: BBR's bytes per second given by ``bbr_rate(t)``."""
    t = np.arange(seconds, dtype=float)
    rows = [pd.DataFrame({"flow": f, "cca": cca, "t_start_s": t, "t_end_s": t + 1.0,
                          "bytes": [rate(x) for x in t]})
            for f, (cca, rate) in enumerate((("cubic", cubic_rate), ("bbr", bbr_rate)))]
    return pd.concat(rows, ignore_index=True)


def test_each_prefix_is_scored_on_its_last_40_percent():
    # BBR sends 1 unit per second before 100 s and 3 after; CUBIC always 1
    s = rl.prefix_shares(_series(lambda t: 1.0 if t < 100 else 3.0, lambda t: 1.0))
    assert s["length_s"].tolist() == [120.0, 300.0, 600.0, 1200.0]
    assert s["scored_from_s"].tolist() == [72.0, 180.0, 360.0, 720.0]
    # 120 s: scored over [72, 120): 28 s at 1 and 20 s at 3 against 48 of CUBIC's
    assert s["bbr_share"].iloc[0] == pytest.approx((28 + 60) / (28 + 60 + 48))
    assert s["bbr_share"].iloc[1:].tolist() == pytest.approx([0.75, 0.75, 0.75])
    assert s["intervals"].tolist() == [48, 120, 240, 480]


def test_a_prefix_longer_than_the_run_is_refused():
    with pytest.raises(ParameterError, match="lengths_s"):
        rl.prefix_shares(_series(lambda t: 1.0, lambda t: 1.0, seconds=300))


def _prefixes(shares_by_repeat, buffer_bdp=30.0):
    rows = [{"capacity_mbps": 50.0, "rtt_ms": 40.0, "buffer_bdp": buffer_bdp, "repeat": r,
             "length_s": length, "bbr_share": v}
            for r, shares in enumerate(shares_by_repeat)
            for length, v in zip(rl.LENGTHS_S, shares, strict=True)]
    return pd.DataFrame(rows)


@pytest.mark.parametrize("shares, settled, before", [
    ([[0.10, 0.36, 0.37, 0.37]], 300.0, True),   # settled from 300 s
    ([[0.37, 0.30, 0.37, 0.37]], 600.0, True),   # 120 s agrees by chance; 300 s does not
    ([[0.50, 0.55, 0.60, 0.54]], 1200.0, False),  # nothing shorter agrees
    ([[0.10, 0.40, 0.36, 0.37], [0.30, 0.34, 0.38, 0.37]], 300.0, True),  # repeats' mean
])
def test_the_settled_length_is_where_every_longer_prefix_agrees(shares, settled, before):
    got = rl.settled_length(_prefixes(shares)).iloc[0]
    assert got["settled_s"] == settled and bool(got["before_longest"]) is before
    assert got["repeats"] == len(shares)


def test_the_longest_prefix_of_each_stored_run_is_its_stored_share():
    """Read back from the series, the whole run scored on its last 40 % gives the share
    the harness stored for it (to the bytes of the intervals straddling the edges)."""
    from coexist import data

    runs = rl.stored_runs()
    assert runs, "the run-length campaign has stored runs"
    table = pd.read_csv(data.DATA / "run_length.csv")
    for _, d in runs:
        series = data.load_table(d / data.RUN_FILES["series"], "series")
        whole = rl.prefix_shares(series, [1200.0])["bbr_share"].iloc[0]
        stored = table[(table["key"] == d.name) & (table["cca"] == "bbr")]["bbr_share"]
        assert whole == pytest.approx(float(stored.iloc[0]), abs=1e-3), d.name
