"""Run figure notebooks through papermill and compare their tables with the committed ones.

Papermill injects any parameter it is given and only warns about names the notebook does not
declare; here every override is checked against the ledger first, so a typo stops the run
before a kernel starts.
"""

from __future__ import annotations

import math
import shutil
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..core import settings, sidecars
from ..core.params import ParameterError
from ..core.paths import (  # noqa: F401 (BUNDLED_ONLY re-exported)
    BUNDLED_ONLY,
    MANIFEST,
    MANIFEST_SCHEMA,
)
from . import claims
from .ledger import EXPECTED, FIGURES, Entry, entry


class CheckFailed(RuntimeError):
    """A regenerated figure table differs from the committed one, or is missing."""


@dataclass
class FigureResult:
    """What one figure run produced and, with ``--check``, how it compared."""

    id: str
    notebook: Path
    svg: Path
    csv: Path
    problems: list[str] = field(default_factory=list)


def select(ids: Sequence[str] | None) -> list[Entry]:
    """The figure entries to run: all of them, or the named ones in ledger order."""
    if not ids:
        return list(FIGURES)
    chosen = []
    for i in ids:
        e = entry(i)
        if e.kind != "figure":
            raise ParameterError(f"{i!r} is a derivation notebook, not a figure")
        chosen.append(e)
    return chosen


def resolve_overrides(
    entries: Sequence[Entry], raw: Sequence[tuple[str, str]]
) -> dict[str, dict[str, Any]]:
    """Parse ``-p NAME VALUE`` pairs per figure.

    A name must be accepted by at least one selected figure (it is applied to those that
    accept it); ``out_dir`` is the runner's to set. Values are parsed and range-checked, and
    cross-parameter rules are applied per figure.
    """
    per_figure: dict[str, dict[str, Any]] = {e.id: {} for e in entries}
    for name, text in raw:
        if name == "out_dir":
            raise ParameterError("parameter 'out_dir' is set by --out, not by -p")
        takers = [e for e in entries if name in e.spec.names]
        if not takers:
            accepted = sorted({n for e in entries for n in e.spec.names} - {"out_dir"})
            raise ParameterError(
                f"unknown parameter {name!r} for {', '.join(e.id for e in entries)}; "
                f"accepted names: {', '.join(accepted)}"
            )
        for e in takers:
            per_figure[e.id][name] = e.spec.get(name).parse(text)
    for e in entries:
        e.spec.validate(per_figure[e.id], partial=True)
    return per_figure


def run_one(e: Entry, overrides: Mapping[str, Any], out_dir: Path) -> FigureResult:
    """Execute one figure notebook; fail if it did not write its SVG and CSV."""
    import papermill as pm

    # papermill runs the notebook in its folder by changing the process's directory, which
    # every thread shares: paths used while notebooks run must be absolute (run() resolves
    # its out_dir before starting any)
    out_dir = Path(out_dir).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    for suffix in (".svg", ".csv", claims.SUFFIX):
        (out_dir / f"{e.id}{suffix}").unlink(missing_ok=True)
    executed = out_dir / f"{e.id}.ipynb"
    try:
        pm.execute_notebook(
            str(e.path),
            str(executed),
            parameters={**overrides, "out_dir": str(out_dir)},
            cwd=str(e.path.parent),
            kernel_name="python3",
            progress_bar=False,
            log_output=False,
        )
    except pm.PapermillExecutionError as exc:
        raise CheckFailed(
            f"{e.id}: {e.notebook} failed in cell {exc.exec_count}: {exc.ename}: {exc.evalue} "
            f"(executed notebook: {executed})"
        ) from None
    result = FigureResult(e.id, executed, out_dir / f"{e.id}.svg", out_dir / f"{e.id}.csv")
    for path in (result.svg, result.csv):
        if not path.exists() or path.stat().st_size == 0:
            raise CheckFailed(f"{e.id}: the notebook did not write {path.name}")
    return result


def compare_tables(new: Path, old: Path, rtol: float, atol: float) -> list[str]:
    """Differences between two tidy CSVs: columns, rows, text cells, numbers beyond tolerance."""
    if not old.exists():
        return [f"no committed table {old}"]
    a = pd.read_csv(new)
    b = pd.read_csv(old)
    if list(a.columns) != list(b.columns):
        return [f"columns differ: {list(a.columns)} vs committed {list(b.columns)}"]
    if len(a) != len(b):
        return [f"{len(a)} rows vs {len(b)} committed"]
    problems = []
    for col in a.columns:
        numeric = pd.api.types.is_numeric_dtype(a[col]) and pd.api.types.is_numeric_dtype(b[col])
        for row, (x, y) in enumerate(zip(a[col], b[col], strict=True)):
            if numeric:
                same = (math.isnan(x) and math.isnan(y)) or math.isclose(
                    x, y, rel_tol=rtol, abs_tol=atol
                )
            else:
                same = str(x) == str(y)
            if not same:
                problems.append(f"{col} row {row + 2}: {x!r} vs committed {y!r}")
                if len(problems) >= 5:
                    return problems + ["(further differences not listed)"]
    return problems


