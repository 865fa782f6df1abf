"""The book's index of figures and equations, built from the ledger and the docstrings.

Nothing here is typed by hand, so the index cannot drift from the code:

- :func:`figures` lists every figure of the ledger with the notebook that draws it, the
  committed table and claims CI checks, and the campaigns whose runs it reads (declared in
  the ledger and checked when the figure is saved) with how many of their planned runs are
  stored.
- :func:`equations` maps every equation number cited in a docstring of the package to the
  functions (or classes, or modules) whose docstring cites it, and each of those to the
  tests that call it by name. A module's paper is the one its code implements: Mishra et
  al. for the closed form (``mishra``, ``ware``, ``nash``, ``derivations``), Scherrer et al.
  for the fluid model (``fluid``).
"""

from __future__ import annotations

import ast
import functools
import html
import re
from pathlib import Path

import pandas as pd

from ..core import paths
from . import claims, ledger

PACKAGE = Path(__file__).resolve().parents[1]
TESTS = paths.ROOT / "tests"
#: the paper each module cites equations of
PAPERS = {"coexist.closed_form": "Mishra et al.", "coexist.fluid": "Scherrer et al."}
#: "eq. 9", "eqs. 40-41", "eq. (18)", "eqs. (40a-b)", "eqs. 5-20"
CITATION = re.compile(r"\beqs?\.\s*\(?(\d+)[a-z]?\)?(?:\s*-\s*\(?(\d+)[a-z]?\)?)?")


def cited(text: str) -> list[int]:
    """The equation numbers a text cites, ranges expanded (eqs. 40-41 is 40 and 41)."""
    found: list[int] = []
    for m in CITATION.finditer(text or ""):
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) else lo
        if hi < lo or hi - lo > 40:  # not a range of equations (e.g. a year)
            hi = lo
        found += range(lo, hi + 1)
    return found


def _paper(module: str) -> str | None:
    for prefix, paper in PAPERS.items():
        if module == prefix or module.startswith(prefix + "."):
            return paper
    return None


