"""Command line: ``coexist book``, ``coexist figures``, ``coexist model share|nash``,
``coexist fluid run``, ``coexist store status|check|refresh|verify``, ``coexist run``,
``coexist campaign run|status`` and ``coexist testbed check|clean``.

Bad input ends with one line naming the parameter, its value and the valid range, and exit
status 2; a failed figure check or a harness failure exits with 1; an experiment that ran
but failed a validity gate exits with 3.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .book import ledger
from .core import quantities
from .core.params import Param, ParameterError, invalid

#: Ware et al.'s competition time d (:data:`coexist.book.ledger.DURATION`'s range)
DURATION_S = (ledger.DURATION.low, ledger.DURATION.high)
#: a fluid run's simulated time (the metric figures' range,
#: :func:`coexist.book.ledger._metrics_spec`),
#: its base RTTs and capacity (the fluid notebooks': :data:`coexist.book.ledger.TRACE_RTT`,
#: :data:`coexist.book.ledger.FLUID_CAPACITY`)
FLUID_DURATION_S = (0.5, 600.0)
FLUID_RTT_S = (ledger.TRACE_RTT.low / 1e3, ledger.TRACE_RTT.high / 1e3)
FLUID_CAPACITY_BPS = (ledger.FLUID_CAPACITY.low * 1e6, ledger.FLUID_CAPACITY.high * 1e6)
#: at most this many runs or pages at once (more threads than any machine has cores)
MAX_JOBS = 256


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2, as for ParameterError
        self.exit(2, f"{self.prog}: error: {message}\n")


def _number(name: str, kind: type, **limits) -> callable:
    """An argparse type that checks range and names the parameter in its error."""
    return _quantity(Param(name, kind, None, **limits).parse, name)


def _quantity(parse: callable, name: str) -> callable:
    """An argparse type from a parser raising :class:`ParameterError` (a
    :mod:`coexist.core.quantities` parser for a number with its unit, or a parameter's own)."""
    def convert(text: str):
        try:
            return parse(text)
        except ParameterError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    convert.__name__ = name
    return convert


def _figures(args: argparse.Namespace) -> int:
    from .book import runner

    if args.built is not None:
        if not args.check:
            raise ParameterError("--built DIR compares a built book's tables: it needs --check")
        extra = [flag for flag, given in (("--accept", args.accept), ("--only", args.only),
                                          ("-p", args.param)) if given]
        if extra:
            raise ParameterError(f"--built compares every figure of a built book; it takes no "
                                 f"{', '.join(extra)}")
        for r in runner.check_built(Path(args.built)):
            print(f"{r.id}: {r.csv}  [matches committed table]")
        return 0
    if args.scheduler:
        _check_scheduler(args.scheduler)
    _check_out_dir(Path(args.out))
    results = runner.run(
        args.only,
        [tuple(p) for p in args.param],
        out_dir=Path(args.out),
        check=args.check,
        accept=args.accept,
        progress=not args.quiet,
        jobs=args.jobs,
        scheduler=args.scheduler,
    )
    for r in results:
        print(f"{r.id}: {r.svg} {r.csv}" + ("  [matches committed table]" if args.check else ""))
    return 0


def _claims(args: argparse.Namespace) -> int:
    from .book import claims
    from .book.ledger import EXPECTED, FIGURES, ROOT

    if args.check and not args.readme:
        raise ParameterError("--check compares README.md's findings block: it needs --readme")
    if args.readme:
        readme = ROOT / "README.md"
        text = readme.read_text(encoding="utf-8")
        new = claims.with_readme_block(text, claims.readme_block(EXPECTED))
        if args.check:
            if new != text:
                print("README.md's findings differ from the claims: run "
                      "`coexist claims --readme`", file=sys.stderr)
                return 1
            print("README.md's findings match the committed claims")
            return 0
        if new != text:
            readme.write_text(new, encoding="utf-8")
        print(f"README.md: {len(claims.FINDINGS)} findings from the committed claims")
        return 0
    for e in FIGURES:
        path = EXPECTED / f"{e.id}{claims.SUFFIX}"
        if path.exists():
            for c in claims.read(path).values():
                print(f"{e.id}\t{c.key}\t{c.text}")
    return 0


def _book(args: argparse.Namespace) -> int:
    from .book import build as book

    if args.scheduler:
        _check_scheduler(args.scheduler)
    status = book.build(Path(args.dir), jobs=args.jobs, bundled_only=args.bundled_only,
                        fresh=args.fresh, scheduler=args.scheduler)
    if status:
        print(f"coexist book: the build reported errors or warnings (status {status}); "
              "see the output above", file=sys.stderr)
        return 1
    print(f"book: {Path(args.dir) / '_build' / 'html' / 'index.html'}")
    return 0


def _pages(args: argparse.Namespace) -> int:
    """``coexist pages``: what each page of the built book shows a reader (visible code,
    raw output, lines wider than the column, broken links), against the book's limits."""
    from .book import reader_view

    html_dir = Path(args.html)
    if not (html_dir / "index.html").exists():
        raise invalid("html", args.html, "a built book's HTML directory (run `make book`)")
    table = reader_view.measure(html_dir, only=args.only or None)
    if args.json:
        print(table.to_json(orient="records", indent=1))
    else:
        shown = table.drop(columns=["overflow_examples", "broken_links"]).assign(
            broken_links=table.broken_links.map(len), code_share=table.code_share.round(3))
        print(shown.to_string(index=False))
    bad = reader_view.failures(table)
    for line in bad:
        print(line, file=sys.stderr)
    return 1 if bad else 0


def _pdf(args: argparse.Namespace) -> int:
    """``coexist pdf``: the built book printed as one PDF (see :mod:`coexist.book.pdf`)."""
    from .book import pdf

    out = Path(args.out)
    if out.is_dir():
        raise invalid("out", args.out, "a PDF file path, not a directory")
    _check_out_dir(out.parent)
    try:
        manifest = pdf.build(Path(args.html), out, progress=not args.quiet)
    except (FileNotFoundError, RuntimeError) as e:  # the book not built, or no Chromium
        print(f"coexist pdf: {e}", file=sys.stderr)
        return 1
    untypeset = [p["page"] for p in manifest["pages"] if p["typeset"] < p["math"] or p["errors"]]
    print(f"pdf: {out} ({manifest['pdf_pages']} pages from {len(manifest['pages'])} pages of "
          f"the book)")
    if untypeset:
        print(f"coexist pdf: math not typeset on {', '.join(untypeset)}", file=sys.stderr)
        return 1
    return 0


def _store(args: argparse.Namespace) -> int:
    """``coexist store status|check|refresh|verify``: the committed fluid-model runs."""
    from .core import paths
    from .fluid import cache, refresh, store

    where = store.root()
    entries = list(store.read_index(where).values())
    if args.what == "status":
        stale = refresh.stale(entries)
        kinds = Counter(e.kind for e in entries)
        pages = sorted({p for e in entries for p in e.pages})
        print(f"{where}: {len(entries)} runs, {store.size_bytes(where) / 1e6:.1f} MB, "
              f"read by {len(pages)} pages; {len(stale)} stale under the current code")
        for kind, n in sorted(kinds.items()):
            print(f"  {kind}: {n}")
        return 0
    if args.what == "check":
        problems = store.integrity(where)
        if problems:
            print(f"coexist store: {problems[0]}" + (f" (and {len(problems) - 1} more)"
                                                     if len(problems) > 1 else ""),
                  file=sys.stderr)
            return 1
        stale = refresh.stale(entries)
        if stale or not entries:
            print(f"coexist store: {store.needs_refresh_message(stale)}" if stale else
                  f"coexist store: {where} holds no runs: run `{store.REFRESH}`",
                  file=sys.stderr)
            return 1
        print(f"store: {len(entries)} runs, every object intact and every key current")
        return 0
    if args.scheduler:
        _check_scheduler(args.scheduler)
        os.environ["COEXIST_SCHEDULER"] = args.scheduler
    if args.what == "verify":
        problems = store.integrity(where)
        if problems:
            for p in problems:
                print(f"coexist store: {p}", file=sys.stderr)
            return 1
        if args.all:
            chosen = sorted(entries, key=lambda e: (e.kind, e.key))
        else:
            seed = args.seed or _commit_seed()
            chosen = store.sample(entries, seed, args.share)
            print(f"store: checking {len(chosen)} of {len(entries)} runs (seed {seed}, at "
                  f"least {args.share:.0%} and one per page)", flush=True)
        stale = refresh.stale(chosen)
        if stale:
            print(f"coexist store: {store.needs_refresh_message(stale)}", file=sys.stderr)
            return 1
        problems = refresh.verify(chosen, workers=args.jobs, progress=not args.quiet)
        for p in problems:
            print(f"coexist store: {p}", file=sys.stderr)
        if problems:
            return 1
        print(f"store: {len(chosen)} runs recomputed, every one bit-identical to its "
              f"stored result")
        return 0
    # refresh; a census given is read first, so a bad file is refused before any run
    given = store.read_census(Path(args.census)) if args.census else None
    stale = refresh.stale(entries)
    computed = refresh.recompute_stale(stale, workers=args.jobs, progress=not args.quiet)
    print(f"store: {len(stale)} stale runs, {computed} computed again", flush=True)
    if given is not None:
        census = given
    elif args.no_book:
        census = refresh.census_from_index(entries)
    else:
        from .book import build as book

        log = paths.BUILD / "store-census.jsonl"
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text("")
        os.environ[cache.LOG_ENV] = str(log)
        # the book runs here: a cluster's workers would compute its new runs out of the
        # census's sight (the stale ones above went to the cluster and are kept locally)
        os.environ.pop("COEXIST_SCHEDULER", None)
        status = book.build(paths.ROOT, jobs=args.jobs, bundled_only=True, fresh=True)
        if status:
            print("coexist store: the book build failed; the store is unchanged (the runs "
                  "it computed are kept locally, so the next refresh resumes)",
                  file=sys.stderr)
            return 1
        census = store.read_census(log)
    counts = store.commit(census, cache.local_entries(), where, keep_unread=args.keep_unread)
    from .data import datapackage

    datapackage.write_datapackage()
    print(f"store: {counts['entries']} runs ({counts['added']} added, {counts['kept']} kept, "
          f"{counts['dropped']} no longer read; {counts['objects_pruned']} objects pruned), "
          f"{store.size_bytes(where) / 1e6:.1f} MB; commit data/model-runs and "
          f"data/datapackage.json")
    return 0


def _commit_seed() -> str:
    """The seed of CI's sample: the commit being tested (so each commit checks another
    sample), or 'uncommitted' outside a git checkout."""
    from .core.provenance import git_commit

    return git_commit().get("commit") or "uncommitted"


def _share(args: argparse.Namespace) -> int:
    from .closed_form import mishra, ware

    nb = args.bbr_flows
    if args.flows is not None:
        if args.cubic_flows is not None:
            raise ParameterError("give either 'flows' or 'cubic_flows', not both")
        if nb > args.flows:
            raise ParameterError(
                f"parameter 'bbr_flows' = {nb} must not exceed 'flows' = {args.flows}"
            )
        nc = args.flows - nb
    else:
        nc = 1 if args.cubic_flows is None else args.cubic_flows
    if nc + nb < 1:
        raise ParameterError("parameters 'cubic_flows' + 'bbr_flows' must be at least 1")
    sync = mishra.multi_flow(args.buffer_bdp, nc, nb, capacity_bps=args.capacity,
                             synchronised=True)
    desync = mishra.multi_flow(args.buffer_bdp, nc, nb, capacity_bps=args.capacity,
                               synchronised=False)
    # Ware et al.'s formula leaves [0, 1] for some inputs (its ProbeRTT time can exceed the
    # run, its 4N/q term can pass 1): then it has no answer, which is reported, not an error
    ware_share: float | None = 0.0
    ware_note = ""
    if nb > 0:
        ware_share = float(ware.bbr_share(args.buffer_bdp, capacity_bps=args.capacity,
                                          rtt_s=args.rtt, n_bbr=nb, duration_s=args.duration,
                                          outside="nan"))
        if ware_share != ware_share:
            ware_share = None
            ware_note = ("outside [0, 1] for these inputs (its ProbeRTT time or 4N/q term "
                         "is too large): no prediction")
    out = {
        "buffer_bdp": args.buffer_bdp,
        "cubic_flows": nc,
        "bbr_flows": nb,
        "capacity_bps": args.capacity,
        "rtt_s": args.rtt,
        "bbr_share_sync": float(sync.bbr_share),
        "bbr_share_desync": float(desync.bbr_share),
        "ware_bbr_share": ware_share,
        "ware_note": ware_note or None,
        "bbr_per_flow_bps_sync": _finite(sync.bbr_per_flow_bps),
        "bbr_per_flow_bps_desync": _finite(desync.bbr_per_flow_bps),
        "cubic_per_flow_bps_sync": _finite(sync.cubic_per_flow_bps),
        "cubic_per_flow_bps_desync": _finite(desync.cubic_per_flow_bps),
    }
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print(f"{nc} CUBIC + {nb} BBR flows, buffer {args.buffer_bdp:g} BDP")
        print(f"  BBR aggregate share, CUBIC synchronised   (eq. 21): {out['bbr_share_sync']:.4f}")
        print(f"  BBR aggregate share, CUBIC de-synchronised (eq. 22): "
              f"{out['bbr_share_desync']:.4f}")
        ware_text = ware_note if ware_share is None else f"{ware_share:.4f}"
        print(f"  BBR aggregate share, Ware et al.          (eq. 2):  {ware_text}")
    return 0


def _finite(value) -> float | None:
    v = float(value)
    return v if v == v else None


def _nash(args: argparse.Namespace) -> int:
    from .closed_form import nash

    region = nash.predicted_region(args.buffer_bdp, args.flows)
    out = {"flows": args.flows, "buffer_bdp": args.buffer_bdp}
    for bound, sync in (("sync", True), ("desync", False)):
        cubic, bbr = nash.model_table(args.buffer_bdp, args.flows, synchronised=sync)
        out[f"bbr_flows_{bound}"] = float(region[f"bbr_flows_{bound}"])
        out[f"equilibria_{bound}"] = nash.equilibria(cubic, bbr)
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print(f"{args.flows} flows, buffer {args.buffer_bdp:g} BDP: BBR flows at the equilibrium")
        for bound in ("sync", "desync"):
            print(f"  CUBIC {bound:>6}: eq. (25) crossing {out[f'bbr_flows_{bound}']:.2f}; "
                  f"integer equilibria {out[f'equilibria_{bound}']}")
    return 0


def _stoppable() -> None:
    """Long-running commands stop cleanly on SIGINT, SIGTERM and SIGHUP, even when started
    with SIGINT ignored (as background jobs of a non-interactive shell are)."""
    import signal

    from .testbed.experiment import Interrupted

    def stop(signum, _frame):
        raise Interrupted(f"stopped by signal {signal.Signals(signum).name}")

    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGHUP, stop)


