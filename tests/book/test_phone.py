"""A figure's phone drawing (coexist.book.figures.phone): drawn for a phone's column, carried
in the page's SVG, served to narrow screens by the built page, and read at 412 px in
headless Chromium with no text under 10 px as displayed."""

import re
import shutil
import time

import altair as alt
import pandas as pd
import pytest

from coexist.book import figures
from coexist.book.figures import phone

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DATA = pd.DataFrame({"x": [0, 1, 2, 0, 1, 2], "y": [0, 1, 0.5, 1, 0, 0.2],
                     "s": ["fluid model"] * 3 + ["Mishra et al."] * 3})


def two_panels() -> alt.TopLevelMixin:
    """A figure of the book's shape: two 250-px panels side by side, a legend, a subtitle."""
    figures.setup()
    panel = alt.Chart(DATA).mark_line().encode(
        x=alt.X("x:Q", title="Bottleneck buffer (multiples of BDP)"),
        y=alt.Y("y:Q", title="BBR share of link capacity"),
        color=alt.Color("s:N", title=None, scale=figures.color_scale(["fluid model",
                                                                      "Mishra et al."])))
    return alt.hconcat(panel.properties(width=250, title="drop-tail"),
                       panel.properties(width=250, title="RED")).properties(
        title=alt.TitleParams("X-F1 · A figure with two panels side by side, and a key",
                              subtitle=["Lines: models; the subtitle of a figure runs to "
                                        "the column's width on a laptop screen."]))


def test_the_phone_drawing_stacks_the_panels_within_the_phone_column():
    spec, svg = figures.render(two_panels())
    assert figures.svg_width(svg) > phone.PHONE_COLUMN  # shrunk on a phone as it stands
    assert figures.displayed_font(svg) < figures.PHONE_MIN_FONT
    small = phone.phone_spec(spec)
    assert "vconcat" in small and "hconcat" not in small
    assert all(p["width"] <= phone.PHONE_PANEL for p in small["vconcat"])
    assert all(len(line) <= phone.PHONE_SUBTITLE_CHARS for line in small["title"]["subtitle"])
    legends = small["config"]["legend"]  # one column, several legends one under another
    assert legends["columns"] == 1 and legends["layout"]["top"]["direction"] == "vertical"
    drawn = figures.phone_svg(spec)
    assert drawn is not None and figures.svg_width(drawn) <= phone.PHONE_COLUMN * 1.1
    assert figures.displayed_font(drawn) >= figures.PHONE_MIN_FONT
    assert spec == figures.render(two_panels())[0]  # the figure's own spec is untouched


def test_a_facet_in_columns_is_drawn_in_rows_and_a_wrapped_one_in_one_column():
    base = alt.Chart(DATA).mark_point().encode(x="x:Q", y="y:Q")
    columns = phone.phone_spec(base.facet(column="s:N").to_dict())
    assert "row" in columns["facet"] and "column" not in columns["facet"]
    wrapped = phone.phone_spec(base.facet(facet="s:N", columns=3).to_dict())
    assert wrapped["columns"] == 1


def test_the_phone_drawing_travels_in_the_svg_and_the_built_page_serves_it(tmp_path):
    spec, svg = figures.render(two_panels())
    small = figures.phone_svg(spec)
    both = phone.with_phone(svg, small)
    assert phone.split(both) == (svg, small)
    assert phone.split(svg) == (svg, None) and phone.with_phone(svg, None) == svg
    site = tmp_path / "html"
    (site / "_images").mkdir(parents=True)
    (site / "notebooks").mkdir()
    (site / "_images" / "abc.svg").write_text(both)
    (site / "_images" / "plain.svg").write_text(svg)
    page = site / "notebooks" / "fig.html"
    page.write_text('<figure><img alt="a" src="../_images/abc.svg" /></figure>'
                    '<figure><img alt="b" src="../_images/plain.svg" /></figure>')
    assert phone.publish(site) == 1
    assert (site / "_images" / "abc.svg").read_text() == svg  # the drawing taken out
    assert (site / "_images" / "abc.phone.svg").read_text() == small
    html = page.read_text()
    assert html.count("<picture>") == 1 and 'srcset="../_images/abc.phone.svg"' in html
    assert 'media="screen and (max-width: 600px)"' in html
    assert phone.publish(site) == 0 and page.read_text() == html  # built again: unchanged


@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed")
def test_a_phone_reads_the_figure_at_10_px_or_more_and_print_takes_the_figure(tmp_path):
    """The served page in headless Chromium: at 412 px the phone's drawing, shown at a size
    where its smallest text is at least 10 px; at 1280 px and in print the figure itself,
    not shrunk."""
    from coexist.book.browser import Page

    spec, svg = figures.render(two_panels())
    site = tmp_path / "html"
    (site / "_images").mkdir(parents=True)
    (site / "_images" / "f.svg").write_text(phone.with_phone(svg, figures.phone_svg(spec)))
    page = site / "fig.html"
    page.write_text(
        '<!doctype html><html><head><meta name="viewport" content="width=device-width">'
        "<style>body{margin:0} article{padding:0 16px;max-width:676px}"
        "img{max-width:100%;height:auto}</style></head><body><article><figure "
        'style="margin:0"><img id="f" alt="f" src="_images/f.svg" /></figure></article>'
        "</body></html>")
    phone.publish(site)
    fonts = [float(f) for f in re.findall(r'font-size="([0-9.]+)px"', svg)]
    browser = Page(CHROMIUM, page.as_uri(), tmp_path / "profile")
    shown = ("(() => { const i = document.getElementById('f');"
             " if (!i || !i.complete || !i.naturalWidth) return null;"
             " return [i.currentSrc, i.clientWidth, i.naturalWidth]; })()")
    try:
        seen = {}
        for width, media in ((412, "screen"), (1280, "screen"), (412, "print")):
            browser.call("Emulation.setDeviceMetricsOverride", width=width, height=900,
                         deviceScaleFactor=1, mobile=width < 600)
            browser.call("Emulation.setEmulatedMedia", media=media)
            browser.call("Page.reload", ignoreCache=True)
            deadline = time.monotonic() + 10
            while True:
                seen[(width, media)] = browser.evaluate(shown)
                if seen[(width, media)] or time.monotonic() > deadline:
                    break
                time.sleep(0.1)
    finally:
        browser.close()
    src, shown_px, natural_px = seen[(412, "screen")]
    assert src.endswith("f.phone.svg")
    phone_text = (site / "_images" / "f.phone.svg").read_text()
    small = min(float(f) for f in re.findall(r'font-size="([0-9.]+)px"',
                                                           phone_text))
    assert small * shown_px / natural_px >= figures.PHONE_MIN_FONT
    for key in ((1280, "screen"), (412, "print")):
        src, shown_px, natural_px = seen[key]
        assert src.endswith("/f.svg"), key
    src, shown_px, natural_px = seen[(1280, "screen")]
    assert shown_px == natural_px and min(fonts) >= figures.MIN_FONT
