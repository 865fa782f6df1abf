"""The disk memo of fluid-model results: hits, misses, invalidation, and no effect on
results."""

import tokenize

import pandas as pd
import pytest

from coexist.fluid.studies import equilibria
from coexist.runstore import lookup, source_key, store


@pytest.fixture
def memo_dir(tmp_path, monkeypatch):

    monkeypatch.setenv(lookup.ENV, str(tmp_path / "memo"))
    monkeypatch.setenv(store.ENV, str(tmp_path / "no-store"))  # the local layer alone
    return tmp_path / "memo"


def counter():
    calls = []

    def compute():
        calls.append(1)
        return {"value": len(calls)}
    return calls, compute


def test_same_inputs_compute_once_other_inputs_again(memo_dir):
    calls, compute = counter()
    assert lookup.memo("k", {"a": 1.0}, compute) == {"value": 1}
    assert lookup.memo("k", {"a": 1.0}, compute) == {"value": 1}
    assert len(calls) == 1
    assert lookup.memo("k", {"a": 2.0}, compute) == {"value": 2}
    assert lookup.memo("other", {"a": 1.0}, compute) == {"value": 3}
    assert len(list(memo_dir.rglob("*.json.gz"))) == 3 and not list(memo_dir.rglob("*.tmp"))


def test_off_computes_every_time(monkeypatch):
    monkeypatch.setenv(lookup.ENV, "off")
    calls, compute = counter()
    lookup.memo("k", {"a": 1}, compute)
    lookup.memo("k", {"a": 1}, compute)
    assert len(calls) == 2 and lookup.directory() is None


def test_unreadable_entry_is_computed_again(memo_dir):
    calls, compute = counter()
    lookup.memo("k", {"a": 1}, compute)
    (path,) = memo_dir.rglob("*.json.gz")
    path.write_bytes(b"not a stored entry")
    assert lookup.memo("k", {"a": 1}, compute) == {"value": 2}
    assert lookup.memo("k", {"a": 1}, compute) == {"value": 2}


def test_model_code_is_part_of_the_key(monkeypatch):
    before = lookup.key("k", {"a": 1})
    monkeypatch.setattr(lookup, "code_hash", lambda: "changed")
    assert lookup.key("k", {"a": 1}) != before


def test_the_model_code_is_the_fluid_package_and_the_layers_it_imports():
    """The key covers what the fluid package reads beneath it: the closed form (a mix's
    algorithm labels come from nash) and the series analysis (a fluctuation row's
    periodogram), the model's subfolders included, and nothing of the store itself."""
    coexist_dir = source_key.package_dir("coexist")
    names = {p.relative_to(coexist_dir).as_posix() for p in source_key.model_sources()}
    assert {"fluid/model/solve.py", "fluid/model/published.py", "fluid/studies/equilibria.py",
            "closed_form/nash.py", "closed_form/mishra.py", "analysis/periodicity.py",
            "analysis/fairness.py"} <= names
    assert all(n.split("/")[0] in ("fluid", "closed_form", "analysis") for n in names)
    every = {p.relative_to(coexist_dir).as_posix() for top in ("fluid", "closed_form", "analysis")
             for p in (coexist_dir / top).rglob("*.py") if "__pycache__" not in p.parts}
    assert names == every


def test_a_module_in_a_new_subfolder_is_part_of_the_model(tmp_path):
    """The sources are every module at any depth: a subfolder added later cannot drop out
    of the key."""
    (tmp_path / "model" / "deeper").mkdir(parents=True)
    for rel in ("model/a.py", "model/deeper/b.py"):
        (tmp_path / rel).write_text("X = 1\n")
    sources = source_key.model_sources([tmp_path / "model"])
    assert [p.relative_to(tmp_path).as_posix() for p in sources] == ["model/a.py",
                                                                      "model/deeper/b.py"]
    before = source_key.source_digest(sources, tmp_path)
    (tmp_path / "model/deeper/b.py").write_text("X = 2\n")
    assert source_key.source_digest(sources, tmp_path) != before


def test_a_statement_changed_in_any_model_module_moves_the_key():
    """Every model module's code, read as the key reads it, changes when one statement is
    added to it, and the digest over all sources changes with it."""
    sources = source_key.model_sources()
    base = source_key.package_dir("coexist")
    for path in sources:
        text = path.read_text(encoding="utf-8")
        assert source_key.code_of(text + "\n_moved = 1\n") != source_key.code_of(text), path
    digest = source_key.source_digest(sources, base)
    assert digest == source_key.code_hash()