def _run(args: argparse.Namespace) -> int:
    from .data import gates
    from .testbed import experiment, spec

    _stoppable()
    exp = spec.experiment(capacity=args.capacity, rtt=args.rtt, buffer_bdp=args.buffer_bdp,
                          flows=args.flows, duration=args.duration, warmup=args.warmup,
                          interval=args.interval, sample=args.sample, delay=args.delay,
                          stagger=args.stagger, steer_acks=args.steer_acks)
    if args.out:  # a measurement must not be lost to a bad path after it is made
        _check_out_dir(Path(args.out))
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


def _check_out_dir(out: Path) -> None:
    """Refuse an output directory that could not be written to, before any work: a file,
    a path below a file, or a directory (or its nearest existing parent) where a file
    cannot be created, which is tried (root passes every permission check, not a
    read-only file system or /proc)."""
    import tempfile

    if out.exists() and not out.is_dir():
        raise invalid("out", str(out), "a directory (or a path to create), not a file")
    parent = next((p for p in (out, *out.parents) if p.exists()), None)
    valid = "a directory this user can create or write into"
    if parent is None or not parent.is_dir():
        raise invalid("out", str(out), valid)
    try:
        fd, probe = tempfile.mkstemp(dir=parent, prefix=".coexist-write-test-")
    except OSError as exc:
        raise invalid("out", str(out), valid, exc.strerror or type(exc).__name__) from None
    os.close(fd)
    os.unlink(probe)


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
    from . import data
    from .testbed import campaign

    data_dir = Path(args.data) if args.data else data.DATA
    if not data_dir.is_dir():  # else every run would look missing: "0/80 done"
        raise invalid("data", str(data_dir), "an existing data directory")
    if getattr(args, "scheduler", None):
        _check_scheduler(args.scheduler)  # before the testbed is cleaned or anything runs
    if args.what == "status":
        return _campaign_status(args, data_dir)
    c = campaign.load(Path(args.file))
    if args.what == "run":
        if args.steal_max_wait is not None and args.steal_limit is None:
            raise ParameterError(f"steal_max_wait = {args.steal_max_wait:g} needs "
                                 "--steal-limit: without it no run waits")
        wait = 600.0 if args.steal_max_wait is None else args.steal_max_wait
        _stoppable()
        before = campaign.status(c, data_dir)
        print(campaign.format_status(c, before))
        st = campaign.run(c, data_dir, scheduler=args.scheduler, progress=not args.quiet,
                          limit=args.limit, steal_limit_pct=args.steal_limit,
                          steal_max_wait_s=wait, again=args.again)
    print(campaign.format_status(c, st))
    return 3 if st.failed else 0


