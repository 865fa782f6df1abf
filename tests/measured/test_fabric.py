"""The FABRIC reproduction's public CSV format: parsing, problems reported, fetching into a
cache, and equilibria. Hand-made files in that format; no network."""

import json

import numpy as np
import pytest

from coexist import data
from coexist.closed_form import nash
from coexist.measured import fabric


def _csv(rows, trailing_header=False) -> str:
    head = ",".join(fabric.HEADER) + ("," if trailing_header else "")
    return "\n".join([head, *rows]) + "\n"


def test_trailing_comma_is_kept_and_reported_bad_rows_left_out_and_reported():
    text = _csv(["0.5,0,1,0", "0.5,1,1,4722745.5,", "0.5,2,1,abc", "0.5,3,1", "0.5,60,1,5"],
                trailing_header=True)
    table, problems = fabric.parse_csv(text, "bbr_results.csv")
    assert table.values.tolist() == [[0.5, 0, 1, 0.0], [0.5, 1, 1, 4722745.5]]
    got = [(p.line, p.kept) for p in problems]
    assert got == [(1, True), (3, True), (4, False), (5, False), (6, False)]
    assert "trailing comma" in problems[1].reason and "bbr_results.csv:3" in str(problems[1])
    assert all(str(p).count(":") >= 2 for p in problems)


def test_a_wrong_header_is_an_error_naming_the_file():
    with pytest.raises(ValueError, match="x.csv:1: header"):
        fabric.parse_csv("a,b,c,d\n1,2,3,4\n", "x.csv")


def test_setting_from_a_slice_notebook():
    nb = json.dumps({"cells": [{"source": ["btl_capacity = 100 # mbit\n",
                                           "base_owd     = 2.5  # ms\n"]}]})
    assert fabric.parse_setting(nb, "slice_7.ipynb") == (100.0, 5.0)
    with pytest.raises(ValueError, match="slice_8.ipynb"):
        fabric.parse_setting("{}", "slice_8.ipynb")


def _fake_repo(root, per_flow_bbr, per_flow_cubic, buffers=(0.5, 5.0)):
    """A directory laid out like the public repository, with two slices."""
    base = root / "Nash_equilibirium_experiments"
    for s, (cap, owd) in {1: (50, 2.5), 2: (100, 20)}.items():
        d = base / f"slice_{s}_results"
        d.mkdir(parents=True)
        for algo, fn in (("bbr", per_flow_bbr), ("cubic", per_flow_cubic)):
            rows = []
            for b in buffers:
                for k in range(fabric.N_FLOWS + 1):
                    n = k if algo == "bbr" else fabric.N_FLOWS - k
                    rows.append(f"{b:g},{k},1,{fn(k) * n if n else 0}")
            rows[3] += ","  # one stray trailing comma per file
            (d / f"{algo}_results.csv").write_text(_csv(rows))
        (base / f"slice_{s}.ipynb").write_text(
            json.dumps({"cells": [{"source": [f"btl_capacity = {cap}\n",
                                              f"base_owd = {owd}\n"]}]}))
    return base


def test_fetch_load_and_equilibria(tmp_path, monkeypatch):
    # per-flow rates with a known crossing: BBR gains while at most 19 flows run it
    bbr = lambda k: 3.0 - (k + 0.5) / 20  # noqa: E731
    cubic = lambda k: 2.0  # noqa: E731
    base = _fake_repo(tmp_path / "repo", bbr, cubic)
    monkeypatch.setattr(fabric, "BASE", base.as_uri())
    cache = fabric.fetch(tmp_path / "cache", progress=False, slices=(1, 2))
    (tmp_path / "repo").rename(tmp_path / "gone")  # a second fetch reads only the cache
    assert fabric.fetch(cache, progress=False, slices=(1, 2)) == cache
    table, problems = fabric.load(cache)
    assert sorted(table[["capacity_mbps", "rtt_ms"]].drop_duplicates().values.tolist()) == \
        [[50.0, 5.0], [100.0, 40.0]]
    assert len(problems) == 4 and all(p.kept for p in problems)  # 2 slices x 2 files
    assert len(table) == 2 * 2 * (fabric.N_FLOWS + 1)
    assert np.isnan(table.loc[table.n_bbr == 0, "bbr_bps"]).all()
    ne = fabric.equilibria(table)
    cub = np.array([cubic(k) for k in range(51)])
    bb = np.array([bbr(k) for k in range(51)])
    expected = nash.equilibria(cub, bb)
    assert expected == [19]
    assert ne.bbr_flows.tolist() == [19.0] * 4


