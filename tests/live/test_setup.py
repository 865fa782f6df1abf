"""A page builds a run from its own inputs (setup.mjs): the kernel's arguments it computes
are Python's (:func:`coexist.fluid.model.solve.published_arguments` of the same dumbbell in the
published reading's start), bit for bit, so a page's run is the book's run."""

import numpy as np
import pytest

from coexist.fluid.model import paper_setup, solve
from coexist.live import compare, engine

pytestmark = pytest.mark.skipif(engine.node() is None, reason="no 'node' on PATH: the page's "
                                "engine runs under Node (apt-get install nodejs)")
WARMUP_S = 1.0


def _page_setup(d: dict, sample_s: float) -> dict:
    """One draw of :func:`compare.draws` as setup.mjs takes it."""
    n = len(d["ccas"])
    setup = {"ccas": d["ccas"], "capacityBps": d["capacity_bps"],
             "rttRange": list(d["rtt_range_s"]), "bufferBdp": d["buffer_bdp"],
             "durationS": d["duration_s"], "warmupS": WARMUP_S, "stepS": d["step_s"],
             "sampleS": sample_s, "aqm": d["aqm"], "rtpropExpiry": d["rtprop_expiry"],
             "cubicRecovery": d["cubic_recovery"]}
    if "bbr2" in d["ccas"]:
        setup["bbr2Phases"] = list(paper_setup.paper_phases(n))
    return setup


@pytest.mark.parametrize("seed", [20261206, 7])
def test_the_pages_arguments_are_pythons(seed):
    for d in compare.draws(seed, 8, duration_s=4.0):
        py = dict(d)
        lo, hi = py.pop("rtt_range_s")
        cfg = compare.config(rtts_s=list(np.linspace(lo, hi, len(d["ccas"]))), **py)
        want = solve.published_arguments(cfg, WARMUP_S)
        got = engine.setup_arguments(_page_setup(d, cfg.sample_s))
        assert set(got) == set(want) | {"fields"}, compare.describe(cfg)
        for key, value in want.items():
            same = compare.same_bits(np.asarray(value, dtype=float),
                                     np.asarray(got[key], dtype=float))
            assert same.all(), (compare.describe(cfg), key, value, got[key])


def test_the_book_set_ups_sample_interval_and_a_10_us_step():
    """The command line's sample interval (N/C, at most 1 ms) and the paper's step."""
    d = {"ccas": ["cubic"] * 5 + ["bbr2"] * 5, "capacity_bps": 100e6,
         "rtt_range_s": (0.03, 0.04), "buffer_bdp": 2.0, "duration_s": 10.0, "step_s": 1e-5,
         "aqm": "droptail", "rtprop_expiry": True, "cubic_recovery": False}
    py = dict(d)
    lo, hi = py.pop("rtt_range_s")
    sample_s = max(1e-5, min(1e-3, 10 / (100e6 / 12000)))
    cfg = compare.config(rtts_s=list(np.linspace(lo, hi, 10)), sample_s=sample_s, **py)
    want = solve.published_arguments(cfg, WARMUP_S)
    got = engine.setup_arguments(_page_setup(d, sample_s))
    assert got["every"] == want["every"] and got["n_steps"] == want["n_steps"]
    assert compare.same_bits(want["tstr0"], got["tstr0"]).all()
    assert compare.same_bits(want["w_hi0"], got["w_hi0"]).all()


def test_a_page_without_bbr2_phases_is_told_what_is_missing():
    with pytest.raises(engine.EngineError, match="bbr2Phases"):
        engine.setup_arguments({"ccas": ["bbr2"], "capacityBps": 1e7, "rttsS": [0.04],
                                "bufferBdp": 1, "durationS": 1})