def _check_scheduler(address: str) -> None:
    """A Dask scheduler address: ``[tcp|tls|inproc|ucx]://HOST:PORT`` or ``HOST:PORT``."""
    import re

    if not re.fullmatch(r"(?:(?:tcp|tls|ucx|inproc)://)?[\w.\-\[\]:]+:\d{1,5}", address):
        raise invalid("scheduler", address, "a Dask scheduler address such as "
                      "tcp://10.0.0.1:8786 or 10.0.0.1:8786")


def _campaign_status(args: argparse.Namespace, data_dir: Path) -> int:
    """One status line per campaign file (all are loaded first, so a bad file fails
    before anything is printed), and a total when there are several."""
    from .testbed import campaign

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


def _fluid_flows(text: str) -> list[str]:
    """``cubic,bbr1`` or ``cubic:5,bbr1:5`` -> one CCA name per flow."""
    from .fluid.solve import CCAS

    valid = f"comma-separated CCA[:COUNT] with CCA in {', '.join(CCAS)}, 1..100 flows"
    parts: list[tuple[str, int]] = []
    for part in text.split(","):
        name, _, count = part.strip().partition(":")
        if name not in CCAS or (count and not (count.isascii() and count.isdigit())):
            raise invalid("ccas", text, valid)
        parts.append((name, int(count) if count else 1))
    if not 1 <= sum(n for _, n in parts) <= 100:  # counted before any list is built
        raise invalid("ccas", text, valid)
    return [name for name, n in parts for _ in range(n)]


