"""Campaigns: grids of experiments (:mod:`.campaign_file`), run resumably, stored atomically
run by run.

Every point x repeat has a stable key; a key with a valid
run directory is done and never re-run. Runs that fail a validity gate are moved to
``_invalid/`` (counted in the book) and re-run up to ``max_attempts`` times; an invalid run
that the hypervisor explains (steal, or a stall the in-run sleepers saw:
:func:`coexist.data.gates.disturbed`) is re-run without counting, until the invalid runs of a point
have taken ``DISTURBED_FACTOR x max_attempts`` runs' worth of wall time (a run stopped
early counts for what it took, set-up included). That time cap
counts every stored attempt; ``run(..., again=True)`` gives every point a fresh time budget
for that call, so a point given up only under steal is tried again on a quieter day, while
a point with ``max_attempts`` undisturbed invalid runs stays given up.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from .. import data
from ..core import files
from ..core.params import ParameterError
from ..data import datapackage, gates
from . import spec
from .campaign_file import OVERHEAD_S, Campaign, Point, load
from .topology import TestbedError

__all__ = ["OVERHEAD_S", "Campaign", "Point", "load"]


MAX_HARNESS_ERRORS = 3  # runs in a row the harness could not finish before a campaign stops

#: A point's invalid runs, disturbed or not, may take at most this many times max_attempts
#: runs' worth of wall time (a run stopped early counts for what it took, set-up included).
DISTURBED_FACTOR = 3


@dataclass(frozen=True)
class Status:
    planned: int
    done: list[str]
    attempts: dict[str, int]   # key -> invalid runs so far
    left: list[str]            # still to run (not done, attempts remain)
    failed: list[str]          # gave up: max_attempts undisturbed invalid runs, or time cap
    est_left_s: float
    disturbed: dict[str, int] = field(default_factory=dict)  # of attempts: steal explains them
    invalid_length: float = 1.0  # mean share of a full run's wall time an invalid run took
    used: dict[str, float] = field(default_factory=dict)  # key -> runs' worth its invalid runs took
    capped: list[str] = field(default_factory=list)  # of failed: at the time cap only

    @property
    def invalid_rate(self) -> float | None:
        """The share of this campaign's stored runs that were invalid (None before any)."""
        invalid = sum(self.attempts.values())
        total = invalid + len(self.done)
        return invalid / total if total else None

    @property
    def est_with_reruns_s(self) -> float | None:
        """``est_left_s`` scaled by what each valid run has cost so far: itself plus
        rate / (1 - rate) invalid runs of ``invalid_length`` each (a run stopped early
        costs only part of a full run's time); None while no run is stored or none was valid."""
        rate = self.invalid_rate
        if rate is None or rate >= 1:
            return None
        return self.est_left_s * (1 + self.invalid_length * rate / (1 - rate))


def _time_share(summary: dict) -> float:
    """The share of a full run's wall time an invalid run took: 1, or for a run stopped
    early (at_s + OVERHEAD_S) / (duration + OVERHEAD_S), because set-up and teardown cost
    the same however soon the run stops. A run stopped at once still costs OVERHEAD_S, so
    the hard cap bounds the number of runs, not only their time."""
    stopped = summary.get("stopped_early")
    if not stopped:
        return 1.0
    return min(1.0, (stopped["at_s"] + OVERHEAD_S)
               / (summary["params"]["duration_s"] + OVERHEAD_S))


def line(p: Point) -> tuple:
    """The line a point belongs to: every setting but which CCA each flow runs. A figure
    or an equilibrium reads a whole line (every CUBIC/BBR split of a setting), so runs
    that complete a line are worth more than runs that start another."""
    e = p.exp
    return (p.repeat, p.load, e.capacity_bps, e.rtt_s, e.buffer_bdp,
            tuple(sorted(f.rtt_s for f in e.flows)), e.duration_s, e.warmup_s,
            e.interval_s, e.sample_s)


