"""Marks every figure draws alike: fluid-model curves, measured means on their min-max bars,
a grey note where a panel has nothing to draw, and panels laid out in rows that fit the
text column.
"""

from __future__ import annotations

import altair as alt
import pandas as pd

from .glance import MEASURED_STYLE, MODEL_STYLE
from .theme import FLUID_DASH, MEASURED_COLOUR, color_scale


def note(text: str, font_size: int = 13) -> alt.Chart:
    """A panel (or a whole figure) that says in grey text why it has nothing to draw, e.g.
    no stored run at a reader's parameter, instead of an empty frame."""
    return alt.Chart(pd.DataFrame({"t": [text]})).mark_text(
        fontSize=font_size, color="#555").encode(text="t:N")


def panels_in_rows(panels: list, per_row: int = 2) -> alt.TopLevelMixin:
    """``panels`` side by side, at most ``per_row`` to a row, the rows stacked: the text
    column (:data:`COLUMN`) holds two panels of 240-250 px. A figure with one panel per
    value of a list parameter keeps its default layout (one row of two) and stacks the
    panels of a longer list a reader gives, rather than growing wider than the column."""
    if per_row < 1 or not panels:
        raise ValueError(f"{len(panels)} panels, {per_row} per row; valid: at least one of each")
    rows = [alt.hconcat(*panels[i:i + per_row]) for i in range(0, len(panels), per_row)]
    return rows[0] if len(rows) == 1 else alt.vconcat(*rows)


def fluid_line(base: alt.Chart, y: str | alt.Y, version: str, **encode) -> alt.Chart:
    """A fluid-model curve: a thin line in its version's dash (:data:`FLUID_DASH`) with
    small points at the runs, over ``base`` (which carries x and the data). Its mark style
    names it a model, so :func:`~.glance.check_layer_order` keeps it under measured points;
    for its legend to show the dash, encode ``strokeDash`` as the colour is (field and
    title alike, scale :func:`~.theme.dash_scale`)."""
    if version not in FLUID_DASH:
        raise ValueError(f"version={version!r}: valid values are {', '.join(FLUID_DASH)}")
    return base.mark_line(strokeDash=FLUID_DASH[version], strokeWidth=1.5, style=MODEL_STYLE,
                          point=alt.OverlayMarkDef(size=18)).encode(y=y, **encode)


def measured_marks(base: alt.Chart, y: str, lo: str, hi: str, *, tooltip: list | None = None,
                   where: str | alt.Predicate | None = None, color: str | None = None,
                   size: float = 60, shape: str = "circle",
                   hollow: bool = False) -> tuple[alt.Chart, alt.Chart]:
    """Measurements as every figure draws them: the mean over runs as a filled point with a
    thin dark outline, on a bar from the smallest to the largest run.

    ``base`` carries x (and a colour encoding, unless ``color`` fixes one) and the data;
    ``y``, ``lo`` and ``hi`` name the mean, minimum and maximum columns; ``where`` keeps the
    measured rows of a mixed table. The tooltip gets the spread and the run count
    (``n_runs``) appended. ``hollow`` draws an open point in the colour on a thin bar: a
    measurement shown but not used (where colour already says something else, e.g. the
    algorithm, and grey cannot mark it). Returns the bar and the point, to be layered in
    that order, after every model layer (their mark style names them measured, which
    :func:`~.glance.check_layer_order` checks).
    """
    fixed = {"color": color} if color else {}
    tip = [*(tooltip or []), alt.Tooltip(f"{lo}:Q", format=".3g", title="smallest run"),
           alt.Tooltip(f"{hi}:Q", format=".3g", title="largest run"),
           alt.Tooltip("n_runs:Q", title="runs")]
    bar = base.mark_rule(strokeWidth=1 if hollow else 2, style=MEASURED_STYLE,
                         **fixed).encode(y=f"{lo}:Q", y2=f"{hi}:Q")
    outline = {"strokeWidth": 1.8} if hollow else {"stroke": MEASURED_COLOUR,
                                                   "strokeWidth": 0.6}
    dot = base.mark_point(filled=not hollow, size=size, shape=shape, style=MEASURED_STYLE,
                          **outline, **fixed).encode(y=f"{y}:Q", tooltip=tip)
    if where is not None:
        bar, dot = bar.transform_filter(where), dot.transform_filter(where)
    return bar, dot


def series_key(field: str, curves: list[str], points: list[str],
               **legend) -> tuple[alt.Color, alt.StrokeDash, alt.Shape]:
    """Colour, dash and shape encodings of ``field`` that share one legend in which each
    curve is drawn as a stroke in its dash (a fluid-model version's :data:`FLUID_DASH`,
    the others solid) and each series of points as a dot: encode the curves' layers with
    the colour and the dash, the points' with the colour and the shape. ``legend`` sets the
    legend's own properties (orient, columns)."""
    domain = [*curves, *points]
    key = alt.Legend(symbolSize=250, symbolStrokeWidth=2, symbolOpacity=1, **legend)
    colour = alt.Color(f"{field}:N", title=None, scale=color_scale(domain), legend=key)
    dash = alt.StrokeDash(f"{field}:N", title=None, legend=key, scale=alt.Scale(
        domain=domain, range=[FLUID_DASH.get(c, [1, 0]) for c in curves] + [[1, 0]] * len(points)))
    shape = alt.Shape(f"{field}:N", title=None, legend=key, scale=alt.Scale(
        domain=domain, range=["stroke"] * len(curves) + ["circle"] * len(points)))
    return colour, dash, shape
