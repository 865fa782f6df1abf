"""Figure output helpers: the interactive embedding works without network and degrades to
the static SVG."""

import json
import re

import altair as alt
import pandas as pd
import pytest

from coexist.book import figures, ledger
from coexist.book.figures import tables
from coexist.core import paths


def test_interactive_html_embeds_spec_local_bundle_and_static_fallback():
    figures.setup()  # the project's theme: without it Vega-Lite's 10-px labels are refused
    p = alt.param(name="k", value=2, bind=alt.binding_range(min=1, max=5, step=1, name="k "))
    chart = alt.Chart(pd.DataFrame({"x": [1, 2, 3], "y": [1, 4, 9]})).mark_line().encode(
        x="x:Q", y="y:Q").transform_filter("datum.x <= k").add_params(p)
    html = figures.interactive(chart, "demo", depth=2)
    div = re.search(r'<div id="demo" class="coexist-interactive">(.*?)</div>', html, re.S)
    assert div and div.group(1).lstrip().startswith("<svg")  # shown until the script runs
    assert f'<script src="../../{figures.VEGA_JS}"></script>' in html
    spec = json.loads(re.search(r"var spec = (\{.*?\});\n", html, re.S).group(1))
    assert spec["params"][0]["name"] == "k" and spec["params"][0]["bind"]["input"] == "range"
    assert not re.search(r'(?:src|href)="https?://', html)  # nothing remote


def _grid_table(drop=None):
    rows = [{"r": r, "c": c, "t": t, "v": t} for r in "ABC" for c in "xyz" for t in range(3)
            if (r, c) != drop]
    return pd.DataFrame(rows)


def test_a_sorted_row_by_column_facet_with_a_missing_cell_is_refused():
    """Vega-Lite draws such a grid in data order, so the panels after the gap sit under the
    wrong headings (checked by rendering: the same chart without a sort list is drawn
    right). The check names the empty cell; a full grid and an unsorted one pass."""
    import pytest

    def facet(table, sort):
        base = alt.Chart(table).mark_line().encode(x="t:Q", y="v:Q")
        return base.facet(row=alt.Row("r:N", sort=["A", "B", "C"] if sort else "ascending"),
                          column=alt.Column("c:N", sort=["x", "y", "z"] if sort else
                                            "ascending"))

    with pytest.raises(figures.FigureError, match=r"\('B', 'z'\)") as err:
        figures.check_facet_grid(facet(_grid_table(("B", "z")), True).to_dict())
    assert "'r'" in str(err.value) and "'c'" in str(err.value)
    figures.check_facet_grid(facet(_grid_table(), True).to_dict())
    figures.check_facet_grid(facet(_grid_table(("B", "z")), False).to_dict())
    with pytest.raises(figures.FigureError, match="cells without data"):  # save checks first
        figures.save(facet(_grid_table(("B", "z")), True), _grid_table(), "X", "")
    enc = alt.Chart(_grid_table(("A", "x"))).mark_point().encode(
        x="t:Q", y="v:Q", row=alt.Row("r:N", sort=["C", "B", "A"]), column="c:N")
    with pytest.raises(figures.FigureError, match=r"\('A', 'x'\)"):
        figures.check_facet_grid(enc.to_dict())
    computed = alt.Chart(_grid_table()).transform_calculate(rr="datum.r").mark_point().encode(
        x="t:Q", y="v:Q").facet(row=alt.Row("rr:N", sort=["A", "B", "C"]), column="c:N")
    with pytest.raises(figures.FigureError, match="cannot check"):
        figures.check_facet_grid(computed.to_dict())