def status(c: Campaign, data_dir: Path = data.DATA,
           budget_from: dict[str, float] | None = None) -> Status:
    """Done, invalid and left runs of a campaign, from its run directories.

    With ``budget_from`` (key -> runs' worth already used, as in ``Status.used``), the time
    cap counts only the invalid runs' time beyond it: a fresh budget (``run(again=True)``).

    ``left`` is in the order runs are made: every point's first repeat before any second
    one; within a repeat, points of the lines (:func:`line`) with the fewest runs missing
    first; then grid order. A campaign cut short thus leaves whole lines, and on the next
    pass over the points left (:func:`run`), a point that failed on a line otherwise done
    is tried again before the lines not yet begun."""
    root = c.run_dir(data_dir)
    done = {p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))
            and (p / "summary.json").exists()} if root.exists() else set()
    for name in done:  # a stored run counts only with a whole summary that says it is valid
        if not data.read_summary(root / name / "summary.json")["valid"]:
            raise data.DataError(f"{root / name / 'summary.json'}: an invalid run stored "
                                 "among the valid ones (invalid runs belong in _invalid/)")
    attempts: dict[str, int] = {}
    disturbed: dict[str, int] = {}
    regated: dict[str, int] = {}
    lengths: list[float] = []  # share of a full run's wall time each invalid run took
    used: dict[str, float] = {}
    inv = root / "_invalid"
    if inv.exists():
        for p in inv.iterdir():
            if p.is_dir() and not p.name.startswith("."):
                key = p.name.rsplit(".", 1)[0]
                attempts[key] = attempts.get(key, 0) + 1
                summary = p / "summary.json"
                s = data.read_summary(summary) if summary.exists() else {}
                if s.get("regated"):  # valid when measured, failed a later gate (regate):
                    regated[key] = regated.get(key, 0) + 1  # it costs the point no budget,
                    lengths.append(1.0)  # but it ran its whole length, as a run will that
                    continue  # fails the gate now
                if s and gates.disturbed(s):
                    disturbed[key] = disturbed.get(key, 0) + 1
                lengths.append(_time_share(s))
                used[key] = used.get(key, 0.0) + lengths[-1]
    keys = [p.key for p in c.points]
    unknown = sorted(done - set(keys))
    if unknown:
        raise data.DataError(f"{root}: run directories not in the campaign grid: {unknown[:5]}")
    # first repeats of every point first: a campaign cut short still covers the whole grid;
    # within a repeat, the lines nearest completion first (figures need whole lines)
    missing: dict[tuple, int] = {}
    for p in c.points:
        missing[line(p)] = missing.get(line(p), 0) + (p.key not in done)
    order = sorted(range(len(keys)), key=lambda i: (c.points[i].repeat,
                                                    missing[line(c.points[i])], i))

    before = budget_from or {}

    def undisturbed_out(k: str) -> bool:
        return (attempts.get(k, 0) - disturbed.get(k, 0) - regated.get(k, 0)
                >= c.max_attempts)

    def time_out(k: str) -> bool:
        return (used.get(k, 0.0) - before.get(k, 0.0)
                >= DISTURBED_FACTOR * c.max_attempts - 1e-9)

    left = [keys[i] for i in order if keys[i] not in done
            and not undisturbed_out(keys[i]) and not time_out(keys[i])]
    failed = [k for k in keys if k not in done and (undisturbed_out(k) or time_out(k))]
    per = {p.key: p.exp.duration_s + OVERHEAD_S for p in c.points}
    return Status(len(keys), [k for k in keys if k in done], attempts, left, failed,
                  sum(per[k] for k in left), disturbed,
                  sum(lengths) / len(lengths) if lengths else 1.0, used,
                  [k for k in failed if not undisturbed_out(k)])


def _remove_partials(root: Path) -> list[Path]:
    """Hidden half-written directories from a killed run: never data, always removed."""
    found = [p for p in root.rglob(".*") if ".partial-" in p.name] if root.exists() else []
    for p in found:
        shutil.rmtree(p, ignore_errors=True) if p.is_dir() else p.unlink(missing_ok=True)
    return found


def _execute(exp: spec.Experiment, min_utilisation: float, load_kind: str = "none"):
    """Run one experiment where this function is called (locally or on a Dask worker),
    under the point's deliberate background load, after a timer wake-up probe of the host
    (:mod:`.wakeups`; recorded, not gated on)."""
    from . import experiment, load, wakeups

    wake = wakeups.probe()
    with load.background(load_kind, exp):
        result = experiment.run(exp, progress=False,
                                th=gates.Thresholds(utilisation_min=min_utilisation))
    result.summary["load"] = load_kind
    result.summary["wake_probe"] = wake
    return result