def _definitions(path: Path, module: str):
    """(qualified name, short name, docstring, line) of a module, its classes and
    functions; a module's line is 1."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    yield module, module.rsplit(".", 1)[-1], ast.get_docstring(tree) or "", 1
    stack = [(tree, module)]
    while stack:
        node, prefix = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}.{child.name}"
                yield name, child.name, ast.get_docstring(child) or "", child.lineno
                if isinstance(child, ast.ClassDef):
                    stack.append((child, name))


@functools.cache
def _test_calls() -> tuple[dict[str, set[str]], dict[str, set[str]], dict[str, int]]:
    """For every name called in the tests, the tests (file::function) that call it; for
    every module the tests import, the test files that import it; and the line each test
    starts at. Each test file is parsed once per process."""
    calls: dict[str, set[str]] = {}
    imports: dict[str, set[str]] = {}
    lines: dict[str, int] = {}
    for path in sorted(TESTS.rglob("test_*.py")):
        rel = path.relative_to(TESTS).as_posix()  # e.g. fluid/test_bbr.py
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("coexist"):
                for a in node.names:
                    imports.setdefault(f"{node.module}.{a.name}", set()).add(rel)
                imports.setdefault(node.module, set()).add(rel)
        for fn in tree.body:
            if not isinstance(fn, ast.FunctionDef) or not fn.name.startswith("test"):
                continue
            lines[f"{rel}::{fn.name}"] = fn.lineno
            for node in ast.walk(fn):
                if isinstance(node, ast.Call):
                    f = node.func
                    name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
                    if name:
                        calls.setdefault(name, set()).add(f"{rel}::{fn.name}")
    return calls, imports, lines


def equations() -> pd.DataFrame:
    """One row per (paper, equation, implementing definition): the definition's dotted
    name, the tests that call it by name (for a module: the test files that import it;
    ``;``-separated, empty if none) and their number."""
    calls, imports, _ = _test_calls()
    rows = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = ("coexist",) + path.relative_to(PACKAGE).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        paper = _paper(module)
        if paper is None:
            continue
        source = path.relative_to(paths.ROOT).as_posix()
        for qualname, short, doc, line in _definitions(path, module):
            tests = sorted(calls.get(short, ()) if qualname != module
                           else imports.get(module, ()))
            for eq in sorted(set(cited(doc))):
                rows.append({"paper": paper, "equation": eq, "definition": qualname,
                             "tests": "; ".join(tests), "n_tests": len(tests),
                             "source": source, "line": line})
    table = pd.DataFrame(rows, columns=["paper", "equation", "definition", "tests",
                                        "n_tests", "source", "line"])
    return table.sort_values(["paper", "equation", "definition"], ignore_index=True)


def gaps(table: pd.DataFrame, counts: dict[str, int]) -> dict[str, list[int]]:
    """Per paper, the equation numbers 1..count that no docstring cites."""
    return {paper: sorted(set(range(1, n + 1)) - set(table[table.paper == paper].equation))
            for paper, n in counts.items()}


@functools.cache
def _coverage(name: str) -> tuple[int, int]:
    """A campaign's (runs stored, runs planned), read once per process: the index asks for
    the same campaigns figure after figure."""
    from ..measured import runs as measured

    return measured.coverage(name)


def campaigns_used(e: ledger.Entry) -> list[tuple[str, int, int]]:
    """(campaign, runs stored, runs planned) of every campaign figure ``e`` reads (its
    ledger declaration; ``*`` is every campaign)."""
    names = (sorted(p.stem for p in (paths.DATA / "campaigns").glob("*.yaml"))
             if "*" in e.campaigns else list(e.campaigns))
    return [(name, *_coverage(name)) for name in names]


def figures() -> pd.DataFrame:
    """One row per figure of the ledger: id, title, notebook, committed table and claims,
    and the campaigns it reads with their stored/planned runs."""
    rows = []
    for e in ledger.FIGURES:
        used = [f"{name} ({done}/{planned} runs)" for name, done, planned in campaigns_used(e)]
        claims_file = paths.EXPECTED / f"{e.id}{claims.SUFFIX}"
        rows.append({"figure": e.id, "title": e.title, "notebook": f"notebooks/{e.notebook}",
                     "table": f"notebooks/expected/{e.id}.csv",
                     "claims": len(claims.read(claims_file)) if claims_file.exists() else 0,
                     "campaigns": ", ".join(used) or "none (models only)"})
    return pd.DataFrame(rows)


def figure_rows_for_reader() -> pd.DataFrame:
    """:func:`figures` as the index page shows it: the figure id linking to its page, what
    it shows, and the data it reads (HTML cells; the files it compares are named on the
    figure's own page, under the figure)."""
    import html

    t = figures()
    link = [f'<a href="{Path(nb).stem}.html">{html.escape(fid)}</a>'
            for fid, nb in zip(t["figure"], t["notebook"], strict=True)]
    return pd.DataFrame({"Figure": link, "What it shows": t["title"].map(html.escape),
                         "Data it reads": t["campaigns"].map(html.escape)})


def _test_link(test: str) -> tuple[str, int | None]:
    """(file, line) of a test id: ``file::function``, or a bare file (a module's tests are
    the files that import it)."""
    file = test.split("::", 1)[0]
    return f"tests/{file}", _test_calls()[2].get(test) if "::" in test else None


def equations_for_reader(table: pd.DataFrame, links: bool = False) -> pd.DataFrame:
    """:func:`equations` as the index page shows it: one row per paper and equation, the
    definitions that implement it and the tests that call them, per test file.

    With ``links`` every definition links to its code and every test file to the first of
    its tests that calls one of them, in the site's rendering of the source
    (:mod:`coexist.book.source_pages`; the cells are HTML, to be shown unescaped)."""
    from . import source_pages

    def cell(text: str, href: str) -> str:
        return f'<a href="{href}">{html.escape(text)}</a>' if links else text

    rows = []
    for (paper, eq), g in table.groupby(["paper", "equation"], sort=True):
        defs = g.drop_duplicates("definition").sort_values("definition")
        tests = sorted({t for ts in g["tests"] for t in ts.split("; ") if t})
        by_file: dict[str, list[str]] = {}
        for t in tests:
            by_file.setdefault(t.split("::", 1)[0], []).append(t)
        implemented = ", ".join(
            cell(r.definition.removeprefix("coexist."), source_pages.href(r.source, r.line))
            for r in defs.itertuples())
        tested = ", ".join(
            cell(f.removesuffix(".py"), source_pages.href(*_test_link(ts[0])))
            + (f" ({len(ts)})" if len(ts) > 1 else "") for f, ts in by_file.items()) or "none"
        rows.append({"Paper": paper, "Eq.": int(eq), "Implemented by": implemented,
                     "Tests (per file)": tested})
    return pd.DataFrame(rows)
