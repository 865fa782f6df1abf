"""The checks that a figure reads at a glance (coexist.book.figures.glance), each shown
refusing a small chart and passing its mended form."""

import itertools

import altair as alt
import pandas as pd
import pytest

from coexist.book import figures

LINES = pd.DataFrame({"x": [0, 1, 0, 1], "y": [0, 1, 1, 0], "s": ["a", "a", "b", "b"]})


def rendered(chart: alt.TopLevelMixin) -> tuple[dict, str]:
    figures.setup()
    return figures.render(chart)


def test_a_dashed_line_needs_a_legend_symbol_in_its_dash():
    colour = alt.Color("s:N", title=None, scale=alt.Scale(domain=["a", "b"],
                                                          range=["#1b9e77", "#d95f02"]))
    dots = alt.Chart(LINES).mark_line(strokeDash=[6, 3]).encode(x="x", y="y", color=colour)
    with pytest.raises(figures.FigureError, match=r"probe draws a line in #1b9e77 dashed 6,3 "
                                                  r"that no legend symbol shows; valid:"):
        figures.check_legend_dashes(rendered(dots)[1], "probe")
    dash = alt.StrokeDash("s:N", title=None, scale=alt.Scale(domain=["a", "b"],
                                                             range=[[6, 3], [2, 2]]))
    keyed = alt.Chart(LINES).mark_line().encode(x="x", y="y", color=colour, strokeDash=dash)
    figures.check_legend_dashes(rendered(keyed)[1], "probe")
    solid = alt.Chart(LINES).mark_line().encode(x="x", y="y", color=colour)
    figures.check_legend_dashes(rendered(solid)[1], "probe")  # nothing dashed to show


def test_legend_colours_closer_than_the_limit_are_refused():
    def chart(colours: list[str]) -> str:
        return rendered(alt.Chart(LINES).mark_line().encode(
            x="x", y="y", color=alt.Color("s:N", scale=alt.Scale(domain=["a", "b"],
                                                                 range=colours))))[1]

    golds = ["#e6ab02", "#a6761d"]  # the fluid model's two versions, once
    with pytest.raises(figures.FigureError, match=r"probe has legend colours #e6ab02 and "
                                                  r"#a6761d 18.4 apart \(CIEDE2000\); valid: at "
                                                  r"least 20"):
        figures.check_colours_apart(chart(golds), "probe")
    figures.check_colours_apart(chart(["#e6ab02", figures.PALETTE[figures.FLUID[True]]]),
                                "probe")
    figures.check_colours_apart(chart(["#e6ab02", "#e6ab02"]), "probe")  # one series' colour


def test_colour_difference_is_ciede2000():
    """Sharma, Wu and Dalal's (2005) test pairs, from their Lab values, to 4 decimals."""
    pairs = [((50, 2.6772, -79.7751), (50, 0, -82.7485), 2.0425),
             ((50, -1.3802, -84.2814), (50, 0, -82.7485), 1.0000),
             ((50, 2.5, 0), (73, 25, -18), 27.1492),
             ((60.2574, -34.0099, 36.2677), (60.4626, -34.1751, 39.4387), 1.2644)]
    for one, two, expected in pairs:
        assert figures.glance.delta_e2000(one, two) == pytest.approx(expected, abs=1e-4)


def test_the_book_palette_and_category_colours_are_far_enough_apart():
    for colours in (set(figures.PALETTE.values()), figures.CATEGORY):
        for one, two in itertools.combinations(sorted(colours), 2):
            assert figures.colour_difference(one, two) >= figures.MIN_COLOUR_DIFFERENCE, (one,
                                                                                         two)


def test_a_model_layer_over_measured_points_is_refused():
    data = pd.DataFrame({"x": [1, 2], "mean": [0.4, 0.5], "lo": [0.3, 0.45], "hi": [0.5, 0.6],
                         "n_runs": [3, 4]})
    base = alt.Chart(data).encode(x="x:Q")
    bar, dot = figures.measured_marks(base, "mean", "lo", "hi")
    model = figures.fluid_line(base, "mean:Q", figures.FLUID[False])
    with pytest.raises(figures.FigureError, match=r"probe draws a model \(layer 3\) over "
                                                  r"measured points \(layer 1\); valid:"):
        figures.check_layer_order(alt.layer(bar, dot, model).to_dict(), "probe")
    figures.check_layer_order(alt.layer(model, bar, dot).to_dict(), "probe")
    # a curve drawn by hand is a model too; a point in the measured colour is measured
    curve = base.mark_line().encode(y="mean:Q")
    points = base.mark_point(color=figures.MEASURED_COLOUR).encode(y="mean:Q")
    with pytest.raises(figures.FigureError, match="over measured points"):
        figures.check_layer_order(alt.layer(points, curve).to_dict(), "probe")
    figures.check_layer_order(alt.layer(curve, points).to_dict(), "probe")


