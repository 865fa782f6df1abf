"""Putting a figure's results on its page: the figure shown and glued with its provenance
and re-run box, values and sentences glued for the text, names quoted as a reader's list,
the fluid model's longer-run check reported, a listing of code and a short result.
"""

from __future__ import annotations

import altair as alt
import pandas as pd

from ...measured import comparison, run_length
from .. import claims
from .origins import provenance, rerun_box
from .phone import phone_svg, with_phone
from .rendering import render


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
    """Show a figure (a chart, or HTML) and its provenance line under it. A chart carries
    its phone drawing (:mod:`.phone`), which the built book serves to narrow screens.

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

    if isinstance(chart, alt.TopLevelMixin):
        spec, svg = render(chart)
        shown = SVG(with_phone(svg, phone_svg(spec)))
    else:
        shown = chart
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
