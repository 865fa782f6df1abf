"""The committed store of fluid-model runs: its data-only format, its layers, the refusal of
an edited or damaged entry, the seeded sample CI recomputes, and that the committed store
holds every run the book reads under the current code."""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coexist.core.params import ParameterError
from coexist.fluid.model import solve
from coexist.fluid.studies import beside_measured, equilibria
from coexist.runstore import codec, lookup, refresh, store

# --- the format ------------------------------------------------------------------------------

finite_or_not = st.floats(allow_nan=True, allow_infinity=True)
leaves = (st.none() | st.booleans() | st.integers(-2**62, 2**62) | finite_or_not
          | st.text(max_size=8)
          | finite_or_not.map(np.float64) | st.integers(-2**31, 2**31).map(np.int64)
          | st.booleans().map(np.bool_))
values = st.recursive(leaves, lambda inner: (
    st.lists(inner, max_size=4) | st.lists(inner, max_size=4).map(tuple)
    | st.dictionaries(st.text(max_size=5), inner, max_size=4)), max_leaves=12)


def same(a, b) -> bool:
    """Equal values of equal types, NaN equal to NaN, bit for bit."""
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (float, np.floating)):
        return np.asarray(a).tobytes() == np.asarray(b).tobytes()
    return a == b


@settings(max_examples=300, deadline=None)
@given(values)
def test_every_value_reads_back_with_its_bits_and_types(v):
    text = codec.dumps(v)
    back = codec.loads(text)
    assert same(back, v) and codec.dumps(back) == text


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(finite_or_not, st.integers(-10**6, 10**6), st.booleans(),
                          st.one_of(st.none(), st.text(max_size=4))), max_size=6),
       st.sampled_from(["float64", "float32", "int64", "int32", "uint8", "bool"]))
def test_tables_and_arrays_read_back_with_their_dtypes(rows, dtype):
    df = pd.DataFrame({"x": [r[0] for r in rows], "n": [r[1] for r in rows],
                       "ok": [r[2] for r in rows], "label": [r[3] for r in rows],
                       "mixed": pd.Series([r[1] if r[2] else str(r[1]) for r in rows],
                                          dtype=object)})
    df["text"] = pd.Series([r[3] or "" for r in rows], dtype="str")
    df["maybe"] = pd.Series([r[3] for r in rows], dtype=object)  # None stays None
    df["typed"] = np.arange(len(rows)).astype(dtype)
    df.index = pd.RangeIndex(3, 3 + 2 * len(rows), 2)
    back = codec.loads(codec.dumps(df))
    pd.testing.assert_frame_equal(back, df, check_exact=True)
    assert list(back.dtypes) == list(df.dtypes)
    assert [v is None for v in back["maybe"]] == [r[3] is None for r in rows]
    a = np.arange(12).reshape(3, 4).astype(dtype)
    b = codec.loads(codec.dumps({"a": a}))["a"]
    assert b.dtype == a.dtype and b.shape == a.shape and b.tobytes() == a.tobytes()


def test_a_text_column_reads_the_same_whatever_stores_pandas_text_here():
    """Python-object and Arrow storage of a text column are the installation's, not the
    result's: a stored table's text does not name them, so a machine with pyarrow (whose
    pandas then stores text in Arrow) recomputes the same bits."""
    python = pd.DataFrame({"t": pd.Series(["a", None], dtype=pd.StringDtype("python"))})
    default = pd.DataFrame({"t": pd.Series(["a", None], dtype=pd.StringDtype())})
    assert codec.dumps(python) == codec.dumps(default)
    assert "storage" not in codec.dumps(python)
    back = codec.loads(codec.dumps(python))
    assert back["t"].dtype == pd.StringDtype() and back["t"].tolist()[0] == "a"


def test_dicts_keep_their_order_and_an_other_order_is_another_value():
    """A table built from a stored dict has its columns in the dict's order."""
    v = {"share": 1.0, "loss": 2.0, "nested": {"z": 1, "a": [{"b": 1, "a": 2}]}}
    back = codec.loads(codec.dumps(v))
    assert list(back) == list(v) and list(back["nested"]) == ["z", "a"]
    assert list(back["nested"]["a"][0]) == ["b", "a"]
    assert codec.dumps({"a": 1, "b": 2}) != codec.dumps({"b": 2, "a": 1})
    assert list(pd.DataFrame([back])) == list(pd.DataFrame([v]))


