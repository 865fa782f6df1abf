"""Claims: the numbers the book's prose states, computed by the notebook that owns them.

A claim is one value a notebook computes (a share, an error, a count of equilibria, a
period) together with the text the prose shows for it, formatted in one place: the call
that makes it. :func:`claim` glues the text into the notebook (``myst_nb.glue``), so a
chapter shows it with ``{glue:text}`../notebooks/<nb>.ipynb::<key>:s```, and writes it
to ``<figure id>.claims.csv`` beside the figure's table. ``coexist figures --check``
compares those files with the committed ones in ``notebooks/expected/`` as it compares
tables (:func:`compare`), so a re-run that moves a claim fails, naming it, until it is
accepted; the prose then follows by itself.

The README's findings are claims too: :data:`FINDINGS` names them, and
:func:`readme_block` builds the README's block of findings from the committed claims
(``coexist claims --readme`` writes it between :data:`README_START` and
:data:`README_END`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..core.params import invalid
from ..core.paths import tables_dir

SUFFIX = ".claims.csv"
#: how a page quotes a claim: ``{glue:text}`<notebook path>.ipynb::<key>:<format>```;
#: groups: the notebook's path as written, the key
QUOTE = re.compile(r"\{glue(?::\w+)?\}`([^`:]+\.ipynb)::(\w+)")
KEY = re.compile(r"^[a-z][a-z0-9_]*$")
COLUMNS = ["key", "value", "text"]
#: the text (and stored value) of a claim that needs what the asked parameters do not give,
#: e.g. an error against measurements at a setting where none were made: the page says so
#: instead of stopping; the committed defaults never have it (a test says so)
NOT_AVAILABLE = "not available at these parameters"


@dataclass(frozen=True)
class Claim:
    """One claim: its key, its value (a number or a text) and the text the prose shows."""

    key: str
    value: float | str
    text: str


#: claims made in this process, per figure id (one notebook runs in one kernel)
_MADE: dict[str, dict[str, Claim]] = {}


def key_part(value: float) -> str:
    """A number as part of a claim's key, which has no dot: 0.5 BDP -> ``0p5``, 9.478 ms ->
    ``9p478``, 40 ms -> ``40`` (so a page can quote the defaults' keys and a reader's
    parameters still make valid ones)."""
    return f"{value:g}".replace(".", "p")


def claim(figure_id: str, key: str, value: float | int | str | None, fmt: str = "{:.2f}",
          out_dir: str = "") -> str:
    """Make the claim ``key`` of ``figure_id``: glue ``fmt.format(value)`` and record it.

    ``key`` is lower-case letters, digits and underscores, unique within the book (start it
    with the figure's id, e.g. ``mf1_ware_error``). ``value`` is a finite number or a text,
    or None where the parameters asked for do not give it (no measurement there): the claim
    is then :data:`NOT_AVAILABLE`, in the text and in the file. A NaN is refused, so a
    value that is missing by mistake still stops the notebook. The claims of a figure are
    written to ``<figure_id>.claims.csv`` in ``out_dir``, or in the directory a running book
    build keeps for figure tables when ``out_dir`` is empty (nowhere outside a build).
    Returns the text.
    """
    if not KEY.match(key):
        raise invalid("key", key, "lower-case letters, digits and underscores, a letter first")
    if value is None:
        value, fmt = NOT_AVAILABLE, "{}"
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        try:
            value = value.item()  # numpy scalars
        except AttributeError:
            raise invalid(f"claim {key}", value, "a number or a text") from None
    if isinstance(value, (int, float)) and not math.isfinite(value):
        raise invalid(f"claim {key}", value, "a finite number")
    text = fmt.format(value)
    made = _MADE.setdefault(figure_id, {})
    made[key] = Claim(key, value if isinstance(value, str) else float(value), text)
    try:
        from myst_nb import glue
    except ImportError:  # outside the book's environment the text is still returned
        pass
    else:
        glue(key, text, display=False)
    where = Path(out_dir) if out_dir else tables_dir()
    if where is not None:
        write(made.values(), Path(where) / f"{figure_id}{SUFFIX}")
    return text


def complete(figure_id: str, out_dir: Path, committed: Path) -> list[str]:
    """After a run with other parameters than the committed defaults: every claim the
    committed file has that the run did not make (a branch for measurements the asked
    setting has none of) is written as :data:`NOT_AVAILABLE`, so the claims file answers
    for every number the page quotes. Returns the keys added."""
    if not Path(committed).exists():
        return []
    path = Path(out_dir) / f"{figure_id}{SUFFIX}"
    made = read(path) if path.exists() else {}
    missing = [k for k in read(committed) if k not in made]
    if missing:
        write([*made.values(), *(Claim(k, NOT_AVAILABLE, NOT_AVAILABLE) for k in missing)],
              path)
    return missing


def best_by_range(accuracy, fmt: str = "{:.2f}", worst: bool = False,
                  within: float = 0.0) -> str:
    """The model with the smallest (``worst``: largest) mean absolute error in each buffer
    range of an error table (:func:`coexist.measured.comparison.error_by_range`'s rows), as one text
    claim: "1-2 BDP: <model> (0.16); 2-5 BDP: ...", followed by every other model whose
    error is within ``within`` of it ("<model> (0.16) and <model> (0.17)"), closest first:
    a ranking finer than the share the book resolves is not one. Ranges where no model has
    a value are left out."""
    parts = []
    for rng, g in accuracy.dropna(subset=["mean_abs_error"]).groupby(
            "buffer_range_bdp", sort=False):
        err = g["mean_abs_error"]
        edge = err.max() - within if worst else err.min() + within
        near = g[err >= edge] if worst else g[err <= edge]
        near = near.sort_values("mean_abs_error", ascending=not worst, kind="stable")
        parts.append(f"{rng} BDP: " + " and ".join(
            f"{r['model']} ({fmt.format(r['mean_abs_error'])})" for _, r in near.iterrows()))
    return "; ".join(parts) or "no range with a value"


def span(values, fmt: str = "{:.1f}") -> str:
    """The range of ``values`` as a claim's text, each end in ``fmt``: "10.0-10.6" ("-0.1 to
    0.9" when it starts below zero, so no minus sign reads as a dash), or one value when
    both ends read the same, or "none" when there is no value (NaNs left out)."""
    kept = [v for v in values if v == v]
    if not kept:
        return "none"

    def text(v) -> str:  # "-0.0" is 0.0 rounded from below: no sign
        t = fmt.format(v)
        return t[1:] if t.startswith("-") and float(t.split()[0]) == 0 else t

    lo, hi = text(min(kept)), text(max(kept))
    return lo if lo == hi else f"{lo} to {hi}" if lo.startswith("-") else f"{lo}-{hi}"


def write(claims, path: Path) -> None:
    """Write claims to ``path`` (key, value, text; numbers to 10 significant digits)."""
    rows = [{"key": c.key,
             "value": c.value if isinstance(c.value, str) else float(f"{c.value:.10g}"),
             "text": c.text} for c in claims]
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows, columns=COLUMNS).to_csv(path, index=False, lineterminator="\n")


def read(path: Path) -> dict[str, Claim]:
    """The claims in ``path``, by key."""
    t = pd.read_csv(path, dtype={"key": str, "value": str, "text": str},
                    keep_default_na=False)
    return {r.key: Claim(r.key, _number_or_text(r.value), r.text) for r in t.itertuples()}


def _number_or_text(value: str) -> float | str:
    try:
        return float(value)
    except ValueError:
        return value


def compare(new: Path, old: Path, rtol: float, atol: float) -> list[str]:
    """Differences between a figure's claims and the committed ones, each naming its claim.

    Numbers agree within ``rtol``/``atol`` (the figure's table tolerances) and their texts
    exactly; texts agree exactly. A claim present on one side only is a difference. Neither
    file existing is no difference (a figure without claims).
    """
    if not new.exists() and not old.exists():
        return []
    if not old.exists():
        return [f"claims written but none committed ({old.name})"]
    if not new.exists():
        return [f"no claims written, but {old.name} is committed"]
    a, b = read(new), read(old)
    problems = [f"claim {k}: not made any more (committed: {b[k].text!r})"
                for k in b if k not in a]
    problems += [f"claim {k}: new, not committed ({a[k].text!r})" for k in a if k not in b]
    for k in a.keys() & b.keys():
        x, y = a[k], b[k]
        if isinstance(x.value, float) and isinstance(y.value, float):
            same = math.isclose(x.value, y.value, rel_tol=rtol, abs_tol=atol)
        else:
            same = x.value == y.value
        if not same or x.text != y.text:
            problems.append(f"claim {k}: {x.text!r} ({x.value!r}) vs committed {y.text!r} "
                            f"({y.value!r})")
    return sorted(problems)


# --- the README's findings ------------------------------------------------------------

README_START = "<!-- findings: generated by `coexist claims --readme` from the claims -->"
README_END = "<!-- end of findings -->"

#: the README's findings, in order: (figure id, claim key, the page that computes it)
FINDINGS: tuple[tuple[str, str, str], ...] = (
    ("M-F1", "mf1_finding", "notebooks/fig_m_f1.ipynb"),
    ("F-Exp2", "fexp2_finding", "notebooks/fig_f_exp2.ipynb"),
    ("F-NE", "fne_finding", "notebooks/fig_f_ne.ipynb"),
    ("S-Readings", "sreadings_finding", "notebooks/fig_s_readings.ipynb"),
    ("P-F1-2", "pf1_finding", "notebooks/fig_p_f1_2.ipynb"),
    ("M-F11", "mf11_finding", "notebooks/fig_m_f11.ipynb"),
)


def readme_block(expected: Path) -> str:
    """The README's findings block, from the committed claims in ``expected``."""
    lines = [README_START]
    for figure_id, key, page in FINDINGS:
        path = expected / f"{figure_id}{SUFFIX}"
        found = read(path) if path.exists() else {}
        if key not in found:
            raise invalid("claim", f"{figure_id}:{key}", f"a claim committed in {path}")
        lines.append(f"- {found[key].text} ([{figure_id}]({page}))")
    lines.append(README_END)
    return "\n".join(lines)


def with_readme_block(readme: str, block: str) -> str:
    """``readme`` with its findings block replaced by ``block``."""
    start, end = readme.find(README_START), readme.find(README_END)
    if start < 0 or end < start:
        raise invalid("README.md", "no findings block",
                      f"a block from {README_START!r} to {README_END!r}")
    return readme[:start] + block + readme[end + len(README_END):]
