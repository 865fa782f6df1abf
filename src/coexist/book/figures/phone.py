"""A figure as a phone shows it: a second drawing of the chart, its panels stacked one under
another in a column a phone screen holds at its own size, served to narrow screens in place
of the page's figure.

The book's column is 676 px wide on a laptop; a phone 412 px wide shows the page's column at
:data:`PHONE_COLUMN` px, so a figure drawn for the laptop would be shrunk to about 55 % and
its 11-px labels read at 6 px. :func:`phone_spec` redraws the chart's spec for the phone
(concatenated panels stacked, wrapped facets in one column, panels at most
:data:`PHONE_PANEL` px wide, legends stacked in one column, titles broken to the
narrower column); :func:`phone_svg` renders it and keeps it only if its smallest text shows at
:data:`PHONE_MIN_FONT` px or more there.

The page carries both drawings in one SVG (the phone's inside a ``<metadata>`` element,
which no browser draws) until the book is built; then :func:`publish` writes the phone's
drawing beside the figure's image and wraps each such ``<img>`` in a ``<picture>`` whose
``<source media="screen and (max-width: ...)">`` a narrow screen takes. Print (the PDF
edition, printed at a laptop's width) is not a screen, so it always takes the figure itself.
Everything stays in the built site: nothing is loaded from elsewhere.
"""

from __future__ import annotations

import base64
import copy
import re
import textwrap
from pathlib import Path

from .checks import spec_nodes

#: the width, in pixels, of the book's text column on a phone 412 px wide (the theme keeps
#: 16 px either side; measured in the built book in headless Chromium)
PHONE_COLUMN = 380
#: the smallest text a reader should see on a phone, in pixels as displayed
PHONE_MIN_FONT = 10
#: the widest panel of a phone's drawing: room for its y axis within :data:`PHONE_COLUMN`
PHONE_PANEL = 290
#: the widest screen, in CSS pixels, that takes the phone's drawing: phones, not tablets
#: (whose column holds the figure at its own size)
PHONE_MAX_SCREEN = 600
#: characters per line of a title and of a subtitle in the phone's column
PHONE_TITLE_CHARS, PHONE_SUBTITLE_CHARS = 40, 56
_TAG = "coexist-phone"


def _wrap(lines, width: int) -> list[str]:
    return [part for line in ([lines] if isinstance(lines, str) else lines)
            for part in (textwrap.wrap(line, width) or [""])]


def phone_spec(spec: dict) -> dict:
    """The Vega-Lite ``spec`` redrawn for a phone's column: side-by-side panels stacked,
    wrapped facets and concats in one column, a facet's columns turned into rows and its
    row labels set above the rows, panels no wider than :data:`PHONE_PANEL`, legends in one
    column one under another, and titles broken to the phone's column. The data and the
    encodings stay as they are."""
    out = copy.deepcopy(spec)
    for node in spec_nodes(out, skip=("data", "datasets", "config")):
        if "hconcat" in node:
            node["vconcat"] = node.pop("hconcat")
        if isinstance(node.get("columns"), int) and ("facet" in node or "concat" in node):
            node["columns"] = 1
        facet = node.get("facet")
        if isinstance(facet, dict) and "column" in facet and "row" not in facet:
            facet["row"] = facet.pop("column")
        enc = node.get("encoding")
        if isinstance(enc, dict) and "column" in enc and "row" not in enc:
            enc["row"] = enc.pop("column")
        if isinstance(node.get("width"), int | float) and node["width"] > PHONE_PANEL:
            node["width"] = PHONE_PANEL
        legend = node.get("legend")
        if isinstance(legend, dict) and isinstance(legend.get("columns"), int):
            legend["columns"] = 1
        title = node.get("title")
        if isinstance(title, dict):
            if "text" in title:
                title["text"] = _wrap(title["text"], PHONE_TITLE_CHARS)
            if "subtitle" in title:
                title["subtitle"] = _wrap(title["subtitle"], PHONE_SUBTITLE_CHARS)
        elif isinstance(title, str) and len(title) > PHONE_TITLE_CHARS:
            node["title"] = _wrap(title, PHONE_TITLE_CHARS)

    config = out.setdefault("config", {})
    config.setdefault("view", {})["continuousWidth"] = PHONE_PANEL
    legend = config.setdefault("legend", {})
    legend["columns"] = 1
    # several legends above (or below) the panels stacked, not side by side
    legend["layout"] = {side: {"direction": "vertical", "anchor": "start"}
                        for side in ("top", "bottom")}
    # a facet's row labels above its rows, not in a column of their own beside them
    config["headerRow"] = {"labelOrient": "top", "labelAnchor": "start", "labelAngle": 0,
                           "labelAlign": "left"}
    return out