def _named_columns() -> pd.DataFrame:
    df = pd.DataFrame({"a": [1]})
    df.columns.name = "metric"
    return df


@pytest.mark.parametrize("bad", [{1, 2}, object(), {1: "int key"}, np.str_("text"),
                                 __import__("collections").OrderedDict(a=1), _named_columns(),
                                 pd.DataFrame({"c": pd.Categorical(["a"])}),
                                 pd.DataFrame({"a": [1]}, index=["x"]),
                                 np.array(["text"])])
def test_a_value_the_format_cannot_hold_is_refused_naming_it(bad):
    with pytest.raises(codec.CodecError):
        codec.dumps(bad)


def test_a_configuration_reads_back_from_its_repr_and_nothing_else_is_run():
    cfg, _ = equilibria.mix_config([1, 0], 2, [0.02, 0.05], 2.0, 50e6, "bbr2", 10.0, 5e-5,
                                   True, False, "printed")
    assert solve.config_from_repr(repr(cfg)) == cfg
    for text in ("__import__('os').system('true')", "Config(**{'a': 1})",
                 repr(cfg).replace("Flow(", "print("), "Config(capacity_pps=1)"):
        with pytest.raises(ParameterError):
            solve.config_from_repr(text)


# --- the layers and the committed store --------------------------------------------------------

RUN = dict(group_size=2, group_rtts_s=[0.02], buffer_bdp=2.0, capacity_bps=20e6,
           duration_s=2.0, warmup_s=0.5, step_s=1e-4)


@pytest.fixture
def layers(tmp_path, monkeypatch):
    """An empty store and local layer, and a census of every lookup."""
    monkeypatch.setenv(store.ENV, str(tmp_path / "store"))
    monkeypatch.setenv(lookup.ENV, str(tmp_path / "local"))
    monkeypatch.setenv(lookup.LOG_ENV, str(tmp_path / "census.jsonl"))
    monkeypatch.setenv(lookup.PAGE_ENV, "notebooks/fig_test")
    return tmp_path


def census(tmp_path) -> list[dict]:
    return [json.loads(x) for x in (tmp_path / "census.jsonl").read_text().splitlines()]


def committed(tmp_path) -> dict[str, store.Entry]:
    """Compute two runs, then commit them as a book build's census would."""
    equilibria.simulate_mix((1,), **RUN)
    equilibria.simulate_mix((0,), **RUN)
    counts = store.commit(store.read_census(tmp_path / "census.jsonl"), lookup.local_entries(),
                          tmp_path / "store")
    # the first mix's run also gave a two-flow state, kept locally: only what a page read
    # is committed
    assert counts["added"] == 2 and len(list(lookup.local_entries())) == 3
    return store.read_index(tmp_path / "store")


def test_a_committed_run_is_read_from_the_store_and_equals_a_fresh_run(layers, monkeypatch):
    index = committed(layers)
    assert sorted(e.kind for e in index.values()) == ["mix", "mix"]
    monkeypatch.setenv(lookup.ENV, str(layers / "other-local"))  # the store alone now
    (layers / "census.jsonl").write_text("")
    from_store = equilibria.simulate_mix((1,), **RUN)
    assert [x["source"] for x in census(layers)] == ["store"]
    with lookup.bypassed():
        fresh = equilibria.simulate_mix((1,), **RUN)
    assert codec.dumps(from_store) == codec.dumps(fresh)
    pd.testing.assert_frame_equal(from_store, fresh, check_exact=True)


def test_committed_entries_carry_inputs_pages_and_provenance(layers):
    for e in committed(layers).values():
        assert e.pages == ("notebooks/fig_test",)
        assert {"commit", "kernel", "cpu", "numpy", "time_utc"} <= set(e.provenance)
        assert lookup.key(e.kind, codec.decode(e.inputs)) == e.key
        path = store.object_path(layers / "store", e.object)
        assert hashlib.sha256(gzip.decompress(path.read_bytes())).hexdigest() == e.object