def test_every_stored_kind_registers_itself_where_it_is_defined():
    """Importing the model's package and its modules (no list of names) registers the
    kinds the committed store holds."""
    source_key.load_kinds()
    kinds = {entry.kind for entry in store.read_index().values()}
    assert kinds <= set(lookup.KINDS), kinds - set(lookup.KINDS)
    assert all(fn.__module__.startswith("coexist.fluid.") for fn in lookup.KINDS.values())


def test_a_kind_computed_outside_the_model_is_refused():
    def outside(inputs):
        return inputs
    outside.__module__ = "coexist.measured.somewhere"
    with pytest.raises(RuntimeError, match="computed outside coexist.fluid"):
        lookup.computes("outside-kind")(outside)


def test_a_second_model_cannot_be_declared():
    with pytest.raises(RuntimeError, match="already keeps the runs of"):
        source_key.declare_model("coexist.testbed")


def test_a_changed_model_source_changes_the_digest(tmp_path):
    (tmp_path / "nash.py").write_text('CUBIC = "CUBIC"\n')
    before = source_key.source_digest([tmp_path / "nash.py"], tmp_path)
    (tmp_path / "nash.py").write_text('CUBIC = "Cubic"\n')
    assert source_key.source_digest([tmp_path / "nash.py"], tmp_path) != before


MODULE = '''"""A model."""

def share(x, k=2):
    """The share."""
    return x / k  # half
'''


@pytest.mark.parametrize("edit, same", [
    (lambda s: s.replace("A model.", "A model of the share, reworded."), True),
    (lambda s: s.replace('"""The share."""', '"""The share,\n    on two lines."""'), True),
    (lambda s: s.replace("# half", "# a half of it"), True),
    (lambda s: s.replace("def share(x, k=2):", "def share(\n    x, k=2\n):"), True),
    (lambda s: s.replace("x / k  #", "x / \\\n        k  #"), True),
    (lambda s: s.replace("x / k", "x / k / 1"), False),
    (lambda s: s.replace("k=2", "k=3"), False),
    (lambda s: s.replace('"""The share."""\n', ""), True),
    (lambda s: s + "\nLABEL = 'BBR'\n", False),
])
def test_docstrings_comments_and_layout_are_not_code(edit, same):
    """A stored run keeps its key when a model module's prose or layout changes, and only
    then."""
    assert (source_key.code_of(edit(MODULE)) == source_key.code_of(MODULE)) is same


def test_a_docstring_after_other_text_on_its_line_and_in_two_parts_is_prose():
    """Docstrings are found where the syntax tree puts them, in bytes: after a non-ASCII
    name on the same line (a character column would miss it), and written as two adjacent
    strings, they read as prose."""
    module = 'class Ä: "Gleichung (9)"\ndef f():\n    "zwei " "Teile"\n    return "–"\n'
    reworded = module.replace('"Gleichung (9)"', '"Eq. (9)"').replace('"Teile"', '"parts"')
    assert source_key.code_of(module) == source_key.code_of(reworded)
    assert "–" in source_key.code_of(module)     # the returned string is code
    assert "Gleichung" not in source_key.code_of(module)


@pytest.mark.parametrize("one, other", [
    ('def f(): "d"\nx = 1\n', "def f(): x = 1\n"),
    ('class C: "d"\nX = 1\n', "class C: X = 1\n"),
])
def test_a_docstring_on_its_headers_line_keeps_the_statement_boundary(one, other):
    """A docstring on the line of its ``def`` or ``class`` is dropped, but not the end of
    the statement after it: a module-level name is not read as a local one."""
    assert source_key.code_of(one) != source_key.code_of(other)
    assert source_key.code_of(one) == source_key.code_of(one.replace('"d"', '"other words"'))


def test_a_split_f_string_reads_as_the_one_string_python_3_11_sees(monkeypatch):
    """Python 3.12 tokenizes ``f"a{b}c"`` as FSTRING_START, FSTRING_MIDDLE, the
    expression's tokens and FSTRING_END (PEP 701); :func:`source_key.code_of` joins them into
    the one STRING token Python 3.11 reads, so the store's keys do not depend on the
    Python minor version. The 3.12 stream is spelled out here token by token."""
    source = 'x = f"a{b}c"\n'
    eleven = source_key.code_of(source)
    Tok = tokenize.TokenInfo
    line = source
    stream = [Tok(1, "x", (1, 0), (1, 1), line), Tok(54, "=", (1, 2), (1, 3), line),
              Tok(61, 'f"', (1, 4), (1, 6), line), Tok(62, "a", (1, 6), (1, 7), line),
              Tok(54, "{", (1, 7), (1, 8), line), Tok(1, "b", (1, 8), (1, 9), line),
              Tok(54, "}", (1, 9), (1, 10), line), Tok(62, "c", (1, 10), (1, 11), line),
              Tok(63, '"', (1, 11), (1, 12), line), Tok(4, "\n", (1, 12), (1, 13), line),
              Tok(0, "", (2, 0), (2, 0), "")]
    names = {1: "NAME", 54: "OP", 61: "FSTRING_START", 62: "FSTRING_MIDDLE",
             63: "FSTRING_END", 4: "NEWLINE", 0: "ENDMARKER"}
    monkeypatch.setattr(source_key.tokenize, "generate_tokens", lambda readline: iter(stream))
    monkeypatch.setattr(source_key.tokenize, "tok_name", names)
    assert source_key.code_of(source) == eleven
    assert 'STRING f"a{b}c"' in eleven


