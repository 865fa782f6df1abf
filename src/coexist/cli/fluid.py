"""``coexist fluid run``: one fluid-model run and its aggregate metrics."""

from __future__ import annotations

import argparse
import json

import numpy as np

from ..core import quantities
from ..core.params import ParameterError, invalid
from .options import (
    FLUID_CAPACITY_BPS,
    FLUID_DURATION_S,
    FLUID_RTT_S,
    command_group,
    number,
    quantity,
)


def _fluid_flows(text: str) -> list[str]:
    """``cubic,bbr1`` or ``cubic:5,bbr1:5`` -> one CCA name per flow."""
    from ..fluid.model.solve import CCAS

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
    """The run as the authors' code sets it up (:func:`.fluid.paper_setup.paper_flows`):
    every CCA the same number of flows in their order, each source latency drawn from the
    range with their seeded generator (RTT 2 x (link + source latency)), the buffer
    ``int(units x ceil(C x link latency))`` packets of 1514 B, BBRv2's period phases the
    generator's next draws and its inflight_hi from the buffer unit."""
    import math

    from ..fluid.model import paper_setup, published, solve

    kinds = list(dict.fromkeys(ccas))
    counts = {c: ccas.count(c) for c in kinds}
    if len(set(counts.values())) != 1:
        raise invalid("ccas", args.ccas, "the same number of flows of every CCA (the "
                      "authors' code shares the senders equally)")
    link_ms = args.link_latency * 1e3
    lo, hi = args.source_latency
    flows, d0_ms, rtt_ms, _ = paper_setup.paper_flows(kinds, len(ccas), link_ms,
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
                        bbr2_phase=paper_setup.paper_phases(len(ccas)),
                        inflight_hi_factor=paper_setup.inflight_hi_factor(args.buffer_units))


#: the page's engine's range (:mod:`coexist.live.engine`), checked before anything runs
BROWSER_MIN_STEP_S = 1e-5


def _engine_options(args: argparse.Namespace) -> None:
    """With ``--engine browser``, every option inside the page's engine's range and Node
    present, or one line naming the option, its value and the range."""
    if args.engine != "browser":
        return
    from ..live import engine

    if args.reading != "published":
        raise invalid("reading", args.reading, "published with --engine browser (the page's "
                      "engine runs the published reading only)")
    if args.step is not None and args.step < BROWSER_MIN_STEP_S * (1 - 1e-9):
        raise invalid("step", f"{args.step * 1e6:g}us", "10us to 1ms with --engine browser")
    if args.duration > engine.MAX_DURATION_S:
        raise invalid("duration", f"{args.duration:g}s",
                      f"0.5s to {engine.MAX_DURATION_S:g}s with --engine browser")
    if engine.node() is None:
        raise ParameterError("--engine browser runs the page's engine under Node: no 'node' "
                             "on PATH (apt-get install nodejs)")


def _simulate(cfg, warmup_s: float, engine_name: str):
    """The published reading's trace and the authors' metrics of ``cfg`` from the native
    kernel or the page's engine (:func:`coexist.live.engine.simulate`, the same numbers)."""
    from ..fluid.model import solve

    if engine_name == "browser":
        from ..live import engine

        return engine.simulate(cfg, warmup_s, fields=engine.TRACE_FIELDS)
    return solve.simulate_published(cfg, warmup_s)


def _fluid_authors(args: argparse.Namespace, ccas: list[str], capacity: float) -> int:
    """``coexist fluid run --setup authors``: their set-up, their metrics (their
    ``analyze_trace``'s: mean queue, Jain index of the mean rates, loss, utilisation,
    jitter), as :func:`.fluid.solve.simulate_published` computes them."""
    from ..fluid.model import published

    cfg = _authors_config(args, ccas, capacity)
    if args.engine == "browser":
        from ..live import engine

        engine.check(cfg)  # before the run: a configuration beyond the engine's memory
    _, m = _simulate(cfg, args.warmup, args.engine)
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
          f"{cfg.step_s * 1e6:g} us"
          + (", the page's engine (WebAssembly under Node)" if args.engine == "browser"
             else ""))
    for key in ("queue_share", "jain", "loss", "utilization"):
        print(f"  {key:<12} {out[key]:.4f}")
    print(f"  {'jitter':<12} {out['jitter_ms']:.4f} ms")
    for f in flows:
        print(f"  flow {f['flow']:>2} {f['cca']:>5} rtt {f['rtt_s'] * 1e3:6.2f} ms  "
              f"share {f['share']:.3f}")
    return 0


