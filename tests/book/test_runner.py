import os
import shutil
from pathlib import Path

import pandas as pd
import pytest

from coexist.book import ledger, runner
from coexist.core.params import ParameterError

from ..conftest import built_tables


def test_overrides_are_parsed_per_figure():
    entries = runner.select(["M-F1", "M-F6"])
    out = runner.resolve_overrides(entries, [("capacity_mbps", "100"), ("n_flows", "20")])
    assert out["M-F1"] == {"capacity_mbps": 100.0}
    assert out["M-F6"] == {"capacity_mbps": 100.0, "n_flows": 20}


def test_unknown_override_refused_with_accepted_names():
    with pytest.raises(ParameterError) as err:
        runner.resolve_overrides(runner.select(["M-F1"]), [("no_such_param", "1")])
    assert "no_such_param" in str(err.value) and "rtt_ms" in str(err.value)


def test_out_dir_is_not_a_user_parameter():
    with pytest.raises(ParameterError, match="--out"):
        runner.resolve_overrides(runner.select(["M-F1"]), [("out_dir", "/tmp")])


def test_derivation_is_not_a_figure():
    with pytest.raises(ParameterError, match="derivation"):
        runner.select(["derive-two-flow"])


def test_check_refuses_overrides():
    with pytest.raises(ParameterError, match="drop -p"):
        runner.run(["M-F6"], [("n_flows", "20")], check=True, progress=False)


def test_compare_tables_detects_changes(tmp_path):
    a = tmp_path / "a.csv"
    b = tmp_path / "b.csv"
    pd.DataFrame({"x": [1.0, 2.0], "s": ["u", "v"]}).to_csv(a, index=False)
    pd.DataFrame({"x": [1.0, 2.0 + 1e-9], "s": ["u", "v"]}).to_csv(b, index=False)
    assert runner.compare_tables(a, b, 1e-6, 1e-9) == []
    pd.DataFrame({"x": [1.0, 2.1], "s": ["u", "v"]}).to_csv(b, index=False)
    assert "x row 3" in runner.compare_tables(a, b, 1e-6, 1e-9)[0]
    pd.DataFrame({"x": [1.0, 2.0], "s": ["u", "w"]}).to_csv(b, index=False)
    assert "s row 3" in runner.compare_tables(a, b, 1e-6, 1e-9)[0]
    pd.DataFrame({"x": [1.0]}).to_csv(b, index=False)
    assert "columns differ" in runner.compare_tables(a, b, 1e-6, 1e-9)[0]
    assert "no committed table" in runner.compare_tables(a, tmp_path / "none.csv", 1, 1)[0]


#: set by `make test` to the tables its book build (`coexist book --bundled-only`) just wrote
BUILT = os.environ.get("COEXIST_BOOK_TABLES_BUILT")


@pytest.mark.slow
def test_check_passes_on_committed_and_fails_on_edited(tmp_path, monkeypatch):
    if BUILT:  # the book has just executed every figure notebook: compare what it computed
        results = runner.check_built(Path(BUILT))
    else:
        results = runner.run(None, out_dir=tmp_path / "all", check=True, progress=False)
    assert {r.id for r in results} == {e.id for e in ledger.FIGURES}
    assert all(r.svg.stat().st_size > 1000 for r in results)

    edited = tmp_path / "expected"
    shutil.copytree(ledger.EXPECTED, edited)
    table = pd.read_csv(edited / "M-F6.csv")
    table.loc[0, "mbps"] *= 1.01
    table.to_csv(edited / "M-F6.csv", index=False)
    monkeypatch.setattr(runner, "EXPECTED", edited)
    with pytest.raises(runner.CheckFailed, match="M-F6: mbps row 2"):
        runner.run(["M-F6"], out_dir=tmp_path / "one", check=True, progress=False)
    (edited / "M-F6.csv").unlink()
    with pytest.raises(runner.CheckFailed, match="no committed table"):
        runner.run(["M-F6"], out_dir=tmp_path / "two", check=True, progress=False)
    # a claim the prose shows, edited in the committed file: the check names it
    shutil.copyfile(ledger.EXPECTED / "M-F6.csv", edited / "M-F6.csv")
    claimed = pd.read_csv(edited / "M-F6.claims.csv")
    claimed.loc[0, "value"] = float(claimed.loc[0, "value"]) + 0.5
    claimed.to_csv(edited / "M-F6.claims.csv", index=False)
    with pytest.raises(runner.CheckFailed, match=f"M-F6: claim {claimed.loc[0, 'key']}: "):
        runner.run(["M-F6"], out_dir=tmp_path / "three", check=True, progress=False)