def _rtt_range(text: str, name: str = "rtt",
               bounds: tuple[float, float] = FLUID_RTT_S) -> tuple[float, float]:
    """``40ms`` or ``30ms-40ms`` -> (low, high) in seconds. The range's dash is the one not
    inside a number's exponent (``1e-2`` is one RTT); both ends are required."""
    import re

    ends = re.split(r"(?<![eE])-", text.strip())
    valid = f"one {name} or a range LOW-HIGH with LOW <= HIGH, each such as 40ms"
    if len(ends) > 2 or not all(e.strip() for e in ends):
        raise invalid(name, text, valid)
    lo = quantities.time(ends[0], name, *bounds, unit_required=True)
    hi = quantities.time(ends[-1], name, *bounds, unit_required=True)
    if hi < lo:
        raise invalid(name, text, valid)
    return lo, hi


def _rtt_list(text: str, n_flows: int) -> list[float]:
    """``30ms,35ms,40ms`` -> one base RTT per flow, in seconds (as many as flows)."""
    rtts = [quantities.time(part, "rtts", *FLUID_RTT_S, unit_required=True)
            for part in text.split(",")]
    if len(rtts) != n_flows:
        raise invalid("rtts", text, f"one RTT per flow: {n_flows} comma-separated RTTs")
    return rtts


#: options of one set-up only (``--setup``), refused with the other
BOOK_ONLY = ("rtt", "rtts", "buffer_bdp")
AUTHORS_ONLY = ("link_latency", "source_latency", "buffer_units")


def _setup_options(args: argparse.Namespace) -> None:
    """Each set-up's options present, the other's absent: refused in one line otherwise."""
    own, other = (BOOK_ONLY, AUTHORS_ONLY) if args.setup == "book" else (AUTHORS_ONLY,
                                                                          BOOK_ONLY)
    given = [o for o in other if getattr(args, o) is not None]
    if given:
        raise ParameterError(f"--{given[0].replace('_', '-')} is an option of the other "
                             f"set-up; with --setup {args.setup} give "
                             + ", ".join(f"--{o.replace('_', '-')}" for o in own
                                         if o != "rtts"))
    if args.setup == "book":
        if args.buffer_bdp is None:
            raise ParameterError("--buffer-bdp is required with --setup book")
        if (args.rtt is None) == (args.rtts is None):
            raise ParameterError("give one of --rtt (one RTT or a range spread over the "
                                 "flows) and --rtts (one RTT per flow)")
        return
    missing = [o for o in AUTHORS_ONLY if getattr(args, o) is None]
    if missing:
        raise ParameterError(f"--{missing[0].replace('_', '-')} is required with --setup "
                             "authors")
    beyond = [f for f, on in (("--rtprop-expiry", args.rtprop_expiry),
                              ("--cubic-recovery", args.cubic_recovery),
                              ("--reading printed", args.reading == "printed")) if on]
    if beyond:
        raise ParameterError(f"{beyond[0]} is not the authors' code: --setup authors runs "
                             "the published reading as they set it up")


