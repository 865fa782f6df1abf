"""The notebook contract: every notebook is in the ledger, the book and (for figures) has a
committed table; its parameters cell holds the defaults of exactly the ledger's names (which
the ledger reads from it) and the check follows it."""

import ast
import re
from pathlib import Path

import nbformat
import pytest

from coexist.book import ledger
from coexist.book.ledger import completion, entries
from coexist.core.params import ParameterError


def parameters_cell(path):
    nb = nbformat.read(path, as_version=4)
    tagged = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1, f"{path.name}: needs exactly one 'parameters' cell"
    return nb, tagged[0]


@pytest.mark.parametrize("e", ledger.ENTRIES, ids=lambda e: e.id)
def test_parameters_cell_holds_the_defaults_and_the_check_follows(e):
    nb, cell = parameters_cell(e.path)
    e.spec.validate(e.spec.defaults())  # every default inside its range, every rule kept
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    following = code[code.index(cell.source) + 1]
    assert f'ledger.check("{e.id}", globals())' in following


def test_the_ledger_declares_no_default():
    """Defaults live in one place, the notebooks' parameters cells: no parameter of the
    ledger's source carries one (a third argument or a ``default=``)."""
    trees = [ast.parse(p.read_text()) for p in sorted(Path(ledger.__file__).parent.glob("*.py"))]
    calls = [n for tree in trees for n in ast.walk(tree) if isinstance(n, ast.Call)
             and isinstance(n.func, ast.Name) and n.func.id in ("_p", "Param")]
    assert len(calls) > 50
    assert [ast.unparse(c)[:60] for c in calls
            if len(c.args) > 2 or any(k.arg == "default" for k in c.keywords)] == []


def _notebook(tmp_path, source):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source, metadata={"tags": ["parameters"]})]
    path = tmp_path / "fig_x.ipynb"
    nbformat.write(nb, path)
    return path


@pytest.mark.parametrize("source, message", [
    ("x = 1.0\ny = x * 2\n", "'y' is not a literal"),
    ("x = 1.0\nprint(x)\n", "only assign one literal per name"),
    ("x, y = 1.0, 2.0\n", "only assign one literal per name"),
])
def test_a_parameters_cell_that_is_not_literals_is_refused_naming_it(tmp_path, source,
                                                                     message):
    with pytest.raises(ParameterError, match=message):
        ledger.notebook_defaults(_notebook(tmp_path, source))


def test_a_default_outside_its_range_or_a_name_not_shared_is_refused(tmp_path, monkeypatch):
    e = ledger.entry("M-F6")
    monkeypatch.setattr(entries, "NOTEBOOKS", tmp_path)
    fake = ledger.Entry("X", "fig_x.ipynb", "figure", "x", e.spec)
    _notebook(tmp_path, "capacity_mbps = 100.0\nn_flows = 1\nbuffer_bdp = 2.0\n"
                        "out_dir = ''\n")
    with pytest.raises(ParameterError, match=r"fig_x.ipynb: the default parameter 'n_flows'"):
        completion._complete(fake)
    _notebook(tmp_path, "capacity_mbps = 100.0\nflows = 10\nbuffer_bdp = 2.0\nout_dir = ''\n")
    with pytest.raises(ParameterError, match=r"only in the cell \['flows'\], only in the "
                                             r"ledger \['n_flows'\]"):
        completion._complete(fake)


def test_every_notebook_is_in_ledger_and_toc(root):
    on_disk = {p.name for p in (root / "notebooks").glob("*.ipynb")}
    assert on_disk == {e.notebook for e in ledger.ENTRIES}
    toc = (root / "_toc.yml").read_text()
    for e in ledger.ENTRIES:
        assert re.search(rf"file: notebooks/{e.path.stem}\b", toc), e.notebook


