"""Benchmark: what the "Your network" page asks of the engine, against the native kernel.

1. One mix as the page runs it by default (WhatIf's: 1 CUBIC + 1 BBRv1, 100 Mbit/s, 40 ms,
   2 BDP, 120 s at the book's 50-us step, the rate sampled as the equilibrium searches
   sample it): the native kernel (:func:`coexist.fluid.model.published.integrate`) and the
   engine (kernel.wasm under Node) on the same arguments, each loop alone, best of
   ``REPEATS``, and their ratio.
2. The page's Nash equilibrium for 10 flows: the 11 mixes of 120-s runs with a 30-s
   warm-up, built, run and scored by the page's own modules (setup.mjs, worker.mjs,
   fluid_share.mjs) in one Node process, as the page's worker runs them one after another;
   the wall time of the whole search.
Usage::

    python benchmarks/live_page.py [SECONDS]
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

from coexist.fluid.model import published, solve
from coexist.fluid.studies import equilibria
from coexist.live import engine, wasm

REPEATS = 3


def one_mix(duration_s: float) -> tuple[float, float]:
    """Best-of loop seconds of the default mix, native and in the engine."""
    cfg, _ = equilibria.mix_config((1,), 2, [0.04], 2.0, 100e6, "bbr1", duration_s, 5e-5,
                                   False, False, "published")
    a = solve.published_arguments(cfg, 30.0 if duration_s > 30.0 else 0.0)
    published.integrate(**dict(a, n_steps=2, start=0))  # compile or load the machine code
    native = []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        published.integrate(**a)
        native.append(time.perf_counter() - t0)
    page = [engine.run_arguments(a, ("x",)).seconds for _ in range(REPEATS)]
    return min(native), min(page)


SEARCH = """
import {{ handle }} from "{worker}";
import * as fs from "{share}";
import {{ dumbbell }} from "{setup}";
const t0 = performance.now();
const table = [];
for (let k = 0; k <= 10; k++) {{
  const setup = fs.mixSetup({{ n: 10, k, variant: "bbr1", capacityBps: 100e6, rttLoS: 0.04,
    rttHiS: 0.04, bufferBdp: 2, durationS: {duration}, warmupS: {warmup}, stepS: 5e-5,
    aqm: "droptail", rtpropExpiry: false }});
  const args = dumbbell(setup);
  const r = await handle({{ args, wasm: new URL("{wasm}") }});
  const good = fs.goodput(r, args, {warmup});
  table.push({{ share: fs.bbrShare(good, setup.ccas), cubic: fs.perFlow(good, setup.ccas, true),
    bbr: fs.perFlow(good, setup.ccas, false) }});
}}
process.stdout.write(JSON.stringify({{ seconds: (performance.now() - t0) / 1e3,
  equilibria: fs.equilibria(table) }}));
"""


def search(duration_s: float) -> dict:
    """The page's 10-flow equilibrium search under Node: its wall seconds and equilibria."""
    code = SEARCH.format(worker=(wasm.HERE / "worker.mjs").as_uri(),
                         share=(wasm.HERE / "fluid_share.mjs").as_uri(),
                         setup=(wasm.HERE / "setup.mjs").as_uri(), wasm=wasm.WASM.as_uri(),
                         duration=duration_s, warmup=duration_s / 4)
    done = subprocess.run([engine.node(), "--input-type=module", "-e", code],
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def main() -> int:
    duration_s = float(sys.argv[1]) if len(sys.argv) > 1 else 120.0
    if not 2.0 <= duration_s <= 600.0:
        sys.exit(f"live_page: SECONDS is {duration_s:g}; valid range 2-600")
    if engine.node() is None:
        sys.exit("live_page: no 'node' on PATH (apt-get install nodejs)")
    native, page = one_mix(duration_s)
    print(f"1 CUBIC + 1 BBRv1, {duration_s:g} s at 50 us, best of {REPEATS}: native "
          f"{native:.3f} s, engine {page:.3f} s, engine / native {page / native:.2f}")
    found = search(duration_s)
    print(f"10 flows, 11 mixes of {duration_s:g} s (warm-up {duration_s / 4:g} s) in the "
          f"page's modules under Node: {found['seconds']:.1f} s; equilibria "
          f"{found['equilibria']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
