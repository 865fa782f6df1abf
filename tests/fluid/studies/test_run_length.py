"""Run-length convergence of the fluid equilibria (coexist.fluid.studies.run_length)."""

import numpy as np
import pandas as pd
import pytest

from coexist.core.params import ParameterError
from coexist.fluid.model import solve
from coexist.fluid.studies import equilibria, run_length


def test_a_short_run_is_the_start_of_a_long_one():
    """The solver is causal and deterministic: the spans read from one long run are the
    short runs themselves, in both options of the RTprop filter."""
    for expiry in (False, True):
        cfgs = [equilibria.mix_config([2], 4, [0.02], 2.0, 20e6, "bbr1", d, 5e-5, expiry,
                                       False)[0] for d in (6.0, 12.0)]
        short, long = (solve.run(c) for c in cfgs)
        cut = run_length._window(long, 6.0)
        assert np.array_equal(short.t, cut.t)
        for name in solve.Trace.OUTPUTS:
            assert np.array_equal(getattr(short, name), getattr(cut, name)), name


def test_run_mix_reads_both_spans_with_standard_errors(tmp_path, monkeypatch):
    monkeypatch.setenv("COEXIST_FLUID_CACHE", str(tmp_path))
    spans = {"short": (2.0, 6.0), "long": (4.0, 12.0)}
    rows = run_length.run_mix("bbr1", True, 20.0, 2.0, 2, n_flows=4, capacity_bps=20e6,
                              spans=spans)
    assert {(r["span"], r["cca"]) for r in rows} == {(s, c) for s in spans
                                                     for c in ("cubic", "bbr")}
    assert all(r["goodput_bps"] > 0 and r["goodput_se_bps"] >= 0 for r in rows)
    # the short span equals a mix table's run of that length
    t = equilibria.mix_table([0.02], 4, [2.0], capacity_bps=20e6, duration_s=6.0,
                             warmup_s=2.0, mixes=[(2,)], rtprop_expiry=True, progress=False)
    for r in rows:
        if r["span"] == "short":
            m = t[t.cca == r["cca"]]
            assert r["goodput_bps"] == pytest.approx(float(m.goodput_bps.iloc[0]), rel=1e-12)
            assert r["goodput_se_bps"] == pytest.approx(float(m.goodput_se_bps.iloc[0]),
                                                        rel=1e-9)


def _table(short, long, se_short, se_long):
    rows = []
    for span, (cub, bbr), se in (("short", short, se_short), ("long", long, se_long)):
        for k in range(len(cub)):
            for cca, v in (("cubic", cub[k]), ("bbr", bbr[k])):
                if not np.isnan(v):
                    rows.append({"variant": "bbr1", "rtprop_expiry": True, "rtt_ms": 40.0,
                                 "buffer_bdp": 2.0, "bbr_flows": k, "span": span, "cca": cca,
                                 "goodput_bps": v, "goodput_se_bps": se})
    return pd.DataFrame(rows)


def test_equilibria_by_span_checks_the_long_runs_against_the_short_ones():
    nan = np.nan
    short = ([10, 10, 10, nan], [nan, 10.5, 9.0, 8.0])  # point equilibrium 1
    moved = ([10, 10, 10, nan], [nan, 9.8, 9.0, 8.0])   # point equilibrium 0
    r = run_length.equilibria_by_span(_table(short, moved, 0.2, 0.1)).iloc[0]
    assert r.short_point == [1] and r.long_point == [0] and r.point_moved
    assert r.short_within == [0, 1] and r.long_in_short
    r = run_length.equilibria_by_span(_table(short, moved, 0.0, 0.0)).iloc[0]
    assert r.short_within == [1] and not r.long_in_short


def test_study_refuses_unknown_variants_and_flow_counts():
    with pytest.raises(ParameterError, match="'variants'"):
        run_length.study(["bbr3"], [True], [40.0], [2.0])
    with pytest.raises(ParameterError, match="'n_flows'"):
        run_length.study(["bbr1"], [True], [40.0], [2.0], n_flows=1)


