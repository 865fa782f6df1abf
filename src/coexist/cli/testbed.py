"""``coexist run``, ``campaign run|status`` and ``testbed check|clean``: experiments on
the emulated dumbbell."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..core.params import ParameterError, invalid
from .options import (
    check_out_dir,
    check_scheduler,
    command_group,
    number,
    stoppable,
)


def _run(args: argparse.Namespace) -> int:
    from ..data import gates
    from ..testbed import experiment, spec

    stoppable()
    exp = spec.experiment(capacity=args.capacity, rtt=args.rtt, buffer_bdp=args.buffer_bdp,
                          flows=args.flows, duration=args.duration, warmup=args.warmup,
                          interval=args.interval, sample=args.sample, delay=args.delay,
                          stagger=args.stagger, steer_acks=args.steer_acks)
    if args.out:  # a measurement must not be lost to a bad path after it is made
        check_out_dir(Path(args.out))
    th = gates.Thresholds(utilisation_min=args.min_utilisation)
    result = experiment.run(exp, progress=not args.quiet and not args.json, th=th,
                            stop_early=not args.run_to_end)
    if args.out:
        experiment.write(result, Path(args.out))
    if args.json:
        print(experiment.summary_json(result))
    else:
        print(format_run(result.summary))
    return 0 if result.valid else 3


def format_run(s: dict) -> str:
    """Human-readable summary of one run: per-flow table, aggregates, gates."""
    p = s["params"]
    lines = [f"run {s['run_id']}: {p['capacity_bps'] / 1e6:g} Mbit/s, RTT {p['rtt_s'] * 1e3:g} ms,"
             f" buffer {p['buffer_bdp']:g} BDP ({p['buffer_bytes']} B), flows {p['flows']}, "
             f"{p['duration_s']:g} s (warm-up {p['warmup_s']:g} s), delay {s['delay_backend']}",
             f"{'flow':>4} {'cca':>6} {'rtt ms':>7} {'Mbit/s':>8} {'share':>6} {'retx':>6}"]
    for f in s["flows"]:
        lines.append(f"{f['flow']:>4} {f['cca']:>6} {f['rtt_s'] * 1e3:>7g} "
                     f"{f['goodput_bps'] / 1e6:>8.2f} {f['share']:>6.3f} {f['retransmits']:>6}")

    def fmt(v, scale=1.0, spec=".3f"):
        return "n/a" if v is None else format(v * scale, spec)

    lines += [
        f"utilisation {fmt(s['utilisation'])}  goodput/C {fmt(s['goodput_over_capacity'])}  "
        f"Jain {fmt(s['jain_index'])}  BBR share {fmt(s['bbr_share'])}",
        f"queueing delay mean {fmt(s['mean_queue_delay_s'], 1e3, '.2f')} ms, "
        f"p95 {fmt(s['p95_queue_delay_s'], 1e3, '.2f')} ms; bottleneck drops "
        f"{s['bottleneck_drops']}",
    ]
    if s["delay_line"]:
        d = s["delay_line"]
        lines.append(f"delay line: {d['scheduler']}, CPU {d['cpu_fraction'] * 100:.1f} % of a "
                     f"core, lateness p50 {d['lateness_us']['p50']:g} us, p99.9 "
                     f"{d['lateness_us']['p999']:g} us, max {d['lateness_us']['max']:.0f} us")
    lines.append("gates:")
    for g in s["gates"]:
        lines.append(f"  {'PASS' if g['passed'] else 'FAIL'} {g['name']}: {g['value']} "
                     f"(need {g['limit']})" + (f" {g['detail']}" if g["detail"] else ""))
    if s.get("stopped_early"):
        lines.append(f"stopped early at {s['stopped_early']['at_s']:g} s: no per-flow results")
    lines.append("valid" if s["valid"] else "INVALID: " + "; ".join(s["invalid_reasons"]))
    return "\n".join(lines)


def _campaign(args: argparse.Namespace) -> int:
    from .. import data
    from ..testbed import campaign

    data_dir = Path(args.data) if args.data else data.DATA
    if not data_dir.is_dir():  # else every run would look missing: "0/80 done"
        raise invalid("data", str(data_dir), "an existing data directory")
    if getattr(args, "scheduler", None):
        check_scheduler(args.scheduler)  # before the testbed is cleaned or anything runs
    if args.what == "status":
        return _campaign_status(args, data_dir)
    if args.what == "regate":
        return _campaign_regate(args, data_dir)
    c = campaign.load(Path(args.file))
    if args.what == "run":
        if args.steal_max_wait is not None and args.steal_limit is None:
            raise ParameterError(f"steal_max_wait = {args.steal_max_wait:g} needs "
                                 "--steal-limit: without it no run waits")
        wait = 600.0 if args.steal_max_wait is None else args.steal_max_wait
        before = campaign.status(c, data_dir)
        if args.point:  # refused before the testbed is touched; skipped ones said
            for key, why in campaign.points_not_run(c, args.point, before, args.again):
                print(f"{c.name}: {key}: not run, {why}", file=sys.stderr)
        stoppable()
        print(campaign.format_status(c, before))
        st = campaign.run(c, data_dir, scheduler=args.scheduler, progress=not args.quiet,
                          limit=args.limit, steal_limit_pct=args.steal_limit,
                          steal_max_wait_s=wait, again=args.again, points=args.point)
    print(campaign.format_status(c, st))
    return 3 if st.failed else 0


def _campaign_status(args: argparse.Namespace, data_dir: Path) -> int:
    """One status line per campaign file (all are loaded first, so a bad file fails
    before anything is printed), and a total when there are several."""
    from ..testbed import campaign

    camps = [campaign.load(Path(f)) for f in args.files]
    done, planned, left_s = 0, 0, 0.0
    for c in camps:
        st = campaign.status(c, data_dir)
        print(campaign.format_status(c, st))
        if args.verbose:
            for key in st.left:
                print(f"  left: {key}" + (f" ({st.attempts[key]} invalid)"
                                          if key in st.attempts else ""))
        done, planned, left_s = done + len(st.done), planned + st.planned, left_s + st.est_left_s
    if len(camps) > 1:
        print(f"all {len(camps)} campaigns: {done}/{planned} runs done, "
              f"~{campaign.duration_text(left_s)} of experiment time left (without re-runs)")
    return 0


def _campaign_regate(args: argparse.Namespace, data_dir: Path) -> int:
    """Check stored valid runs against gates added after they were measured."""
    from ..testbed import campaign

    camps = [campaign.load(Path(f)) for f in args.files]
    for c in camps:
        failed = campaign.regate(c, data_dir, dry_run=args.dry_run)
        verb = "would become" if args.dry_run else "made"
        print(f"{c.name}: {len(failed)} stored run(s) {verb} invalid")
        for key, reason in failed:
            print(f"  {key}: {reason}")
    return 0


def _testbed_check(args: argparse.Namespace) -> int:
    from ..testbed import preflight

    checks = preflight.check(tuple(args.cca))
    for c in checks:
        print(f"{'ok ' if c.ok else 'MISSING'} {c.name}: {c.detail}"
              + (f"\n        fix: {c.fix}" if c.fix else ""))
    return 0 if all(c.ok for c in checks) else 1


def _testbed_clean(args: argparse.Namespace) -> int:
    from ..testbed import topology

    out = topology.clean(include_live=args.all)
    print(f"removed {len(out['removed'])} namespace(s)"
          + (f": {', '.join(out['removed'])}" if out["removed"] else ""))
    if out["scratch"]:
        print(f"removed {len(out['scratch'])} scratch file(s) and directories of killed runs")
    if out["live"]:
        print(f"left {len(out['live'])} live run(s) alone: {', '.join(out['live'])} "
              "(--all removes them too)")
    return 0


def add_parsers(sub) -> None:
    """Add this module's commands to the ``coexist`` parser's subcommands."""
    run = sub.add_parser("run", help="one experiment on the emulated dumbbell (root)")
    run.add_argument("--capacity", required=True, help="bottleneck rate, e.g. 50mbit")
    run.add_argument("--rtt", required=True,
                     help="base RTT, e.g. 40ms (default RTT of every flow and BDP reference)")
    run.add_argument("--buffer-bdp", type=number("buffer_bdp", float, low=0.01, high=1000.0),
                     required=True, help="bottleneck buffer in multiples of C x RTT")
    run.add_argument("--flows", required=True,
                     help="CCA:COUNT[@RTT],... e.g. cubic:1,bbr:1 or cubic:3@10ms,bbr:3@30ms")
    run.add_argument("--duration", default="60", help="seconds of traffic (default 60)")
    run.add_argument("--warmup", default="10",
                     help="seconds discarded from the averages (default 10)")
    run.add_argument("--interval", default="1", help="goodput time-series step, s (default 1)")
    run.add_argument("--sample", default="0.2", help="ss/tc sampling step, s (default 0.2)")
    run.add_argument("--stagger", default="0",
                     help="seconds between the starts of successive BBR flows (default 0: "
                     "every flow at once); the last must start within the warm-up")
    run.add_argument("--delay", default="auto", choices=("auto", "tun", "netem"),
                     help="base-RTT emulation (auto: netem if the kernel has it)")
    run.add_argument("--steer-acks", action="store_true",
                     help="run the TUN delay line on the last CPU and process the ACKs it "
                          "writes back on the others (receive packet steering)")
    run.add_argument("--min-utilisation",
                     type=number("min_utilisation", float, low=0.0, high=1.0), default=0.95,
                     help="utilisation gate (default 0.95)")
    run.add_argument("--run-to-end", action="store_true",
                     help="keep going when the delay-line lateness gate can no longer pass "
                          "(by default the run stops there: it would be invalid)")
    run.add_argument("--out", help="store the run's tables under this directory")
    run.add_argument("--json", action="store_true", help="print the summary as JSON")
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    run.set_defaults(func=_run)

    csub = command_group(sub, "campaign", "run or inspect an experiment campaign (YAML)")
    crun = csub.add_parser("run", help="run the missing runs, re-running invalid ones up to "
                          "max_attempts (resumable; exit 3 if a point was given up)")
    crun.add_argument("file", help="campaign file, e.g. data/campaigns/two_flow.yaml")
    crun.add_argument("--scheduler", help="Dask scheduler address: one run per worker")
    crun.add_argument("--limit", type=number("limit", int, low=1, high=100_000), default=None,
                      help="stop after this many runs")
    crun.add_argument("--data", help="data directory (default: the book's data/)")
    crun.add_argument("--point", action="append", default=None, metavar="KEY",
                      help="run only this point (a run key of the campaign's grid, e.g. "
                      "50mbit-40ms-b10-cubic1-bbr1-r1); repeat for several, run in the "
                      "order given")
    crun.add_argument("--quiet", action="store_true", help="no progress bar")
    wait = crun.add_mutually_exclusive_group()
    wait.add_argument("--steal-limit", type=number("steal_limit", float, low=0.0, high=100.0),
                      default=None, help="start a local run only once the hypervisor's steal "
                      "over 5 s is at most this %% of the CPU time (off by default: on our "
                      "VM the wait cost time and did not make runs valid more often)")
    wait.add_argument("--no-steal-wait", dest="steal_limit", action="store_const",
                      const=None, help="start every run at once, whatever the steal "
                      "(the default)")
    crun.add_argument("--steal-max-wait", type=number("steal_max_wait", float, low=0.0,
                                                          high=86_400.0),
                      default=None, help="with --steal-limit: seconds to wait before running "
                      "anyway (default 600)")
    crun.add_argument("--again", action="store_true", help="give every point a fresh time "
                      "budget for its invalid runs in this call, so points given up only at "
                      "the time cap under steal are run again (points with max_attempts "
                      "undisturbed invalid runs stay given up)")
    crun.set_defaults(func=_campaign)
    cst = csub.add_parser("status", help="done / invalid / left, one line per campaign")
    cst.add_argument("files", nargs="+", metavar="file",
                     help="campaign file(s), e.g. data/campaigns/*.yaml")
    cst.add_argument("--data", help="data directory (default: the book's data/)")
    cst.add_argument("-v", "--verbose", action="store_true", help="list the runs left")
    cst.set_defaults(func=_campaign)
    crg = csub.add_parser("regate", help="check stored valid runs against gates added after "
                          "they were measured; failing runs become invalid and are re-run")
    crg.add_argument("files", nargs="+", metavar="file",
                     help="campaign file(s), e.g. data/campaigns/*.yaml")
    crg.add_argument("--data", help="data directory (default: the book's data/)")
    crg.add_argument("--dry-run", action="store_true", help="only list the runs that fail")
    crg.set_defaults(func=_campaign)

    tsub = command_group(sub, "testbed", "check or clean the machine for experiments")
    chk = tsub.add_parser("check", help="report what the harness needs and how to fix gaps")
    chk.add_argument("--cca", nargs="+", default=["cubic", "bbr", "reno"])
    chk.set_defaults(func=_testbed_check)
    cln = tsub.add_parser("clean", help="remove namespaces and processes of killed runs")
    cln.add_argument("--all", action="store_true", help="also remove runs still in progress")
    cln.set_defaults(func=_testbed_clean)
