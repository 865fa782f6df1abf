"""The checks that a figure reads at a glance: each line style shown in its legend, series
colours far enough apart to tell, measured points drawn over the models, a subtitle of at
most two lines, and a legend close to the panels it explains. Each refuses with
:class:`~.checks.FigureError`, one line naming the figure, what failed, the value and what
is valid.

They read what a reader sees: the SVG Vega renders (legend symbols, line marks and where
groups are placed) and, for the layer order and titles, the Vega-Lite spec.
"""

from __future__ import annotations

import math
import re
import textwrap
import xml.etree.ElementTree as ET

from .checks import FigureError, spec_nodes
from .theme import MEASURED_COLOUR, SUBTITLE_CHARS

#: the smallest CIEDE2000 difference between two colours of a chart's legends. About 2 is
#: just noticeable between large patches side by side; a figure's series are thin lines and
#: small points compared across the chart, where the noticeable difference is several times
#: larger (Stone, Szafir and Setlur 2014, "An engineering model for color difference as a
#: function of size"). At 20 every pair of the book's palette, and of the ten colours
#: of :data:`~.theme.PAIR_COLOURS`, reads apart; the two golds the fluid model's versions
#: once had (18.4) and Tableau's red and pink (18.1) do not
MIN_COLOUR_DIFFERENCE = 20.0
#: the greatest distance, in pixels, from the top of a figure's first panel to the top of
#: each of its legends: the reader-view window is 900 px tall (:mod:`..reader_view`), of
#: which about 700 px remain below the browser's bar and the figure's title, so a legend
#: within this reach is on the same screen as the top panels it explains
LEGEND_REACH_PX = 700
#: lines a subtitle may take once broken to the column (:data:`~.theme.SUBTITLE_CHARS`):
#: a subtitle names the encodings, the caption says the rest
MAX_SUBTITLE_LINES = 2
#: the mark style that names a layer's role (``mark_point(style=...)``):
#: :func:`~.marks.measured_marks` sets the first, :func:`~.marks.fluid_line` the second
MEASURED_STYLE, MODEL_STYLE = "measured", "model"
#: dash patterns that draw a solid line
_SOLID = {None, "", "none", "1,0", "0"}


def _attr(tag: str, name: str) -> str | None:
    found = re.search(rf'\s{name}="([^"]*)"', tag)
    return found.group(1) if found else None


def _legend_symbols(svg: str) -> list[dict]:
    """Each legend symbol's fill, stroke, opacity and dash, as Vega renders them, with the
    number of the legend it belongs to."""
    symbols = []
    for number, legend in enumerate(svg.split('<g class="mark-group role-legend"')[1:]):
        for group in re.findall(r'<g class="mark-symbol role-legend-symbol[^>]*>(.*?)</g>',
                                legend, re.S):
            for path in re.findall(r"<path[^>]*>", group):
                symbols.append({"fill": _attr(path, "fill"), "stroke": _attr(path, "stroke"),
                                "opacity": float(_attr(path, "opacity") or 1),
                                "dash": _attr(path, "stroke-dasharray"), "legend": number})
    return symbols


def _dash(value: str | None) -> str | None:
    """A dash pattern as Vega writes it, ``None`` for a solid line."""
    if value in _SOLID:
        return None
    return ",".join(f"{float(v):g}" for v in re.split(r"[,\s]+", value.strip()))