def test_every_figure_has_committed_outputs_and_nothing_else(root):
    expected = root / "notebooks" / "expected"
    csvs = {p.stem for p in expected.glob("*.csv") if not p.name.endswith(".claims.csv")}
    assert csvs == {e.id for e in ledger.FIGURES}
    claimed = {p.name.removesuffix(".claims.csv") for p in expected.glob("*.claims.csv")}
    assert claimed <= {e.id for e in ledger.FIGURES}  # claims belong to a figure
    for e in ledger.FIGURES:
        assert (expected / f"{e.id}.svg").read_text().lstrip().startswith("<svg")


def test_notebooks_are_committed_without_outputs(root):
    for path in (root / "notebooks").glob("*.ipynb"):
        nb = nbformat.read(path, as_version=4)
        assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), path.name


@pytest.mark.parametrize("e", ledger.ENTRIES, ids=lambda e: e.id)
def test_every_warmup_must_end_before_its_run(e):
    """A warm-up as long as its run would leave nothing to average: refused, by name."""
    from coexist.core.params import ParameterError

    defaults = e.spec.defaults()
    durations = [n for n in defaults if n.endswith("duration_s")]
    for name in (n for n in defaults if n.endswith("warmup_s")):
        # its run: the duration with the same prefix, else the entry's only duration
        duration = name.replace("warmup_s", "duration_s")
        if duration not in defaults and len(durations) == 1:
            duration = durations[0]
        assert duration in defaults, f"{e.id}: which run does {name} belong to?"
        with pytest.raises(ParameterError, match=name):
            e.spec.validate({**defaults, name: defaults[duration]})


def test_every_figure_notebook_is_named_after_its_figure():
    from coexist.book import ledger

    wrong = [(e.id, e.notebook) for e in ledger.FIGURES
             if e.notebook != f"fig_{e.id.lower().replace('-', '_')}.ipynb"]
    assert wrong == []


def _code_cells(path):
    import json

    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return [("".join(c["source"]) if isinstance(c["source"], list) else c["source"],
             c.get("metadata", {}).get("tags", []))
            for c in cells if c["cell_type"] == "code"]


def _assigns(source: str, name: str) -> bool:
    import ast

    return any(isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id == name
               for n in ast.walk(ast.parse(source)))


def test_every_figure_notebook_computes_its_table_before_drawing_it():
    """One cell computes the table CI checks; the chart is drawn from it in a cell after
    it, which does not change the table."""
    from coexist.book import ledger
    from coexist.core import paths

    for e in ledger.FIGURES:
        cells = _code_cells(paths.ROOT / "notebooks" / e.notebook)
        computes = [i for i, (src, _) in enumerate(cells) if _assigns(src, "table")]
        saves = [i for i, (src, _) in enumerate(cells) if "figures.save(" in src]
        assert len(computes) == 1, f"{e.id}: table assigned in cells {computes}"
        assert len(saves) == 1, f"{e.id}: figures.save in cells {saves}"
        (t,), (s,) = computes, saves
        assert t < s, f"{e.id}: drawn before the table is computed"
        assert "figures.save(chart, table," in cells[s][0], f"{e.id}: saves another table"


def test_every_figure_page_keeps_its_code_one_click_away_and_prints_nothing_on_it():
    """A figure page reads as a figure in a paper: every code cell is collapsed
    (``hide-input``), and a cell that prints keeps that output off the page
    (``remove-output``): what a reader is to see is a figure, a table or a claim."""
    from coexist.book import ledger
    from coexist.core import paths

    for e in ledger.FIGURES:
        for src, tags in _code_cells(paths.ROOT / "notebooks" / e.notebook):
            assert {"hide-input", "remove-input", "remove-cell"} & set(tags), \
                f"{e.id}: a code cell shows its code: {src[:60]!r}"
            if re.search(r"\bprint\(", src):
                assert "remove-output" in tags, f"{e.id}: a cell prints on the page: " \
                                                f"{src[:60]!r}"


