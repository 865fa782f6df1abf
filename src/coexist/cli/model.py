"""``coexist model share|nash``: the closed-form model's what-ifs."""

from __future__ import annotations

import argparse
import json

from ..core import quantities
from ..core.params import ParameterError
from .options import (
    DURATION_S,
    command_group,
    finite,
    number,
    quantity,
)


def _browser(report: str, inputs: dict) -> dict:
    """The page's closed form under Node (closed_form.mjs, the same doubles)."""
    from ..live import engine

    got = engine.closed_form(report, inputs)
    # JSON writes a whole double without its ".0": the numbers are floats, the mixes ints
    return {k: (v if v is None or k.startswith(("equilibria", "whole")) else float(v))
            for k, v in got.items()}


def _engine_options(args: argparse.Namespace) -> None:
    """With ``--engine browser``, Node present, or one line saying so, before any run."""
    if args.engine != "browser":
        return
    from ..live import engine

    if engine.node() is None:
        raise ParameterError("--engine browser runs the page's closed form under Node: no "
                             "'node' on PATH (apt-get install nodejs)")


def _native_share(args: argparse.Namespace, nc: int, nb: int) -> dict:
    """Shares and per-flow rates of ``nc`` CUBIC and ``nb`` BBR flows from
    coexist.closed_form (None where there is no such flow or no answer)."""
    from ..closed_form import mishra, ware

    sync = mishra.multi_flow(args.buffer_bdp, nc, nb, capacity_bps=args.capacity,
                             synchronised=True)
    desync = mishra.multi_flow(args.buffer_bdp, nc, nb, capacity_bps=args.capacity,
                               synchronised=False)
    ware_share = 0.0
    if nb > 0:
        ware_share = float(ware.bbr_share(args.buffer_bdp, capacity_bps=args.capacity,
                                          rtt_s=args.rtt, n_bbr=nb, duration_s=args.duration,
                                          outside="nan"))
    return {"bbr_share_sync": float(sync.bbr_share),
            "bbr_share_desync": float(desync.bbr_share),
            "ware_bbr_share": finite(ware_share),
            "bbr_per_flow_bps_sync": finite(sync.bbr_per_flow_bps),
            "bbr_per_flow_bps_desync": finite(desync.bbr_per_flow_bps),
            "cubic_per_flow_bps_sync": finite(sync.cubic_per_flow_bps),
            "cubic_per_flow_bps_desync": finite(desync.cubic_per_flow_bps)}


def _share(args: argparse.Namespace) -> int:
    from ..closed_form import mishra

    _engine_options(args)

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
    if args.engine == "browser":
        mishra._check_buffer(args.buffer_bdp)  # the native run's warning beyond 100 BDP
        got = _browser("share", {"bufferBdp": args.buffer_bdp, "nCubic": nc, "nBbr": nb,
                                 "capacityBps": args.capacity, "rttS": args.rtt,
                                 "durationS": args.duration})
    else:
        got = _native_share(args, nc, nb)
    # Ware et al.'s formula leaves [0, 1] for some inputs (its ProbeRTT time can exceed the
    # run, its 4N/q term can pass 1): then it has no answer, which is reported, not an error
    ware_share = got.pop("ware_bbr_share")
    ware_note = ""
    if ware_share is None:
        ware_note = ("outside [0, 1] for these inputs (its ProbeRTT time or 4N/q term "
                     "is too large): no prediction")
    out = {
        "buffer_bdp": args.buffer_bdp,
        "cubic_flows": nc,
        "bbr_flows": nb,
        "capacity_bps": args.capacity,
        "rtt_s": args.rtt,
        "bbr_share_sync": got["bbr_share_sync"],
        "bbr_share_desync": got["bbr_share_desync"],
        "ware_bbr_share": ware_share,
        "ware_note": ware_note or None,
        **{k: got[k] for k in ("bbr_per_flow_bps_sync", "bbr_per_flow_bps_desync",
                               "cubic_per_flow_bps_sync", "cubic_per_flow_bps_desync")},
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


def _nash(args: argparse.Namespace) -> int:
    from ..closed_form import mishra, nash

    _engine_options(args)
    out = {"flows": args.flows, "buffer_bdp": args.buffer_bdp}
    if args.engine == "browser":
        mishra._check_buffer(args.buffer_bdp)  # the native run's warning beyond 100 BDP
        got = _browser("nash", {"bufferBdp": args.buffer_bdp, "nFlows": args.flows})
        for bound in ("sync", "desync"):
            out[f"bbr_flows_{bound}"] = got[f"bbr_flows_{bound}"]
            out[f"equilibria_{bound}"] = got[f"equilibria_{bound}"]
    else:
        region = nash.predicted_region(args.buffer_bdp, args.flows)
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


def add_parsers(sub) -> None:
    """Add this module's commands to the ``coexist`` parser's subcommands."""
    msub = command_group(sub, "model", "closed-form model what-ifs")
    buffer = dict(type=number("buffer_bdp", float, low=1.0, high=1000.0, low_open=True),
                  required=True, help="bottleneck buffer in BDP (> 1)")
    share = msub.add_parser("share", help="BBR's bandwidth share (eqs. 2, 18-24)")
    share.add_argument("--buffer-bdp", **buffer)
    share.add_argument("--cubic-flows", type=number("cubic_flows", int, low=0, high=100_000),
                       default=None, help="CUBIC flows (default 1)")
    share.add_argument("--flows", type=number("flows", int, low=1, high=100_000),
                       default=None, help="total flows; CUBIC flows = flows - bbr flows")
    share.add_argument("--bbr-flows", type=number("bbr_flows", int, low=0, high=100_000),
                       default=1)
    share.add_argument("--capacity", default="100mbit",
                       type=quantity(lambda t: quantities.rate(t, "capacity"), "capacity"),
                       help="bottleneck rate with its unit, for per-flow rates and Ware's "
                            "model (default 100mbit; 10kbit to 100gbit)")
    share.add_argument("--rtt", default="40ms", type=quantity(
                           lambda t: quantities.time(t, "rtt", *quantities.MODEL_RTT_S,
                                                     unit_required=True), "rtt"),
                       help="base RTT with its unit, for Ware's model (default 40ms)")
    share.add_argument("--duration", default="120s", type=quantity(
                           lambda t: quantities.time(t, "duration", *DURATION_S), "duration"),
                       help="competition time for Ware's model (default 120s; a bare number "
                            "is seconds)")
    share.add_argument("--engine", choices=("native", "browser"), default="native",
                       help="native (default): coexist.closed_form in Python; browser: the "
                            "page's own closed form (its JavaScript, under Node), which "
                            "gives the same numbers")
    share.add_argument("--json", action="store_true")
    share.set_defaults(func=_share)

    ne = msub.add_parser("nash", help="predicted Nash equilibrium (eq. 25)")
    ne.add_argument("--flows", type=number("flows", int, low=2, high=100_000), required=True)
    ne.add_argument("--buffer-bdp", **buffer)
    ne.add_argument("--engine", choices=("native", "browser"), default="native",
                    help="native (default): coexist.closed_form in Python; browser: the "
                         "page's own closed form (its JavaScript, under Node), which gives "
                         "the same numbers")
    ne.add_argument("--json", action="store_true")
    ne.set_defaults(func=_nash)

