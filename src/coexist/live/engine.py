"""The page's engine run from Python: ``kernel.wasm`` through the page's own JavaScript
(``engine.mjs``, by way of the worker's handler in ``worker.mjs``) under Node.

This is how the command line's ``--engine browser`` and CI reach the engine a reader's
browser runs: the same wasm bytes and the same JavaScript, with Node in place of the
browser, so a run here is the page's run. Its arguments are the native kernel's
(:func:`coexist.fluid.model.solve.published_arguments`: the published reading, BBRv2's seeded
period phases already in the period starts), sent as JSON (every double printed as the
shortest text that reads back to it); the results come back as raw doubles, so a
comparison with :func:`coexist.fluid.model.published.integrate` can ask for the same bits.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..analysis.fairness import jain
from ..core.params import ParameterError, invalid
from ..fluid.model import solve
from .wasm import WASM

HERE = Path(__file__).resolve().parent
RUNNER = HERE / "run_node.mjs"
#: the per-flow variables a run samples, in the kernel's order (engine.mjs's FIELDS)
FIELDS = ("x", "w", "tau", "xbtl", "xmax", "tmin", "mprt", "v", "xpcg", "mdwn", "mcrs", "whi")
#: what a trace needs for the metrics and the page's charts: rate, window, RTT
TRACE_FIELDS = ("x", "w", "tau")
#: the engine's range: steps from 10 us (its 10-s ring of RTprops per flow must fit a
#: browser's memory), runs up to 600 s, the published reading only
MIN_STEP_S = 1e-5
MAX_DURATION_S = 600.0
#: the most memory a run may take (engine.mjs's MAX_BYTES: wasm32's 4 GiB less the module)
MAX_BYTES = 4 * 2 ** 30 - 2 ** 26
#: the kernel's units to the trace's (simulate_published's scaling): ms -> s, per ms -> per s
SCALE = {"x": 1e3, "tau": 1e-3, "xbtl": 1e3, "xmax": 1e3, "tmin": 1e-3, "xpcg": 1e3}


class EngineError(RuntimeError):
    """The page's engine failed under Node (not a bad parameter: a bad build or no memory)."""


def node() -> str | None:
    """The ``node`` on PATH, or None."""
    return shutil.which("node")


def bytes_needed(a: dict, fields: tuple[str, ...] = TRACE_FIELDS) -> int:
    """The memory a run of kernel arguments ``a`` takes in the engine (engine.mjs's
    ``bytesNeeded``, the same estimate from above)."""
    n = len(a["cca"])
    h, steps = a["h"], a["n_steps"]
    any_bbr = bool((np.asarray(a["cca"]) >= 2).any())
    r_s = min(math.trunc((2 * max(a["dd"]) + a["buffer"] / a["capacity"] + 20) / h) + 3,
              steps + 1)
    r_t = min(math.trunc(3100 / h) + 3, steps + 1) if any_bbr else 1
    r_10 = min(math.trunc(max(a["prt"]) / h) + 3, steps + 1) if any_bbr else 1
    n_out = (steps - 1) // a["every"] + 1
    doubles = ((5 * r_s + r_t + r_10) * n + 4 * r_s + 40 * n + 5 + n
               + n_out * (len(fields) * n + 3))
    return 8 * doubles + 64 * 40


def check(cfg: solve.Config, fields: tuple[str, ...] = TRACE_FIELDS) -> solve.Config:
    """``cfg`` if the engine runs it, else one error naming the option, its value and the
    engine's range."""
    cfg.check()
    if cfg.reading != "published":
        raise invalid("reading", cfg.reading, "published (the page's engine runs the published "
                      "reading only)")
    if cfg.step_s < MIN_STEP_S * (1 - 1e-9):
        raise invalid("step_s", cfg.step_s, f"{MIN_STEP_S:g} s to 1e-3 s with the page's engine")
    if cfg.duration_s > MAX_DURATION_S:
        raise invalid("duration_s", cfg.duration_s,
                      f"at most {MAX_DURATION_S:g} s with the page's engine")
    unknown = [f for f in fields if f not in FIELDS]
    if unknown:
        raise invalid("fields", unknown[0], f"one of {', '.join(FIELDS)}")
    need = bytes_needed(solve.published_arguments(cfg), fields)
    if need > MAX_BYTES:
        raise invalid("flows", len(cfg.flows), f"a run needing at most {MAX_BYTES / 2 ** 30:.2f} "
                      f"GiB in the page's engine (this one needs {need / 2 ** 30:.2f} GiB: "
                      "fewer flows, a shorter run or a longer step)")
    return cfg


@dataclass
class Result:
    """One engine run in the kernel's units: the five metric sums, each flow's rate sum,
    the sampled per-flow fields (``traces[name]``, shape (n_out, n)), the link's q, pc and y
    (shape (3, n_out)), and the seconds the kernel's loop took under Node."""

    metrics: np.ndarray
    rate_sum: np.ndarray
    traces: dict[str, np.ndarray]
    link: np.ndarray
    seconds: float


def _error(stderr: str) -> str:
    """The line of Node's report that says what went wrong (its thrown error's)."""
    lines = stderr.strip().splitlines() or ["(no message)"]
    return next((ln for ln in lines if re.match(r"\w*Error\b", ln)), lines[-1])


