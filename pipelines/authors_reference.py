"""Reference outputs of the authors' own fluid model (Scherrer et al., IMC 2022).

Runs the public code of the paper (repository ``simonschdev/imc22-bbr-fluid-model``) on a
fixed grid of configurations, unchanged, through its own entry points
(``fluid_model.helpers.get_environment``, ``fluid_model.compute_trace.generate_trace`` and
``fluid_model.process_trace.analyze_trace``), and writes what it computed to
``data/reference/``:

- ``authors_fluid_runs.csv``: one row per configuration: the configuration as the authors'
  code reads it (senders, CCAs, capacity, link latency, source-latency range, buffer in their
  unit and in packets, AQM, step, simulated span, warm-up) and their metrics (mean queue,
  Jain index, loss, utilisation, jitter), plus the wall time of the run;
- ``authors_fluid_flows.csv``: one row per flow: its CCA, source latency and RTT as drawn by
  ``get_environment`` (seeded), and its mean sending rate and share after the warm-up;
- ``authors_fluid_traces/<run>.csv.gz``: queue and per-flow rates averaged over 10 ms;
- ``authors_fluid.json``: provenance (commit, interpreter, command, host, date per run).

The code is not in this project (it carries no licence file); pass the path of a local
copy. Each configuration runs in its own process (their code keeps its whole trace in
memory); finished configurations are kept under ``--work`` and never run again, so an
interrupted grid resumes where it stopped. Under PyPy their code runs about ten times
faster than under CPython; ``--python`` picks the interpreter (it needs numpy, pyyaml and
matplotlib, which their modules import).

    python pipelines/authors_reference.py --code /path/to/imc22-bbr-fluid-model \\
        --python /path/to/pypy3 --jobs 2
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import io
import json
import math
import os
import platform
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "data" / "reference"
MSS = 1514  # the authors' packet size, bytes (fluid_model/helpers.py)
TRACE_MS = 10.0  # trace resolution written to data/reference

TEN = ("CUBIC+BBR", "RENO+BBR", "BBR", "BBR2", "CUBIC+BBR2", "RENO+BBR2", "CUBIC", "RENO")
#: The paper's two RTT ranges (its validation configs): link latency and source-latency range
#: in ms, RTT = 2 (link + source latency): 30-40 ms and 15-20 ms.
RANGES = {"long": (10.0, (5.0, 10.0)), "short": (5.0, (2.5, 5.0))}


def grid() -> list[dict]:
    """The configurations, each a dict the worker turns into the authors' ``cmb``/``cfg``."""
    runs = []
    for rng, (dl, slr) in RANGES.items():
        for aqm, buffers in (("Drop-tail", (1.0, 3.0, 5.0, 7.0)), ("RED", (1.0, 3.0, 7.0))):
            for ccas in TEN:
                for b in buffers:
                    runs.append({"group": "ten_senders", "senders": 10, "ccas": ccas.split("+"),
                                 "capacity_mbps": 100.0, "link_latency_ms": dl,
                                 "slr_ms": list(slr), "buffer": b, "aqm": aqm,
                                 "duration_s": 9.0, "warmup_s": 4.0,
                                 "id": f"ten-{rng}-{aqm.lower()}-{ccas.lower()}-b{b:g}"})
    # two flows (CUBIC vs BBRv1) and a lone CUBIC at RTT R ms: their code needs a source
    # latency of at least one step (it reads the rate d0 ago), so 1 ms of source latency and
    # a link latency of R/2 - 1 ms. Their buffer unit is then ceil(C (R/2 - 1 ms) / MSS)
    # packets; b is chosen so that int(b x unit) is the buffer of m BDPs of R, rounded
    for rtt in (5.0, 40.0, 80.0):
        for bdp in (2.0, 5.0):
            runs.append(_path_spec("two_flows", ["CUBIC", "BBR"], rtt, bdp, 60.0, 10.0,
                                   f"two-{rtt:g}ms-{bdp:g}bdp"))
    for rtt in (40.0, 80.0):
        runs.append(_path_spec("cubic_alone", ["CUBIC"], rtt, 2.0, 30.0, 10.0,
                               f"alone-cubic-{rtt:g}ms-2bdp"))
    return runs


def _path_spec(group: str, ccas: list[str], rtt_ms: float, bdp: float, duration_s: float,
               warmup_s: float, run_id: str) -> dict:
    capacity_mbps, d0 = 100.0, 1.0
    link = rtt_ms / 2 - d0
    unit = math.ceil(capacity_mbps / 8 * 1e6 * link / 1000 / MSS)
    target = round(bdp * capacity_mbps * 1e6 / (MSS * 8) * rtt_ms / 1000)
    return {"group": group, "senders": len(ccas), "ccas": ccas, "capacity_mbps": capacity_mbps,
            "link_latency_ms": link, "slr_ms": [d0, d0], "buffer": (target + 0.5) / unit,
            "aqm": "Drop-tail", "duration_s": duration_s, "warmup_s": warmup_s, "id": run_id}