def _store(c: Campaign, point: Point, result, data_dir: Path,
           host: dict | None = None) -> bool:
    from . import experiment

    root = c.run_dir(data_dir)
    result.summary["campaign"] = {"name": c.name, "key": point.key, "repeat": point.repeat,
                                  **(host or {})}
    if result.valid:
        experiment.write(result, root, point.key)
    else:
        # a run stopped early that failed timing gates only covers a few seconds that no
        # figure may use: its summary (gate values, steal, provenance) is its record. One
        # that failed any other gate keeps its time series, to show what went wrong.
        brief = bool(result.summary.get("stopped_early")) and gates.timing_only(result.summary)
        experiment.write(result, root / "_invalid", f"{point.key}.{result.summary['run_id']}",
                         tables=not brief)
    return result.valid


def run(c: Campaign, data_dir: Path = data.DATA, *, scheduler: str | None = None,
        progress: bool = True, limit: int | None = None, steal_limit_pct: float | None = None,
        steal_max_wait_s: float = 600.0, again: bool = False,
        points: Sequence[str] | None = None) -> Status:
    """Execute the runs still missing (at most ``limit``), then refresh the campaign table
    and the datapackage. With ``scheduler``, runs go to a Dask cluster, one per worker.

    With ``points`` (run keys of the campaign), only those points are run, in the order
    given (with ``scheduler``, the order they are submitted in): the one run that a page
    waits for can be measured before the rest of the grid. A key the campaign does not have
    fails before anything runs (:func:`check_points`); a named point stored or given up
    already is not run (:func:`points_not_run` says which).

    With ``again``, every point's invalid runs get a fresh time cap for this call (the
    runs' worth they had used when it started no longer counts), so points given up only at
    the time cap are run again; points with ``max_attempts`` undisturbed invalid runs are
    not. The returned status counts the cap the same way.

    With ``steal_limit_pct``, a local run starts only once the hypervisor's steal over 5 s
    is at most that % of the CPU time, or after ``steal_max_wait_s`` of waiting
    (:mod:`.steal`), and the steal measured and the wait are stored with the run
    (``summary["campaign"]``). None (the default) never waits: on our VM, the runs that
    had waited were still valid only a quarter of the time, and the waiting cost about
    half as much time as the runs themselves (appendix).

    A run the harness cannot finish (:class:`TestbedError`, its testbed already torn down)
    is reported on stderr and not stored; its point stays left. ``MAX_HARNESS_ERRORS`` such
    runs in a row stop the campaign with that error."""
    from ..core.progress import tqdm
    from . import steal, topology

    if steal_limit_pct is not None:  # bad limits fail now, not after the first run
        steal.check_limits(steal_limit_pct, steal_max_wait_s)
    if points is not None:
        points = check_points(c, points)

    topology.clean()  # namespaces of a killed earlier run (live runs are left alone)
    _remove_partials(c.run_dir(data_dir))
    by_key = {p.key: p for p in c.points}
    budget_from = dict(status(c, data_dir).used) if again else None
    bar = tqdm(total=0, disable=not progress, unit="run", desc=c.name)
    executed = 0
    harness_errors = 0  # in a row
    try:
        while True:  # an invalid run comes back as "left" until max_attempts is reached
            todo = status(c, data_dir, budget_from).left
            if points is not None:
                todo = [k for k in points if k in todo]
            if limit is not None:
                todo = todo[:max(0, limit - executed)]
            if not todo:
                break
            bar.total = executed + len(todo)
            bar.refresh()
            if scheduler is None:
                for key in todo:
                    p = by_key[key]
                    bar.set_postfix_str(key)
                    before = None
                    if steal_limit_pct is not None:
                        waited, pct = steal.wait_for_quiet(
                            steal_limit_pct, max_wait_s=steal_max_wait_s,
                            on_wait=lambda pct, w, key=key: bar.set_postfix_str(
                                f"{key}: waiting {w:.0f} s, hypervisor steal {pct:.1f} % "
                                f"> {steal_limit_pct:g} %"))
                        before = {"steal_before_pct": None if pct is None else round(pct, 2),
                                  "waited_for_quiet_s": waited}
                        bar.set_postfix_str(key)
                    try:
                        result = _execute(p.exp, p.min_utilisation, p.load)
                    except TestbedError as exc:
                        # one run the harness could not finish (its testbed is already torn
                        # down); the point stays left. Several in a row are not transient.
                        harness_errors += 1
                        print(f"{c.name}: {key}: run not stored, harness error "
                              f"({harness_errors} in a row): {exc}", file=sys.stderr)
                        if harness_errors >= MAX_HARNESS_ERRORS:
                            raise
                        continue
                    harness_errors = 0
                    _store(c, p, result, data_dir, before)
                    refresh(c, data_dir)
                    bar.update()
            else:
                _run_dask(c, [by_key[k] for k in todo], data_dir, scheduler, bar)
            executed += len(todo)
    finally:
        bar.close()
    return status(c, data_dir, budget_from)


