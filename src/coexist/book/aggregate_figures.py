"""The fluid model's aggregate figures beside the measurements (S-F6-10, S-F13-17): their
chart and the claims the fluid-model chapter quotes from their tables, which
:mod:`coexist.measured.fluid_vs_measured` computes."""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import pandas as pd

from ..measured import aggregate_statements as statements
from ..measured.fluid_vs_measured import AQM_TITLES, METRIC_TITLES
from . import claims, figures


def start_claims(figure_id: str, prefix: str, by_metric: pd.DataFrame, by_pair: pd.DataFrame,
                 out_dir: str = "") -> None:
    """The claims the fluid-model chapter quotes from the tables of
    :func:`coexist.measured.fluid_vs_measured.start_comparison`:
    ``<prefix>_mae_<metric>_<start>_<window>`` (the mean absolute error per metric) and
    ``<prefix>_queue_<pair>_<start>_<window>`` (the mean queue-share error per pair), with
    the windows named ``paper`` (the first, the paper's) and ``ours`` (the second, the
    measured one)."""
    windows = list(dict.fromkeys(w for _, w in by_metric.columns))
    names = dict(zip(windows, ("paper", "ours"), strict=False))
    for (start, window), col in by_metric.items():
        for metric, v in col.dropna().items():
            claims.claim(figure_id, f"{prefix}_mae_{metric}_{start}_{names[window]}", float(v),
                         "{:.4f}" if metric in ("loss_rate", "utilisation") else "{:.2f}",
                         out_dir)
    for (start, window), col in by_pair.items():
        for pair, v in col.dropna().items():
            key = pair.lower().replace("/", "_")
            claims.claim(figure_id, f"{prefix}_queue_{key}_{start}_{names[window]}", float(v),
                         "{:.2f}", out_dir)


def statement_table(figure_id: str, prefix: str, model: pd.DataFrame,
                    measured_spread: pd.DataFrame, like_for_like: pd.DataFrame,
                    out_dir: str = "") -> pd.DataFrame:
    """Test Scherrer et al.'s statements on Figs. 6-10
    (:mod:`coexist.measured.aggregate_statements`) on the model's table at the paper's
    setting, on the model over our measurements' window and scope (``like_for_like``,
    :func:`coexist.measured.fluid_vs_measured.like_for_like`) and on the measured spread.
    Glue the verdicts in two tables, ``<prefix>_paper_loss`` (Figs. 6 and 7: fairness and
    loss) and ``<prefix>_paper_queue`` (Figs. 8-10), each short enough for the page; claim
    the counts ``<prefix>_paper_model``, ``_measured`` and ``_agree`` (like-for-like model
    against measured) and the statements neither bears out, ``_neither``; glue those only
    one side bears out as ``_only_model`` and ``_only_measured``, and what both say of the
    paper's model-only finding as ``_model_only``. Returns the verdicts."""
    said = statements.verdicts(model, statements.wide_measured(measured_spread),
                               like_for_like)
    count = statements.tally(said)
    nothing = "none: nothing is measured at this setting"
    agree, measured = ((count.agree, count.measured) if not measured_spread.empty
                       else (nothing, nothing))
    for key, value in [("model", count.model), ("measured", measured),
                       ("agree", agree), ("neither", count.neither)]:
        claims.claim(figure_id, f"{prefix}_paper_{key}", value, "{}", out_dir)
    figures.glue(f"{prefix}_paper_model_only", statements.model_only_text(said))
    figures.glue(f"{prefix}_paper_only_model", count.only_model)
    figures.glue(f"{prefix}_paper_only_measured", count.only_measured)
    shown = said[["the paper says", "our reading", "model", "model, like for like",
                  "measured"]]
    first = said["figure"].isin(["Fig. 6", "Fig. 7"])
    figures.table(shown[first], f"{prefix}_paper_loss")
    figures.table(shown[~first], f"{prefix}_paper_queue")
    return said


def metrics_chart(table: pd.DataFrame, pairs: Sequence[str], title: str,
                  subtitle: list[str]):
    """The aggregate figures' chart: one row per metric of
    :data:`coexist.measured.fluid_vs_measured.METRIC_TITLES`, its
    drop-tail and RED panels on one y scale (utilisation's fitted to the data, not from 0);
    the model's lines and the measured means (with their spread) per pair of algorithms,
    each pair in its own colour, the key above the panels. ``table`` is long:
    pair, aqm, buffer_bdp, metric (titled), value, source ("fluid model" or "measured"),
    and lo and hi for the measured rows."""
    x = alt.X("buffer_bdp:Q", title="Buffer (BDP)")
    # ten pairs, ten colours far enough apart (figures.CATEGORY); one legend above the
    # whole figure, on the screen of its first panels (under five rows it was not)
    colour = alt.Color("pair:N", title="CCA pair", sort=list(pairs),
                       scale=alt.Scale(domain=list(pairs), range=figures.CATEGORY),
                       legend=alt.Legend(orient="top", columns=5, symbolStrokeWidth=3))
    rows = []
    for key, metric in METRIC_TITLES.items():
        # utilisation stays near 1: its axis fits the data, or every line lies on the top
        y_scale = alt.Scale(zero=False) if key == "utilisation" else alt.Undefined
        cells = []
        for aqm, heading in AQM_TITLES.items():
            base = alt.Chart(table[(table.metric == metric) & (table.aqm == aqm)]).encode(
                x=x, color=colour)
            lines = base.transform_filter("datum.source == 'fluid model'").mark_line(
                point=alt.OverlayMarkDef(size=22)).encode(
                y=alt.Y("value:Q", title=None, scale=y_scale),
                tooltip=["pair", "aqm", "metric", "buffer_bdp",
                         alt.Tooltip("value:Q", format=".4f")])
            bars, dots = figures.measured_marks(
                base, "value", "lo", "hi", where="datum.source == 'measured'",
                shape="diamond", tooltip=["pair", "metric", "buffer_bdp", alt.Tooltip(
                    "value:Q", format=".4f", title="measured mean")])
            cells.append(alt.layer(lines, bars, dots).properties(
                width=250, height=150, title=f"{metric}, {heading}"))
        rows.append(alt.hconcat(*cells).resolve_scale(y="shared"))
    return alt.vconcat(*rows).resolve_scale(color="shared").properties(
        title=alt.TitleParams(title, subtitle=subtitle))
