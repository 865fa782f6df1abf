"""Altair theme and output helpers shared by every figure notebook.

Charts render as static SVG through vl-convert, so the book needs no network and no
JavaScript to show them; each figure also writes the tidy table it plotted so numbers, not
pixels, can be compared in CI.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import altair as alt
import pandas as pd

from ..measured import comparison, run_length
from . import claims

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
    "Ware et al.": "#66a61e",
    "fair share": "#666666",
    "measured (this testbed)": "#222222",
    run_length.study_label(run_length.LENGTHS_S[-1]): "#0571b0",
    run_length.NOT_SETTLED: "#a0a0a0",
    "fluid model": "#e6ab02",
    "fluid model, RTprop expiring": "#a6761d",
    "fluid model, RTprop expiring, CUBIC recovery": "#1f78b4",
}
#: The fluid model's first two versions: as published (eq. 9 only lowers
#: RTprop) and with Linux BBR's RTprop filter expiring, keyed by ``rtprop_expiry``.
FLUID = {False: "fluid model", True: "fluid model, RTprop expiring"}
#: Every version, keyed by (``rtprop_expiry``, ``cubic_recovery``): the two above and the
#: same with CUBIC cutting once per loss episode (:mod:`coexist.fluid.solve`).
FLUID_VERSIONS = {(False, False): FLUID[False], (True, False): FLUID[True],
                  (False, True): "fluid model, CUBIC recovery",
                  (True, True): "fluid model, RTprop expiring, CUBIC recovery"}
#: The versions set beside measurements, by (``rtprop_expiry``, ``cubic_recovery``): as
#: published, and with the RTprop expiry, the one Linux mechanism that brings the published
#: model closer to our measurements on its own (S-Options; CUBIC's recovery alone takes it
#: further away).
FLUID_SHOWN = {v: FLUID_VERSIONS[v] for v in ((False, False), (True, False))}


def fluid_names(table: pd.DataFrame) -> pd.Series:
    """The version name of each fluid-model row, from its ``rtprop_expiry`` and
    ``cubic_recovery`` columns (a table without the latter ran eqs. 40a-b as published)."""
    recovery = (table["cubic_recovery"] if "cubic_recovery" in table
                else pd.Series(False, index=table.index))
    keys = zip(table["rtprop_expiry"].astype(bool), recovery.astype(bool), strict=True)
    return pd.Series([FLUID_VERSIONS[k] for k in keys], index=table.index)


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
            # below the plot: a legend at the side would take the width the panels need
            "legend": {"labelFontSize": 12, "titleFontSize": 12, "labelLimit": 300,
                       "orient": "bottom", "direction": "vertical", "columns": 2},
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


#: Line style of each fluid-model version, the same in every figure: the versions differ by
#: dash (colour is left to what a figure compares: algorithms, bounds, settings).
FLUID_DASH = {FLUID_VERSIONS[(False, False)]: [6, 3], FLUID_VERSIONS[(True, False)]: [2, 2],
              FLUID_VERSIONS[(False, True)]: [8, 3, 2, 3],
              FLUID_VERSIONS[(True, True)]: [4, 4]}
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
    small points at the runs, over ``base`` (which carries x and the data)."""
    if version not in FLUID_DASH:
        raise ValueError(f"version={version!r}: valid values are {', '.join(FLUID_DASH)}")
    return base.mark_line(strokeDash=FLUID_DASH[version], strokeWidth=1.5,
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
    that order.
    """
    fixed = {"color": color} if color else {}
    tip = [*(tooltip or []), alt.Tooltip(f"{lo}:Q", format=".3g", title="smallest run"),
           alt.Tooltip(f"{hi}:Q", format=".3g", title="largest run"),
           alt.Tooltip("n_runs:Q", title="runs")]
    bar = base.mark_rule(strokeWidth=1 if hollow else 2, **fixed).encode(
        y=f"{lo}:Q", y2=f"{hi}:Q")
    outline = {"strokeWidth": 1.8} if hollow else {"stroke": MEASURED_COLOUR,
                                                   "strokeWidth": 0.6}
    dot = base.mark_point(filled=not hollow, size=size, shape=shape, **outline,
                          **fixed).encode(y=f"{y}:Q", tooltip=tip)
    if where is not None:
        bar, dot = bar.transform_filter(where), dot.transform_filter(where)
    return bar, dot


def _stable(table: pd.DataFrame) -> pd.DataFrame:
    """Round floats to 10 significant digits so committed CSVs do not churn in the last bit."""
    out = table.copy()
    for col in out.columns:
        if pd.api.types.is_float_dtype(out[col]):
            out[col] = out[col].map(lambda v: v if not math.isfinite(v) else float(f"{v:.10g}"))
    return out


class FigureError(ValueError):
    """A chart that would render something other than its data says."""


def check_facet_grid(spec: dict) -> None:
    """Refuse a row x column facet with an explicit sort order and a cell without data.

    Vega-Lite then places the cells in data order, so every panel after the missing one
    lands under another panel's row and column heading (vega/vega-lite#8675). Such a grid
    has to be built cell by cell (``alt.vconcat`` of ``alt.hconcat``) instead. Facets whose
    fields are computed by a transform cannot be checked here and are refused too.
    """
    datasets = spec.get("datasets", {})

    def rows_of(data: dict | None) -> list[dict] | None:
        if not data:
            return None
        if "values" in data:
            return data["values"]
        return datasets.get(data.get("name"))

    def walk(node, data: dict | None) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item, data)
            return
        if not isinstance(node, dict):
            return
        data = node.get("data", data)
        facet = node.get("facet") if isinstance(node.get("facet"), dict) else None
        enc = node.get("encoding") if isinstance(node.get("encoding"), dict) else {}
        for grid in (facet, enc):
            if grid and "row" in grid and "column" in grid:
                _check_grid(grid["row"], grid["column"], rows_of(data))
        for key, value in node.items():
            if key not in ("data", "datasets") and isinstance(value, dict | list):
                walk(value, data)

    walk(spec, None)


def _check_grid(row: dict, column: dict, rows: list[dict] | None) -> None:
    if not any(isinstance(ch.get("sort"), list) for ch in (row, column)):
        return  # Vega-Lite's own order: missing cells are placed correctly
    r, c = row.get("field"), column.get("field")
    if rows is None or not rows or any(r not in x or c not in x for x in rows):
        raise FigureError(f"facet rows {r!r} x columns {c!r} with a sort list: cannot check "
                          "that every cell has data (fields not in the chart's data); "
                          "build the grid with alt.vconcat/alt.hconcat")
    present = {(x[r], x[c]) for x in rows}
    missing = sorted({(a, b) for a, _ in present for _, b in present} - present, key=str)
    if missing:
        raise FigureError(f"facet rows {r!r} x columns {c!r} with a sort list has cells "
                          f"without data: {missing}; Vega-Lite would draw the panels after "
                          "them under the wrong headings (vega/vega-lite#8675); build the "
                          "grid with alt.vconcat/alt.hconcat")


def check_campaigns(figure_id: str) -> None:
    """Refuse a figure that has read measurements of a campaign its ledger entry does not
    declare (:attr:`coexist.book.ledger.Entry.campaigns`), so the book's index of figures says
    truly what each one rests on. An id outside the ledger is not checked."""
    from .. import data
    from . import ledger

    if figure_id not in ledger.BY_ID:
        return
    declared = set(ledger.entry(figure_id).campaigns)
    if "*" in declared:
        return
    undeclared = sorted(data.campaigns_read() - declared)
    if undeclared:
        raise FigureError(f"{figure_id} read the campaigns {undeclared} that its ledger "
                          f"entry does not declare ({sorted(declared) or 'none'}): add them "
                          "to coexist.book.ledger.CAMPAIGNS")


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


def svg_width(svg: str) -> float:
    """The width in pixels an SVG of vl-convert declares."""
    return float(re.search(r'<svg[^>]*\swidth="([0-9.]+)', svg).group(1))


def check_size(svg: str, figure_id: str) -> None:
    """Refuse a figure the book would have to shrink, or with text too small to read: its
    width must fit the text column (:data:`COLUMN`) and its smallest font be at least
    :data:`MIN_FONT` pixels. Split a crowded figure rather than shrink it."""
    width = svg_width(svg)
    fonts = [float(f) for f in re.findall(r'font-size="([0-9.]+)px"', svg)]
    if width > COLUMN:
        raise FigureError(f"{figure_id} is {width:g} px wide; valid: at most the text "
                          f"column's {COLUMN} px (stack its panels, put legends below)")
    if fonts and min(fonts) < MIN_FONT:
        raise FigureError(f"{figure_id} has text of {min(fonts):g} px; valid: at least "
                          f"{MIN_FONT} px")


#: a figure narrower than this share of the text column leaves the page's width unused:
#: widen its panels (every figure of the book is at least 0.8 of it)
MIN_WIDTH_SHARE = 0.75
#: a legend swatch paler than this contrast with the white page (WCAG's ratio of relative
#: luminances) cannot be told from the page or from its neighbours: a mark drawn at 0.3
#: opacity gives its legend 1.4-1.5, the palest full colour the book uses 1.6
MIN_SWATCH_CONTRAST = 1.5
#: run status in a title or subtitle ("42 of 50 runs stored", "a buffer needs all 11
#: mixes"): it changes as campaigns run, so the caption or the provenance line carries it
STATUS_TEXT = re.compile(r"\bruns? (?:stored|done)\b|\bneeds? all\b|\bso far\b"
                         r"|\b\d+\s*/\s*\d+\s+runs?\b|\bof \d+ planned\b", re.I)


def _contrast_with_white(colour: str, opacity: float) -> float:
    """WCAG's contrast ratio of ``colour`` (``#rrggbb``) drawn at ``opacity`` on white."""
    rgb = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    rgb = [opacity * c + 1 - opacity for c in rgb]
    lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 1.05 / (0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2] + 0.05)