def run(
    ids: Sequence[str] | None,
    raw_overrides: Sequence[tuple[str, str]] = (),
    out_dir: Path = Path("build/figures"),
    check: bool = False,
    accept: bool = False,
    progress: bool = True,
    jobs: int = 1,
    scheduler: str | None = None,
) -> list[FigureResult]:
    """Regenerate the selected figures; with ``check`` compare, with ``accept`` commit them.

    ``jobs`` notebooks execute at once. With ``scheduler`` (a Dask scheduler's address) the
    fluid-model runs inside every notebook go to that cluster
    (:mod:`coexist.runstore.fanout`); the notebooks themselves run here.
    """
    from ..core.progress import tqdm
    from ..runstore import fanout

    entries = select(ids)
    overrides = resolve_overrides(entries, raw_overrides)
    out_dir = Path(out_dir).resolve()  # before any notebook changes the directory (run_one)
    if (check or accept) and raw_overrides:
        raise ParameterError(
            "--check/--accept compare with the committed default-parameter tables; drop -p"
        )
    if not isinstance(jobs, int) or jobs < 1:
        raise ParameterError(f"parameter 'jobs' is {jobs!r}; valid range: an integer >= 1")
    if scheduler is not None:
        fanout.reach(scheduler)  # before any notebook starts
    results = []
    bar = tqdm(total=len(entries), desc="figures", unit="fig", disable=not progress)
    # committed tables come from bundled data only, so the check is the same on every
    # machine whatever external data (the FABRIC reproduction's) it has cached
    env = {BUNDLED_ONLY: "1"} if (check or accept) else {}
    if scheduler is not None:
        env[fanout.SCHEDULER_ENV] = scheduler  # the kernels inherit it

    def one(e: Entry) -> FigureResult:
        res = run_one(e, overrides[e.id], out_dir)
        if overrides[e.id]:  # a reader's parameters: every claim the page quotes is there
            claims.complete(e.id, out_dir, EXPECTED / f"{e.id}{claims.SUFFIX}")
        bar.update()
        bar.set_postfix_str(e.id)
        return res

    with settings.environment(env), ThreadPoolExecutor(jobs) as pool:
        for e, res in zip(entries, pool.map(one, entries), strict=True):
            if check:
                res.problems = compare_figure(e, out_dir, EXPECTED)
            if accept:
                EXPECTED.mkdir(parents=True, exist_ok=True)
                for path in (res.csv, res.svg):
                    shutil.copyfile(path, EXPECTED / path.name)
                made = out_dir / f"{e.id}{claims.SUFFIX}"
                if made.exists():
                    shutil.copyfile(made, EXPECTED / made.name)
                else:
                    (EXPECTED / made.name).unlink(missing_ok=True)
            results.append(res)
    bar.close()
    if check:
        _fail_on_problems(results)
    return results


def compare_figure(e: Entry, made: Path, expected: Path) -> list[str]:
    """Differences between what figure ``e`` wrote into ``made`` and the committed files in
    ``expected``: its table (:func:`compare_tables`), then its claims
    (:func:`coexist.book.claims.compare`), each with the figure's tolerances."""
    return (compare_tables(made / f"{e.id}.csv", expected / f"{e.id}.csv", e.rtol, e.atol)
            + claims.compare(made / f"{e.id}{claims.SUFFIX}",
                             expected / f"{e.id}{claims.SUFFIX}", e.rtol, e.atol))


def _fail_on_problems(results: Sequence[FigureResult]) -> None:
    """Raise one :class:`CheckFailed` listing every figure's differences, if any."""
    failed = [r for r in results if r.problems]
    if failed:
        lines = [f"{r.id}: {p}" for r in failed for p in r.problems]
        raise CheckFailed("figure check failed:\n  " + "\n  ".join(lines))


def check_built(tables: Path, expected: Path = EXPECTED) -> list[FigureResult]:
    """Compare the tables a book build wrote (``coexist book --bundled-only``) with the
    committed ones, as ``--check`` does for freshly executed notebooks.

    The build must have kept external data out (its manifest says so) and written a table and
    an SVG for every figure in the ledger; anything missing is a failure, not a skip. Claims
    are compared too (:func:`compare_figure`); ``expected`` holds the committed files.
    """
    manifest = tables / MANIFEST
    if not manifest.exists():
        raise CheckFailed(f"{tables} holds no {MANIFEST}: not written by `coexist book`")
    if not sidecars.read_json(manifest, MANIFEST_SCHEMA, "book build record")["bundled_only"]:
        raise CheckFailed(f"the book in {tables} was built with external data allowed; "
                          "build it with `coexist book --bundled-only` to compare its tables")
    results = []
    for e in FIGURES:
        res = FigureResult(e.id, e.path, tables / f"{e.id}.svg", tables / f"{e.id}.csv")
        missing = [p.name for p in (res.svg, res.csv) if not p.exists() or not p.stat().st_size]
        res.problems = ([f"the book build did not write {', '.join(missing)}"] if missing else
                        compare_figure(e, tables, expected))
        results.append(res)
    _fail_on_problems(results)
    return results