def _authors_config(args: argparse.Namespace, ccas: list[str], capacity_bps: float):
    """The run as the authors' code sets it up (:func:`.fluid.published.paper_flows`):
    every CCA the same number of flows in their order, each source latency drawn from the
    range with their seeded generator (RTT 2 x (link + source latency)), the buffer
    ``int(units x ceil(C x link latency))`` packets of 1514 B, BBRv2's period phases the
    generator's next draws and its inflight_hi from the buffer unit."""
    import math

    from .fluid import published, solve

    kinds = list(dict.fromkeys(ccas))
    counts = {c: ccas.count(c) for c in kinds}
    if len(set(counts.values())) != 1:
        raise invalid("ccas", args.ccas, "the same number of flows of every CCA (the "
                      "authors' code shares the senders equally)")
    link_ms = args.link_latency * 1e3
    lo, hi = args.source_latency
    flows, d0_ms, rtt_ms, _ = published.paper_flows(kinds, len(ccas), link_ms,
                                                    (lo * 1e3, hi * 1e3))
    capacity_pps = capacity_bps / (published.MSS_BYTES * 8)
    unit = math.ceil(capacity_bps / 8 * args.link_latency / published.MSS_BYTES)
    buffer_pkts = int(args.buffer_units * unit)
    if buffer_pkts < 1:
        raise invalid("buffer_units", args.buffer_units,
                      f"at least one packet: buffer_units >= {1 / unit:.3g} here")
    fl = tuple(solve.Flow(c, d / 1e3, (r - d) / 1e3)
               for c, d, r in zip(flows, d0_ms, rtt_ms, strict=True))
    return solve.Config(capacity_pps, float(buffer_pkts), fl, duration_s=args.duration,
                        aqm=args.aqm, step_s=args.step or solve.Config.step_s,
                        sample_s=1e-3, reading="published",
                        bbr2_phase=published.paper_phases(len(ccas)),
                        inflight_hi_factor=published.inflight_hi_factor(args.buffer_units))


def _fluid_authors(args: argparse.Namespace, ccas: list[str], capacity: float) -> int:
    """``coexist fluid run --setup authors``: their set-up, their metrics (their
    ``analyze_trace``'s: mean queue, Jain index of the mean rates, loss, utilisation,
    jitter), as :func:`.fluid.solve.simulate_published` computes them."""
    from .fluid import published, solve

    cfg = _authors_config(args, ccas, capacity)
    _, m = solve.simulate_published(cfg, args.warmup)
    shares = m["rates_pps"] / m["rates_pps"].sum()
    flows = [{"flow": i, "cca": f.cca, "source_latency_s": f.d_f, "rtt_s": f.d_p,
              "rate_bps": float(r * published.MSS_BYTES * 8), "share": float(s)}
             for i, (f, r, s) in enumerate(zip(cfg.flows, m["rates_pps"], shares,
                                               strict=True))]
    out = {"setup": "authors", "capacity_bps": capacity, "buffer_pkts": cfg.buffer_pkts,
           "avg_queue_pkts": float(m["avg_queue_pkts"]),
           "queue_share": float(m["avg_queue_pkts"] / cfg.buffer_pkts),
           "jain": float(m["jain"]), "loss": float(m["loss"]),
           "utilization": float(m["utilization"]), "jitter_ms": float(m["jitter_ms"]),
           "step_s": cfg.step_s, "duration_s": args.duration, "warmup_s": args.warmup,
           "per_flow": flows}
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"fluid model, the authors' set-up: {len(ccas)} flows ({args.ccas}), "
          f"{capacity / 1e6:g} Mbit/s, buffer {cfg.buffer_pkts:g} packets, {args.aqm}, "
          f"{args.duration:g} s (metrics after {args.warmup:g} s), step "
          f"{cfg.step_s * 1e6:g} us")
    for key in ("queue_share", "jain", "loss", "utilization"):
        print(f"  {key:<12} {out[key]:.4f}")
    print(f"  {'jitter':<12} {out['jitter_ms']:.4f} ms")
    for f in flows:
        print(f"  flow {f['flow']:>2} {f['cca']:>5} rtt {f['rtt_s'] * 1e3:6.2f} ms  "
              f"share {f['share']:.3f}")
    return 0


def _fluid(args: argparse.Namespace) -> int:
    from .fluid import metrics, published, solve

    _setup_options(args)
    ccas = _fluid_flows(args.ccas)
    capacity = quantities.rate(args.capacity, "capacity", FLUID_CAPACITY_BPS)
    if not 0 <= args.warmup < args.duration:  # before the simulation, not after it
        raise invalid("warmup", args.warmup, f"0 <= warm-up < duration ({args.duration:g} s)")
    if args.setup == "authors":
        return _fluid_authors(args, ccas, capacity)
    if args.rtts is not None:
        rtts = _rtt_list(args.rtts, len(ccas))
        rtt_lo, rtt_hi = min(rtts), max(rtts)
    else:
        rtt_lo, rtt_hi = _rtt_range(args.rtt)
        rtts = list(np.linspace(rtt_lo, rtt_hi, len(ccas)))
    pps = capacity / (8 * solve.PACKET_BYTES)
    # sample at least once per virtual packet interval N/C, for the jitter metric
    sample = min(1e-3, len(ccas) / pps)
    if args.reading == "published":  # its own start (published.start)
        start = {"reading": "published",
                 **published.start(ccas, rtts, args.buffer_bdp * pps * rtt_lo, pps)}
    else:
        start = {"reading": "printed", "initial_window": max(1.0, pps * rtt_lo / len(ccas))}
    step = {} if args.step is None else {"step_s": args.step}
    cfg = solve.dumbbell(ccas, capacity_bps=capacity, rtt_s=rtts, buffer_bdp=args.buffer_bdp,
                         duration_s=args.duration, aqm=args.aqm, sample_s=sample, **step,
                         rtprop_expiry=args.rtprop_expiry, cubic_recovery=args.cubic_recovery,
                         **start)
    tr = solve.run(cfg)
    agg = metrics.aggregate(tr, args.warmup)
    flows = metrics.per_flow(tr, args.warmup)
    if args.json:
        print(json.dumps({**agg, "capacity_bps": capacity, "rtt_s": [rtt_lo, rtt_hi],
                          "buffer_bdp": args.buffer_bdp, "duration_s": args.duration,
                          "warmup_s": args.warmup, "rtprop_expiry": args.rtprop_expiry,
                          "cubic_recovery": args.cubic_recovery, "reading": args.reading,
                          "per_flow": flows.to_dict("records")},
                         indent=2))
        return 0
    print(f"fluid model: {len(ccas)} flows ({args.ccas}), {capacity / 1e6:g} Mbit/s, RTT "
          f"{args.rtt or args.rtts}, buffer {args.buffer_bdp:g} BDP, {args.aqm}, "
          f"{args.duration:g} s "
          f"(metrics after {args.warmup:g} s), {args.reading} reading"
          + (", RTprop filter expiring as in Linux" if args.rtprop_expiry else "")
          + (", CUBIC cutting once per loss episode" if args.cubic_recovery else ""))
    for key in ("jain", "loss_rate", "queue_share", "utilisation"):
        print(f"  {key:<12} {agg[key]:.4f}")
    print(f"  {'jitter':<12} {agg['jitter_s'] * 1e3:.4f} ms")
    for f in flows.itertuples():
        print(f"  flow {f.flow:>2} {f.cca:>5} rtt {f.rtt_s * 1e3:6.2f} ms  "
              f"{f.rate_bps / 1e6:8.2f} Mbit/s  share {f.share:.3f}")
    return 0