def check_craft(spec: dict, svg: str, figure_id: str) -> None:
    """Refuse a figure much narrower than the column (:data:`MIN_WIDTH_SHARE`), a legend
    whose swatches are too pale to tell apart (:data:`MIN_SWATCH_CONTRAST`; a swatch takes
    the opacity of the first mark of its colour, so draw a pale band after the points, or
    give the band its own legend), and run status in a title or subtitle
    (:data:`STATUS_TEXT`)."""
    width = svg_width(svg)
    if width < MIN_WIDTH_SHARE * COLUMN:
        raise FigureError(f"{figure_id} is {width:g} px wide; valid: at least "
                          f"{MIN_WIDTH_SHARE:g} of the text column, {MIN_WIDTH_SHARE * COLUMN:g} "
                          "px (widen its panels)")
    for group in re.findall(r'<g class="mark-symbol role-legend-symbol[^>]*>(.*?)</g>', svg,
                            re.S):
        for path in re.findall(r"<path[^>]*>", group):
            fill = re.search(r'fill="(#[0-9a-fA-F]{6})"', path)
            stroke = re.search(r'stroke="(#[0-9a-fA-F]{6})"', path)
            colour = (fill or stroke)
            if colour is None:
                continue
            opacity = float((re.search(r'\sopacity="([0-9.]+)"', path) or [0, 1])[1])
            ratio = _contrast_with_white(colour.group(1), opacity)
            if ratio < MIN_SWATCH_CONTRAST:
                raise FigureError(
                    f"{figure_id} has a legend swatch {colour.group(1)} at opacity "
                    f"{opacity:g}, contrast {ratio:.2f} with the page; valid: at least "
                    f"{MIN_SWATCH_CONTRAST:g} (a swatch takes its first mark's opacity)")

    def titles(node) -> list[str]:
        if isinstance(node, list):
            return [t for item in node for t in titles(item)]
        if not isinstance(node, dict):
            return []
        found = []
        title = node.get("title")
        if isinstance(title, dict):
            for key in ("text", "subtitle"):
                value = title.get(key, [])
                found += [value] if isinstance(value, str) else list(value)
        elif isinstance(title, str):
            found.append(title)
        return found + [t for k, v in node.items() if k not in ("data", "datasets")
                        and isinstance(v, dict | list) for t in titles(v)]

    for text in titles(spec):
        if isinstance(text, str) and STATUS_TEXT.search(text):
            raise FigureError(f"{figure_id} has run status in a title: {text!r}; valid: "
                              "titles without it (the caption or the provenance line says "
                              "how many runs are stored)")