def test_fluid_version_names_follow_both_switches():
    table = pd.DataFrame({"rtprop_expiry": [False, True, True, False],
                          "cubic_recovery": [False, False, True, True]})
    assert figures.fluid_names(table).tolist() == [
        figures.FLUID[False], figures.FLUID[True],
        "fluid model, RTprop expiring, CUBIC recovery", "fluid model, CUBIC recovery"]
    # a table from before the CUBIC switch ran eqs. (40a-b) as published
    old = pd.DataFrame({"rtprop_expiry": [True, False]})
    assert figures.fluid_names(old).tolist() == [figures.FLUID[True], figures.FLUID[False]]
    assert len(set(figures.FLUID_VERSIONS.values())) == 4
    # the versions drawn beside measurements keep one colour across figures
    assert all(figures.FLUID_VERSIONS[v] in figures.PALETTE for v in figures.FLUID_SHOWN)


def test_provenance_names_notebook_checked_files_and_the_runs_used():
    line = figures.provenance("M-F1")
    assert "{download}`fig_m_f1.ipynb </notebooks/fig_m_f1.ipynb>`" in line
    assert "{download}`M-F1.csv </notebooks/expected/M-F1.csv>`" in line
    assert "M-F1.claims.csv </notebooks/expected/M-F1.claims.csv>" in line
    assert "{download}`two_flow </data/campaigns/two_flow.yaml>` (" in line and "runs)" in line
    assert "datapackage.json </data/datapackage.json>" in line
    for path in re.findall(r" </([^>]+)>`", line):  # every download exists
        assert (paths.ROOT / path).exists(), path
    assert "none (models only)" in figures.provenance("M-F9")



def test_every_fluid_version_has_its_own_dash_and_other_series_never_take_one():
    dashes = [tuple(d) for d in figures.FLUID_DASH.values()]
    assert len(set(dashes)) == len(figures.FLUID_VERSIONS)
    assert not set(dashes) & {tuple(d) for d in figures.OTHER_DASHES}
    domain = ["measured", figures.FLUID[True], "Ware et al.", figures.FLUID[False]]
    scale = figures.dash_scale(domain).to_dict()
    assert scale["range"] == [[1, 0], figures.FLUID_DASH[figures.FLUID[True]],
                              figures.OTHER_DASHES[1], figures.FLUID_DASH[figures.FLUID[False]]]


def test_a_fluid_line_of_an_unknown_version_is_refused_by_name():
    import pytest

    with pytest.raises(ValueError, match="version='fluid'"):
        figures.fluid_line(alt.Chart(pd.DataFrame({"x": [0]})), "x:Q", "fluid")


def test_measured_marks_draw_the_spread_below_the_mean_and_say_how_many_runs():
    data = pd.DataFrame({"x": [1, 2], "mean": [0.4, 0.5], "lo": [0.3, 0.45],
                         "hi": [0.5, 0.6], "n_runs": [3, 4], "source": ["measured"] * 2})
    bar, dot = figures.measured_marks(alt.Chart(data).encode(x="x:Q"), "mean", "lo", "hi",
                                      where="datum.source == 'measured'", color="#444")
    b, d = bar.to_dict(), dot.to_dict()
    assert b["mark"]["type"] == "rule" and d["mark"]["type"] == "point"
    assert (b["encoding"]["y"]["field"], b["encoding"]["y2"]["field"]) == ("lo", "hi")
    assert d["encoding"]["y"]["field"] == "mean"
    assert [t["field"] for t in d["encoding"]["tooltip"]] == ["lo", "hi", "n_runs"]
    assert b["transform"] == d["transform"] == [{"filter": "datum.source == 'measured'"}]
    assert b["mark"]["color"] == d["mark"]["color"] == "#444"


def test_hollow_measured_marks_are_open_points_in_their_colour_on_a_thinner_bar():
    data = pd.DataFrame({"x": [1], "mean": [0.4], "lo": [0.3], "hi": [0.5], "n_runs": [2]})
    base = alt.Chart(data).encode(x="x:Q", color=alt.Color("x:N"))
    bar, dot = figures.measured_marks(base, "mean", "lo", "hi", hollow=True)
    full_bar, full_dot = figures.measured_marks(base, "mean", "lo", "hi")
    d, fd = dot.to_dict()["mark"], full_dot.to_dict()["mark"]
    assert d["filled"] is False and "stroke" not in d  # the colour encoding draws the ring
    assert fd["filled"] is True and fd["stroke"] == figures.MEASURED_COLOUR
    assert bar.to_dict()["mark"]["strokeWidth"] < full_bar.to_dict()["mark"]["strokeWidth"]