@pytest.mark.slow
def test_parameter_override_changes_figure(tmp_path):
    (res,) = runner.run(["M-F6"], [("n_flows", "20"), ("buffer_bdp", "5")],
                        out_dir=tmp_path, progress=False)
    table = pd.read_csv(res.csv)
    assert table.n_bbr.max() == 20


#: settings a reader may ask for where the book has no measurement, or where a model is
#: undefined in part of the range: each must still give its figure (cheap fluid numerics,
#: which the specs allow)
CHEAP = [("step_us", "200"), ("fluid_duration_s", "20"), ("fluid_warmup_s", "5")]
ELSEWHERE = [
    ("M-F1", [("capacity_mbps", "100"), ("rtt_ms", "20"), *CHEAP]),  # nothing measured
    ("M-F3", [("capacities_mbps", "20"), *CHEAP, ("short_duration_s", "20"),
              ("short_warmup_s", "5"), ("long_duration_s", "20"),
              ("long_warmup_s", "5")]),  # Ware's eq. (2) outside [0, 1]; lengths equal
    ("M-F12", [("buffer_max_bdp", "100"), ("fluid_buffers_bdp", "2,10,100"), *CHEAP]),
    ("S-F6-10", [("n_flows", "4"), ("settle_s", "20"), ("duration_s", "4"),
                 ("warmup_s", "1")]),  # no 4-sender run measured
    ("F-NE", [("fluid_flows", "4"), ("step_us", "200"), ("duration_s", "20"),
              ("warmup_s", "5")]),  # no shared setting with FABRIC
    ("F-Exp2", [("n_flows", "4"), ("step_us", "200"), ("duration_s", "20"),
                ("warmup_s", "5")]),  # no measured equilibrium of 4 flows
]


@pytest.mark.slow
@pytest.mark.parametrize(("figure_id", "overrides"), ELSEWHERE, ids=[i for i, _ in ELSEWHERE])
def test_a_setting_without_measurements_still_gives_the_figure(tmp_path, figure_id, overrides):
    """The figure draws what it can and its claims say what is not available."""
    from coexist.book import claims

    (res,) = runner.run([figure_id], overrides, out_dir=tmp_path, progress=False)
    assert res.svg.stat().st_size > 1000 and len(pd.read_csv(res.csv)) > 0
    made = claims.read(tmp_path / f"{figure_id}{claims.SUFFIX}")
    committed = claims.read(ledger.EXPECTED / f"{figure_id}{claims.SUFFIX}")
    assert set(committed) <= set(made)  # every number the page quotes has an answer
    if figure_id in ("M-F1", "F-NE", "S-F6-10", "F-Exp2"):
        assert any(c.text == claims.NOT_AVAILABLE for c in made.values())


#: an x axis shorter than the buffers the fluid model is run at (its default ones)
SHORT_AXIS = [("M-F1", [("buffer_max_bdp", "15")]), ("M-F3", [("buffer_max_bdp", "15")])]


@pytest.mark.slow
@pytest.mark.parametrize(("figure_id", "overrides"), SHORT_AXIS, ids=[i for i, _ in SHORT_AXIS])
def test_fluid_runs_beyond_the_x_axis_are_tabled_not_drawn(tmp_path, figure_id, overrides):
    """The figure still fits the column (runner.run fails otherwise), and its table keeps
    the fluid-model runs the chart leaves out, which its subtitle names."""
    (res,) = runner.run([figure_id], overrides, out_dir=tmp_path, progress=False)
    table = pd.read_csv(res.csv)
    assert (table["buffer_bdp"] > 15).any()
    assert "beyond the x axis: in the table, not drawn" in res.svg.read_text()


def test_check_built_compares_every_figure_and_names_what_differs(tmp_path):
    out = built_tables(tmp_path)
    assert {r.id for r in runner.check_built(out)} == {e.id for e in ledger.FIGURES}
    table = pd.read_csv(out / "M-F6.csv")
    table.loc[0, "mbps"] *= 1.01
    table.to_csv(out / "M-F6.csv", index=False)
    (out / "T-F1.svg").unlink()
    with pytest.raises(runner.CheckFailed) as err:
        runner.check_built(out)
    assert "M-F6: mbps row 2" in str(err.value)
    assert "T-F1: the book build did not write T-F1.svg" in str(err.value)


