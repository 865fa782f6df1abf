"""Scherrer et al.'s statements on their Figs. 6-10 tested on our measured runs and on the
fluid model, and what the verdicts add up to: the measured spread brought into the shape
of the model's table (:func:`wide_measured`), every statement's verdict on the model at the
paper's setting, on the model over our measurements' window and scope and on the
measurements (:func:`verdicts`), their count (:func:`tally`), where two settings' verdicts
part (:func:`differences`) and what becomes of the paper's model-only finding
(:func:`model_only_text`)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from .aggregate_readings import STATEMENTS
from .statement_verdicts import WORDS, Statement, Verdict, missing


def wide_measured(spread: pd.DataFrame) -> pd.DataFrame:
    """The measured spread (pair, buffer_bdp, metric, mean, ...) as one row per pair and
    buffer with a column per metric (the repeats' mean), all under drop-tail."""
    if spread.empty:
        return pd.DataFrame(columns=["pair", "aqm", "buffer_bdp"])
    wide = spread.pivot_table(index=["pair", "buffer_bdp"], columns="metric",
                              values="mean").reset_index()
    wide.columns.name = None
    return wide.assign(aqm="droptail")


def _on(s: Statement, table: pd.DataFrame, empty_why: str) -> Verdict:
    """``s`` tested on ``table``; a reading of both disciplines on a table without RED
    says that its verdict covers drop-tail only."""
    if table.empty:
        return missing(empty_why)
    v = s.test(table)
    if s.both and v.holds is not None and "red" not in set(table["aqm"]):
        return Verdict(v.holds, f"{v.evidence}; drop-tail only (no RED runs)")
    return v


def verdicts(model: pd.DataFrame, measured: pd.DataFrame,
             like_for_like: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every statement with its reading and its verdict on the model's table (the paper's
    setting), on the model over our measurements' window and scope (``like_for_like``:
    the pairs, buffers and discipline measured; None or empty when nothing is measured)
    and on the measured one (:func:`wide_measured`)."""
    like = like_for_like if like_for_like is not None else pd.DataFrame()
    rows = []
    for s in STATEMENTS:
        on_model = s.test(model)
        on_like = _on(s, like, "nothing measured at this setting")
        on_meas = _on(s, measured, "nothing measured at this setting")
        rows.append({"figure": s.figure, "short": s.short,
                     "the paper says": f"{s.figure}: {s.says}", "our reading": s.reading,
                     "model": on_model.text(), "model, like for like": on_like.text(),
                     "measured": on_meas.text(), "model_only": s.model_only,
                     "model_holds": on_model.holds, "like_holds": on_like.holds,
                     "measured_holds": on_meas.holds})
    return pd.DataFrame(rows)


def _of(holds: pd.Series) -> str:
    tested = holds.dropna()
    return f"{int(tested.astype(bool).sum())} of {len(tested)}"


def _names(v: pd.DataFrame) -> str:
    return "; ".join(v["short"]) if len(v) else "none"


@dataclass(frozen=True)
class Tally:
    model: str     # "k of n": the statements that hold among those the model tests
    measured: str  # the same for the measurements
    agree: str     # among the statements both the like-for-like model and the measurements
    #                test, on how many their verdicts agree
    neither: str   # the statements both test and neither bears out, by their short names
    only_model: str  # both test it, only the like-for-like model bears it out
    only_measured: str


def tally(v: pd.DataFrame) -> Tally:
    """Count :func:`verdicts`: how many statements hold in the model at the paper's setting
    and in our measurements (there without the paper's model-only finding, which it
    expects not to hold in experiments), and, where the model over our measurements'
    window and scope and the measurements both test a statement, where they part. A
    statement the paper finds in its model only is left out of the comparison."""
    both = v[v["like_holds"].notna() & v["measured_holds"].notna() & ~v["model_only"]]
    m, x = both["like_holds"].astype(bool), both["measured_holds"].astype(bool)
    theirs = v[~v["model_only"]]  # the paper expects a model-only finding not to hold there
    return Tally(_of(v["model_holds"]), _of(theirs["measured_holds"]),
                 f"{int((m == x).sum())} of {len(both)}", _names(both[~m & ~x]),
                 _names(both[m & ~x]), _names(both[~m & x]))


SIDES = {"model_holds": "model", "like_holds": "like-for-like model",
         "measured_holds": "measured"}


def differences(before: pd.DataFrame, after: pd.DataFrame) -> str:
    """The statements whose verdict on a side differs between two :func:`verdicts` tables
    (another setting's and this one's), where both test it: 'short (side: holds there, not
    here)', or 'none'."""
    out = []
    for (_, b), (_, a) in zip(before.iterrows(), after.iterrows(), strict=True):
        for col, side in SIDES.items():
            if pd.notna(b[col]) and pd.notna(a[col]) and bool(b[col]) != bool(a[col]):
                out.append(f"{a['short']} ({side}: {WORDS[bool(b[col])]} there, "
                           f"{WORDS[bool(a[col])]} here)")
    return "; ".join(out) or "none"


def model_only_text(v: pd.DataFrame) -> str:
    """What the like-for-like model and the measurements say of each statement the paper
    finds in its model only: 'short: holds in the like-for-like model and does not hold in
    our measurements, as the paper found', or 'none'."""
    word = {**WORDS, None: "is not testable"}
    out = []
    for _, r in v[v["model_only"]].iterrows():
        like = None if pd.isna(r["like_holds"]) else bool(r["like_holds"])
        meas = None if pd.isna(r["measured_holds"]) else bool(r["measured_holds"])
        out.append(f"{r['short']}: {word[like]} in the like-for-like model and {word[meas]} "
                   "in our measurements" + (", as the paper found" if like is True
                                            and meas is False else ""))
    return "; ".join(out) or "none"