def _testbed_check(args: argparse.Namespace) -> int:
    from .testbed import preflight

    checks = preflight.check(tuple(args.cca))
    for c in checks:
        print(f"{'ok ' if c.ok else 'MISSING'} {c.name}: {c.detail}"
              + (f"\n        fix: {c.fix}" if c.fix else ""))
    return 0 if all(c.ok for c in checks) else 1


def _testbed_clean(args: argparse.Namespace) -> int:
    from .testbed import topology

    out = topology.clean(include_live=args.all)
    print(f"removed {len(out['removed'])} namespace(s)"
          + (f": {', '.join(out['removed'])}" if out["removed"] else ""))
    if out["live"]:
        print(f"left {len(out['live'])} live run(s) alone: {', '.join(out['live'])} "
              "(--all removes them too)")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="coexist", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    fig = sub.add_parser("figures", help="regenerate figures through their notebooks")
    fig.add_argument("--only", nargs="+", metavar="ID", help="figure ids (default: all)")
    fig.add_argument("-p", "--param", nargs=2, action="append", default=[],
                     metavar=("NAME", "VALUE"), help="override a notebook parameter")
    fig.add_argument("--out", default="build/figures", help="output directory")
    fig.add_argument("--check", action="store_true",
                     help="compare regenerated tables with the committed ones")
    fig.add_argument("--accept", action="store_true",
                     help="copy regenerated tables and SVGs over the committed ones")
    fig.add_argument("--quiet", action="store_true", help="no progress bar")
    fig.add_argument("--jobs", type=_number("jobs", int, low=1, high=MAX_JOBS), default=1,
                     help="notebooks executed at once (default: 1)")
    fig.add_argument("--scheduler", metavar="ADDRESS",
                     help="Dask scheduler address: the notebooks' fluid-model runs go to its "
                          "cluster")
    fig.add_argument("--built", metavar="DIR",
                     help="with --check: compare the tables a book build wrote into DIR "
                          "(_build/figures) instead of executing the notebooks again")
    fig.set_defaults(func=_figures)

    cl = sub.add_parser("claims", help="the numbers the prose states, as the figures "
                                       "computed them")
    cl.add_argument("--readme", action="store_true",
                    help="write README.md's findings block from the committed claims")
    cl.add_argument("--check", action="store_true",
                    help="with --readme: fail if README.md's findings block differs")
    cl.set_defaults(func=_claims)

    bk = sub.add_parser("book", help="build the book into _build/html, pages in parallel")
    bk.add_argument("--jobs", type=_number("jobs", int, low=1, high=MAX_JOBS), default=None,
                    help="pages executed at once (default: one per CPU)")
    bk.add_argument("--bundled-only", action="store_true",
                    help="leave fetched external data out, as `figures --check` does")
    bk.add_argument("--dir", default=".", help="the book's directory (default: .)")
    bk.add_argument("--fresh", action="store_true",
                    help="execute every page again, even if nothing it reads changed")
    bk.add_argument("--scheduler", metavar="ADDRESS",
                    help="Dask scheduler address: the pages' fluid-model runs go to its cluster")
    bk.set_defaults(func=_book)

    pg = sub.add_parser("pages", help="what each built page shows a reader: visible code, "
                                      "raw output, lines wider than the column, broken links")
    pg.add_argument("--html", default=str(Path("_build") / "html"),
                    help="the built book's HTML directory (default: _build/html)")
    pg.add_argument("--only", action="append", metavar="PAGE",
                    help="one page, e.g. notebooks/fig_m_f1 (repeatable)")
    pg.add_argument("--json", action="store_true", help="the table as JSON records")
    pg.set_defaults(func=_pages)

    pd_ = sub.add_parser("pdf", help="print the built book as one PDF (headless Chromium)")
    pd_.add_argument("--html", default=str(Path("_build") / "html"),
                     help="the built book's HTML directory (default: _build/html)")
    pd_.add_argument("--out", default=str(Path("_build") / "pdf" / "book.pdf"),
                     help="the PDF to write (default: _build/pdf/book.pdf; a copy goes into "
                          "the site as book.pdf)")
    pd_.add_argument("--quiet", action="store_true", help="no progress bar")
    pd_.set_defaults(func=_pdf)

    model = sub.add_parser("model", help="closed-form model what-ifs")
    msub = model.add_subparsers(dest="what", required=True, parser_class=_Parser)
    buffer = dict(type=_number("buffer_bdp", float, low=1.0, high=1000.0, low_open=True),
                  required=True, help="bottleneck buffer in BDP (> 1)")
    share = msub.add_parser("share", help="BBR's bandwidth share (eqs. 2, 18-24)")
    share.add_argument("--buffer-bdp", **buffer)
    share.add_argument("--cubic-flows", type=_number("cubic_flows", int, low=0, high=100_000),
                       default=None, help="CUBIC flows (default 1)")
    share.add_argument("--flows", type=_number("flows", int, low=1, high=100_000),
                       default=None, help="total flows; CUBIC flows = flows - bbr flows")
    share.add_argument("--bbr-flows", type=_number("bbr_flows", int, low=0, high=100_000),
                       default=1)
    share.add_argument("--capacity", default="100mbit",
                       type=_quantity(lambda t: quantities.rate(t, "capacity"), "capacity"),
                       help="bottleneck rate with its unit, for per-flow rates and Ware's "
                            "model (default 100mbit; 10kbit to 100gbit)")
    share.add_argument("--rtt", default="40ms", type=_quantity(
                           lambda t: quantities.time(t, "rtt", *quantities.MODEL_RTT_S,
                                                     unit_required=True), "rtt"),
                       help="base RTT with its unit, for Ware's model (default 40ms)")
    share.add_argument("--duration", default="120s", type=_quantity(
                           lambda t: quantities.time(t, "duration", *DURATION_S), "duration"),
                       help="competition time for Ware's model (default 120s; a bare number "
                            "is seconds)")
    share.add_argument("--json", action="store_true")
    share.set_defaults(func=_share)

    ne = msub.add_parser("nash", help="predicted Nash equilibrium (eq. 25)")
    ne.add_argument("--flows", type=_number("flows", int, low=2, high=100_000), required=True)
    ne.add_argument("--buffer-bdp", **buffer)
    ne.add_argument("--json", action="store_true")
    ne.set_defaults(func=_nash)

    run = sub.add_parser("run", help="one experiment on the emulated dumbbell (root)")
    run.add_argument("--capacity", required=True, help="bottleneck rate, e.g. 50mbit")
    run.add_argument("--rtt", required=True,
                     help="base RTT, e.g. 40ms (default RTT of every flow and BDP reference)")
    run.add_argument("--buffer-bdp", type=_number("buffer_bdp", float, low=0.01, high=1000.0),
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
                     type=_number("min_utilisation", float, low=0.0, high=1.0), default=0.95,
                     help="utilisation gate (default 0.95)")
    run.add_argument("--run-to-end", action="store_true",
                     help="keep going when the delay-line lateness gate can no longer pass "
                          "(by default the run stops there: it would be invalid)")
    run.add_argument("--out", help="store the run's tables under this directory")
    run.add_argument("--json", action="store_true", help="print the summary as JSON")
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    run.set_defaults(func=_run)

    camp = sub.add_parser("campaign", help="run or inspect an experiment campaign (YAML)")
    csub = camp.add_subparsers(dest="what", required=True, parser_class=_Parser)
    crun = csub.add_parser("run", help="run the missing runs, re-running invalid ones up to "
                          "max_attempts (resumable; exit 3 if a point was given up)")
    crun.add_argument("file", help="campaign file, e.g. data/campaigns/two_flow.yaml")
    crun.add_argument("--scheduler", help="Dask scheduler address: one run per worker")
    crun.add_argument("--limit", type=_number("limit", int, low=1, high=100_000), default=None,
                      help="stop after this many runs")
    crun.add_argument("--data", help="data directory (default: the book's data/)")
    crun.add_argument("--quiet", action="store_true", help="no progress bar")
    wait = crun.add_mutually_exclusive_group()
    wait.add_argument("--steal-limit", type=_number("steal_limit", float, low=0.0, high=100.0),
                      default=None, help="start a local run only once the hypervisor's steal "
                      "over 5 s is at most this %% of the CPU time (off by default: on our "
                      "VM the wait cost time and did not make runs valid more often)")
    wait.add_argument("--no-steal-wait", dest="steal_limit", action="store_const",
                      const=None, help="start every run at once, whatever the steal "
                      "(the default)")
    crun.add_argument("--steal-max-wait", type=_number("steal_max_wait", float, low=0.0,
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

    fl = sub.add_parser("fluid", help="the fluid model of Scherrer et al.")
    fsub = fl.add_subparsers(dest="what", required=True, parser_class=_Parser)
    frun = fsub.add_parser("run", help="simulate a dumbbell and print the aggregate metrics")
    frun.add_argument("--ccas", required=True,
                      help="CCA[:COUNT],... with CCA in reno, cubic, bbr1, bbr2")
    frun.add_argument("--capacity", required=True, help="bottleneck rate, e.g. 100mbit")
    frun.add_argument("--rtt",
                      help="base RTT, or a range spread evenly over the flows: 40ms or "
                           "30ms-40ms (set-up book)")
    frun.add_argument("--rtts", help="one base RTT per flow instead: 30ms,35ms,40ms")
    frun.add_argument("--buffer-bdp",
                      type=_number("buffer_bdp", float, low=0.01, high=1000.0),
                      help="buffer in BDP of the shortest RTT (0.01 to 1000; set-up book)")
    frun.add_argument("--step", type=_quantity(
                          lambda t: quantities.time(t, "step", 1e-6, 1e-3, unit_required=True),
                          "step"),
                      help="integration step with its unit, 1us to 1ms (default 10us; the "
                           "book's figures use 50us, validated in S-Step)")
    frun.add_argument("--setup", choices=("book", "authors"), default="book",
                      help="book (default): the flows and buffer as given, each flow "
                           "starting with its share of one BDP. authors: as the authors' "
                           "code sets up a run: source latencies drawn from "
                           "--source-latency by their seeded generator (RTT 2 x (link + "
                           "source latency)), the buffer --buffer-units x ceil(C x link "
                           "latency) packets, their BBRv2 phases and inflight_hi start; "
                           "their metrics")
    frun.add_argument("--link-latency", type=_quantity(
                          lambda t: quantities.time(t, "link_latency", 1e-4, 1.0,
                                                    unit_required=True), "link_latency"),
                      help="set-up authors: the bottleneck link's one-way latency, e.g. 10ms")
    frun.add_argument("--source-latency", type=_quantity(
                          lambda t: _rtt_range(t, "source_latency", (1e-4, 1.0)),
                          "source_latency"),
                      help="set-up authors: range of the senders' one-way source latency, "
                           "e.g. 5ms-10ms")
    frun.add_argument("--buffer-units",
                      type=_number("buffer_units", float, low=0.01, high=1000.0),
                      help="set-up authors: buffer in their unit, ceil(C x link latency) "
                           "packets")
    frun.add_argument("--duration", default="10s", type=_quantity(
                          lambda t: quantities.time(t, "duration", *FLUID_DURATION_S),
                          "duration"), help="simulated time (default 10s; 0.5 s to 600 s)")
    frun.add_argument("--warmup", default="2s", type=_quantity(
                          lambda t: quantities.time(t, "warmup", 0.0, FLUID_DURATION_S[1]),
                          "warmup"), help="time left out of the metrics (default 2s)")
    frun.add_argument("--aqm", choices=("droptail", "red"), default="droptail")
    frun.add_argument("--rtprop-expiry", action="store_true",
                      help="beyond the paper: BBR's RTprop takes the RTT sampled at each "
                           "ProbeRTT entry (Linux's 10-s filter expiry), not only lower ones")
    frun.add_argument("--cubic-recovery", action="store_true",
                      help="beyond the paper: CUBIC cuts its window once per loss episode "
                           "(one round trip of recovery), as Linux does, not at every loss "
                           "of eq. 40")
    frun.add_argument("--reading", choices=("printed", "published"), default="published",
                      help="published: as the authors' code integrates the equations (default; "
                           "its start, units and BBRv2 bounds); printed: the equations as "
                           "printed")
    frun.add_argument("--json", action="store_true")
    frun.set_defaults(func=_fluid)

    st = sub.add_parser("store", help="the committed fluid-model runs (data/model-runs)")
    ssub = st.add_subparsers(dest="what", required=True, parser_class=_Parser)
    ssub.add_parser("status", help="runs, size, pages, and how many are stale").set_defaults(
        func=_store)
    ssub.add_parser("check", help="fail unless every object is intact and every key "
                                  "current (no run is missing)").set_defaults(func=_store)
    for name, text in (("refresh", "compute what the book needs that the store lacks, "
                                   "drop what no page reads (make store)"),
                       ("verify", "recompute stored runs and require the same bits")):
        p = ssub.add_parser(name, help=text)
        p.add_argument("--jobs", type=_number("jobs", int, low=1, high=MAX_JOBS), default=None,
                       help="runs computed at once (default: one per CPU)")
        p.add_argument("--scheduler", metavar="ADDRESS",
                       help="Dask scheduler address: the runs go to its cluster")
        p.add_argument("--quiet", action="store_true", help="no progress bar")
        p.set_defaults(func=_store)
        if name == "refresh":
            p.add_argument("--no-book", action="store_true",
                           help="recompute stale runs only; keep the pages the index records "
                                "instead of building the book to learn them")
            p.add_argument("--keep-unread", action="store_true",
                           help="keep runs that no page read")
            p.add_argument("--census", metavar="FILE",
                           help="the census of a book build already made with "
                                "COEXIST_FLUID_LOG=FILE, instead of building the book again")
        else:
            p.add_argument("--all", action="store_true", help="every run (make verify-store)")
            p.add_argument("--share", type=_number("share", float, low=0.0, high=1.0,
                                                   low_open=True), default=0.05,
                           help="the sample's least share of the runs (default 0.05)")
            p.add_argument("--seed", help="the sample's seed (default: the commit)")

    tb = sub.add_parser("testbed", help="check or clean the machine for experiments")
    tsub = tb.add_subparsers(dest="what", required=True, parser_class=_Parser)
    chk = tsub.add_parser("check", help="report what the harness needs and how to fix gaps")
    chk.add_argument("--cca", nargs="+", default=["cubic", "bbr", "reno"])
    chk.set_defaults(func=_testbed_check)
    cln = tsub.add_parser("clean", help="remove namespaces and processes of killed runs")
    cln.add_argument("--all", action="store_true", help="also remove runs still in progress")
    cln.set_defaults(func=_testbed_clean)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from .book.runner import CheckFailed
    from .closed_form.mishra import ModelDomainWarning
    from .data import DataError
    from .fluid.store import StoreError
    from .testbed.experiment import Interrupted
    from .testbed.topology import TestbedError

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ModelDomainWarning)
        try:
            return args.func(args)
        except ParameterError as exc:
            print(f"coexist: error: {exc}", file=sys.stderr)
            return 2
        except CheckFailed as exc:
            print(f"coexist: {exc}", file=sys.stderr)
            return 1
        except TestbedError as exc:
            print(f"coexist: testbed: {exc}", file=sys.stderr)
            return 1
        except DataError as exc:
            print(f"coexist: data: {exc}", file=sys.stderr)
            return 1
        except StoreError as exc:
            print(f"coexist: store: {exc}", file=sys.stderr)
            return 1
        except BrokenPipeError:
            # the reader of our output went away (`coexist ... | head`): stop quietly, and
            # keep Python from reporting the pipe again when it flushes stdout at exit
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 141  # 128 + SIGPIPE, as a shell reports a command killed by it
        except (KeyboardInterrupt, Interrupted) as exc:
            print(f"coexist: interrupted ({str(exc) or 'SIGINT'}); testbed removed",
                  file=sys.stderr)
            return 130
        finally:
            # the same model warning can come from several evaluations: print each once
            for text in dict.fromkeys(str(w.message) for w in caught):
                print(f"warning: {text}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