def check_points(c: Campaign, points: Sequence[str]) -> list[str]:
    """The named point keys, each once, in the order first given; a key that is not in
    the campaign's grid is refused in one line (a bare string too: it is one key, not a
    sequence of keys)."""
    if isinstance(points, str):
        raise ParameterError(f"points = {points!r}: a list of run keys, not one string")
    keys = [p.key for p in c.points]
    for key in points:
        if key not in keys:
            shown = ", ".join(keys[:4]) + (f", ... ({len(keys)} in all)" if len(keys) > 4
                                           else "")
            raise ParameterError(f"point = {key!r} is not a run of campaign {c.name!r}; "
                                 f"valid: its grid's run keys, e.g. {shown}")
    return list(dict.fromkeys(points))


def points_not_run(c: Campaign, points: Sequence[str], st: Status,
                   again: bool = False) -> list[tuple[str, str]]:
    """(key, why) for each named point that a ``run(points=...)`` call will not run, given
    the campaign's :func:`status` ``st``: it is stored already, or it has been given up
    (after ``max_attempts`` undisturbed invalid runs, or at the time cap, which ``again``
    lifts)."""
    out = []
    for key in check_points(c, points):
        if key in st.done:
            out.append((key, "already stored"))
        elif key in st.failed and not (again and key in st.capped):
            out.append((key, "given up at the time cap ('campaign run --again' gives it a "
                        "fresh budget)" if key in st.capped else
                        f"given up after {c.max_attempts} undisturbed invalid runs"))
    return out


def _run_dask(c: Campaign, points: list[Point], data_dir: Path, scheduler: str, bar) -> None:
    from distributed import Client, as_completed

    with Client(scheduler) as client:
        futures = {client.submit(_execute, p.exp, p.min_utilisation, p.load,
                                 key=f"{c.name}-{p.key}", pure=False): p for p in points}
        for fut in as_completed(futures):
            p = futures[fut]
            _store(c, p, fut.result(), data_dir)
            refresh(c, data_dir)
            bar.update()


def iter_runs(c: Campaign, data_dir: Path = data.DATA) -> Iterator[tuple[Point, Path]]:
    """Valid run directories of the campaign, in grid order."""
    root = c.run_dir(data_dir)
    for p in c.points:
        d = root / p.key
        if (d / "summary.json").exists():
            yield p, d


def table(c: Campaign, data_dir: Path = data.DATA) -> pd.DataFrame:
    """One row per flow per valid run (the campaign table), from the run directories."""
    rows = []
    for point, d in iter_runs(c, data_dir):
        s = data.read_summary(d / "summary.json")
        flows = data.load_table(d / data.RUN_FILES["flows"], "flows")
        e = point.exp
        run_cols = {"campaign": c.name, "key": point.key, "run_id": s["run_id"],
                    "repeat": point.repeat, "capacity_bps": e.capacity_bps, "rtt_s": e.rtt_s,
                    "buffer_bdp": e.buffer_bdp, "buffer_bytes": e.buffer_bytes,
                    "flows_spec": spec.format_flows(e.flows, e.rtt_s), "load": point.load,
                    "n_flows": len(e.flows),
                    "n_bbr": sum(f.cca == "bbr" for f in e.flows), "duration_s": e.duration_s,
                    "warmup_s": e.warmup_s, "utilisation": s["utilisation"],
                    "jain_index": s["jain_index"], "bbr_share": s["bbr_share"],
                    "mean_queue_delay_s": s["mean_queue_delay_s"],
                    "bottleneck_drops": s["bottleneck_drops"]}
        for f in flows.itertuples():
            rows.append({**run_cols, "flow": f.flow, "cca": f.cca, "flow_rtt_s": f.rtt_s,
                         "goodput_bps": f.goodput_bps, "share": f.share,
                         "retransmits": f.retransmits})
    return pd.DataFrame(rows, columns=[f.name for f in data.SCHEMAS["campaign"]])


