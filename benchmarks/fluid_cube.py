"""Benchmark: CUBIC's cube in the published kernel, against the C library's pow.

Eq. (40) takes one cube per CUBIC flow and step. With ``f ** 3.0`` the library's pow was
about half of a CUBIC flow-step; the kernel now forms the cube exactly (two fused
multiply-adds) and calls pow only near a rounding midpoint, with the same bits
(``tests/fluid/test_published.py``). This times both over arguments like a run's, in this
process, and prints the ratio and the share of arguments that still call pow.

    python benchmarks/fluid_cube.py
"""

from __future__ import annotations

import time

import numba
import numpy as np

from coexist.fluid.model import published


@numba.njit
def _with_pow(xs):
    s = 0.0
    for x in xs:
        s += x ** 3.0
    return s


@numba.njit
def _with_cube(xs):
    s = 0.0
    for x in xs:
        s += published._cube(x)
    return s


@numba.njit
def _near_midpoint(xs):
    """Arguments for which the kernel's cube falls back to pow."""
    n = 0
    for x in xs:
        if not published._cube_rounded(x)[1]:
            n += 1
    return n


def best(fn, xs, repeats: int = 5) -> float:
    fn(xs[:10])
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn(xs)
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    xs = np.random.default_rng(1).uniform(-5.0, 5.0, 10_000_000)
    assert _with_pow(xs) == _with_cube(xs)
    t_pow, t_cube = best(_with_pow, xs), best(_with_cube, xs)
    print(f"pow(x, 3.0): {t_pow / xs.size * 1e9:.1f} ns per cube")
    print(f"kernel cube: {t_cube / xs.size * 1e9:.1f} ns per cube "
          f"({t_pow / t_cube:.2f}x faster, best of 5)")
    print(f"arguments that call pow: {_near_midpoint(xs) / xs.size:.1%}")


if __name__ == "__main__":
    main()
