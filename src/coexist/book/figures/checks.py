"""The craft checks a figure passes before it is saved: a facet grid with no empty cell
under a sort list, a width that fits the text column and fonts large enough to read, legend
swatches not too pale, no run status in a title, and only the campaigns its ledger entry
declares. Each refuses with :class:`FigureError`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .theme import COLUMN, MIN_FONT


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


def spec_nodes(node, skip: tuple[str, ...] = ("data", "datasets")) -> Iterator[dict]:
    """Every mapping of a Vega-Lite spec, depth first, each before what it holds, leaving
    out the values under ``skip`` (the data): where the spec-reading checks look for
    layers and titles. A caller may change a node it is given before its children are
    read (the phone drawing does)."""
    if isinstance(node, list):
        for item in node:
            yield from spec_nodes(item, skip)
    elif isinstance(node, dict):
        yield node
        for key, value in list(node.items()):
            if key not in skip and isinstance(value, dict | list):
                yield from spec_nodes(value, skip)


def check_campaigns(figure_id: str) -> None:
    """Refuse a figure that has read measurements of a campaign its ledger entry does not
    declare (:attr:`coexist.book.ledger.Entry.campaigns`), so the book's index of figures says
    truly what each one rests on. An id outside the ledger is not checked."""
    from ... import data
    from .. import ledger

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
                          f"column's {COLUMN} px (stack its panels, put legends above them)")
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

    def titles(spec: dict) -> list[str]:
        found = []
        for node in spec_nodes(spec):
            title = node.get("title")
            if isinstance(title, dict):
                for key in ("text", "subtitle"):
                    value = title.get(key, [])
                    found += [value] if isinstance(value, str) else list(value)
            elif isinstance(title, str):
                found.append(title)
        return found

    for text in titles(spec):
        if isinstance(text, str) and STATUS_TEXT.search(text):
            raise FigureError(f"{figure_id} has run status in a title: {text!r}; valid: "
                              "titles without it (the caption or the provenance line says "
                              "how many runs are stored)")