def _plain(value):
    """A kernel argument as JSON takes it (NumPy arrays and scalars as Python's)."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value


def run_arguments(a: dict, fields: tuple[str, ...] = TRACE_FIELDS,
                  wasm: Path = WASM, timeout_s: float = 3600.0) -> Result:
    """Run the engine on the kernel arguments ``a`` (:func:`.solve.published_arguments`'s
    dict), sampling ``fields``; ``wasm`` another build of the kernel (a test's)."""
    exe = node()
    if exe is None:
        raise ParameterError("the page's engine runs under Node: no 'node' on PATH "
                             "(apt-get install nodejs)")
    n = len(a["cca"])
    args = {k: _plain(v) for k, v in a.items()}
    args["fields"] = list(fields)
    with tempfile.TemporaryDirectory(prefix="coexist-live-") as tmp:
        out = Path(tmp) / "result.f64"
        request = {"args": args, "out": str(out), "wasm": str(Path(wasm).resolve())}
        done = subprocess.run([exe, str(RUNNER)], input=json.dumps(request), text=True,
                              capture_output=True, timeout=timeout_s, check=False)
        if done.returncode != 0:
            raise EngineError(f"the page's engine failed under Node: {_error(done.stderr)}")
        head = json.loads(done.stdout)
        values = np.fromfile(out, dtype="<f8")
    n_out, got = head["n_out"], tuple(head["fields"])
    if values.size != 5 + n + (len(got) * n + 3) * n_out:
        raise EngineError(f"the page's engine wrote {values.size} numbers, not the "
                           f"{5 + n + (len(got) * n + 3) * n_out} of its layout")
    at = 5 + n
    traces = {}
    for f in got:
        traces[f] = values[at:at + n_out * n].reshape(n_out, n)
        at += n_out * n
    return Result(values[:5].copy(), values[5:5 + n].copy(), traces,
                  values[at:].reshape(3, n_out), float(head["seconds"]))


def setup_arguments(setup: dict) -> dict:
    """The kernel's arguments a page builds from its own inputs (setup.mjs's ``dumbbell``:
    ``ccas``, ``capacityBps``, ``rttsS`` or ``rttRange``, ``bufferBdp``, ``durationS``, ...),
    computed by the page's JavaScript under Node."""
    exe = node()
    if exe is None:
        raise ParameterError("the page's engine runs under Node: no 'node' on PATH "
                             "(apt-get install nodejs)")
    done = subprocess.run([exe, str(RUNNER)], input=json.dumps({"setup": setup}), text=True,
                          capture_output=True, timeout=120, check=False)
    if done.returncode != 0:
        raise EngineError(f"the page's set-up failed under Node: {_error(done.stderr)}")
    return json.loads(done.stdout)


def run(cfg: solve.Config, warmup_s: float = 0.0,
        fields: tuple[str, ...] = TRACE_FIELDS, wasm: Path = WASM) -> Result:
    """Run ``cfg`` (published reading) in the page's engine."""
    check(cfg, fields)
    return run_arguments(solve.published_arguments(cfg, warmup_s), fields, wasm)


def simulate(cfg: solve.Config, warmup_s: float = 0.0,
             fields: tuple[str, ...] = FIELDS) -> tuple[solve.Trace, dict]:
    """:func:`coexist.fluid.model.solve.simulate_published` with the page's engine in place of the
    native kernel: the sampled trace (the ``fields`` sampled; rate, window and RTT always)
    and the authors' metrics over ``t >= warmup_s``, computed from the engine's sums as
    simulate_published computes them from the kernel's."""
    fields = tuple(f for f in FIELDS if f in set(fields) | set(TRACE_FIELDS))
    a = solve.published_arguments(check(cfg, fields), warmup_s)
    r = run_arguments(a, fields)
    h, n_steps, start, every = a["h"], a["n_steps"], a["start"], a["every"]
    m, counted = r.metrics, n_steps - start
    jitter_n = len(range(start + int(1 / h), n_steps, int(1 / h)))
    rates = r.rate_sum / counted
    summary = {"avg_queue_pkts": m[0] / counted, "loss": m[1] / m[2] if m[2] > 0 else 0.0,
               "utilization": m[3] / counted, "jain": jain(rates),
               "jitter_ms": m[4] / jitter_n if jitter_n else float("nan"),
               "rates_pps": rates * 1e3}
    out = {f: v * SCALE[f] if f in SCALE else v for f, v in r.traces.items()}
    t = np.arange(r.link.shape[1]) * every * h / 1e3
    bbr = {name: out[f] for name, f in zip(solve.BBR_FIELDS, FIELDS[3:], strict=True)
           if f in out}
    trace = solve.Trace(cfg, t, out["x"], out["w"], out["tau"], r.link[0], r.link[1],
                        r.link[2] * 1e3, bbr)
    return trace, summary


#: closed_form.mjs's reports run_node.mjs answers
CLOSED_FORM_REPORTS = ("share", "nash", "twoFlow")


def closed_form(report: str, inputs: dict | list[dict], timeout_s: float = 600.0,
                runner: Path = RUNNER):
    """The page's closed form (closed_form.mjs) under Node: ``report`` ("share": the
    shares and per-flow rates of ``coexist model share``; "nash": eq. (25)'s crossings and
    the integer equilibria of ``coexist model nash``; "twoFlow": eqs. 18-20) of one input
    dict or of a list of them. Numbers come back as JSON's shortest round-trip digits, so
    each reads back to the double the JavaScript computed; NaN as None. ``runner`` another
    copy of run_node.mjs beside a changed closed_form.mjs (a test's)."""
    if report not in CLOSED_FORM_REPORTS:
        raise invalid("report", report, ", ".join(CLOSED_FORM_REPORTS))
    exe = node()
    if exe is None:
        raise ParameterError("the page's closed form runs under Node: no 'node' on PATH "
                             "(apt-get install nodejs)")
    request = {"closedForm": {"report": report, "inputs": inputs}}
    done = subprocess.run([exe, str(runner)], input=json.dumps(request), text=True,
                          capture_output=True, timeout=timeout_s, check=False)
    if done.returncode != 0:
        raise EngineError(f"the page's closed form failed under Node: {_error(done.stderr)}")
    return json.loads(done.stdout)