def test_a_subtitle_longer_than_two_lines_is_refused():
    two = ["Band: the predicted region; filled points: measured.", "Open marks: the model."]
    chart = alt.Chart(LINES).mark_line().encode(x="x", y="y")
    figures.check_subtitle_lines(chart.properties(title=alt.TitleParams(
        "T", subtitle=two)).to_dict(), "probe")
    long = [*two, "black where each run passes the test too; grey crosses: not settled."]
    with pytest.raises(figures.FigureError, match=r"probe has a subtitle of 3 lines .*; "
                                                  r"valid: at most 2"):
        figures.check_subtitle_lines(chart.properties(title=alt.TitleParams(
            "T", subtitle=long)).to_dict(), "probe")
    wrapped = "word " * (figures.SUBTITLE_CHARS // 2)  # one string, three lines in the column
    with pytest.raises(figures.FigureError, match="subtitle of 3 lines"):
        figures.check_subtitle_lines(chart.properties(title=alt.TitleParams(
            "T", subtitle=wrapped)).to_dict(), "probe")


def test_a_legend_a_screen_below_the_first_panel_is_refused():
    panel = alt.Chart(LINES).mark_line().encode(x="x", y="y", color="s:N").properties(
        width=400, height=250)
    tall = alt.vconcat(panel, panel, panel)  # the legend under ~800 px of panels
    below = tall.configure_legend(orient="bottom")
    with pytest.raises(figures.FigureError, match=r"probe places its legend .* px below the top "
                                                  r"of the first panel it explains; valid: at "
                                                  r"most 700 px"):
        figures.check_legend_reach(rendered(below)[1], "probe")
    figures.check_legend_reach(rendered(tall.configure_legend(orient="top"))[1], "probe")
    figures.check_legend_reach(rendered(alt.vconcat(panel))[1], "probe")  # a short figure


def test_a_legend_of_a_part_of_a_figure_is_measured_from_that_part():
    """A concat whose colour scale is its own carries its own legend, above its own panels:
    far below the figure's first panel, but not below the panels it explains."""
    panel = alt.Chart(LINES).mark_line().encode(x="x", y="y", color="s:N").properties(
        width=400, height=250)
    other = alt.Chart(LINES).mark_point().encode(x="x", y="y", color="x:N").properties(
        width=400, height=250)
    figure = alt.vconcat(alt.vconcat(panel, panel, panel), other).resolve_scale(
        color="independent").configure_legend(orient="top")
    distances = dict(figures.glance.legend_distances(rendered(figure)[1]))
    assert len(distances) == 2 and all(d < 0 for d in distances.values()), distances


def test_one_key_shows_curves_in_their_dash_and_points_as_dots():
    data = pd.DataFrame({"x": [0, 1, 0, 1, 0.5], "y": [0, 1, 1, 0, 0.5],
                         "s": [*[figures.FLUID[False]] * 2, *[figures.FLUID[True]] * 2, "m"]})
    colour, dash, shape = figures.series_key("s", list(figures.FLUID.values()), ["m"])
    curves = alt.Chart(data[data.s != "m"]).mark_line().encode(x="x", y="y", color=colour,
                                                               strokeDash=dash)
    points = alt.Chart(data[data.s == "m"]).mark_point(filled=True).encode(
        x="x", y="y", color=colour, shape=shape)
    svg = rendered(alt.layer(curves, points))[1]
    figures.check_legend_dashes(svg, "probe")
    symbols = figures.glance._legend_symbols(svg)
    assert sorted(s["dash"] for s in symbols if s["dash"] not in (None, "1,0")) == ["2,2", "6,3"]
    assert len(symbols) == 3


def test_a_legend_of_line_styles_alone_shows_the_dash_of_every_colour():
    """Colour for the algorithm, dash for the model: two legends, each telling one."""
    data = pd.DataFrame({"x": [0, 1] * 4, "y": [0, 1, 1, 0, 0.2, 0.8, 0.9, 0.1],
                         "cca": ["BBR"] * 4 + ["CUBIC"] * 4,
                         "model": (["sync"] * 2 + ["desync"] * 2) * 2})
    chart = alt.Chart(data).mark_line().encode(
        x="x", y="y", detail="model:N", color=alt.Color("cca:N", title="Algorithm"),
        strokeDash=alt.StrokeDash("model:N", title="Bound", scale=alt.Scale(
            domain=["sync", "desync"], range=[[1, 0], [12, 4]])))
    figures.check_legend_dashes(rendered(chart)[1], "probe")
    hidden = chart.encode(strokeDash=alt.StrokeDash("model:N", legend=None, scale=alt.Scale(
        domain=["sync", "desync"], range=[[1, 0], [12, 4]])))
    with pytest.raises(figures.FigureError, match="dashed 12,4 that no legend symbol shows"):
        figures.check_legend_dashes(rendered(hidden)[1], "probe")


def test_a_grey_reference_line_needs_no_legend_but_a_coloured_one_does():
    data = pd.DataFrame({"x": [0, 1], "y": [0.5, 0.5]})
    fair = alt.Chart(data).mark_line(strokeDash=[5, 4], color="#555").encode(x="x", y="y")
    figures.check_legend_dashes(rendered(fair)[1], "probe")
    coloured = alt.Chart(data).mark_line(strokeDash=[5, 4], color="#1b9e77").encode(x="x",
                                                                                    y="y")
    with pytest.raises(figures.FigureError, match="#1b9e77 dashed 5,4"):
        figures.check_legend_dashes(rendered(coloured)[1], "probe")
