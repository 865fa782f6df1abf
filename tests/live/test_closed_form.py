"""The page's closed form (closed_form.mjs) against coexist.closed_form on a seeded sample.

The closed form uses only +, -, *, / and comparisons, which IEEE 754 rounds alike in
JavaScript and NumPy, and closed_form.mjs calls no Math function that rounds (exp, log,
pow, cbrt, sqrt, hypot; checked below). So the tolerance is fixed at zero: every share,
rate and crossing must carry Python's bits, and every equilibrium (whole flows) must be the
same list.
"""

import shutil
import struct

import numpy as np
import pytest

from coexist.closed_form import mishra, nash, ware
from coexist.live import engine

pytestmark = pytest.mark.skipif(engine.node() is None, reason="no 'node' on PATH: the page's "
                                "closed form runs under Node (apt-get install nodejs)")
SEED = 20261206
#: how far apart the two sides' doubles may be: none (see the module docstring)
TOLERANCE = 0.0
ROUNDING_MATH = ("exp", "log", "pow", "cbrt", "sqrt", "hypot", "expm1", "log1p", "sin", "cos")


def draws(seed: int, n: int) -> list[dict]:
    """Networks drawn log-uniformly: 1 Mbit/s to 10 Gbit/s, 1 to 500 ms, 1 to 100 BDP (and a
    few at 1 + 1e-9), 2 to 50 flows, any mix, runs of 10 to 600 s."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        flows = int(rng.integers(2, 51))
        buffer = 1.0 + 1e-9 if i % 50 == 0 else float(np.exp(rng.uniform(0.0, np.log(100.0))))
        out.append({"bufferBdp": buffer,
                    "capacityBps": float(np.exp(rng.uniform(np.log(1e6), np.log(1e10)))),
                    "rttS": float(np.exp(rng.uniform(np.log(1e-3), np.log(0.5)))),
                    "durationS": float(rng.uniform(10.0, 600.0)),
                    "nFlows": flows, "nBbr": int(rng.integers(0, flows + 1))})
    for d in out:
        d["nCubic"] = d["nFlows"] - d["nBbr"]
    return out


def bits(v) -> bytes | None:
    """A double's bits (None for None: no answer, which must match no answer)."""
    return None if v is None else struct.pack("<d", float(v))


def close(a, b) -> bool:
    """Equal within TOLERANCE (zero: the same bits, NaN as no answer on both sides)."""
    if a is None or b is None:
        return a is None and b is None
    return bits(a) == bits(b) if TOLERANCE == 0.0 else abs(a - b) <= TOLERANCE


def native_share(d: dict) -> dict:
    """coexist.closed_form's share report for draw ``d`` (as `coexist model share`)."""
    x, nc, nb, c = d["bufferBdp"], d["nCubic"], d["nBbr"], d["capacityBps"]
    out = {}
    for bound, sync in (("sync", True), ("desync", False)):
        m = mishra.multi_flow(x, nc, nb, capacity_bps=c, synchronised=sync)
        out[f"bbr_share_{bound}"] = float(m.bbr_share)
        for cca, v in (("bbr", m.bbr_per_flow_bps), ("cubic", m.cubic_per_flow_bps)):
            out[f"{cca}_per_flow_bps_{bound}"] = None if np.isnan(v) else float(v)
    w = 0.0 if nb == 0 else float(ware.bbr_share(x, capacity_bps=c, rtt_s=d["rttS"], n_bbr=nb,
                                                 duration_s=d["durationS"], outside="nan"))
    out["ware_bbr_share"] = None if np.isnan(w) else w
    return out


def test_the_closed_form_calls_no_rounding_math_function():
    text = (engine.HERE / "closed_form.mjs").read_text()
    used = [f for f in ROUNDING_MATH if f"Math.{f}(" in text]
    assert not used, f"closed_form.mjs calls Math.{used[0]}: name it and fix a tolerance"


def test_the_shares_and_rates_are_pythons_bit_for_bit():
    sample = draws(SEED, 400)
    page = engine.closed_form("share", sample)
    differ, ware_answers = [], 0
    for d, got in zip(sample, page, strict=True):
        want = native_share(d)
        assert set(got) == set(want)
        ware_answers += want["ware_bbr_share"] is not None
        differ += [(k, d) for k in want if not close(got[k], want[k])]
    assert not differ, f"{len(differ)} values differ, e.g. {differ[0]}"
    assert 50 < ware_answers < 400  # the sample reaches both sides of Ware's [0, 1]


def test_the_two_flow_model_is_pythons_bit_for_bit():
    sample = draws(SEED + 1, 200)
    page = engine.closed_form("twoFlow", sample)
    for d, got in zip(sample, page, strict=True):
        want = mishra.two_flow(d["bufferBdp"], d["capacityBps"], d["rttS"])
        for key, py in (("bbrOccupancyBdp", want.bbr_occupancy_bdp),
                        ("cubicBps", want.cubic_bps), ("bbrBps", want.bbr_bps),
                        ("bbrShare", want.bbr_share)):
            assert close(got[key], float(py)), (key, d)


def test_the_equilibria_are_pythons():
    sample = draws(SEED + 2, 200)
    page = engine.closed_form("nash", sample)
    for d, got in zip(sample, page, strict=True):
        x, n = d["bufferBdp"], d["nFlows"]
        region = nash.predicted_region(x, n)
        for bound, sync in (("sync", True), ("desync", False)):
            assert close(got[f"bbr_flows_{bound}"], float(region[f"bbr_flows_{bound}"])), d
            cubic, bbr = nash.model_table(x, n, synchronised=sync)
            assert got[f"equilibria_{bound}"] == nash.equilibria(cubic, bbr), (bound, d)
        lo, hi = nash.whole_flows(region)
        assert got["whole_flows"] == [int(lo), int(hi)], d


def test_a_changed_closed_form_fails_the_comparison(tmp_path):
    for f in engine.HERE.glob("*.mjs"):
        shutil.copy(f, tmp_path / f.name)
    js = tmp_path / "closed_form.mjs"
    text = js.read_text()
    # one ulp in CUBIC's back-off: a change no plot would show
    js.write_text(text.replace("BETA_CUBIC = 0.7;", "BETA_CUBIC = 0.7000000000000001;"))
    sample = draws(SEED, 20)
    page = engine.closed_form("share", sample, runner=tmp_path / "run_node.mjs")
    differ = sum(not close(got[k], want[k]) for d, got in zip(sample, page, strict=True)
                 for want in [native_share(d)] for k in want)
    assert differ > 0
