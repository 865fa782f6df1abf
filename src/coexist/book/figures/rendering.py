"""Rendering and saving a figure: its titles fitted to the text column, its Vega-Lite spec
and static SVG (vl-convert, offline), checked, and written with the tidy table it plotted
so CI compares numbers, not pixels.
"""

from __future__ import annotations

import math
from pathlib import Path

import altair as alt
import pandas as pd

from .checks import check_campaigns, check_craft, check_facet_grid, check_size
from .glance import check_glance
from .theme import SUBTITLE_CHARS, TITLE_CHARS


def _stable(table: pd.DataFrame) -> pd.DataFrame:
    """Round floats to 10 significant digits so committed CSVs do not churn in the last bit."""
    out = table.copy()
    for col in out.columns:
        if pd.api.types.is_float_dtype(out[col]):
            out[col] = out[col].map(lambda v: v if not math.isfinite(v) else float(f"{v:.10g}"))
    return out


def _wrap(lines: str | list[str], width: int) -> list[str]:
    import textwrap

    return [part for line in ([lines] if isinstance(lines, str) else lines)
            for part in (textwrap.wrap(line, width) or [""])]


def fit_titles(spec: dict) -> dict:
    """``spec`` with its title and subtitle broken into lines that fit the text column
    (:data:`TITLE_CHARS`, :data:`SUBTITLE_CHARS`), so a long subtitle does not widen the
    figure beyond the page."""
    title = spec.get("title")
    if title is None:
        return spec
    title = {"text": title} if isinstance(title, (str, list)) else dict(title)
    title["text"] = _wrap(title["text"], TITLE_CHARS)
    if "subtitle" in title:
        title["subtitle"] = _wrap(title["subtitle"], SUBTITLE_CHARS)
    return {**spec, "title": title}


def render(chart: alt.TopLevelMixin) -> tuple[dict, str]:
    """The chart's Vega-Lite spec, titles fitted to the column, and its static SVG."""
    import vl_convert as vlc

    spec = fit_titles(chart.to_dict())
    check_facet_grid(spec)
    return spec, vlc.vegalite_to_svg(spec)


def save(chart: alt.TopLevelMixin, table: pd.DataFrame, figure_id: str, out_dir: str) -> None:
    """Write ``<figure_id>.svg`` and the plotted tidy ``<figure_id>.csv`` into ``out_dir``.

    An empty ``out_dir`` (a page of the book) writes into the directory ``coexist book``
    keeps for its figures, and nothing outside such a build: the chart is shown inline only.
    Either way the chart is checked first (:func:`check_facet_grid`, :func:`check_size`,
    :func:`check_craft`, and that it reads at a glance, :func:`check_glance`), and so are
    the campaigns the notebook has read (:func:`check_campaigns`).
    """
    from ...core.paths import tables_dir

    spec, svg = render(chart)
    check_size(svg, figure_id)
    check_craft(spec, svg, figure_id)
    check_glance(spec, svg, figure_id)
    check_campaigns(figure_id)
    if not out_dir:
        book_tables = tables_dir()
        if book_tables is None:
            return
        out_dir = str(book_tables)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{figure_id}.svg").write_text(svg, encoding="utf-8")
    _stable(table).to_csv(out / f"{figure_id}.csv", index=False, lineterminator="\n")