def test_a_figure_wider_than_the_text_column_or_with_tiny_text_is_refused():
    import pytest

    figures.setup()
    data = pd.DataFrame({"x": [0, 1], "y": [0, 1]})
    fits = alt.Chart(data).mark_line().encode(x="x:Q", y="y:Q").properties(width=400)
    figures.check_size(figures.render(fits)[1], "fits")
    wide = fits.properties(width=figures.COLUMN)  # plus its axes: wider than the column
    with pytest.raises(figures.FigureError, match=r"wide is .*|wide; valid: at most"):
        figures.check_size(figures.render(wide)[1], "wide")
    tiny = fits.configure_axis(labelFontSize=figures.MIN_FONT - 2)
    with pytest.raises(figures.FigureError, match=f"tiny has text of {figures.MIN_FONT - 2} px"):
        figures.check_size(figures.render(tiny)[1], "tiny")


def test_long_titles_are_broken_to_fit_the_column_and_keep_every_word():
    long = "word " * 60
    spec = figures.fit_titles({"title": {"text": long, "subtitle": [long, "short"]}})
    assert all(len(line) <= figures.TITLE_CHARS for line in spec["title"]["text"])
    assert all(len(line) <= figures.SUBTITLE_CHARS for line in spec["title"]["subtitle"])
    assert " ".join(spec["title"]["text"]).split() == long.split()
    assert spec["title"]["subtitle"][-1] == "short"
    assert figures.fit_titles({"mark": "point"}) == {"mark": "point"}