def check_legend_dashes(svg: str, figure_id: str) -> None:
    """Refuse a dashed or dotted line whose dash no legend shows: a legend of dots for line
    series cannot tell a dashed model from a dotted one. The dash must be drawn by a symbol
    of the line's colour, or by a legend of line styles alone (all its symbols in one
    colour, the colours told by another legend). A grey line in a colour no legend shows is
    a reference (a fair share, a gate's limit), which the subtitle names. Encode a series'
    ``strokeDash`` in the same legend as its colour (same field and title,
    :func:`~.marks.series_key`), so Vega draws each symbol as a stroke in its dash."""
    symbols = _legend_symbols(svg)
    shown = {(s["stroke"], _dash(s["dash"])) for s in symbols}
    by_legend: dict[int, list[dict]] = {}
    for s in symbols:
        by_legend.setdefault(s["legend"], []).append(s)
    styles_only = {_dash(s["dash"]) for group in by_legend.values()
                   if len({s["stroke"] for s in group}) == 1 for s in group}
    for group in re.findall(r'<g class="mark-line role-mark[^>]*>(.*?)</g>', svg, re.S):
        for path in re.findall(r"<path[^>]*>", group):
            dash, stroke = _dash(_attr(path, "stroke-dasharray")), _attr(path, "stroke")
            if dash is None or stroke is None or (stroke, dash) in shown or dash in styles_only:
                continue
            if _grey(stroke) and stroke not in {s["stroke"] for s in symbols}:
                continue  # a reference line
            raise FigureError(f"{figure_id} draws a line in {stroke} dashed {dash} that no "
                              "legend symbol shows; valid: a legend symbol of that colour "
                              "drawn in that dash, or a legend of line styles alone (encode "
                              "strokeDash in the colour's legend)")


def _grey(colour: str) -> bool:
    """Whether ``colour`` (``#rgb`` or ``#rrggbb``) is a grey: its three channels equal."""
    digits = colour.lstrip("#")
    if len(digits) == 3:
        digits = "".join(d * 2 for d in digits)
    return len(digits) == 6 and digits[0:2] == digits[2:4] == digits[4:6]


def _lab(colour: str, opacity: float) -> tuple[float, float, float]:
    """CIELAB (D65) of ``colour`` (``#rrggbb``) drawn at ``opacity`` on white."""
    rgb = [opacity * int(colour[i:i + 2], 16) / 255 + 1 - opacity for i in (1, 3, 5)]
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    xyz = (0.4124 * lin[0] + 0.3576 * lin[1] + 0.1805 * lin[2],
           0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2],
           0.0193 * lin[0] + 0.1192 * lin[1] + 0.9505 * lin[2])
    fx, fy, fz = (t ** (1 / 3) if t > 216 / 24389 else (24389 / 27 * t + 16) / 116
                  for t in (xyz[0] / 0.95047, xyz[1], xyz[2] / 1.08883))
    return 116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)


def delta_e2000(one: tuple[float, float, float], two: tuple[float, float, float]) -> float:
    """The CIEDE2000 colour difference of two CIELAB colours (Sharma, Wu and Dalal 2005)."""
    (l1, a1, b1), (l2, a2, b2) = one, two
    c_mean = (math.hypot(a1, b1) + math.hypot(a2, b2)) / 2
    g = 0.5 * (1 - math.sqrt(c_mean ** 7 / (c_mean ** 7 + 25 ** 7)))
    a1, a2 = (1 + g) * a1, (1 + g) * a2
    c1, c2 = math.hypot(a1, b1), math.hypot(a2, b2)
    h1, h2 = (math.degrees(math.atan2(b, a)) % 360 for a, b in ((a1, b1), (a2, b2)))
    dh = 0.0 if c1 * c2 == 0 else (h2 - h1 + 180) % 360 - 180
    big_dh = 2 * math.sqrt(c1 * c2) * math.sin(math.radians(dh / 2))
    l_mean, c_mean = (l1 + l2) / 2, (c1 + c2) / 2
    if c1 * c2 == 0:
        h_mean = h1 + h2
    elif abs(h1 - h2) <= 180:
        h_mean = (h1 + h2) / 2
    else:
        h_mean = (h1 + h2 + 360) / 2 if h1 + h2 < 360 else (h1 + h2 - 360) / 2
    t = (1 - 0.17 * math.cos(math.radians(h_mean - 30)) + 0.24 * math.cos(math.radians(
        2 * h_mean)) + 0.32 * math.cos(math.radians(3 * h_mean + 6))
         - 0.20 * math.cos(math.radians(4 * h_mean - 63)))
    s_l = 1 + 0.015 * (l_mean - 50) ** 2 / math.sqrt(20 + (l_mean - 50) ** 2)
    s_c, s_h = 1 + 0.045 * c_mean, 1 + 0.015 * c_mean * t
    r_c = 2 * math.sqrt(c_mean ** 7 / (c_mean ** 7 + 25 ** 7))
    r_t = -math.sin(math.radians(60 * math.exp(-((h_mean - 275) / 25) ** 2))) * r_c
    dl, dc, dh_s = (l2 - l1) / s_l, (c2 - c1) / s_c, big_dh / s_h
    return math.sqrt(dl ** 2 + dc ** 2 + dh_s ** 2 + r_t * dc * dh_s)


