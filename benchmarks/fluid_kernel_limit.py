"""Benchmark: the fluid model's compiled kernel against a plain C loop over the same
equations, the physical limit of one core on this machine.

``fluid_kernel_limit.c`` is :func:`coexist.fluid.model.published.integrate` written out in C,
operation for operation, without the sampled traces (the C loop keeps only the metrics).
It is compiled with ``cc -O2 -ffp-contract=off`` (no fast-math, no fused multiply-add
but the two explicit ones of the kernel's cube), so it rounds as the compiled Python
kernel does. Both run the same mixes of the book's
equilibrium figures (10 flows, 100 Mbit/s, 40 ms, 2 BDP, 50 us steps) in this process,
one after the other; the script first requires both to give the same metrics (relative
difference at most ``RTOL``), then reports each one's flow-steps per second and their
ratio: the headroom left in the kernel itself. Both compute every flow; the last column is
the kernel as the book runs it, computing twin flows once (:func:`.published.copies`:
here the 5 CUBIC flows, and BBRv1's flows six apart), in flow-steps of the whole mix per
second. Usage::

    python benchmarks/fluid_kernel_limit.py [SECONDS]
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from coexist.fluid.model import published, solve
from coexist.fluid.studies import equilibria

HERE = Path(__file__).resolve().parent
RTOL = 1e-9
REPEATS = 3
#: the two BBR versions of the equilibrium figures, each half of 10 flows beside CUBIC
MIXES = {"5 CUBIC + 5 BBRv1": ("bbr1", False), "5 CUBIC + 5 BBRv2, RTprop expiry": ("bbr2", True)}


def config(variant: str, expiry: bool, duration_s: float) -> solve.Config:
    """The mix as the equilibrium searches build it (:mod:`coexist.fluid.studies.equilibria`)."""
    cfg, _ = equilibria.mix_config((5,), 10, [0.04], 2.0, 100e6, variant, duration_s, 5e-5,
                                   expiry, False, "published")
    return cfg


def compile_c(where: Path) -> Path:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        sys.exit("fluid_kernel_limit: no C compiler (apt-get install gcc)")
    exe = where / "kernel"
    subprocess.run([cc, "-O2", "-ffp-contract=off", "-o", str(exe),
                    str(HERE / "fluid_kernel_limit.c"), "-lm"], check=True)
    return exe


def run_c(exe: Path, a: dict) -> tuple[np.ndarray, np.ndarray, float]:
    n = len(a["cca"])
    def num(x) -> str:
        return repr(float(x))  # shortest text that reads back to the same double

    head = " ".join([str(n), str(a["n_steps"]), str(a["start"]),
                     *map(num, (a["h"], a["capacity"], a["buffer"])),
                     *(str(int(a[k])) for k in ("red", "expiry", "recovery"))]) + "\n"
    rows = "".join(" ".join([str(int(a["cca"][i])), *(num(a[k][i]) for k in (
        "d0", "dd", "w0", "x0_est", "w_hi0", "tstr0"))]) + "\n" for i in range(n))
    out = subprocess.run([str(exe)], input=head + rows, capture_output=True, text=True,
                         check=True).stdout.split()
    values = np.array([float(v) for v in out])
    return values[:5], values[5:5 + n], float(values[-1])


def run_numba(a: dict, twins: bool = False) -> tuple[np.ndarray, np.ndarray, float]:
    args = dict(a, every=a["n_steps"])  # one sample: the loop, not the traces
    if not twins:  # every flow computed, as the C loop does
        args["copy_of"] = np.arange(len(a["cca"]))
    t0 = time.perf_counter()
    _, _, metrics, rate_sum = published.integrate(**args)
    return metrics, rate_sum, time.perf_counter() - t0


def main() -> int:
    duration_s = float(sys.argv[1]) if len(sys.argv) > 1 else 20.0
    if not 1.0 <= duration_s <= 600.0:
        sys.exit(f"fluid_kernel_limit: SECONDS is {duration_s:g}; valid range 1-600")
    print(f"{duration_s:g} s simulated per run, best of {REPEATS}")
    print(f"{'mix':36s} {'kernel Mflow-steps/s':>21s} {'C loop':>8s} {'C / kernel':>11s} "
          f"{'kernel, twins once':>19s}")
    with tempfile.TemporaryDirectory() as tmp:
        exe = compile_c(Path(tmp))
        for label, (variant, expiry) in MIXES.items():
            a = solve.published_arguments(config(variant, expiry, duration_s), 1.0)
            if not (a["prt"] == 10000.0).all():  # the C loop has the published interval
                sys.exit("fluid_kernel_limit: the C loop runs the 10-s ProbeRTT interval only")
            run_numba(dict(a, n_steps=10, start=0))  # compile or load the machine code
            flow_steps = a["n_steps"] * len(a["cca"])
            fast = [run_numba(a) for _ in range(REPEATS)]
            slow = [run_c(exe, a) for _ in range(REPEATS)]
            shared = [run_numba(a, twins=True) for _ in range(REPEATS)]
            runs = [("the C loop", f, s) for f, s in zip(fast, slow, strict=True)]
            runs += [("the kernel with twins once", f, s)
                     for f, s in zip(fast, shared, strict=True)]
            for who, (m1, r1, _), (m2, r2, _) in runs:
                got, want = np.concatenate([m2, r2]), np.concatenate([m1, r1])
                worst = float(np.max(np.abs(got - want) / np.maximum(np.abs(want), 1e-300)))
                if worst > RTOL:
                    sys.exit(f"fluid_kernel_limit: {label}: {who} differs from the kernel "
                             f"by {worst:.2e} (relative), more than {RTOL:g}: not the same "
                             "equations")
            k_s = min(t for *_, t in fast)
            c_s = min(t for *_, t in slow)
            t_s = min(t for *_, t in shared)
            print(f"{label:36s} {flow_steps / k_s / 1e6:21.1f} {flow_steps / c_s / 1e6:8.1f} "
                  f"{k_s / c_s:11.2f} {flow_steps / t_s / 1e6:19.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
