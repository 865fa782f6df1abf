"""Command line: ``coexist figures`` and ``coexist model share|nash``.

Bad input ends with one line naming the parameter, its value and the valid range, and exit
status 2; a failed figure check exits with 1.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path

from .params import Param, ParameterError


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2, as for ParameterError
        self.exit(2, f"{self.prog}: error: {message}\n")


def _number(name: str, kind: type, **limits) -> callable:
    """An argparse type that checks range and names the parameter in its error."""
    param = Param(name, kind, None, **limits)

    def convert(text: str):
        try:
            return param.parse(text)
        except ParameterError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    convert.__name__ = name
    return convert


def _figures(args: argparse.Namespace) -> int:
    from . import runner

    results = runner.run(
        args.only,
        [tuple(p) for p in args.param],
        out_dir=Path(args.out),
        check=args.check,
        accept=args.accept,
        progress=not args.quiet,
    )
    for r in results:
        print(f"{r.id}: {r.svg} {r.csv}" + ("  [matches committed table]" if args.check else ""))
    return 0


def _share(args: argparse.Namespace) -> int:
    from . import mishra, ware

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
    ware_share = (
        float(ware.bbr_share(args.buffer_bdp, capacity_bps=args.capacity, rtt_s=args.rtt,
                             n_bbr=nb, duration_s=args.duration))
        if nb > 0 else 0.0
    )
    out = {
        "buffer_bdp": args.buffer_bdp,
        "cubic_flows": nc,
        "bbr_flows": nb,
        "capacity_bps": args.capacity,
        "rtt_s": args.rtt,
        "bbr_share_sync": float(sync.bbr_share),
        "bbr_share_desync": float(desync.bbr_share),
        "ware_bbr_share": ware_share,
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
        print(f"  BBR aggregate share, Ware et al.          (eq. 2):  {ware_share:.4f}")
    return 0


def _finite(value) -> float | None:
    v = float(value)
    return v if v == v else None


def _nash(args: argparse.Namespace) -> int:
    from . import nash

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
    fig.set_defaults(func=_figures)

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
    share.add_argument("--capacity", type=_number("capacity_bps", float, low=0.0,
                                                 low_open=True), default=100e6,
                       help="bit/s, for per-flow rates and Ware's model (default 100e6)")
    share.add_argument("--rtt", type=_number("rtt_s", float, low=0.0, low_open=True),
                       default=0.04, help="base RTT in s, for Ware's model (default 0.04)")
    share.add_argument("--duration", type=_number("duration_s", float, low=1.0),
                       default=120.0, help="competition time for Ware's model, s")
    share.add_argument("--json", action="store_true")
    share.set_defaults(func=_share)

    ne = msub.add_parser("nash", help="predicted Nash equilibrium (eq. 25)")
    ne.add_argument("--flows", type=_number("flows", int, low=2, high=100_000), required=True)
    ne.add_argument("--buffer-bdp", **buffer)
    ne.add_argument("--json", action="store_true")
    ne.set_defaults(func=_nash)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from .mishra import ModelDomainWarning
    from .runner import CheckFailed

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
        finally:
            # the same model warning can come from several evaluations: print each once
            for text in dict.fromkeys(str(w.message) for w in caught):
                print(f"warning: {text}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
