"""Altair theme and output helpers shared by every figure notebook.

Charts render as static SVG through vl-convert, so the book needs no network and no
JavaScript to show them; each figure also writes the tidy table it plotted so numbers, not
pixels, can be compared in CI.
"""

from __future__ import annotations

import math
from pathlib import Path

import altair as alt
import pandas as pd

WIDTH, HEIGHT = 520, 300
PALETTE = {
    "BBR": "#d95f02",
    "CUBIC": "#1b9e77",
    "Mishra et al. (sync)": "#7570b3",
    "Mishra et al. (desync)": "#e7298a",
    "Mishra et al.": "#7570b3",
    "Ware et al.": "#66a61e",
    "fair share": "#666666",
    "measured (this testbed)": "#222222",
    "fluid model": "#e6ab02",
    "fluid model, RTprop expiring": "#a6761d",
}


@alt.theme.register("coexist", enable=False)
def _theme() -> alt.theme.ThemeConfig:
    return {
        "config": {
            "view": {"continuousWidth": WIDTH, "continuousHeight": HEIGHT},
            "font": "DejaVu Sans, Helvetica, Arial, sans-serif",
            "title": {"fontSize": 15, "anchor": "start", "subtitleFontSize": 12},
            "axis": {"labelFontSize": 12, "titleFontSize": 13, "gridOpacity": 0.5},
            "legend": {"labelFontSize": 12, "titleFontSize": 12, "labelLimit": 320},
        }
    }


def setup() -> None:
    """Enable the project theme and the static SVG renderer (vl-convert, offline)."""
    alt.theme.enable("coexist")
    alt.renderers.enable("svg")
    alt.data_transformers.disable_max_rows()


def color_scale(domain: list[str]) -> alt.Scale:
    """A colour scale that keeps each series' colour the same across figures."""
    fallback = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#17becf"]
    colours = [PALETTE.get(d, fallback[i % len(fallback)]) for i, d in enumerate(domain)]
    return alt.Scale(domain=domain, range=colours)


def _stable(table: pd.DataFrame) -> pd.DataFrame:
    """Round floats to 10 significant digits so committed CSVs do not churn in the last bit."""
    out = table.copy()
    for col in out.columns:
        if pd.api.types.is_float_dtype(out[col]):
            out[col] = out[col].map(lambda v: v if not math.isfinite(v) else float(f"{v:.10g}"))
    return out


def save(chart: alt.TopLevelMixin, table: pd.DataFrame, figure_id: str, out_dir: str) -> None:
    """Write ``<figure_id>.svg`` and the plotted tidy ``<figure_id>.csv`` into ``out_dir``.

    An empty ``out_dir`` (the book build) writes nothing: the chart is shown inline only.
    """
    if not out_dir:
        return
    import vl_convert as vlc

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    svg = vlc.vegalite_to_svg(chart.to_dict())
    (out / f"{figure_id}.svg").write_text(svg, encoding="utf-8")
    _stable(table).to_csv(out / f"{figure_id}.csv", index=False, lineterminator="\n")


#: where the book serves Vega, Vega-Lite and vega-embed (written by coexist.sphinxext)
VEGA_JS = "_static/vega/coexist-vega.js"


def interactive(chart: alt.TopLevelMixin, element_id: str, depth: int = 1) -> str:
    """HTML for a chart the reader can drive (sliders), with no network.

    The page loads the Vega bundle the book serves itself (``depth`` directories up from the
    page) and embeds the chart's spec. Until that script has run, and wherever it is missing
    (a notebook opened outside the book, print), the static SVG of the chart's default state
    stands in its place.
    """
    import json

    import vl_convert as vlc

    spec = chart.to_dict()
    svg = vlc.vegalite_to_svg(spec)
    src = "../" * depth + VEGA_JS
    return (
        f'<div id="{element_id}" class="coexist-interactive">{svg}</div>\n'
        f'<script src="{src}"></script>\n'
        "<script>\n"
        f"(function () {{\n"
        f"  var spec = {json.dumps(spec)};\n"
        f"  if (typeof vegaEmbed === 'undefined') return;  // keep the static SVG\n"
        f"  var el = document.getElementById('{element_id}');\n"
        "  vegaEmbed(el, spec, {renderer: 'svg', actions: false}).then(function (r) {\n"
        "    el.setAttribute('data-embedded', 'yes');\n"
        "  }).catch(function (e) { el.setAttribute('data-error', String(e)); });\n"
        "})();\n"
        "</script>"
    )