def regate(c: Campaign, data_dir: Path = data.DATA, th: gates.Thresholds = gates.DEFAULT,
           dry_run: bool = False) -> list[tuple[str, str]]:
    """Check the campaign's stored valid runs against the gates that were added after they
    were measured and can be read from their stored tables (``flows_started_together``,
    :func:`coexist.data.gates.flow_start_lags`). A run that fails one is made an invalid run,
    as if it had failed at the time: its summary gains the gate, its reason and a
    ``regated`` record (the gate, when, the code's commit), and its directory moves to
    ``_invalid/``, so the campaign measures the point again. Returns (run key, reason) of
    every run that fails; with ``dry_run`` nothing is changed."""
    import json
    from dataclasses import asdict
    from datetime import UTC, datetime

    from ..core import provenance

    root = c.run_dir(data_dir)
    failed: list[tuple[str, str]] = []
    runs_dirs = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(
        (".", "_")) and (p / "summary.json").exists()) if root.exists() else []
    for run_dir in runs_dirs:
        summary = data.read_summary(run_dir / "summary.json")
        if any(g["name"] == "flows_started_together" for g in summary["gates"]):
            continue  # measured with the gate
        series = data.load_table(run_dir / data.RUN_FILES["series"], "series")
        sockets = data.load_table(run_dir / data.RUN_FILES["sockets"], "sockets")
        flows = sorted(summary["flows"], key=lambda f: f["flow"])
        lags = gates.flow_start_lags(series, sockets,
                                     [float(f["start_offset_s"]) for f in flows])
        gate = gates.start_gate(lags, [f["rtt_s"] for f in flows], th)
        if gate is None or gate.passed:
            continue
        reason = gates.reason(asdict(gate))
        failed.append((run_dir.name, reason))
        if dry_run:
            continue
        summary["start_lags_s"] = gates.lags_record(lags)
        summary["gates"].append(asdict(gate))
        summary["valid"] = False
        summary["invalid_reasons"] = [*summary["invalid_reasons"], reason]
        summary["regated"] = {"gate": gate.name,
                              "at": datetime.now(UTC).isoformat(timespec="seconds"),
                              **provenance.git_commit()}
        # out of the valid runs first, then the summary, atomically: a crash between the two
        # leaves the run under _invalid/ with its summary as measured, so no figure uses it
        # and its point is measured again
        dest = root / "_invalid" / f"{run_dir.name}.{summary['run_id']}"
        dest.parent.mkdir(exist_ok=True)
        run_dir.rename(dest)
        files.atomic_write(dest / "summary.json",
                           json.dumps(summary, indent=2, allow_nan=False) + "\n")
    if failed and not dry_run:
        refresh(c, data_dir)
    return failed


def refresh(c: Campaign, data_dir: Path = data.DATA) -> None:
    """Rewrite the campaign table and the datapackage (both atomically)."""
    data.write_table(table(c, data_dir), Path(data_dir) / f"{c.name}.csv", "campaign")
    datapackage.write_datapackage(data_dir)


def duration_text(seconds: float) -> str:
    """Hours above one hour, else minutes."""
    return f"{seconds / 3600:.1f} h" if seconds >= 3600 else f"{seconds / 60:.0f} min"


def format_status(c: Campaign, s: Status) -> str:
    invalid = sum(s.attempts.values())
    eta = f"~{duration_text(s.est_left_s)} of experiment time"
    if s.left and invalid and s.est_with_reruns_s is not None:
        eta += (f"; ~{duration_text(s.est_with_reruns_s)} with re-runs at this campaign's "
                f"invalid rate so far, {100 * s.invalid_rate:.0f} %")
        if s.invalid_length < 1:
            eta += (f", invalid runs taking {100 * s.invalid_length:.0f} % of a full run's "
                    "time on average (stopped early)")
    return (f"{c.name}: {len(s.done)}/{s.planned} done, {len(s.left)} left "
            f"({eta}), {invalid} invalid run(s) so far"
            + (f" ({sum(s.disturbed.values())} under hypervisor steal or a machine stall, "
               "not counted)" if s.disturbed else "")
            + (f", {len(s.failed)} given up after {c.max_attempts} invalid attempts "
               f"(or {DISTURBED_FACTOR * c.max_attempts} runs' worth of time in all): "
               f"{', '.join(s.failed[:5])}" if s.failed else "")
            + (f"; {len(s.capped)} of them only at the time cap under steal "
               "('campaign run --again' gives them a fresh budget)" if s.capped else ""))
