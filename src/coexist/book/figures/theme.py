"""The book's look: figure size, the text column and font limits, the palette that keeps a
series' colour the same in every figure, the names and line styles of the fluid model's
versions, and the Altair theme that sets them.
"""

from __future__ import annotations

import altair as alt
import pandas as pd

from ...fluid.model import versions
from ...measured import run_length

WIDTH, HEIGHT = 520, 300
#: the book's text column, in pixels, in a window 1280 pixels wide; a figure no wider is
#: shown at its own size, so its labels keep theirs (a wider one would be scaled down)
COLUMN = 676
#: the smallest text a figure may carry, in pixels
MIN_FONT = 11
#: characters per line of a title and of a subtitle that fit the column
TITLE_CHARS, SUBTITLE_CHARS = 64, 96
PALETTE = {
    "BBR": "#d95f02",
    "CUBIC": "#1b9e77",
    "Mishra et al. (sync)": "#7570b3",
    "Mishra et al. (desync)": "#e7298a",
    "Mishra et al.": "#7570b3",
    "Ware et al.": "#78a500",
    "fair share": "#666666",
    "measured (this testbed)": "#222222",
    run_length.study_label(run_length.LENGTHS_S[-1]): "#0f87b4",
    run_length.NOT_SETTLED: "#a0a0a0",
    versions.PUBLISHED.name: "#e6ab02",
    versions.RTPROP_EXPIRY.name: "#a50f15",
    versions.CUBIC_RECOVERY.name: "#690069",
    versions.BOTH.name: "#003c78",
}
#: the colours of series no entry of :data:`PALETTE` names (Vega's ``category`` range), in
#: order: Tableau's ten with its teal, brown and pink moved so that every two are at least
#: ``glance.MIN_COLOUR_DIFFERENCE`` apart (its red and pink were 18 apart), the pink deepened
#: to a magenta a thin line shows on white
CATEGORY = ["#4c78a8", "#f58518", "#e45756", "#69b4b4", "#54a24b", "#eeca3b", "#b279a2",
            "#c30069", "#87694b", "#bab0ac"]
#: The fluid model's first two versions: as published (eq. 9 only lowers
#: RTprop) and with Linux BBR's RTprop filter expiring, keyed by ``rtprop_expiry``.
FLUID = {False: versions.PUBLISHED.name, True: versions.RTPROP_EXPIRY.name}
#: Every version's name, keyed by its :class:`~coexist.fluid.model.versions.Version` (a
#: pair (``rtprop_expiry``, ``cubic_recovery``)).
FLUID_VERSIONS = {v: v.name for v in versions.VERSIONS}
#: The versions set beside measurements (:data:`coexist.fluid.model.versions.SHOWN`).
FLUID_SHOWN = {v: v.name for v in versions.SHOWN}


def fluid_names(table: pd.DataFrame) -> pd.Series:
    """The version name of each fluid-model row, from its ``rtprop_expiry`` and
    ``cubic_recovery`` columns (a table without the latter ran eqs. 40a-b as published)."""
    recovery = (table["cubic_recovery"] if "cubic_recovery" in table
                else pd.Series(False, index=table.index))
    keys = zip(table["rtprop_expiry"].astype(bool), recovery.astype(bool), strict=True)
    return pd.Series([versions.Version(*k).name for k in keys], index=table.index)


@alt.theme.register("coexist", enable=False)
def _theme() -> alt.theme.ThemeConfig:
    return {
        "config": {
            "view": {"continuousWidth": WIDTH, "continuousHeight": HEIGHT},
            "font": "DejaVu Sans, Helvetica, Arial, sans-serif",
            "title": {"fontSize": 15, "anchor": "start", "subtitleFontSize": 12},
            "axis": {"labelFontSize": 12, "titleFontSize": 13, "gridOpacity": 0.5},
            "header": {"labelFontSize": 12, "titleFontSize": 13},
            "text": {"fontSize": 12},
            # above the plot: a legend at the side would take the width the panels need,
            # and one below a tall figure would be a screen away from its top panels
            "legend": {"labelFontSize": 12, "titleFontSize": 12, "labelLimit": 300,
                       "orient": "top", "direction": "vertical", "columns": 2},
            "range": {"category": CATEGORY},
        }
    }


def setup() -> None:
    """Enable the project theme and the static SVG renderer (vl-convert, offline)."""
    alt.theme.enable("coexist")
    alt.renderers.enable("svg")
    alt.data_transformers.disable_max_rows()


def color_scale(domain: list[str]) -> alt.Scale:
    """A colour scale that keeps each series' colour the same across figures."""
    colours = [PALETTE.get(d, CATEGORY[i % len(CATEGORY)]) for i, d in enumerate(domain)]
    return alt.Scale(domain=domain, range=colours)


#: Line style of each fluid-model version, the same in every figure: the versions differ by
#: dash (colour is left to what a figure compares: algorithms, bounds, settings).
FLUID_DASH = {versions.PUBLISHED.name: [6, 3], versions.RTPROP_EXPIRY.name: [2, 2],
              versions.CUBIC_RECOVERY.name: [8, 3, 2, 3], versions.BOTH.name: [4, 4]}
#: how a subtitle names the two versions' line styles
FLUID_STYLE_NOTE = "fluid model long-dashed as published, dotted with the RTprop expiring"
#: dashes for the other series of a dash scale, in order (the first is solid)
OTHER_DASHES = [[1, 0], [12, 4], [8, 2, 2, 2, 2, 2], [1, 1], [16, 2]]
#: the colour of measurements wherever colour does not tell algorithms apart
MEASURED_COLOUR = PALETTE["measured (this testbed)"]


def dash_scale(domain: list[str]) -> alt.Scale:
    """A stroke-dash scale in which every fluid-model version has its :data:`FLUID_DASH`
    style and the other series (closed forms, measurements) take :data:`OTHER_DASHES` in
    order, solid first."""
    others = iter(OTHER_DASHES)
    dashes = [FLUID_DASH[d] if d in FLUID_DASH else next(others) for d in domain]
    return alt.Scale(domain=domain, range=dashes)
