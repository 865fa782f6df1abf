"""``coexist figures``, ``claims``, ``book``, ``pages``, ``prose`` and ``pdf``: the book's
commands."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..core.params import ParameterError, invalid
from .options import (
    MAX_JOBS,
    check_out_dir,
    check_scheduler,
    number,
)


def _figures(args: argparse.Namespace) -> int:
    from ..book import runner

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
        check_scheduler(args.scheduler)
    check_out_dir(Path(args.out))
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
    from ..book import claims
    from ..book.ledger import EXPECTED, FIGURES, ROOT

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
    from ..book import build as book

    if args.scheduler:
        check_scheduler(args.scheduler)
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
    from ..book import reader_view

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


def _prose(args: argparse.Namespace) -> int:
    """``coexist prose``: how long the built book reads (the landing page's answer, its
    sentences, the prose before each figure page's method) against the writing rules'
    goals (see :mod:`coexist.book.prose`). A report: the book's prose test holds the
    ceilings, so a missed goal does not change the exit status."""
    from ..book import prose

    html_dir = Path(args.html)
    if not (html_dir / "index.html").exists():
        raise invalid("html", args.html, "a built book's HTML directory (run `make book`)")
    try:
        report = prose.measure(html_dir)
    except (FileNotFoundError, ValueError) as e:  # a page not built, or no answer section
        print(f"coexist prose: {e}", file=sys.stderr)
        return 1
    print(prose.text_report(report, top=args.top, every_page=args.all))
    return 0


def _pdf(args: argparse.Namespace) -> int:
    """``coexist pdf``: the built book printed as one PDF (see :mod:`coexist.book.pdf`)."""
    from ..book import pdf

    out = Path(args.out)
    if out.is_dir():
        raise invalid("out", args.out, "a PDF file path, not a directory")
    check_out_dir(out.parent)
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


def add_parsers(sub) -> None:
    """Add this module's commands to the ``coexist`` parser's subcommands."""
    fig = sub.add_parser("figures", help="regenerate figures through their notebooks")
    fig.add_argument("--only", nargs="+", action="extend", metavar="ID",
                     help="figure ids (default: all; repeatable)")
    fig.add_argument("-p", "--param", nargs=2, action="append", default=[],
                     metavar=("NAME", "VALUE"), help="override a notebook parameter")
    fig.add_argument("--out", default="build/figures", help="output directory")
    fig.add_argument("--check", action="store_true",
                     help="compare regenerated tables with the committed ones")
    fig.add_argument("--accept", action="store_true",
                     help="copy regenerated tables and SVGs over the committed ones")
    fig.add_argument("--quiet", action="store_true", help="no progress bar")
    fig.add_argument("--jobs", type=number("jobs", int, low=1, high=MAX_JOBS), default=1,
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
    bk.add_argument("--jobs", type=number("jobs", int, low=1, high=MAX_JOBS), default=None,
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

    pr = sub.add_parser("prose", help="how long the built book reads: the answer's words and "
                                      "numbers, long sentences, prose before each figure's "
                                      "method, against the writing rules' goals")
    pr.add_argument("--html", default=str(Path("_build") / "html"),
                    help="the built book's HTML directory (default: _build/html)")
    pr.add_argument("--top", type=number("top", int, low=0, high=1000), default=10,
                    help="the longest sentences and wordiest figure pages listed (default: 10)")
    pr.add_argument("--all", action="store_true",
                    help="list every sentence over the limit and every figure page")
    pr.set_defaults(func=_prose)

    pd_ = sub.add_parser("pdf", help="print the built book as one PDF (headless Chromium)")
    pd_.add_argument("--html", default=str(Path("_build") / "html"),
                     help="the built book's HTML directory (default: _build/html)")
    pd_.add_argument("--out", default=str(Path("_build") / "pdf" / "book.pdf"),
                     help="the PDF to write (default: _build/pdf/book.pdf; a copy goes into "
                          "the site as book.pdf)")
    pd_.add_argument("--quiet", action="store_true", help="no progress bar")
    pd_.set_defaults(func=_pdf)

