"""The page's engine beside the native kernel, bit for bit: the comparison CI runs.

The page's engine (:mod:`.engine`) and :func:`coexist.fluid.model.published.integrate` take the
same arguments and must return the same doubles: the five metric sums, each flow's rate
sum, every sampled per-flow variable and the link's queue, loss signal and arrivals. There
is no tolerance: two doubles agree when their bits do (NaN agrees with NaN, whose bits
WebAssembly leaves open). The kernel's library functions are the only operations whose
bits could differ between the two builds; :func:`libm_differences` compares them with the
native library's one by one, over the arguments the kernel gives them, so a difference
there is named by its function. The engine's exp and pow are glibc's as it builds them for
x86-64 processors with FMA, which it selects at run time; on an x86 processor without FMA
glibc's own round as musl's, and this comparison names exp and pow.

Configurations come from :func:`sample`: a seeded draw over the CCAs (BBRv2 included),
capacities, RTT spreads, buffers, both AQMs, with and without the RTprop expiry and
CUBIC's recovery, in the published reading's own start (:func:`.paper_setup.start`).
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..fluid.model import paper_setup, published, solve
from . import engine
from .wasm import WASM

#: the draw's ranges: CCAs, capacities (bit/s), base RTTs (s), buffers (BDP of the shortest
#: RTT), flows per run
CCAS = ("reno", "cubic", "bbr1", "bbr2")
CAPACITIES_BPS = (10e6, 20e6, 50e6, 100e6, 200e6)
RTT_S = (0.005, 0.01, 0.02, 0.04, 0.08)
BUFFERS_BDP = (0.5, 1.0, 2.0, 4.0, 10.0)
FLOWS = (2, 3, 4, 6, 10)
#: the book's numerics: a 50-us step, 40-s runs with 10 s of warm-up (the equilibrium
#: figures, :func:`coexist.fluid.studies.equilibria.simulate_mix`)
BOOK_STEP_S = 5e-5
BOOK_DURATION_S = 40.0
BOOK_WARMUP_S = 10.0


def config(ccas: list[str], capacity_bps: float, rtts_s: list[float], buffer_bdp: float,
           duration_s: float, step_s: float = BOOK_STEP_S, aqm: str = "droptail",
           rtprop_expiry: bool = False, cubic_recovery: bool = False,
           sample_s: float = 1e-3) -> solve.Config:
    """A dumbbell in the published reading with its own start (BBRv2's seeded phases and
    inflight_hi from the buffer), as ``coexist fluid run`` builds it."""
    pps = capacity_bps / (8 * solve.PACKET_BYTES)
    start = paper_setup.start(ccas, rtts_s, buffer_bdp * pps * min(rtts_s), pps)
    return solve.dumbbell(ccas, capacity_bps=capacity_bps, rtt_s=rtts_s,
                          buffer_bdp=buffer_bdp, duration_s=duration_s, step_s=step_s,
                          sample_s=sample_s, aqm=aqm, rtprop_expiry=rtprop_expiry,
                          cubic_recovery=cubic_recovery, reading="published", **start)


#: the mixes a sample cycles through (shuffled by its seed): BBRv1 and BBRv2 beside
#: CUBIC, Reno and each other, and single-CCA links
MIXES = (("cubic", "bbr1"), ("cubic", "bbr2"), ("reno", "bbr1"), ("bbr1", "bbr2"),
         ("reno", "bbr2"), ("cubic",), ("bbr2",), ("reno", "cubic"))


def draws(seed: int | str, count: int, duration_s: float = BOOK_DURATION_S,
          step_s: float = BOOK_STEP_S) -> list[dict]:
    """``count`` dumbbells drawn with ``seed``, as :func:`config`'s keywords with the base
    RTTs as a range (``rtt_range_s``, spread evenly over the flows). The mixes
    (:data:`MIXES`, half and half) come in an order the seed shuffles, drop-tail and RED
    alternate, and the RTprop expiry is off for two draws and on for the next two, so any
    four draws hold every pair of the two; the seed draws the rest: flows, capacity, a
    spread of base RTTs (all equal, or from one RTT to a longer one), buffer, and CUBIC's
    recovery."""
    rng = random.Random(seed)
    mixes = list(MIXES)
    rng.shuffle(mixes)
    out = []
    for j in range(count):
        kinds = mixes[j % len(mixes)]
        n = rng.choice(FLOWS)
        n += n % len(kinds)
        lo = rng.choice(RTT_S)
        hi = lo * rng.choice((1.0, 1.5, 2.0, 4.0))
        out.append({"ccas": [kinds[i * len(kinds) // n] for i in range(n)],
                    "capacity_bps": rng.choice(CAPACITIES_BPS), "rtt_range_s": (lo, hi),
                    "buffer_bdp": rng.choice(BUFFERS_BDP), "duration_s": duration_s,
                    "step_s": step_s, "aqm": ("droptail", "red")[j % 2],
                    "rtprop_expiry": (j // 2) % 2 == 1,
                    "cubic_recovery": rng.random() < 0.25})
    return out


def sample(seed: int | str, count: int, duration_s: float = BOOK_DURATION_S,
           step_s: float = BOOK_STEP_S) -> list[solve.Config]:
    """The configurations of :func:`draws`."""
    out = []
    for d in draws(seed, count, duration_s, step_s):
        d = dict(d)
        lo, hi = d.pop("rtt_range_s")
        out.append(config(rtts_s=list(np.linspace(lo, hi, len(d["ccas"]))), **d))
    return out


def describe(cfg: solve.Config) -> str:
    """One line naming a configuration."""
    ccas = [f.cca for f in cfg.flows]
    kinds = ",".join(f"{c}:{ccas.count(c)}" for c in dict.fromkeys(ccas))
    rtts = sorted({round(f.d_p * 1e3, 3) for f in cfg.flows})
    return (f"{kinds}, {cfg.capacity_pps * 8 * solve.PACKET_BYTES / 1e6:g} Mbit/s, RTT "
            f"{rtts[0]:g}-{rtts[-1]:g} ms, buffer {cfg.buffer_pkts:.4g} pkts, {cfg.aqm}"
            + (", RTprop expiry" if cfg.rtprop_expiry else "")
            + (", CUBIC recovery" if cfg.cubic_recovery else "")
            + f", {cfg.duration_s:g} s at {cfg.step_s * 1e6:g} us")


def same_bits(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Where two arrays of doubles hold the same double (bits equal, or both NaN)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return (a.view(np.int64) == b.view(np.int64)) | (np.isnan(a) & np.isnan(b))


@dataclass
class Comparison:
    """One configuration in both engines: what differs (empty: every bit agrees), how many
    doubles were compared, and each engine's seconds in its loop."""

    what: str
    differences: list[str] = field(default_factory=list)
    doubles: int = 0
    native_s: float = 0.0
    browser_s: float = 0.0