def test_a_kind_computed_outside_the_model_package_is_refused():
    def compute(inputs):
        return inputs

    compute.__module__ = "coexist.measured.fluid_vs_measured"
    with pytest.raises(RuntimeError, match="outside coexist.fluid"):
        lookup.computes("elsewhere")(compute)
    assert "elsewhere" not in lookup.KINDS


def test_inputs_json_cannot_hold_are_refused_not_keyed_by_their_repr():
    with pytest.raises(TypeError):
        lookup.key("k", {"a": object()})
    with pytest.raises(ValueError):
        lookup.key("k", {"a": float("nan")})


def test_memoised_mix_equals_a_fresh_run(memo_dir, monkeypatch):
    kw = dict(group_size=2, group_rtts_s=[0.02], buffer_bdp=2.0, capacity_bps=20e6,
              duration_s=3.0, warmup_s=1.0)
    first = equilibria.simulate_mix((1,), **kw)
    again = equilibria.simulate_mix((1,), **kw)   # from the memo
    again.loc[0, "goodput_bps"] = -1.0            # a copy: the memo is not modified
    monkeypatch.setenv(lookup.ENV, "off")
    fresh = equilibria.simulate_mix((1,), **kw)
    pd.testing.assert_frame_equal(first, fresh)
    monkeypatch.setenv(lookup.ENV, str(memo_dir))
    pd.testing.assert_frame_equal(equilibria.simulate_mix((1,), **kw), fresh)


def test_a_result_being_computed_elsewhere_is_waited_for(memo_dir):
    """Two callers asking for the same result at once (parallel book pages share runs):
    one computes, the other waits for it and reads it; other keys do not wait."""
    import threading
    import time

    started, calls = threading.Event(), []

    def slow():
        calls.append(threading.get_ident())
        started.set()
        time.sleep(0.5)
        return {"value": len(calls)}

    results = []
    first = threading.Thread(target=lambda: results.append(lookup.memo("k", {"a": 1}, slow)))
    first.start()
    started.wait(5)
    t0 = time.perf_counter()
    assert lookup.memo("k", {"a": 2}, lambda: {"value": "other"}) == {"value": "other"}
    assert time.perf_counter() - t0 < 0.4  # a different key is not held up
    results.append(lookup.memo("k", {"a": 1}, slow))  # waits for the first thread's result
    first.join()
    assert results == [{"value": 1}, {"value": 1}] and len(calls) == 1


def test_a_memo_path_that_is_a_file_is_refused(tmp_path, monkeypatch):
    from coexist.core.params import ParameterError

    f = tmp_path / "file"
    f.write_text("x")
    monkeypatch.setenv(lookup.ENV, str(f))
    with pytest.raises(ParameterError, match="COEXIST_FLUID_CACHE"):
        lookup.directory()


def test_census_logs_each_lookup_as_computed_or_found(memo_dir, tmp_path, monkeypatch):
    import json

    log = tmp_path / "census.jsonl"
    monkeypatch.setenv(lookup.LOG_ENV, str(log))
    calls, compute = counter()
    lookup.memo("k", {"a": 1.0}, compute)
    lookup.memo("k", {"a": 1.0}, compute)
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    assert [(x["kind"], x["inputs"], x["hit"]) for x in lines] == [
        ("k", {"a": 1.0}, False), ("k", {"a": 1.0}, True)]
    assert lines[0]["seconds"] >= 0 and lines[1]["seconds"] is None


def test_the_model_source_is_parsed_by_one_thread_at_a_time(monkeypatch):
    """ast.parse in two threads at once can fail on CPython 3.11 (an AST recursion-depth
    SystemError, met by the reference test's threads): the hash parses under a lock."""
    seen = []
    monkeypatch.setattr(source_key, "source_digest",
                        lambda paths, base: seen.append(source_key._PARSING.locked()) or "h")
    source_key.code_hash.cache_clear()
    try:
        assert source_key.code_hash() == "h" and seen == [True]
    finally:
        source_key.code_hash.cache_clear()
