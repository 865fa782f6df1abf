"""Figure output helpers: the interactive embedding works without network and degrades to
the static SVG."""

import json
import re

import altair as alt
import pandas as pd

from coexist import figures


def test_interactive_html_embeds_spec_local_bundle_and_static_fallback():
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