def _difference(name: str, native: np.ndarray, page: np.ndarray) -> str | None:
    """None, or where ``page`` first differs from ``native`` and by how much."""
    if native.shape != page.shape:
        return f"{name}: shape {page.shape}, native {native.shape}"
    same = same_bits(native, page)
    if same.all():
        return None
    first = np.unravel_index(int(np.argmin(same.ravel())), same.shape)
    worst = float(np.nanmax(np.abs(page - native) / np.maximum(np.abs(native), 1e-300)))
    at = tuple(map(int, first))
    return (f"{name}: {int((~same).sum())} of {same.size} differ, first at {at} "
            f"({native[first]!r} native, {page[first]!r} page), relative up to {worst:.2e}")


def compare(cfg: solve.Config, warmup_s: float = 0.0, wasm: Path = WASM) -> Comparison:
    """Run ``cfg`` in the native kernel and the page's engine, every variable sampled, and
    name every array in which a bit differs."""
    a = solve.published_arguments(cfg, warmup_s)
    published.integrate(**dict(a, n_steps=2, start=0))  # compiled before it is timed
    t0 = time.perf_counter()
    out, link, metrics, rate_sum = published.integrate(**a)
    native_s = time.perf_counter() - t0
    page = engine.run_arguments(a, engine.FIELDS, wasm)
    pairs = [("metrics", metrics, page.metrics), ("rate sums", rate_sum, page.rate_sum)]
    pairs += [(f"trace {f}", out[j], page.traces[f]) for j, f in enumerate(engine.FIELDS)]
    pairs += [(f"link {f}", link[j], page.link[j]) for j, f in enumerate(("q", "pc", "y"))]
    found = [d for d in (_difference(*p) for p in pairs) if d]
    return Comparison(describe(cfg), found, sum(p[1].size for p in pairs), native_s,
                      page.seconds)