# --------------------------------------------------------------------------------------------
# worker: runs in the chosen interpreter, imports only the authors' code (Python >= 3.9)

def worker(code: str, spec: dict, out: str, step_ms: float) -> None:
    sys.path.insert(0, code)
    os.environ.setdefault("MPLBACKEND", "Agg")
    from fluid_model import names as nm
    from fluid_model.compute_trace import generate_trace
    from fluid_model.helpers import get_environment
    from fluid_model.process_trace import analyze_trace

    cmb = {nm.N: spec["senders"], nm.C: spec["capacity_mbps"], nm.B: spec["buffer"],
           nm.CC: list(spec["ccas"]), nm.DL: spec["link_latency_ms"],
           nm.SLR: list(spec["slr_ms"]), nm.AQM: spec["aqm"]}
    # what fluid_model.helpers.parse_config builds from a YAML config
    cfg = {nm.vary: [cmb], nm.stp: step_ms,
           nm.T: int(spec["duration_s"] * 1000 / step_ms),
           nm.start: int(spec["warmup_s"] * 1000 / step_ms)}
    cfg[nm.end] = cfg[nm.T]
    t0 = time.time()
    with contextlib.redirect_stdout(io.StringIO()):  # their per-second progress prints
        env = get_environment(cmb)
        state = generate_trace(cfg, cmb, env)
    wall = time.time() - t0
    metrics = analyze_trace(cfg, env, state, "")
    lo, hi = cfg[nm.start], cfg[nm.end]
    n = env[nm.N]
    to_mbps = MSS * 8 * 1000 / 1e6  # packets per ms -> Mbit/s
    rates = [sum(state[nm.x][i][lo:hi]) / (hi - lo) for i in range(n)]
    total = sum(rates)
    flows = [{"flow": i, "cca": env[nm.CC][i], "d0_ms": env[nm.D0][i], "rtt_ms": env[nm.D][i],
              "mean_rate_mbps": rates[i] * to_mbps, "share": rates[i] / total if total else 0.0}
             for i in range(n)]
    every = int(round(TRACE_MS / step_ms))
    rows = []
    for k in range(0, cfg[nm.T] - every + 1, every):
        row = [k * step_ms / 1000, sum(state[nm.q][k:k + every]) / every]
        row += [sum(state[nm.x][i][k:k + every]) / every * to_mbps for i in range(n)]
        rows.append(row)
    record = {"spec": spec, "step_ms": step_ms, "buffer_pkts": env[nm.B],
              "capacity_pkts_per_ms": env[nm.C], "ccas_per_flow": env[nm.CC],
              "avg_queue_pkts": float(metrics["avg_queue"]),
              "jain": float(metrics["jain_fairness_index"]), "loss": float(metrics["loss"]),
              "utilization": float(metrics["utilization"]),
              "jitter_ms": float(metrics["avg_jitter"]), "flows": flows, "wall_s": wall,
              "python": sys.version.split()[0] + " " + platform.python_implementation(),
              "trace_columns": ["t_s", "q_pkts"] + [f"x{i}_mbps" for i in range(n)],
              "trace": rows, "time_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(record, f)
    os.replace(tmp, out)


# --------------------------------------------------------------------------------------------
# driver

def _commit(code: Path) -> str:
    return subprocess.run(["git", "-C", str(code), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()


def _run_one(python: str, code: Path, spec: dict, work: Path, step_ms: float) -> dict:
    out = work / f"{spec['id']}.json"
    if not out.exists():
        cmd = [python, str(Path(__file__).resolve()), "--worker", json.dumps(spec),
               "--code", str(code), "--step-ms", repr(step_ms), "--worker-out", str(out)]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"configuration {spec['id']} failed:\n{done.stderr[-2000:]}")
    return json.loads(out.read_text())


def cross_check(python: str, code: Path, spec: dict, work: Path, step_ms: float,
                record: dict) -> dict:
    """Run one configuration again under another interpreter and say whether every number
    it computed (metrics, per-flow rates, trace) is the same."""
    other = _run_one(python, code, spec, work / "cross", step_ms)
    same = all(other[k] == record[k] for k in ("avg_queue_pkts", "jain", "loss",
                                               "utilization", "jitter_ms", "flows", "trace"))
    return {"run": spec["id"], "python": other["python"], "identical": same,
            "wall_s": round(other["wall_s"], 1)}


def assemble(records: list[dict], commit: str, command: str, out: Path,
             checks: list[dict] | None = None) -> None:
    """Write the tidy tables, the traces and the provenance from the finished records."""
    import pandas as pd

    out.mkdir(parents=True, exist_ok=True)
    runs, flows, prov = [], [], []
    traces = out / "authors_fluid_traces"
    traces.mkdir(exist_ok=True)
    for r in sorted(records, key=lambda r: r["spec"]["id"]):
        s = r["spec"]
        runs.append({"run": s["id"], "group": s["group"], "senders": s["senders"],
                     "ccas": "+".join(s["ccas"]), "capacity_mbps": s["capacity_mbps"],
                     "link_latency_ms": s["link_latency_ms"], "source_latency_min_ms":
                     s["slr_ms"][0], "source_latency_max_ms": s["slr_ms"][1],
                     "buffer_unit": s["buffer"], "buffer_pkts": r["buffer_pkts"],
                     "aqm": s["aqm"], "step_ms": r["step_ms"], "duration_s": s["duration_s"],
                     "warmup_s": s["warmup_s"], "avg_queue_pkts": r["avg_queue_pkts"],
                     "jain": r["jain"], "loss": r["loss"], "utilization": r["utilization"],
                     "jitter_ms": r["jitter_ms"], "wall_s": round(r["wall_s"], 1)})
        flows += [{"run": s["id"], **f} for f in r["flows"]]
        df = pd.DataFrame(r["trace"], columns=r["trace_columns"])
        with gzip.GzipFile(traces / f"{s['id']}.csv.gz", "wb", mtime=0) as g:
            g.write(df.to_csv(index=False, float_format="%.6g").encode())
        prov.append({"run": s["id"], "python": r["python"], "time_utc": r["time_utc"],
                     "wall_s": round(r["wall_s"], 1)})
    pd.DataFrame(runs).to_csv(out / "authors_fluid_runs.csv", index=False, float_format="%.10g")
    pd.DataFrame(flows).to_csv(out / "authors_fluid_flows.csv", index=False,
                               float_format="%.10g")
    meta = {"source": "https://github.com/simonschdev/imc22-bbr-fluid-model",
            "commit": commit, "paper": "Scherrer, Legner, Perrig, Schmid, Model-Based Insights "
            "on the Performance, Fairness, and Stability of BBR, IMC 2022",
            "entry_points": ["fluid_model.helpers.get_environment",
                             "fluid_model.compute_trace.generate_trace",
                             "fluid_model.process_trace.analyze_trace"],
            "command": command, "host": {"cpu": _cpu(), "kernel": platform.release()},
            "units": {"avg_queue_pkts": "packets of 1514 B", "jitter_ms": "ms",
                      "mean_rate_mbps": "Mbit/s (1514-B packets)",
                      "trace": f"{TRACE_MS:g}-ms means"},
            "interpreter_cross_checks": checks or [], "runs": prov}
    (out / "authors_fluid.json").write_text(json.dumps(meta, indent=1) + "\n")


def _cpu() -> str:
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--code", required=True, help="path of a local copy of the authors' code")
    ap.add_argument("--python", default=sys.executable, help="interpreter for their code")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--step-ms", type=float, default=0.01, help="their step, ms (paper: 0.01)")
    ap.add_argument("--work", default=str(OUT / ".authors_work"),
                    help="where finished configurations are kept (resumable)")
    ap.add_argument("--only", default="", help="run only ids containing this text")
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--cross-check", nargs=2, metavar=("PYTHON", "RUN"), action="append",
                    default=[], help="also run RUN under PYTHON and record whether it gives "
                                     "the same numbers (repeatable)")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--worker-out", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.worker:
        worker(a.code, json.loads(a.worker), a.worker_out, a.step_ms)
        return 0
    code = Path(a.code)
    if not (code / "fluid_model" / "compute_trace.py").is_file():
        print(f"error: parameter 'code' = {a.code!r} is not a copy of the authors' code "
              "(no fluid_model/compute_trace.py)", file=sys.stderr)
        return 2
    if not 1 <= a.jobs <= 64:
        print(f"error: parameter 'jobs' = {a.jobs} out of range 1..64", file=sys.stderr)
        return 2
    if not (0 < a.step_ms <= 1 and math.isclose(1 / a.step_ms, round(1 / a.step_ms))):
        print(f"error: parameter 'step_ms' = {a.step_ms} must divide 1 ms (e.g. 0.01)",
              file=sys.stderr)
        return 2
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    specs = [s for s in grid() if a.only in s["id"]]
    from tqdm import tqdm

    records = []
    with ThreadPoolExecutor(a.jobs) as pool, tqdm(total=len(specs), unit="run") as bar:
        futures = {pool.submit(_run_one, a.python, code, s, work, a.step_ms): s for s in specs}
        for fut in as_completed(futures):
            records.append(fut.result())
            bar.set_postfix_str(futures[fut]["id"])
            bar.update()
    if not a.only:
        by_id = {r["spec"]["id"]: r for r in records}
        checks = []
        for python, run in a.cross_check:
            if run not in by_id:
                print(f"error: parameter 'cross-check' run {run!r} is not in the grid",
                      file=sys.stderr)
                return 2
            checks.append(cross_check(python, code, by_id[run]["spec"], work, a.step_ms,
                                      by_id[run]))
        command = ("python pipelines/authors_reference.py --code COPY --python PYTHON "
                   f"--step-ms {a.step_ms:g}"
                   + "".join(f" --cross-check PYTHON2 {run}" for _, run in a.cross_check))
        assemble(records, _commit(code), command, Path(a.out), checks)
    return 0


if __name__ == "__main__":
    sys.exit(main())