@pytest.mark.parametrize("e", ledger.FIGURES, ids=lambda e: e.id)
def test_every_figure_page_has_the_anatomy_of_a_papers_figure(e):
    """Title and question; the figure glued under its caption ("**Figure <id>.**") and its
    provenance line; the result; the box that says how to re-run it; then "How this figure
    is computed" and only then the code, none of which prints: the page a reader meets
    before any code."""
    from coexist.book import figures
    from coexist.core import paths

    nb = nbformat.read(paths.ROOT / "notebooks" / e.notebook, as_version=4)
    kinds = [c.cell_type for c in nb.cells]
    first_code = kinds.index("code")
    assert "markdown" not in kinds[first_code:], f"{e.id}: prose after the code"
    prose = [c.source for c in nb.cells[:first_code]]
    key = figures.page_key(e.id)
    assert prose[0].startswith("# ") and "?" in prose[0], f"{e.id}: no question under the title"
    figure = re.search(rf"```{{glue:figure}} {key}_figure\n(?::[^\n]*\n)*\n(.*?)```",
                       prose[1], re.S)
    title = prose[0][2:].split("\n")[0]
    named = title.split(" · ")[0] if " · " in title else e.id  # as the title names it
    assert figure and figure.group(1).startswith(f"**Figure {named}.**"), \
        f"{e.id}: the second cell must glue {key}_figure with its caption (**Figure {named}.**)"
    # read as MyST, so that its files are {download} links
    assert f"{{glue:md}}`{key}_provenance:myst`" in prose[1], f"{e.id}: no provenance line"
    assert prose[-1].startswith("## How this figure is computed"), \
        f"{e.id}: the last prose must say how the figure is computed"
    # the box with the figure's parameters and the commands that re-run it, above the code
    assert prose[-2].rstrip().endswith(f"```{{glue:md}} {key}_rerun\n:format: myst\n```"), \
        f"{e.id}: no Re-run box (figures.rerun_box) before the code"
    for cell in nb.cells[first_code:]:
        assert not re.search(r"\bprint\(", cell.source), f"{e.id}: {cell.source[:60]!r}"


def test_measured_spreads_come_from_the_shared_layer():
    """Every min-max bar under a measured mean is figures.measured_marks, so the book
    draws measurements one way; a notebook's own rule from a minimum to a maximum is not."""
    import re

    from coexist.book import ledger
    from coexist.core import paths

    own = re.compile(r"mark_rule\([^)]*\)\s*\.encode\([^)]*y2=", re.S)
    found = [e.id for e in ledger.FIGURES
             for src, _ in _code_cells(paths.ROOT / "notebooks" / e.notebook) if own.search(src)]
    assert found == []


def test_a_name_no_cell_may_assign_before_the_check_is_refused():
    """What papermill injects after the parameters cell is in the kernel's input history."""
    from coexist.core.params import ParameterError

    e = ledger.entry("M-F6")
    params = "\n".join(f"{p.name} = {p.default!r}" for p in e.spec.params)
    history = ["", params, "# Parameters\nn_flow = 20\n",
               'P = ledger.check("M-F6", globals())\ntable = 1']
    ns = {**e.spec.defaults(), "n_flow": 20, "In": history}
    with pytest.raises(ParameterError, match=r"unknown parameter\(s\) 'n_flow'"):
        ledger.check("M-F6", ns)
    # the cells after the check, re-run interactively, and imports do not count
    ok = {**e.spec.defaults(), "In": ["", params, "import math\nfrom math import pi",
                                      history[3], "x = 1", history[3]]}
    assert ledger.check("M-F6", ok) == e.spec.defaults()
    assert ledger.assigned_before_check(["%time x = 1", "a, (b, *c) = 1, (2, 3)\nd += 1",
                                         "plt.rc['x'] = 1\nobj.attr = 2\nm[k] = 3",
                                         "ledger.check(1)", "late = 1"]) == {"a", "b", "c", "d"}