def test_fetch_without_network_raises_fetch_error(tmp_path, monkeypatch):
    monkeypatch.setattr(fabric, "BASE", (tmp_path / "nowhere").as_uri())
    with pytest.raises(fabric.FetchError, match="cannot fetch"):
        fabric.fetch(tmp_path / "cache", progress=False, slices=(1, 2))
    with pytest.raises(data.DataError, match="fetch"):
        fabric.load(tmp_path / "empty")


def test_missing_mixes_are_reported_not_guessed(tmp_path, monkeypatch):
    base = _fake_repo(tmp_path / "repo", lambda k: 1.0, lambda k: 1.0, buffers=(5.0,))
    monkeypatch.setattr(fabric, "BASE", base.as_uri())
    table, _ = fabric.load(fabric.fetch(tmp_path / "cache", progress=False, slices=(1, 2)))
    ne = fabric.equilibria(table[table.n_bbr != 7])
    assert ne.mixes.tolist() == [50, 50] and ne.bbr_flows.isna().all()


def test_bundled_copy_is_read_by_default_with_its_licence_and_its_two_stray_commas():
    """The book reads the bundled copy (no network): all 12 slices, every buffer of
    {0.5, 5, 10, 20, 30, 40, 50} BDP, all 51 mixes, and the two stray trailing commas of
    slice 9 reported, kept, not hidden."""
    assert (fabric.BUNDLED / "LICENSE").read_text().startswith("MIT License")
    table, problems = fabric.load()
    settings = table[["capacity_mbps", "rtt_ms"]].drop_duplicates()
    assert len(settings) == 12
    assert set(settings.capacity_mbps) == {50.0, 100.0, 500.0}
    assert set(settings.rtt_ms) == {5.0, 20.0, 40.0, 80.0}
    assert set(table.buffer_bdp) == {0.5, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0}
    assert table.groupby(["capacity_mbps", "rtt_ms", "buffer_bdp"]).n_bbr.nunique().min() \
        == fabric.N_FLOWS + 1
    assert [(p.line, p.kept) for p in problems] == [(320, True), (345, True)]
    assert all("slice_9/bbr_results.csv" in p.source for p in problems)
    ne = fabric.equilibria(table)
    assert ne.bbr_flows.notna().all() and len(ne) >= 84  # one or more per setting and buffer


@pytest.mark.parametrize(("doc", "match"), [
    ('{"capacity_mbps": "50", "rtt_ms": 5, "source": "x"}', "capacity_mbps"),
    ('{"capacity_mbps": 50, "rtt_ms": -5, "source": "x"}', "rtt_ms"),
    ('{"capacity_mbps": 50, "rtt_ms": 5}', "source"),
    ('{"capacity_mbps": 50, "rtt', "not a JSON FABRIC setting"),
])
def test_a_bad_setting_file_is_refused_naming_the_field(tmp_path, doc, match):
    from coexist.data import DataError

    path = tmp_path / "setting.json"
    path.write_text(doc)
    with pytest.raises(DataError, match=match):
        fabric.read_setting(path)


def test_a_repeated_row_is_reported_and_kept():
    text = "N_bdp,flow,trial,bits_per_second\n2,1,1,5e6\n2,1,1,5e6\n2,1,2,4e6\n"
    table, problems = fabric.parse_csv(text, "x.csv")
    assert len(table) == 3
    assert [(p.line, p.reason, p.kept) for p in problems] == [(3, "the same row as line 2",
                                                               True)]