def test_panels_beyond_two_are_stacked_in_rows_within_the_text_column():
    """A figure with one 240-px panel per value of a list parameter (M-F10's buffers, M-F11's
    and P-F1-2's RTTs) keeps its two-panel row for the default list and stacks a longer
    one, so a reader's re-run with more values still fits the column."""
    import pytest

    figures.setup()
    data = pd.DataFrame({"x": [0, 1], "y": [0, 1]})

    def panel(i):
        return alt.Chart(data).mark_line().encode(x="x:Q", y="y:Q").properties(
            width=240, height=100, title=f"panel {i}")

    two = figures.panels_in_rows([panel(0), panel(1)])
    assert isinstance(two, alt.HConcatChart) and len(two.hconcat) == 2
    for n in (3, 4, 5):
        grid = figures.panels_in_rows([panel(i) for i in range(n)])
        assert [len(r.hconcat) for r in grid.vconcat] == [2] * (n // 2) + [1] * (n % 2)
        figures.check_size(figures.render(grid)[1], f"{n} panels")
    with pytest.raises(figures.FigureError):  # the same panels side by side would not fit
        figures.check_size(figures.render(alt.hconcat(*(panel(i) for i in range(3))))[1],
                           "three abreast")
    with pytest.raises(ValueError, match="0 panels"):
        figures.panels_in_rows([])


def test_a_page_table_rounds_its_numbers_and_points_a_long_one_to_the_download():
    frame = pd.DataFrame({"model": ["a", "b"], "error": [0.12345, float("nan")]})
    assert figures.table(frame, "probe_table", digits=2) is None  # shown where pasted
    html = tables._page_html(frame, 2, index=False)
    assert "0.12" in html and "0.123" not in html and "<th>model</th>" in html
    long = tables._page_html(pd.DataFrame({"x": range(18)}), 2, index=False)
    assert long.count("<tr>") == figures.TABLE_ROWS  # body rows; the header row is styled
    assert "… and 3 more rows" in long
    folded = tables._page_html(pd.DataFrame({"x": range(18)}), 2, index=False, all_rows=True)
    assert folded.count("<tr>") == 18 and "more rows" not in folded  # behind a dropdown


def test_a_page_table_shows_its_exact_columns_unrounded():
    frame = pd.DataFrame({"buffer (BDP)": [0.5, 2.25], "distance": [1.0, 2.4]})
    html = tables._page_html(frame, 0, index=False, exact=("buffer (BDP)",))
    assert "<td>0.5</td>" in html and "<td>2.25</td>" in html  # as given
    assert "<td>2</td>" in html and "<td>2.4</td>" not in html  # the others rounded
    assert "<td>0</td>" not in html  # 0.5 BDP rounded to whole numbers would read 0
    with pytest.raises(ValueError, match="buffer"):
        tables._page_html(frame, 0, index=False, exact=("buffer",))


def test_quoted_list_keeps_names_apart_from_the_sentence():
    assert figures.quoted_list(["both"]) == '"both"'
    assert figures.quoted_list(["CUBIC recovery", "both"]) == '"CUBIC recovery" and "both"'
    assert figures.quoted_list(["a", "b", "c"]) == '"a", "b" and "c"'
    with pytest.raises(ValueError):
        figures.quoted_list([])


def test_figure_keys_drop_punctuation():
    assert figures.page_key("M-F1") == "mf1"
    assert figures.page_key("S-F4-5-11-12") == "sf451112"
    assert figures.page_key("F-Exp2") == "fexp2"


def test_craft_refuses_a_narrow_chart_pale_swatches_and_status_in_titles():
    d = pd.DataFrame({"x": [1, 2, 3], "y": [1, 2, 3], "s": ["a", "b", "a"]})

    def check(chart):
        spec, svg = figures.render(chart)
        figures.check_craft(spec, svg, "probe")

    wide = figures.WIDTH
    solid = alt.Chart(d).mark_line().encode(x="x", y="y", color="s:N")
    check(solid.properties(width=wide, title=alt.TitleParams(
        "A figure", subtitle=["No run of this setting is stored."])))  # says what is missing
    with pytest.raises(figures.FigureError, match="px wide; valid: at least"):
        check(solid.properties(width=200))
    pale = alt.Chart(d).mark_area(opacity=0.3).encode(x="x", y="y", color="s:N")
    with pytest.raises(figures.FigureError, match="legend swatch .* at opacity 0.3"):
        check(pale.properties(width=wide))
    check(pale.encode(color=alt.Color("s:N", legend=alt.Legend(symbolOpacity=1)))
          .properties(width=wide))  # the legend drawn opaque, the band still pale
    for status in ("campaign 3/5 runs done", "runs stored: 40 of 50", "a buffer needs all 11",
                   "12 mixes so far"):
        with pytest.raises(figures.FigureError, match="run status in a title"):
            check(solid.properties(width=wide, title=alt.TitleParams("T", subtitle=[status])))


@pytest.mark.parametrize("e", ledger.FIGURES, ids=lambda e: e.id)
def test_the_rerun_box_lists_every_parameter_and_commands_that_work(e):
    """The box is the ledger's spec as a reader needs it: every parameter with its default
    and range, each rule, and two commands that re-run the figure as written (the runner's
    -p pair parses; papermill's -y YAML gives the same value)."""
    import yaml

    from coexist.book import runner
    from coexist.core.params import describe

    box = figures.rerun_box(e.id)
    params = [p for p in e.spec.params if p.name != "out_dir"]
    if not params:
        assert f"{e.id} takes no parameters" in box
        return
    for p in params:
        assert f"| `{p.name}` | `{figures.value_text(p.default)}` |" in box, p.name
    for rule in e.spec.constraints:
        assert f"`{describe(rule)}`" in box
    command = re.search(rf"coexist figures --only {re.escape(e.id)} -p (\S+) (\S+)", box)
    name, text = command.groups()
    assert runner.resolve_overrides([e], [(name, text)])[e.id][name] == e.spec.get(name).default
    raw = re.search(rf"papermill notebooks/{re.escape(e.notebook)} out.ipynb -y '(.*)'", box)
    assert yaml.safe_load(raw.group(1)) == {name: e.spec.get(name).default}
