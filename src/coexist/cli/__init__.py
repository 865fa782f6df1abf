"""Command line: ``coexist book``, ``coexist figures``, ``coexist model share|nash``,
``coexist fluid run``, ``coexist store status|check|refresh|verify``, ``coexist run``,
``coexist campaign run|status`` and ``coexist testbed check|clean``.

Bad input ends with one line naming the parameter, its value and the valid range, and exit
status 2; a failed figure check or a harness failure exits with 1; an experiment that ran
but failed a validity gate exits with 3.
"""


from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Sequence

from ..core.params import ParameterError
from . import book, fluid, model, store, testbed
from .options import Parser


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="coexist", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for room in (book, model, testbed, fluid, store):
        room.add_parsers(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as ended:  # --help, or a usage error: argparse printed and exits
        try:
            sys.stdout.flush()  # a closed pipe shows here, not when Python exits
        except BrokenPipeError:
            return _closed_pipe()
        raise ended from None
    from ..book.runner import CheckFailed
    from ..closed_form.mishra import ModelDomainWarning
    from ..data import DataError
    from ..live.engine import EngineError
    from ..runstore.store import StoreError
    from ..testbed.experiment import Interrupted
    from ..testbed.topology import TestbedError

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ModelDomainWarning)
        try:
            code = args.func(args)
            sys.stdout.flush()  # a closed pipe shows here, not when Python exits
            return code
        except ParameterError as exc:
            print(f"coexist: error: {exc}", file=sys.stderr)
            return 2
        except (CheckFailed, TestbedError, DataError, StoreError, EngineError) as exc:
            # a failed check, harness or engine, bad data or a bad store: one line, exit 1
            where = next(name for kind, name in ((CheckFailed, ""), (TestbedError, "testbed: "),
                                                 (DataError, "data: "), (StoreError, "store: "),
                                                 (EngineError, "engine: "))
                         if isinstance(exc, kind))
            print(f"coexist: {where}{exc}", file=sys.stderr)
            return 1
        except BrokenPipeError:
            return _closed_pipe()
        except (KeyboardInterrupt, Interrupted) as exc:
            print(f"coexist: interrupted ({str(exc) or 'SIGINT'}); testbed removed",
                  file=sys.stderr)
            return 130
        finally:
            # the same model warning can come from several evaluations: print each once
            for text in dict.fromkeys(str(w.message) for w in caught):
                print(f"warning: {text}", file=sys.stderr)


def _closed_pipe() -> int:
    """The reader of our output went away (``coexist ... | head``): stop quietly, and keep
    Python from reporting the pipe again when it flushes stdout at exit."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 141  # 128 + SIGPIPE, as a shell reports a command killed by it