def test_the_sample_recomputes_bit_for_bit(layers):
    index = committed(layers)
    entries = list(index.values())
    assert refresh.verify(entries, progress=False) == []


def test_an_edited_result_is_named_by_the_check_that_recomputes_it(layers):
    """An entry edited consistently (new object, its hash in the index) passes the integrity
    check; recomputing it names it."""
    index = committed(layers)
    where = layers / "store"
    e = next(e for e in index.values() if e.kind == "mix")
    value = codec.loads(gzip.decompress(store.object_path(where, e.object).read_bytes()).decode())
    value.loc[0, "goodput_bps"] *= 1.01
    forged = store.Entry(e.key, e.kind, e.inputs, store.write_object(where, codec.dumps(value)),
                         e.pages, e.provenance)
    store.write_index(where, [forged if x.key == e.key else x for x in index.values()])
    assert store.integrity(where) == []
    problems = refresh.verify(list(store.read_index(where).values()), progress=False)
    assert len(problems) == 1 and e.key[:12] in problems[0] and "differs" in problems[0]
    cli = subprocess.run([sys.executable, "-m", "coexist.cli", "store", "verify", "--all",
                          "--quiet"], capture_output=True, text=True)
    assert cli.returncode == 1 and e.key[:12] in cli.stderr, cli.stderr