def test_equilibria_by_step_compares_the_same_cases():
    nan = np.nan
    coarse = _table(([10, 10, 10, nan], [nan, 10.5, 9.0, 8.0]),
                    ([10, 10, 10, nan], [nan, 10.5, 9.0, 8.0]), 0.2, 0.2)
    fine = _table(([10, 10, 10, nan], [nan, 9.8, 9.0, 8.0]),
                  ([10, 10, 10, nan], [nan, 9.8, 9.0, 8.0]), 0.0, 0.0)
    r = run_length.equilibria_by_step(coarse, fine).iloc[0]
    assert r.coarse_point == [1] and r.coarse_within == [0, 1]
    assert r.fine_point == [0] and r.point_moved and r.fine_in_coarse
    assert run_length.equilibria_by_step(coarse, fine.assign(rtt_ms=5.0)).empty


def _rerun_matches(table: str, case: dict, n_rows: int, tmp_path, monkeypatch, **study) -> None:
    """Re-run ``case`` (every mix) of the committed ``data/reference/<table>.csv`` with
    :func:`run_length.study` and ``study``'s options: the model is deterministic, so the
    committed numbers must come back to rounding. A change to the model that moves them
    fails here until the benchmark script that wrote the table is run again."""
    from coexist.core import paths

    monkeypatch.setenv("COEXIST_FLUID_CACHE", str(tmp_path))
    committed = pd.read_csv(paths.DATA / "reference" / f"{table}.csv")
    mask = np.logical_and.reduce([committed[k] == v for k, v in case.items()])
    order = ["bbr_flows", "span", "cca"]
    want = committed[mask].sort_values(order).reset_index(drop=True)
    assert len(want) == n_rows
    got = run_length.study([case["variant"]], [case["rtprop_expiry"]], [case["rtt_ms"]],
                           [case["buffer_bdp"]], progress=False, **study)
    got = got.sort_values(order).reset_index(drop=True)
    assert got[order].equals(want[order])
    for col in ("goodput_bps", "goodput_se_bps"):
        assert np.allclose(got[col], want[col], rtol=1e-8, atol=1e-3), col


@pytest.mark.slow
def test_the_committed_run_length_table_is_what_the_model_computes(tmp_path, monkeypatch):
    """One case of fluid_run_length.csv: all 11 mixes for 240 s, read over both spans (the
    all-CUBIC and all-BBR mixes have one algorithm each)."""
    _rerun_matches("fluid_run_length",
                   {"variant": "bbr1", "rtprop_expiry": True, "rtt_ms": 40.0, "buffer_bdp": 2.0},
                   11 * 2 * 2 - 2 * 2, tmp_path, monkeypatch)


@pytest.mark.slow
def test_the_committed_step_table_is_what_the_model_computes(tmp_path, monkeypatch):
    """One case of fluid_step_equilibria.csv: all 11 mixes at 25 us over the book's span."""
    _rerun_matches("fluid_step_equilibria",
                   {"variant": "bbr1", "rtprop_expiry": True, "rtt_ms": 5.0, "buffer_bdp": 2.0},
                   11 * 2 - 2, tmp_path, monkeypatch, step_s=2.5e-5,
                   spans={"short": run_length.SPANS["short"]})


def test_converged_step_needs_a_finer_step_to_agree_with():
    """A step is converged only if every finer step in the table agrees with it within the
    tolerance in every setting; when no coarser step does, the finest comes back as a
    bound, which S-Step reads as "not converged at any step tried"."""
    import pandas as pd

    from coexist.fluid.studies import convergence

    def table(shares):  # one setting, steps 50, 20, 10, 5 us
        return pd.DataFrame({"setting": "s", "reading": "published",
                             "step_us": [50.0, 20.0, 10.0, 5.0], "bbr_share": shares})

    assert convergence.converged_step(table([0.30, 0.305, 0.301, 0.30]), "published") == 50.0
    assert convergence.converged_step(table([0.20, 0.30, 0.305, 0.30]), "published") == 20.0
    # still moving between the two finest steps: only the finest, as a bound
    assert convergence.converged_step(table([0.20, 0.25, 0.30, 0.32]), "published") == 5.0