def save(chart: alt.TopLevelMixin, table: pd.DataFrame, figure_id: str, out_dir: str) -> None:
    """Write ``<figure_id>.svg`` and the plotted tidy ``<figure_id>.csv`` into ``out_dir``.

    An empty ``out_dir`` (a page of the book) writes into the directory ``coexist book``
    keeps for its figures, and nothing outside such a build: the chart is shown inline only.
    Either way the chart is checked first (:func:`check_facet_grid`, :func:`check_size`,
    :func:`check_craft`),
    and so are the campaigns the notebook has read (:func:`check_campaigns`).
    """
    from ..core.paths import tables_dir

    spec, svg = render(chart)
    check_size(svg, figure_id)
    check_craft(spec, svg, figure_id)
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


def _download(text: str, path: str) -> str:
    """A MyST link that the site serves ``path`` (from the book's root) through as a
    download, named ``text``."""
    return f"{{download}}`{text} </{path}>`"


def provenance(figure_id: str) -> str:
    """The line under a figure, each file a download the site serves: the notebook that
    draws it, the committed table (and claims) the figure check compares, and the campaigns
    it reads (their campaign files, with the runs stored of each) and the data description
    (``data/datapackage.json``: schema, units, hashes and provenance per campaign)."""
    from ..core import paths
    from . import index as book_index
    from . import ledger

    e = ledger.entry(figure_id)
    checked = _download(f"{e.id}.csv", f"notebooks/expected/{e.id}.csv")
    if (paths.EXPECTED / f"{e.id}{claims.SUFFIX}").exists():
        checked += " and " + _download(f"{e.id}{claims.SUFFIX}",
                                       f"notebooks/expected/{e.id}{claims.SUFFIX}")
    used = [f"{_download(name, f'data/campaigns/{name}.yaml')} ({done} of {planned} runs)"
            for name, done, planned in book_index.campaigns_used(e)]
    data = ("; data: " + ", ".join(used) + ", described in "
            + _download("datapackage.json", "data/datapackage.json")
            if used else "; data: none (models only)")
    return (f"*Provenance:* {e.id} is drawn by "
            f"{_download(e.notebook, f'notebooks/{e.notebook}')}; CI compares its table "
            f"{checked}{data}.")


