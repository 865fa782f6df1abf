"""Where a figure comes from and how to re-run it: the provenance line under it (its
notebook, committed table and claims, the campaigns it reads) and the collapsed "Re-run this
figure" box generated from its ledger entry.
"""

from __future__ import annotations

import json

from .. import claims


def _download(text: str, path: str) -> str:
    """A MyST link that the site serves ``path`` (from the book's root) through as a
    download, named ``text``."""
    return f"{{download}}`{text} </{path}>`"


def provenance(figure_id: str) -> str:
    """The line under a figure, each file a download the site serves: the notebook that
    draws it, the committed table (and claims) the figure check compares, and the campaigns
    it reads (their campaign files, with the runs stored of each) and the data description
    (``data/datapackage.json``: schema, units, hashes and provenance per campaign)."""
    from ...core import paths
    from .. import index as book_index
    from .. import ledger

    e = ledger.entry(figure_id)
    checked = _download(f"{e.id}.csv", f"notebooks/expected/{e.id}.csv")
    if (paths.EXPECTED / f"{e.id}{claims.SUFFIX}").exists():
        checked += " and " + _download(f"{e.id}{claims.SUFFIX}",
                                       f"notebooks/expected/{e.id}{claims.SUFFIX}")
    used = [f"{_download(name, f'data/campaigns/{name}.yaml')} ({done} of {planned} runs)"
            for name, done, planned in book_index.campaigns_used(e)]
    data = ("; data: " + ", ".join(used) + ", described in "
            + _download("datapackage.json", "data/datapackage.json")
            if used else "; data: none (models only)")
    return (f"*Provenance:* {e.id} is drawn by "
            f"{_download(e.notebook, f'notebooks/{e.notebook}')}; CI compares its table "
            f"{checked}{data}.")


def value_text(value) -> str:
    """A parameter value as ``coexist figures -p`` takes it (lists comma-separated)."""
    if isinstance(value, (list, tuple)):
        return ",".join(value_text(v) for v in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return f"{value:g}" if isinstance(value, float) else str(value)


def _yaml_text(value) -> str:
    """A parameter value as papermill's ``-y`` takes it (YAML)."""
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_yaml_text(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value) if isinstance(value, int) else json.dumps(value)


def _range_cell(p) -> str:
    """A parameter's valid values, compact for a table cell: ``0.01 ≤ x ≤ 1000``, ``an
    integer, 2 ≤ x ≤ 5000``, ``a list, each 0.05 ≤ x ≤ 1000``, ``one of ...``."""
    if p.choices is not None:
        return "one of " + ", ".join(f"`{c}`" for c in p.choices)
    kind = p.item if p.kind is list else p.kind
    if kind is bool:
        return "true or false"
    if kind is str:
        return "a list of names" if p.kind is list else "a text"
    parts = []
    if p.low is not None:
        parts.append(f"{p.low:g} {'<' if p.low_open else '≤'} ")
    parts.append("x")
    if p.high is not None:
        parts.append(f" {'<' if p.high_open else '≤'} {p.high:g}")
    bound = "".join(parts) if len(parts) > 1 else "any"
    what = "an integer, " if kind is int else ""
    return (f"a list, each {what}{bound}" if p.kind is list else f"{what}{bound}")


def rerun_box(figure_id: str) -> str:
    """MyST for a collapsed "Re-run this figure" box, generated from the figure's ledger
    entry: every parameter it accepts (name, default, valid values, meaning), the rules
    between them, and the commands that re-run it with other values, through the book's
    runner and through plain papermill."""
    from ...core.params import describe
    from .. import ledger

    e = ledger.entry(figure_id)
    params = [p for p in e.spec.params if p.name != ledger.OUT_DIR.name]
    rows = ["| Parameter | Default | Valid values | Meaning |", "| --- | --- | --- | --- |"]
    for p in params:
        valid = _range_cell(p).replace("|", "\\|")
        rows.append(f"| `{p.name}` | `{value_text(p.default)}` | {valid} | "
                    f"{ledger.meaning(p) or '-'} |")
    example = next((p for p in params if p.kind in (int, float)), params[0]) if params else None
    lines = ["````{admonition} Re-run this figure with other parameters",
             ":class: dropdown", ""]
    if example is None:
        lines += [f"{e.id} takes no parameters: `coexist figures --only {e.id}` re-runs it.",
                  "````"]
        return "\n".join(lines)
    lines += [f"{e.id} accepts {len(params)} parameters; any value in the range shown gives "
              "the figure, and a value outside it, or an unknown name, is refused in one "
              "line before anything runs.", "", *rows, ""]
    if e.spec.constraints:
        rules = "; ".join(f"`{describe(r)}`" for r in e.spec.constraints)
        lines += [f"Between parameters: {rules}. A combination that breaks a rule is "
                  "refused naming it.", ""]
    value = value_text(example.default)
    lines += ["With the book's runner (tables and SVG in `build/figures`):", "",
              "```bash", f"coexist figures --only {e.id} -p {example.name} {value}", "```",
              "", "or with papermill directly:", "", "```bash",
              f"papermill notebooks/{e.notebook} out.ipynb -y "
              f"'{{{example.name}: {_yaml_text(example.default)}}}'", "```",
              "", "Repeat `-p NAME VALUE` for more parameters (a list is comma-separated, "
              "e.g. `-p NAME 1,2,3`).", "````"]
    return "\n".join(lines)