def _fluid(args: argparse.Namespace) -> int:
    from ..fluid.model import metrics, paper_setup, solve

    _setup_options(args)
    _engine_options(args)
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
    # sample at least once per virtual packet interval N/C, for the jitter metric, and no
    # finer than the step, which bounds what the solver resolves
    step_s = solve.Config.step_s if args.step is None else args.step
    sample = max(step_s, min(1e-3, len(ccas) / pps))
    if args.reading == "published":  # its own start (paper_setup.start)
        start = {"reading": "published",
                 **paper_setup.start(ccas, rtts, args.buffer_bdp * pps * rtt_lo, pps)}
    else:
        start = {"reading": "printed", "initial_window": max(1.0, pps * rtt_lo / len(ccas))}
    step = {} if args.step is None else {"step_s": args.step}
    cfg = solve.dumbbell(ccas, capacity_bps=capacity, rtt_s=rtts, buffer_bdp=args.buffer_bdp,
                         duration_s=args.duration, aqm=args.aqm, sample_s=sample, **step,
                         rtprop_expiry=args.rtprop_expiry, cubic_recovery=args.cubic_recovery,
                         **start)
    if args.engine == "browser":
        from ..live import engine

        tr = _simulate(engine.check(cfg), 0.0, "browser")[0]
    else:
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
          + (", CUBIC cutting once per loss episode" if args.cubic_recovery else "")
          + (", the page's engine (WebAssembly under Node)" if args.engine == "browser"
             else ""))
    for key in ("jain", "loss_rate", "queue_share", "utilisation"):
        print(f"  {key:<12} {agg[key]:.4f}")
    print(f"  {'jitter':<12} {agg['jitter_s'] * 1e3:.4f} ms")
    for f in flows.itertuples():
        print(f"  flow {f.flow:>2} {f.cca:>5} rtt {f.rtt_s * 1e3:6.2f} ms  "
              f"{f.rate_bps / 1e6:8.2f} Mbit/s  share {f.share:.3f}")
    return 0


def add_parsers(sub) -> None:
    """Add this module's commands to the ``coexist`` parser's subcommands."""
    fsub = command_group(sub, "fluid", "the fluid model of Scherrer et al.")
    frun = fsub.add_parser("run", help="simulate a dumbbell and print the aggregate metrics")
    frun.add_argument("--ccas", required=True,
                      help="CCA[:COUNT],... with CCA in reno, cubic, bbr1, bbr2")
    frun.add_argument("--capacity", required=True, help="bottleneck rate, e.g. 100mbit")
    frun.add_argument("--rtt",
                      help="base RTT, or a range spread evenly over the flows: 40ms or "
                           "30ms-40ms (set-up book)")
    frun.add_argument("--rtts", help="one base RTT per flow instead: 30ms,35ms,40ms")
    frun.add_argument("--buffer-bdp",
                      type=number("buffer_bdp", float, low=0.01, high=1000.0),
                      help="buffer in BDP of the shortest RTT (0.01 to 1000; set-up book)")
    frun.add_argument("--step", type=quantity(
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
    frun.add_argument("--link-latency", type=quantity(
                          lambda t: quantities.time(t, "link_latency", 1e-4, 1.0,
                                                    unit_required=True), "link_latency"),
                      help="set-up authors: the bottleneck link's one-way latency, e.g. 10ms")
    frun.add_argument("--source-latency", type=quantity(
                          lambda t: _rtt_range(t, "source_latency", (1e-4, 1.0)),
                          "source_latency"),
                      help="set-up authors: range of the senders' one-way source latency, "
                           "e.g. 5ms-10ms")
    frun.add_argument("--buffer-units",
                      type=number("buffer_units", float, low=0.01, high=1000.0),
                      help="set-up authors: buffer in their unit, ceil(C x link latency) "
                           "packets")
    frun.add_argument("--duration", default="10s", type=quantity(
                          lambda t: quantities.time(t, "duration", *FLUID_DURATION_S),
                          "duration"), help="simulated time (default 10s; 0.5 s to 600 s)")
    frun.add_argument("--warmup", default="2s", type=quantity(
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
    frun.add_argument("--engine", choices=("native", "browser"), default="native",
                      help="native (default): the compiled kernel; browser: the page's own "
                           "engine (its JavaScript and WebAssembly, under Node), which gives "
                           "the same numbers: the published reading, steps from 10us, runs "
                           "up to 600s")
    frun.add_argument("--json", action="store_true")
    frun.set_defaults(func=_fluid)

