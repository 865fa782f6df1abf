"""Charts the reader can drive: HTML that embeds a chart's spec with the Vega bundle the
book serves itself, the static SVG standing in until (or wherever) the script runs.
"""

from __future__ import annotations

import altair as alt

from .checks import check_size
from .rendering import render

#: where the book serves Vega, Vega-Lite and vega-embed (written by coexist.book.sphinxext)
VEGA_JS = "_static/vega/coexist-vega.js"


def interactive(chart: alt.TopLevelMixin, element_id: str, depth: int = 1) -> str:
    """HTML for a chart the reader can drive (sliders), with no network.

    The page loads the Vega bundle the book serves itself (``depth`` directories up from the
    page) and embeds the chart's spec. Until that script has run, and wherever it is missing
    (a notebook opened outside the book, print), the static SVG of the chart's default state
    stands in its place.
    """
    import json

    spec, svg = render(chart)
    check_size(svg, element_id)
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