@pytest.mark.parametrize("damage", ["flip", "flip-compressed", "truncate", "remove"])
def test_a_damaged_object_is_refused_in_one_line_naming_it(layers, damage):
    index = committed(layers)
    e = next(iter(index.values()))
    path = store.object_path(layers / "store", e.object)
    raw = path.read_bytes()
    if damage == "flip":
        text = bytearray(gzip.decompress(raw))
        text[-3] = ord("7") if text[-3] != ord("7") else ord("8")
        path.write_bytes(gzip.compress(bytes(text), mtime=0))
    elif damage == "flip-compressed":  # inside the deflate stream: zlib's error, not gzip's
        raw = bytearray(raw)
        raw[len(raw) // 2] ^= 0xFF
        path.write_bytes(bytes(raw))
    elif damage == "truncate":
        path.write_bytes(raw[: len(raw) // 2])
    else:
        path.unlink()
    with pytest.raises(store.StoreError) as err:
        store.lookup(e.key)
    msg = str(err.value)
    assert str(path) in msg and "\n" not in msg
    assert any(str(path) in p for p in store.integrity(layers / "store"))


def test_a_malformed_index_line_is_refused_naming_file_and_line(layers):
    committed(layers)
    index = layers / "store" / store.INDEX
    index.write_text(index.read_text() + '{"key": "x"}\n')
    with pytest.raises(store.StoreError, match=r"index\.jsonl:3: not an index entry"):
        store.read_index(layers / "store")


def test_strict_mode_names_the_page_the_run_and_the_command(layers, monkeypatch):
    monkeypatch.setenv(lookup.STRICT_ENV, "1")
    with pytest.raises(store.StoreError) as err:
        equilibria.simulate_mix((1,), **RUN)
    msg = str(err.value)
    assert "notebooks/fig_test" in msg and "mix run" in msg and store.REFRESH in msg


def test_a_model_change_makes_every_entry_stale_and_the_check_says_what_to_run(layers,
                                                                                monkeypatch):
    index = committed(layers)
    assert refresh.stale(index.values()) == []
    monkeypatch.setattr(lookup, "code_hash", lambda: "another model")
    stale = refresh.stale(index.values())
    assert len(stale) == len(index)
    msg = store.needs_refresh_message(stale)
    assert "notebooks/fig_test" in msg and store.REFRESH in msg
    # a refresh recomputes them into the local layer, and commits them under the new keys
    (layers / "census.jsonl").write_text("")
    monkeypatch.setenv(lookup.ENV, str(layers / "fresh-local"))
    assert refresh.recompute_stale(stale, progress=False) == len(stale)
    assert refresh.recompute_stale(stale, progress=False) == 0  # resumes: nothing left
    counts = store.commit(refresh.census_from_index(index.values()), lookup.local_entries(),
                          layers / "store")
    assert counts == {"entries": len(index), "kept": 0, "added": len(index),
                      "dropped": len(index), "objects_pruned": 0}  # same bits, same objects
    assert refresh.stale(store.read_index(layers / "store").values()) == []


def test_commit_drops_runs_no_page_read_and_their_objects(layers):
    index = committed(layers)
    keep = next(k for k, e in index.items() if e.kind == "mix")
    only = {keep: {"kind": "mix", "pages": {"notebooks/fig_test"}}}
    counts = store.commit(only, [], layers / "store")
    assert counts["entries"] == 1 and counts["dropped"] == len(index) - 1
    assert counts["objects_pruned"] >= 1
    assert len(list((layers / "store" / store.OBJECTS).glob("*/*.json.gz"))) == 1


def _entries(n: int, pages: int) -> list[store.Entry]:
    return [store.Entry(f"{i:064x}", "mix", {}, f"{i:064x}", (f"p{i % pages}",), {})
            for i in range(n)]


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 400), st.integers(1, 30), st.text(min_size=1, max_size=12),
       st.floats(0.01, 1.0))
def test_the_sample_covers_every_page_and_its_share_and_follows_its_seed(n, pages, seed, share):
    entries = _entries(n, pages)
    chosen = store.sample(entries, seed, share)
    assert len(chosen) >= min(n, math.ceil(share * n))
    assert {p for e in entries for p in e.pages} <= {p for e in chosen for p in e.pages}
    assert chosen == store.sample(list(reversed(entries)), seed, share)


def test_other_commits_check_other_samples():
    entries = _entries(400, 3)
    samples = {tuple(e.key for e in store.sample(entries, f"commit{i}")) for i in range(5)}
    assert len(samples) == 5


# --- the committed store itself ----------------------------------------------------------------


def test_the_committed_store_holds_every_run_the_book_reads_under_the_current_code():
    """What `coexist store check` runs in the fast tier, before any notebook: a change of the
    model's code without `make store` fails here, naming the pages and the command."""
    entries = list(store.read_index(store.ROOT_DEFAULT).values())
    assert entries, f"no committed runs: run `{store.REFRESH}`"
    stale = refresh.stale(entries)
    assert not stale, store.needs_refresh_message(stale)
    assert len({e.key for e in entries}) == len(entries)


def test_the_committed_store_is_small_and_described_in_the_datapackage():
    from coexist import data

    assert store.size_bytes(store.ROOT_DEFAULT) <= 50e6
    pkg = json.loads((data.DATA / "datapackage.json").read_text())
    (res,) = [r for r in pkg["resources"] if r["name"] == "model-runs"]
    assert "model-runs/index.jsonl" in res["sha256"]
    assert res["provenance"]["runs"] == len(store.read_index(store.ROOT_DEFAULT))


def test_windows_read_from_one_shared_run_are_all_in_the_census_and_the_store(layers,
                                                                               monkeypatch):
    """The metric pages average one run over several windows: the shorter windows' results
    come from the longest run, not from a lookup, and the store must still hold them."""

    kw = dict(capacity_mbps=10.0, rtt_min_ms=20.0, rtt_max_ms=30.0, n_flows=2,
              buffers_bdp=[1.0], windows=[(0.5, 1.0), (0.5, 2.0)], aqms=("droptail",),
              pairs={beside_measured.pair_label(["reno", "cubic"])})
    first = beside_measured.window_metrics(**kw)
    read = store.read_census(layers / "census.jsonl")
    assert len(read) == 2 and {r["kind"] for r in read.values()} == {"aggregate"}
    store.commit(read, lookup.local_entries(), layers / "store")
    monkeypatch.setenv(lookup.STRICT_ENV, "1")  # the store alone must answer
    monkeypatch.setenv(lookup.ENV, str(layers / "empty-local"))
    again = beside_measured.window_metrics(**kw)
    for w in first:
        pd.testing.assert_frame_equal(first[w], again[w], check_exact=True)
    assert refresh.verify(list(store.read_index(layers / "store").values()),
                          progress=False) == []