def value_text(value) -> str:
    """A parameter value as ``coexist figures -p`` takes it (lists comma-separated)."""
    if isinstance(value, (list, tuple)):
        return ",".join(value_text(v) for v in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return f"{value:g}" if isinstance(value, float) else str(value)


def _yaml_text(value) -> str:
    """A parameter value as papermill's ``-y`` takes it (YAML)."""
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_yaml_text(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value) if isinstance(value, int) else json.dumps(value)


def _range_cell(p) -> str:
    """A parameter's valid values, compact for a table cell: ``0.01 ≤ x ≤ 1000``, ``an
    integer, 2 ≤ x ≤ 5000``, ``a list, each 0.05 ≤ x ≤ 1000``, ``one of ...``."""
    if p.choices is not None:
        return "one of " + ", ".join(f"`{c}`" for c in p.choices)
    kind = p.item if p.kind is list else p.kind
    if kind is bool:
        return "true or false"
    if kind is str:
        return "a list of names" if p.kind is list else "a text"
    parts = []
    if p.low is not None:
        parts.append(f"{p.low:g} {'<' if p.low_open else '≤'} ")
    parts.append("x")
    if p.high is not None:
        parts.append(f" {'<' if p.high_open else '≤'} {p.high:g}")
    bound = "".join(parts) if len(parts) > 1 else "any"
    what = "an integer, " if kind is int else ""
    return (f"a list, each {what}{bound}" if p.kind is list else f"{what}{bound}")


def rerun_box(figure_id: str) -> str:
    """MyST for a collapsed "Re-run this figure" box, generated from the figure's ledger
    entry: every parameter it accepts (name, default, valid values, meaning), the rules
    between them, and the commands that re-run it with other values, through the book's
    runner and through plain papermill."""
    from ..core.params import describe
    from . import ledger

    e = ledger.entry(figure_id)
    params = [p for p in e.spec.params if p.name != ledger.OUT_DIR.name]
    rows = ["| Parameter | Default | Valid values | Meaning |", "| --- | --- | --- | --- |"]
    for p in params:
        valid = _range_cell(p).replace("|", "\\|")
        rows.append(f"| `{p.name}` | `{value_text(p.default)}` | {valid} | "
                    f"{ledger.meaning(p) or '-'} |")
    example = next((p for p in params if p.kind in (int, float)), params[0]) if params else None
    lines = ["````{admonition} Re-run this figure with other parameters",
             ":class: dropdown", ""]
    if example is None:
        lines += [f"{e.id} takes no parameters: `coexist figures --only {e.id}` re-runs it.",
                  "````"]
        return "\n".join(lines)
    lines += [f"{e.id} accepts {len(params)} parameters; any value in the range shown gives "
              "the figure, and a value outside it, or an unknown name, is refused in one "
              "line before anything runs.", "", *rows, ""]
    if e.spec.constraints:
        rules = "; ".join(f"`{describe(r)}`" for r in e.spec.constraints)
        lines += [f"Between parameters: {rules}. A combination that breaks a rule is "
                  "refused naming it.", ""]
    value = value_text(example.default)
    lines += ["With the book's runner (tables and SVG in `build/figures`):", "",
              "```bash", f"coexist figures --only {e.id} -p {example.name} {value}", "```",
              "", "or with papermill directly:", "", "```bash",
              f"papermill notebooks/{e.notebook} out.ipynb -y "
              f"'{{{example.name}: {_yaml_text(example.default)}}}'", "```",
              "", "Repeat `-p NAME VALUE` for more parameters (a list is comma-separated, "
              "e.g. `-p NAME 1,2,3`).", "````"]
    return "\n".join(lines)


def page_key(figure_id: str) -> str:
    """The prefix of the names a figure's page glues: its id in lower case without its
    punctuation (M-F1: ``mf1``, S-F4-5-11-12: ``sf451112``)."""
    import re

    return re.sub(r"[^a-z0-9]", "", figure_id.lower())


def glue(name: str, value, display: bool = False) -> None:
    """Glue ``value`` under ``name`` for the page's text (MyST-NB), when MyST-NB is there:
    a notebook run outside the book's environment still runs."""
    try:
        from myst_nb import glue as nb_glue
    except ImportError:
        return
    nb_glue(name, value, display=display)


def glue_sentence(name: str, text: str) -> None:
    """Glue a sentence of a caption or paragraph that depends on the parameters (e.g. what
    is missing at them) as Markdown, which the page shows with ``{glue:md}`name```, in the
    text's own weight (``{glue:text}`` sets a value in bold)."""
    from IPython.display import Markdown

    glue(name, Markdown(text))


def quoted_list(names: list[str]) -> str:
    """Names as a reader's list, each in quotes ("a", "b" and "c"): names that are words
    themselves (a model version called "both") stay apart from the sentence."""
    if not names:
        raise ValueError("quoted_list needs at least one name")
    quoted = [f'"{n}"' for n in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def longer_run_report(figure_id: str, prefix: str, moves: pd.DataFrame, *, duration_s: float,
                      warmup_s: float, where: tuple[str, ...] = ("buffer_bdp", "model"),
                      left_out: str = "drawn, but left out of the errors below",
                      out_dir: str = "") -> None:
    """Say on a page how far its fluid-model runs move in runs twice as long
    (:func:`coexist.measured.comparison.longer_run_moves`), against the run-length study's
    tolerance: the sentence is glued as ``<prefix>_fluid_length``, and the largest move and
    the number of runs that move by more than the tolerance are the claims
    ``<prefix>_fluid_move_max`` and ``<prefix>_fluid_moved`` of ``figure_id``. The largest
    move is not available where no run has a value at both lengths. ``left_out`` says what
    the page does with the runs that move more (:func:`comparison.longer_run_text`)."""
    glue_sentence(f"{prefix}_fluid_length", comparison.longer_run_text(
        moves, run_length.TOLERANCE, duration_s=duration_s, warmup_s=warmup_s, where=where,
        left_out=left_out))
    known = moves["move"].dropna()
    claims.claim(figure_id, f"{prefix}_fluid_move_max",
                 float(known.max()) if len(known) else None, "{:.3f}", out_dir)
    claims.claim(figure_id, f"{prefix}_fluid_moved", int((known > run_length.TOLERANCE).sum()),
                 "{}", out_dir)


def show(chart, figure_id: str) -> None:
    """Show a figure (a chart, or HTML) and its provenance line under it.

    Both are glued too, as ``<key>_figure`` and ``<key>_provenance`` (key:
    :func:`page_key`): a page laid out as a paper places them at its top, the figure with
    ``{glue:figure}`` and its caption, the line with ``{glue:md}`<key>_provenance:myst```
    (read as MyST, so its ``{download}`` links resolve), and tags this cell
    ``remove-output`` so the figure is not shown twice. Run in Jupyter, the cell shows
    both where it runs. The figure's "Re-run" box (:func:`rerun_box`) is glued as
    ``<key>_rerun``, which the page shows with a ``{glue:md}`` directive (``:format:
    myst``) above its code.
    """
    from IPython.display import SVG, Markdown, display

    shown = SVG(render(chart)[1]) if isinstance(chart, alt.TopLevelMixin) else chart
    line = Markdown(provenance(figure_id))
    display(shown)
    display(line)
    key = page_key(figure_id)
    glue(f"{key}_figure", shown)
    glue(f"{key}_provenance", line)
    glue(f"{key}_rerun", Markdown(rerun_box(figure_id)))


def listing(obj) -> None:
    """Show the source of a function or class on the page as highlighted code (a derivation
    sets the code beside the equation it implements); long lines wrap in the column."""
    import inspect

    from IPython.display import Markdown, display

    display(Markdown(f"```python\n{inspect.getsource(obj).rstrip()}\n```"))


def result(*parts) -> None:
    """Show a short result on the page as a sentence, not as printed output: the parts
    joined by spaces, as ``print`` joins them."""
    import html

    from IPython.display import HTML, display

    display(HTML(f"<p>{html.escape(' '.join(str(p) for p in parts))}</p>"))


def show_table(frame: pd.DataFrame, digits: int = 3, index: bool = False) -> None:
    """Show a small table on the page as HTML, numbers to ``digits`` decimals (at most
    :data:`TABLE_ROWS` rows: see :func:`_page_html`)."""
    from IPython.display import HTML, display

    display(HTML(_page_html(frame, digits, index)))


def _page_html(frame: pd.DataFrame, digits: int, index: bool, all_rows: bool = False,
               exact: tuple[str, ...] = ()) -> str:
    """A table as the page shows it: numbers to ``digits`` decimals (the columns ``exact``
    as given, e.g. a buffer of 0.5 BDP in a table of whole flow counts), at most
    :data:`TABLE_ROWS` rows; a longer table (a re-run with longer parameter lists) shows its
    first rows and says how many more the figure's own table holds. With ``all_rows`` (a
    table the page folds away behind a click) every row is shown."""
    missing = [c for c in exact if c not in frame.columns]
    if missing:
        raise ValueError(f"exact names columns the table does not have: {missing}")
    shown = frame.copy()
    if index:
        shown = shown.reset_index()
    for col in shown.columns:
        if pd.api.types.is_float_dtype(shown[col]):
            fmt = "{:g}" if col in exact else f"{{:.{digits}f}}"
            shown[col] = shown[col].map(lambda v, fmt=fmt: "" if pd.isna(v) else fmt.format(v))
    more = 0 if all_rows else len(shown) - TABLE_ROWS
    html = shown.head(len(shown) if all_rows else TABLE_ROWS).to_html(
        index=False, border=0, na_rep="", classes="table coexist-table")
    if more > 0:
        html += (f"<p>… and {more} more row{'s' if more > 1 else ''}: the figure's table (its "
                 "provenance line, under the figure) holds the values they come from.</p>")
    return html


#: the rows a table on a page may have; a longer one is offered as a download instead
TABLE_ROWS = 15


def table(frame: pd.DataFrame, name: str, digits: int = 3, all_rows: bool = False,
          exact: tuple[str, ...] = ()) -> None:
    """Glue a compact table under ``name`` for the page (``{glue} name`` in its text): no
    index, numbers to ``digits`` decimals, at most :data:`TABLE_ROWS` rows (a longer one
    shows its first rows and points to the figure's own table). ``all_rows`` keeps every
    row, for a table the page folds into a dropdown (an admonition of class ``dropdown``),
    one click away. The columns ``exact`` are shown as given, not rounded (parameters such
    as a buffer of 0.5 BDP in a table of whole flow counts). Nothing is shown where the cell
    runs: the page shows the table where its text pastes it."""
    from IPython.display import HTML

    glue(name, HTML(_page_html(frame, digits, index=False, all_rows=all_rows, exact=exact)))


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