def displayed_font(svg: str, column: float = PHONE_COLUMN) -> float:
    """The smallest text of ``svg``, in pixels as a column ``column`` px wide shows it (a
    wider figure is shrunk to the column, a narrower one shown at its own size)."""
    width = float(re.search(r'<svg[^>]*\swidth="([0-9.]+)', svg).group(1))
    fonts = [float(f) for f in re.findall(r'font-size="([0-9.]+)px"', svg)]
    return min(fonts, default=PHONE_MIN_FONT) * min(1.0, column / width)


def phone_svg(spec: dict) -> str | None:
    """The phone's drawing of ``spec`` (:func:`phone_spec`), or ``None`` when even that
    would show text smaller than :data:`PHONE_MIN_FONT` in the phone's column (the page then
    shows the figure itself, shrunk)."""
    import vl_convert as vlc

    svg = vlc.vegalite_to_svg(phone_spec(spec))
    return svg if displayed_font(svg) >= PHONE_MIN_FONT else None


def with_phone(svg: str, phone: str | None) -> str:
    """``svg`` carrying ``phone`` in a ``<metadata>`` element (which no browser draws), for
    :func:`publish` to take out when the book is built."""
    if phone is None:
        return svg
    packed = base64.b64encode(phone.encode("utf-8")).decode("ascii")
    at = svg.index(">", svg.index("<svg")) + 1
    return f'{svg[:at]}<metadata id="{_TAG}">{packed}</metadata>{svg[at:]}'


def split(svg: str) -> tuple[str, str | None]:
    """``svg`` without its phone's drawing, and that drawing (``None`` if it has none)."""
    found = re.search(rf'<metadata id="{_TAG}">([A-Za-z0-9+/=]*)</metadata>', svg)
    if found is None:
        return svg, None
    phone = base64.b64decode(found.group(1)).decode("utf-8")
    return svg[:found.start()] + svg[found.end():], phone


def phone_name(image: str) -> str:
    """The file name of an image's phone drawing: ``x.svg`` -> ``x.phone.svg``."""
    return re.sub(r"\.svg$", ".phone.svg", image)


_IMG = re.compile(r'<img\b[^>]*\ssrc="([^"]+?\.svg)"[^>]*>')


def publish(html_dir: Path) -> int:
    """In a built site: write each figure's phone drawing beside its image (``_images``),
    take it out of the image, and wrap every ``<img>`` of such an image in a ``<picture>``
    that narrow screens read from the phone's file. Idempotent (a page already wrapped, an
    image already split, are left alone). Returns the number of images wrapped."""
    images = html_dir / "_images"
    for path in sorted(images.glob("*.svg")) if images.is_dir() else []:
        if path.name.endswith(".phone.svg"):
            continue
        text = path.read_text(encoding="utf-8")
        desktop, phone = split(text)
        if phone is not None:
            (images / phone_name(path.name)).write_text(phone, encoding="utf-8")
            path.write_text(desktop, encoding="utf-8")
    wrapped = 0
    for page in html_dir.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        new, count = _wrap_images(html, page.parent)
        if count:
            page.write_text(new, encoding="utf-8")
            wrapped += count
    return wrapped


def _wrap_images(html: str, here: Path) -> tuple[str, int]:
    """``html`` with each ``<img>`` of an SVG that has a phone drawing in ``here`` (the
    page's directory) wrapped in a ``<picture>``, and how many were wrapped."""
    parts, count, last = [], 0, 0
    for match in _IMG.finditer(html):
        src = match.group(1)
        done = f'class="{_TAG}"' in html[max(0, match.start() - 300):match.start()]
        if done or not (here / phone_name(src)).exists():
            continue
        parts += [html[last:match.start()],
                  f'<picture><source class="{_TAG}" media="screen and (max-width: '
                  f'{PHONE_MAX_SCREEN}px)" srcset="{phone_name(src)}" />'
                  f"{match.group(0)}</picture>"]
        last, count = match.end(), count + 1
    return "".join(parts) + html[last:], count