#: the library functions the kernel calls, as :func:`libm_differences` draws their
#: arguments in the ranges the kernel gives them
LIBM = ("exp", "pow", "log")


def libm_arguments(seed: int | str, count: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Arguments of the kernel's library calls: exp of σ's -40..40 and beyond; pow's cube
    (x^3 of negative and positive x), CUBIC's cube root, BBRv2's 2^(t/RTprop) and
    drop-tail's (q/B)^100 down to underflow; log's only argument, 0.9 (musl's log, which
    the engine keeps, differs from glibc's fused one in the last bit for about 2 arguments
    in 100 000, none of them the kernel's)."""
    digest = hashlib.sha256(str(seed).encode()).digest()
    rng = np.random.default_rng(int.from_bytes(digest[:8], "little"))
    k = count // 4
    x = np.concatenate([rng.uniform(-40, 40, 3 * k), rng.uniform(-745, 709, count - 3 * k)])
    base = np.concatenate([rng.uniform(-30, 30, k), rng.uniform(0, 1e5, k),
                           np.full(k, 2.0), rng.uniform(0, 1, count - 3 * k)])
    expo = np.concatenate([np.full(k, 3.0), np.full(k, 1.0 / 3.0), rng.uniform(0, 64, k),
                           np.full(count - 3 * k, 100.0)])
    logs = np.full(count, 0.9)
    return {"exp": (x, np.zeros(count)), "pow": (base, expo), "log": (logs, np.zeros(count))}


def _native(name: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The native library's function over ``a`` (and ``b``): Python's math module, which
    calls the C library as the compiled kernel does."""
    def one(f, *v):
        try:
            return f(*v)
        except OverflowError:
            return math.inf
        except ValueError:
            return math.nan

    if name == "exp":
        return np.array([one(math.exp, v) for v in a])
    if name == "pow":
        return np.array([one(math.pow, u, v) for u, v in zip(a, b, strict=True)])
    return np.array([one(math.log, v) for v in a])


def libm_differences(seed: int | str = 1, count: int = 40_000,
                     wasm: Path = WASM) -> dict[str, str]:
    """Each library function whose engine bits differ from the native library's on
    :func:`libm_arguments`, with how many and the first argument."""
    exe = engine.node()
    if exe is None:
        raise engine.EngineError("no 'node' on PATH")
    args = libm_arguments(seed, count)
    script = (
        "import { readFileSync, writeFileSync } from 'node:fs';"
        "const [wasm, op, input, output] = process.argv.slice(1);"
        "const { instance } = await WebAssembly.instantiate(readFileSync(wasm), {});"
        "const ex = instance.exports; const d = new Float64Array(readFileSync(input).buffer"
        ".slice(0)); const n = d.length / 2; const p = ex.live_alloc(32 * n);"
        "new Float64Array(ex.memory.buffer, p, 2 * n).set(d);"
        "ex.live_libm(Number(op), p, p + 8 * n, p, p + 16 * n, n);"
        "writeFileSync(output, new Float64Array(ex.memory.buffer, p + 16 * n, n).slice());")
    found = {}
    with tempfile.TemporaryDirectory(prefix="coexist-libm-") as tmp:
        for op, name in enumerate(LIBM):
            a, b = args[name]
            src, dst = Path(tmp) / "in.f64", Path(tmp) / "out.f64"
            np.concatenate([a, b]).astype("<f8").tofile(src)
            subprocess.run([exe, "--input-type=module", "-e", script, str(wasm), str(op),
                            str(src), str(dst)], check=True, capture_output=True, timeout=120)
            page = np.fromfile(dst, dtype="<f8")
            same = same_bits(_native(name, a, b), page)
            if not same.all():
                j = int(np.argmin(same))
                found[name] = (f"{int((~same).sum())} of {same.size} arguments, first "
                               f"{name}{(a[j], b[j]) if name == 'pow' else (a[j],)}")
    return found


def main() -> int:
    """Compare a seeded sample at the book's numerics and print each result as JSON."""
    import sys

    seed = sys.argv[1] if len(sys.argv) > 1 else "1"
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    for cfg in sample(seed, count):
        c = compare(cfg, BOOK_WARMUP_S)
        print(json.dumps({"what": c.what, "identical": not c.differences,
                          "differences": c.differences, "doubles": c.doubles,
                          "native_s": round(c.native_s, 3), "browser_s": round(c.browser_s, 3)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