def colour_difference(one: str, two: str, opacity_one: float = 1.0,
                      opacity_two: float = 1.0) -> float:
    """CIEDE2000 between two ``#rrggbb`` colours, each drawn at its opacity on white."""
    return delta_e2000(_lab(one, opacity_one), _lab(two, opacity_two))


def check_colours_apart(svg: str, figure_id: str) -> None:
    """Refuse two different colours among a chart's legend symbols closer than
    :data:`MIN_COLOUR_DIFFERENCE` (CIEDE2000, each at its opacity on white). The same colour
    twice is allowed: it is the same series, or series a dash or shape tells apart."""
    seen: dict[tuple[str, float], None] = {}
    for s in _legend_symbols(svg):
        colour = next((c for c in (s["fill"], s["stroke"])
                       if c and re.fullmatch(r"#[0-9a-fA-F]{6}", c)), None)
        if colour is not None:
            seen[(colour.lower(), s["opacity"])] = None
    colours = list(seen)
    for i, (one, o1) in enumerate(colours):
        for two, o2 in colours[i + 1:]:
            if (one, o1) == (two, o2) or one == two:
                continue
            diff = colour_difference(one, two, o1, o2)
            if diff < MIN_COLOUR_DIFFERENCE:
                raise FigureError(f"{figure_id} has legend colours {one} and {two} "
                                  f"{diff:.1f} apart (CIEDE2000); valid: at least "
                                  f"{MIN_COLOUR_DIFFERENCE:g} (theme.PALETTE keeps each "
                                  "series' colour; choose one far from the others)")


def _styles(mark) -> list[str]:
    style = mark.get("style", []) if isinstance(mark, dict) else []
    return [style] if isinstance(style, str) else list(style)


def layer_role(unit: dict) -> str | None:
    """``"measured"``, ``"model"`` or ``None`` for a unit of a layered chart: measured if
    its mark carries the style :data:`MEASURED_STYLE` or is drawn in
    :data:`~.theme.MEASURED_COLOUR`, a model if it carries :data:`MODEL_STYLE` or is a
    line, area or trail (the curves and bands a model draws)."""
    mark = unit.get("mark")
    if mark is None:
        return None
    kind = mark if isinstance(mark, str) else mark.get("type")
    styles = _styles(mark)
    fixed = {mark.get(k) for k in ("color", "stroke", "fill")} if isinstance(mark, dict) \
        else set()
    if MEASURED_STYLE in styles or (MEASURED_COLOUR in fixed and kind not in ("line", "area")):
        return "measured"
    if MODEL_STYLE in styles or kind in ("line", "area", "trail"):
        return "model"
    return None


def _units(layer: list) -> list[dict]:
    """A layer's unit specs in drawing order, nested layers flattened."""
    out = []
    for item in layer:
        if isinstance(item, dict) and isinstance(item.get("layer"), list):
            out += _units(item["layer"])
        elif isinstance(item, dict):
            out.append(item)
    return out


