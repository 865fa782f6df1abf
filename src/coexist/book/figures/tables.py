"""Tables on a page: a compact HTML table, numbers rounded and rows capped, shown where the
cell runs or glued for the text to paste.
"""

from __future__ import annotations

import pandas as pd

from .page import glue


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