def test_check_built_refuses_a_book_built_with_external_data(tmp_path):
    with pytest.raises(runner.CheckFailed, match="--bundled-only"):
        runner.check_built(built_tables(tmp_path, bundled_only=False))
    (tmp_path / "figures" / "build.json").unlink()
    with pytest.raises(runner.CheckFailed, match="not written by `coexist book`"):
        runner.check_built(tmp_path / "figures")


def test_book_save_writes_into_the_build_tables_only_during_a_build(tmp_path, monkeypatch):
    import altair as alt

    from coexist.book import build as book
    from coexist.book import figures

    table = pd.DataFrame({"x": [1.0, 2.0], "y": [3.0, 4.0]})
    figures.setup()  # the project's theme, as every notebook has (else 10-px labels)
    chart = alt.Chart(table).mark_line().encode(x="x", y="y")
    monkeypatch.delenv(book.TABLES_ENV, raising=False)
    figures.save(chart, table, "X", "")
    assert not list(tmp_path.iterdir())
    monkeypatch.setenv(book.TABLES_ENV, str(tmp_path))
    figures.save(chart, table, "X", "")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["X.csv", "X.svg"]
    assert pd.read_csv(tmp_path / "X.csv").equals(table)


@pytest.mark.slow
def test_figures_with_a_panel_per_value_take_a_longer_list(tmp_path):
    """M-F10 (a panel per buffer), M-F11 and P-F1-2 (panels per RTT) re-run with three
    values where the book has two: the panels stack within the text column instead of the
    figure being refused after its runs (short, coarse runs: the layout is under test)."""
    cases = {
        "M-F10": ([("buffers_bdp", "2,5,10"), ("group_size", "1"), ("duration_s", "6"),
                   ("warmup_s", "2")], "buffer_bdp", {2.0, 5.0, 10.0}),
        "M-F11": ([("rtts_ms", "5,20,40"), ("n_flows", "2"), ("buffers_bdp", "2"),
                   ("duration_s", "4"), ("warmup_s", "1")], "rtt_ms", {5.0, 20.0, 40.0}),
        "P-F1-2": ([("rtts_ms", "2,5,10"), ("fluid_duration_s", "30"),
                    ("fluid_step_us", "100"), ("warmup_s", "10")], "rtt_ms", {2.0, 5.0, 10.0}),
    }
    for figure_id, (overrides, column, values) in cases.items():
        (res,) = runner.run([figure_id], overrides, out_dir=tmp_path / figure_id,
                            progress=False)
        table = pd.read_csv(res.csv)
        assert set(table[column].dropna().astype(float)) >= values, figure_id
        assert res.svg.stat().st_size > 1000


def test_two_notebooks_at_once_with_a_relative_out_dir_compare_the_right_files(
        tmp_path, monkeypatch):
    """papermill runs a notebook in its folder by changing the process's directory, which
    every thread shares: with two notebooks at once, the check of the one that ended must
    still find its tables while the other runs elsewhere (it once read a relative path)."""
    import contextlib
    import threading
    import time

    import papermill as pm

    expected = tmp_path / "expected"
    expected.mkdir()
    inside = threading.Barrier(2)

    def fake_execute(src, dst, parameters, cwd, **_):
        figure_id = Path(dst).stem
        out = Path(parameters["out_dir"])
        with contextlib.chdir(cwd):  # as papermill does
            if figure_id == "M-F1":
                inside.wait(5)  # M-F6 is in its folder too
            else:
                inside.wait(5)
                time.sleep(1.0)  # still there while M-F1's tables are checked
            (out / f"{figure_id}.svg").write_text("<svg/>")
            (out / f"{figure_id}.csv").write_text("x\n1\n")
            Path(dst).write_text("{}")

    for figure_id in ("M-F1", "M-F6"):
        (expected / f"{figure_id}.csv").write_text("x\n1\n")
    monkeypatch.setattr(pm, "execute_notebook", fake_execute)
    monkeypatch.setattr(runner, "EXPECTED", expected)
    monkeypatch.chdir(tmp_path)
    results = runner.run(["M-F1", "M-F6"], out_dir=Path("made"), check=True,
                         progress=False, jobs=2)
    assert [r.problems for r in results] == [[], []]
    assert all(r.csv.is_absolute() for r in results)