def check_layer_order(spec: dict, figure_id: str) -> None:
    """Refuse a layered chart that draws a model (:func:`layer_role`) after measured
    points: the model's marks would hide them. Layer the model first, the measurements last."""
    for node in spec_nodes(spec):
        if not isinstance(node.get("layer"), list):
            continue
        roles = [layer_role(u) for u in _units(node["layer"])]
        if "measured" in roles and "model" in roles:
            first_measured = roles.index("measured")
            last_model = len(roles) - 1 - roles[::-1].index("model")
            if last_model > first_measured:
                raise FigureError(
                    f"{figure_id} draws a model (layer {last_model + 1}) over measured "
                    f"points (layer {first_measured + 1}); valid: every measured layer "
                    "after every model layer (layer the model first)")


def check_subtitle_lines(spec: dict, figure_id: str) -> None:
    """Refuse a subtitle longer than :data:`MAX_SUBTITLE_LINES` lines once broken to the
    column: what it cannot say in two lines belongs in the caption."""
    for node in spec_nodes(spec):
        title = node.get("title")
        if isinstance(title, dict) and title.get("subtitle"):
            sub = title["subtitle"]
            lines = [part for line in ([sub] if isinstance(sub, str) else sub)
                     for part in (textwrap.wrap(line, SUBTITLE_CHARS) or [""])]
            if len(lines) > MAX_SUBTITLE_LINES:
                raise FigureError(f"{figure_id} has a subtitle of {len(lines)} lines "
                                  f"({lines[0][:40]!r}...); valid: at most "
                                  f"{MAX_SUBTITLE_LINES} (the caption says the rest)")


_TRANSLATE = re.compile(r"translate\(\s*[-0-9.e]+[ ,]+([-0-9.e]+)")


def legend_distances(svg: str) -> list[tuple[str, float]]:
    """Each legend of the SVG, named by its label, with the distance in pixels from the top
    of the first panel it explains down to its own top (negative above the panel). The
    panels it explains are those of the nearest group holding both the legend and axes: a
    legend of a whole figure explains its first panel, one of a part of a figure (a concat
    whose scales are its own) that part's first panel."""
    root = ET.fromstring(svg)
    found: list[tuple[str, float, list[ET.Element]]] = []
    axis_top: dict[int, float] = {}

    def walk(node: ET.Element, y: float, ancestors: list[ET.Element]) -> float:
        move = _TRANSLATE.search(node.get("transform", ""))
        y += float(move.group(1)) if move else 0.0
        classes = node.get("class", "").split()
        if "role-legend" in classes:
            tops = [y + float(m.group(1)) for child in node
                    if (m := _TRANSLATE.search(child.get("transform", "")))]
            found.append((node.get("aria-label") or "legend", min(tops, default=y),
                          ancestors))
            return math.inf
        top = y if "role-axis" in classes else math.inf
        for child in node:
            top = min(top, walk(child, y, [*ancestors, node]))
        axis_top[id(node)] = top
        return top

    walk(root, 0.0, [])
    out = []
    for label, top, ancestors in found:
        panel = next((axis_top[id(a)] for a in reversed(ancestors)
                      if axis_top.get(id(a), math.inf) < math.inf), None)
        if panel is not None:
            out.append((label, top - panel))
    return out


def check_legend_reach(svg: str, figure_id: str) -> None:
    """Refuse a legend whose top lies more than :data:`LEGEND_REACH_PX` below the top of
    the first panel it explains (:func:`legend_distances`): a reader would scroll between
    the panels and their key. Put the legend above the panels, or split the figure."""
    for label, distance in legend_distances(svg):
        if distance > LEGEND_REACH_PX:
            raise FigureError(f"{figure_id} places its legend ({label[:60]!r}) "
                              f"{distance:.0f} px below the top of the first panel it "
                              f"explains; valid: at most {LEGEND_REACH_PX} px (put the "
                              "legend above the panels, or split the figure)")


def check_glance(spec: dict, svg: str, figure_id: str) -> None:
    """Every check of this module, in the order a reader meets what they check."""
    check_subtitle_lines(spec, figure_id)
    check_legend_reach(svg, figure_id)
    check_legend_dashes(svg, figure_id)
    check_colours_apart(svg, figure_id)
    check_layer_order(spec, figure_id)