@pytest.mark.slow
def test_plain_papermill_with_a_misspelled_parameter_stops_in_one_line(tmp_path):
    import papermill as pm

    e = ledger.entry("M-F6")
    with pytest.raises(pm.PapermillExecutionError) as err:
        pm.execute_notebook(str(e.path), str(tmp_path / "out.ipynb"), parameters={"n_flow": 20},
                            cwd=str(e.path.parent), kernel_name="python3", progress_bar=False)
    assert err.value.ename == "ParameterError"
    assert "unknown parameter(s) 'n_flow'" in err.value.evalue


def test_visible_code_fits_the_column():
    """Code a page shows without a click (a derivation's, the index's) keeps its lines
    short enough for the text column; collapsed code may use the project's line length."""
    from coexist.book.reader_view import CODE_COLUMN_CHARS
    from coexist.core import paths

    wide = []
    for path in sorted((paths.ROOT / "notebooks").glob("*.ipynb")):
        for src, tags in _code_cells(path):
            if {"hide-input", "remove-input", "remove-cell"} & set(tags):
                continue
            wide += [f"{path.name}: {line[:60]!r}" for line in src.splitlines()
                     if len(line) > CODE_COLUMN_CHARS]
    assert wide == []


def test_every_figure_parameter_says_what_it_means():
    """The Re-run box shows each parameter's meaning (its help, or the shared meaning of
    its name): none is left blank."""
    blank = [(e.id, p.name) for e in ledger.FIGURES for p in e.spec.params
             if p.name != "out_dir" and not ledger.meaning(p)]
    assert blank == []


@pytest.mark.parametrize("figure, values, rule", [
    # the published reading needs a step each way (Config.check's d_f >= step_s)
    ("M-F3", {"rtts_ms": [0.15], "step_us": 100.0}, "a step each way"),
    ("P-F3", {"rtts_ms": [0.15], "fluid_step_us": 100.0, "check_step_us": 10.0},
     "a step each way"),
    # a window of a packet per flow: the smallest capacity and RTT, the most flows
    ("M-F11", {"capacity_mbps": 13.64, "rtts_ms": [0.5374, 1.045], "n_flows": 2},
     r"BDP of 0.611 packets"),
    ("WhatIf", {"capacities_mbps": [1.0, 100.0], "rtts_ms": [5.0], "flow_counts": [2, 10],
                "multi_capacities_mbps": [100.0], "multi_rtts_ms": [5.0]}, "BDP of 0.417"),
    ("WhatIf", {"capacities_mbps": [100.0], "rtts_ms": [2.0], "flow_counts": [2, 30],
                "multi_capacities_mbps": [100.0], "multi_rtts_ms": [2.0]}, r"per flow \(30\)"),
    ("M-F4", {"capacity_mbps": 10.0, "rtt_ms": 20.0, "flows_per_cca": [10]}, r"per flow \(20\)"),
    ("M-F10", {"capacity_mbps": 10.0, "group_rtts_ms": [5.0, 30.0], "group_size": 3},
     r"group_size x groups"),
])
def test_fluid_figures_refuse_what_their_model_cannot_run(figure, values, rule):
    """Refused before any run, in one line naming the rule."""
    with pytest.raises(ParameterError, match=rule) as err:
        ledger.entry(figure).spec.validate(values, partial=True)
    assert "\n" not in str(err.value)


def test_whatif_asks_a_packet_per_flow_only_where_its_flows_run():
    """Two flows at 10 Mbit/s and 5 ms have 4 packets of BDP; its ten flows run only at the
    multi-flow setting, 100 Mbit/s, where they have 42."""
    ledger.entry("WhatIf").spec.validate(
        {"capacities_mbps": [10.0, 100.0], "rtts_ms": [5.0], "flow_counts": [2, 10],
         "multi_capacities_mbps": [100.0], "multi_rtts_ms": [5.0]}, partial=True)


def test_the_shortest_fluid_rtt_at_two_steps_is_accepted():
    ledger.entry("M-F3").spec.validate({"capacities_mbps": [1000.0], "rtts_ms": [0.2],
                                        "sweep_rtts_ms": [5.0], "step_us": 100.0},
                                       partial=True)
