"""Fuzz tests by kind of bad input: each property draws inputs of one kind (numbers with
units, sidecar files, non-regular and undecodable files, table cells, environment
variables, names given to library functions) and requires a correct result or the
project's own one-line error naming what was wrong, before any work, never a traceback
or a hang.

Each draw is labelled with its outcome (``hypothesis.event``): ``pytest
tests/cli/test_fuzz_inputs.py --hypothesis-show-statistics`` prints the count per outcome.
"""

import contextlib
import json
import math
import os
import shutil
import signal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from coexist import cli, data
from coexist.book import build as book
from coexist.book import ledger, runner
from coexist.core import paths, quantities
from coexist.core import settings as env_settings
from coexist.core.params import ParameterError
from coexist.data import datapackage
from coexist.measured import fabric
from coexist.measured import runs as measured
from coexist.runstore import lookup, store
from coexist.testbed import campaign, topology

EXAMPLES = int(os.environ.get("COEXIST_FUZZ_EXAMPLES", "300"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])
ROOT = Path(__file__).resolve().parents[2]
SUMMARY = next(iter(sorted((ROOT / "data" / "runs" / "two_flow").glob("*/summary.json"))))
FLOWS = SUMMARY.with_name("flows.csv")
SETTING = ROOT / "data" / "external" / "fabric" / "slice_1" / "setting.json"


def _one_line(exc: Exception, *names: str) -> str:
    text = str(exc).strip()
    assert text and "\n" not in text, text
    for name in names:
        assert name in text, (name, text)
    return text


@contextlib.contextmanager
def _within(seconds: int = 5):
    """Fail instead of hanging (a FIFO opened for reading blocks until a writer comes)."""
    def stop(*_):
        raise AssertionError(f"no answer within {seconds} s")

    old = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


# ----------------------------------------------------------------- numbers with units
MANTISSA = st.one_of(st.from_regex(r"[0-9]{1,6}(\.[0-9]{0,4})?", fullmatch=True),
                     st.sampled_from(["nan", "inf", "-1", "+5", "1_0", "٣", "0x10", ".", "",
                                      "1e", "1..2", "0"]))
EXPONENT = st.one_of(st.just(""), st.integers(-400, 400).map(lambda e: f"e{e}"),
                     st.sampled_from(["e999999999", "e-999999999", "E5"]))
UNIT = st.one_of(st.just(""), st.sampled_from([*quantities.RATE_UNITS, *quantities.TIME_UNITS,
                                               "MBIT", "Ms", "m", "sec", "furlong", "%"]))
QUANTITY = st.builds(lambda m, e, u, pad: f"{pad}{m}{e}{u}{pad}", MANTISSA, EXPONENT, UNIT,
                     st.sampled_from(["", " ", "\t"]))
NUMBERS = st.one_of(st.floats(), st.integers(-10**30, 10**30), st.booleans())


@FUZZ
@given(st.one_of(QUANTITY, NUMBERS), st.sampled_from(["rate", "rtt", "duration"]))
def test_quantities_parse_into_their_range_or_refuse_in_one_line(text, kind):
    low, high = {"rate": quantities.MODEL_CAPACITY_BPS, "rtt": quantities.MODEL_RTT_S,
                 "duration": (1.0, 86_400.0)}[kind]
    parse = {"rate": lambda t: quantities.rate(t, "capacity"),
             "rtt": lambda t: quantities.time(t, "rtt", low, high, unit_required=True),
             "duration": lambda t: quantities.time(t, "duration", low, high)}[kind]
    try:
        value = parse(text)
    except ParameterError as exc:
        _one_line(exc, "valid")
        event("refused in one line")
        return
    event("accepted")
    assert math.isfinite(value) and low <= value <= high
    if isinstance(text, str) and kind in ("rate", "rtt"):
        assert text.strip()[-1].isalpha(), f"{text!r} has no unit but was taken"


#: options whose values are numbers with units, and a valid command around them; parsing
#: alone converts and checks them (argparse calls each option's type), before any run
OPTIONS = [
    (["model", "share", "--buffer-bdp", "2"], "--capacity"),
    (["model", "share", "--buffer-bdp", "2"], "--rtt"),
    (["model", "share", "--buffer-bdp", "2"], "--duration"),
    (["model", "share"], "--buffer-bdp"),
    (["model", "nash"], "--buffer-bdp"),
    (["fluid", "run", "--ccas", "cubic", "--capacity", "10mbit", "--rtt", "20ms"],
     "--buffer-bdp"),
    (["fluid", "run", "--ccas", "cubic", "--rtt", "20ms", "--buffer-bdp", "1"], "--capacity"),
    (["fluid", "run", "--ccas", "cubic", "--capacity", "10mbit", "--buffer-bdp", "1"], "--rtt"),
    (["fluid", "run", "--ccas", "cubic", "--capacity", "10mbit", "--rtt", "20ms",
      "--buffer-bdp", "1"], "--duration"),
    (["fluid", "run", "--ccas", "cubic", "--capacity", "10mbit", "--rtt", "20ms",
      "--buffer-bdp", "1"], "--warmup"),
    (["campaign", "run", "x.yaml", "--steal-limit", "5"], "--steal-max-wait"),
    (["store", "verify"], "--jobs"), (["store", "verify"], "--share"),
    (["figures"], "--jobs"), (["campaign", "run", "x.yaml"], "--limit"),
]


@FUZZ
@given(st.sampled_from(OPTIONS), st.one_of(QUANTITY, st.text(max_size=12)))
def test_command_line_numbers_are_checked_while_parsing(capsys, option, text):
    base, name = option
    args = base + [name, text]
    if "--buffer-bdp" not in base and name != "--buffer-bdp" and base[0] == "model":
        args += ["--buffer-bdp", "2"]
    if base[:2] == ["model", "nash"]:
        args += ["--flows", "10"]
    try:
        ns = cli.build_parser().parse_args(args)
    except SystemExit as ended:
        assert ended.code == 2
        err = capsys.readouterr().err.strip()
        assert err and len(err.splitlines()) == 1, err
        event("refused in one line")
        return
    event("accepted")
    value = getattr(ns, name.lstrip("-").replace("-", "_"))
    if isinstance(value, float):
        assert math.isfinite(value) and 0 <= value <= 1e11, value


@pytest.mark.parametrize("args", [
    ["model", "share", "--buffer-bdp", "2", "--rtt", "40"],
    ["model", "share", "--buffer-bdp", "2", "--capacity", "100e6"],
    ["model", "share", "--buffer-bdp", "2", "--capacity", "1e308mbit"],
    ["model", "share", "--buffer-bdp", "2", "--duration", "1e308"],
    ["model", "share", "--buffer-bdp", "2", "--rtt", "1e-300s"],
    ["fluid", "run", "--ccas", "cubic", "--capacity", "10mbit", "--rtt", "20ms",
     "--buffer-bdp", "1e-300"],
    ["fluid", "run", "--ccas", "cubic", "--capacity", "10mbit", "--rtt", "20ms",
     "--buffer-bdp", "1", "--warmup", "1e308"],
    ["figures", "--jobs", "1" + "0" * 30],
])
def test_the_reviewers_numbers_are_refused_before_any_work(args, capsys):
    with pytest.raises(SystemExit) as ended:
        raise SystemExit(cli.main(args))
    assert ended.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err and len(err.splitlines()) == 1, err


# ----------------------------------------------------------------- output paths
def test_output_directories_are_tried_before_any_work(tmp_path, capsys):
    regular = tmp_path / "file"
    regular.write_text("x")
    for args in (["figures", "--only", "M-F1", "--out", str(regular)],
                 ["figures", "--only", "M-F1", "--out", "/proc/coexist-out"],
                 ["run", "--capacity", "10mbit", "--rtt", "20ms", "--buffer-bdp", "2",
                  "--flows", "cubic:1", "--out", "/proc/coexist-out"],
                 ["run", "--capacity", "10mbit", "--rtt", "20ms", "--buffer-bdp", "2",
                  "--flows", "cubic:1", "--out", str(regular / "below")]):
        assert cli.main(args) == 2, args
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "'out'" in err, err
    assert not list(Path("/proc").glob("coexist-out*"))


# ----------------------------------------------------------------- sidecar files
JSONISH = st.recursive(st.none() | st.booleans() | st.floats() | st.text(max_size=8)
                       | st.integers(-10**20, 10**20),
                       lambda inner: st.lists(inner, max_size=3)
                       | st.dictionaries(st.text(max_size=8), inner, max_size=3),
                       max_leaves=8)


def _paths_in(doc, prefix=()):
    """Every path to a value inside a JSON document (keys and list indices)."""
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _paths_in(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:3]):
            yield from _paths_in(v, (*prefix, i))


def _mutate(doc, where, action, value):
    """``doc`` with the value at ``where`` deleted or replaced (a copy)."""
    doc = json.loads(json.dumps(doc))
    if not where:
        return value if action == "replace" else {}
    parent = doc
    for step in where[:-1]:
        parent = parent[step]
    if action == "delete":
        del parent[where[-1]]
    else:
        parent[where[-1]] = value
    return doc


def _manifest(tmp: Path) -> Path:
    (tmp / paths.MANIFEST).write_text(json.dumps(
        {"bundled_only": True, "jobs": 2, "fresh": False, "started": 1.0}))
    return tmp / paths.MANIFEST


def _datapackage(tmp: Path) -> Path:
    (tmp / "a.csv").write_text("x\n1\n")
    (tmp / "datapackage.json").write_text(json.dumps({"resources": [
        {"name": "a", "path": "a.csv", "sha256": datapackage.sha256(tmp / "a.csv")},
        {"name": "b", "path": ["a.csv"], "sha256": {"a.csv": datapackage.sha256(tmp / "a.csv")}}]}))
    return tmp / "datapackage.json"


def _page_seconds(tmp: Path) -> Path:
    (tmp / book.SECONDS_FILE).parent.mkdir(parents=True, exist_ok=True)
    (tmp / book.SECONDS_FILE).write_text(json.dumps({"intro": 1.5, "fig": 30}))
    return tmp / book.SECONDS_FILE


def _read_manifest(path: Path):
    try:
        return runner.check_built(path.parent, expected=path.parent)
    except runner.CheckFailed as exc:
        if "did not write" in str(exc) or "external data" in str(exc):
            return None  # read whole; the tables are not there, as expected
        raise


#: each sidecar: how to make a valid one in a directory, and its reader
SIDECARS = {
    "summary": (lambda tmp: Path(shutil.copy(SUMMARY, tmp / "summary.json")),
                data.read_summary),
    "setting": (lambda tmp: Path(shutil.copy(SETTING, tmp / "setting.json")),
                fabric.read_setting),
    "build record": (_manifest, _read_manifest),
    "datapackage": (_datapackage, lambda p: datapackage.verify(p.parent)),
    "page seconds": (_page_seconds, lambda p: book.page_seconds(p.parents[1])),
}


@FUZZ
@given(st.sampled_from(sorted(SIDECARS)), st.data())
def test_sidecars_read_whole_or_refuse_naming_the_file(tmp_path_factory, kind, draw):
    tmp = tmp_path_factory.mktemp("s")
    make, read = SIDECARS[kind]
    path = make(tmp)
    doc = json.loads(path.read_text())
    how = draw.draw(st.sampled_from(["delete", "replace", "truncate", "constant"]))
    if how == "truncate":
        raw = path.read_bytes()
        path.write_bytes(raw[:draw.draw(st.integers(0, len(raw) - 1))])
    elif how == "constant":
        path.write_text(path.read_text().replace(
            ":", f": {draw.draw(st.sampled_from(['NaN', 'Infinity', '-Infinity']))}, \"x\":", 1))
    else:
        where = draw.draw(st.sampled_from(list(_paths_in(doc))))
        path.write_text(json.dumps(_mutate(doc, where, how, draw.draw(JSONISH))))
    try:
        with _within():
            read(path)
    except (data.DataError, runner.CheckFailed) as exc:
        _one_line(exc, str(path) if isinstance(exc, data.DataError) else "")
        event(f"{kind}: refused in one line")
        return
    event(f"{kind}: read")


# ----------------------------------------------------------------- non-regular, undecodable
def _campaign_file(tmp: Path) -> Path:
    d = tmp / "campaigns"
    d.mkdir(exist_ok=True)
    return d / "camp.yaml"


#: every reader of a text file the project keeps, with the name its file must have
READERS = {
    "summary": ("summary.json", data.read_summary),
    "setting": ("setting.json", fabric.read_setting),
    "build record": (paths.MANIFEST, lambda p: runner.check_built(p.parent, p.parent)),
    "datapackage": ("datapackage.json", lambda p: datapackage.verify(p.parent)),
    "campaign": (None, campaign.load),
    "table": ("flows.csv", lambda p: data.load_table(p, "flows")),
    "gz table": ("series.csv.gz", lambda p: data.load_table(p, "series")),
    "census": ("census.jsonl", store.read_census),
}
SPOILS = {
    "fifo": lambda p: os.mkfifo(p),
    "directory": lambda p: p.mkdir(),
    "binary": lambda p: p.write_bytes(bytes(range(256)) * 3),
    "latin-1": lambda p: p.write_bytes("café: 1\n".encode("latin-1")),
    "nul": lambda p: p.write_bytes(b"{\"a\": \"\x00\"}\n"),
    "empty": lambda p: p.write_bytes(b""),
    "missing": lambda p: None,
}


@pytest.mark.parametrize("spoil", sorted(SPOILS))
@pytest.mark.parametrize("reader", sorted(READERS))
def test_text_readers_refuse_what_is_not_their_text(tmp_path, reader, spoil):
    name, read = READERS[reader]
    path = _campaign_file(tmp_path) if name is None else tmp_path / name
    SPOILS[spoil](path)
    if (reader, spoil) == ("census", "empty"):  # a build that read no run: a correct answer
        assert read(path) == {}
        return
    with _within(), pytest.raises((data.DataError, ParameterError, runner.CheckFailed,
                                   store.StoreError)) as exc:
        read(path)
    _one_line(exc.value)


def test_campaign_status_does_not_hang_on_a_fifo(tmp_path, capsys):
    path = _campaign_file(tmp_path)
    os.mkfifo(path)
    with _within():
        assert cli.main(["campaign", "status", str(path)]) == 2
    assert "FIFO" in capsys.readouterr().err


# ----------------------------------------------------------------- table cells
BAD_CELLS = st.one_of(
    st.sampled_from(["BBR", "Cubic", "bbr\x00", "cubic\n", "nan", "inf", "-inf", "high",
                     "1MB", "1.5", "2", "-0.1", "1e400", "", " ", "0x1", "1,5", "\"", "vegas"]),
    st.text(max_size=6), st.floats(allow_nan=True, allow_infinity=True).map(repr))


def _within_schema(table, schema: str) -> None:
    """Every value of a loaded table is of its column's kind and in its bounds."""
    for f in data.SCHEMAS[schema]:
        col = table[f.name]
        present = col.dropna()
        assert f.nullable or len(present) == len(col)
        if f.type in ("number", "integer"):
            v = present.astype(float)
            assert v.map(math.isfinite).all()
            assert f.minimum is None or (v >= f.minimum).all()
            assert f.maximum is None or (v <= f.maximum).all()
        elif f.type == "string":
            assert not present.str.contains(r"[\x00-\x1f\x7f]", regex=True).any()
            assert f.choices is None or present.isin(f.choices).all()


@FUZZ
@given(st.integers(0, 10**6), st.integers(0, 10**6), BAD_CELLS,
       st.sampled_from(["cell", "cut short", "cell and cut short"]))
def test_table_cells_load_in_bounds_or_refuse_naming_the_file(tmp_path_factory, row, col,
                                                              cell, how):
    path = tmp_path_factory.mktemp("t") / "flows.csv"
    lines = FLOWS.read_text().splitlines()
    if "cell" in how:
        r = 1 + row % (len(lines) - 1)
        fields = lines[r].split(",")
        fields[col % len(fields)] = cell
        lines[r] = ",".join(fields)
    text = "\n".join(lines) + "\n"
    if "cut short" in how:
        text = text[:len(text) - 1 - col % 8]
    path.write_text(text)
    try:
        table = data.load_table(path, "flows")
    except data.DataError as exc:
        _one_line(exc, str(path))
        event("refused in one line")
        return
    event("loaded")
    _within_schema(table, "flows")


def test_fabric_rows_with_an_infinite_buffer_are_left_out_and_reported():
    table, problems = fabric.parse_csv("N_bdp,flow,trial,bits_per_second\ninf,1,1,5e6\n"
                                       "2,1,1,5e6\n", "x.csv")
    assert table["N_bdp"].tolist() == [2.0]
    assert [p.line for p in problems] == [2] and "finite" in problems[0].reason


# ----------------------------------------------------------------- environment variables
def _directory_readers():
    return {lookup.ENV: lookup.directory, store.ENV: store.root,
            "COEXIST_CACHE": fabric.cache_dir, paths.TABLES_ENV: paths.tables_dir,
            "COEXIST_RUN_DIR": topology.registry_dir}


ENV_VALUES = st.one_of(
    st.sampled_from(["off", " off ", "OFF", "  off", "\toff", "", " ", "1", "0", "yes",
                     "true", " 1", "1 ", "a\nb", "x\x00y"]),
    st.builds(lambda kind, pad: (kind, pad), st.sampled_from(["file", "dir", "new"]),
              st.sampled_from(["", " "])),
    st.text(max_size=8))


@FUZZ
@given(st.sampled_from(sorted(_directory_readers())), ENV_VALUES)
def test_directory_variables_name_a_directory_or_refuse_in_one_line(tmp_path_factory,
                                                                    monkeypatch, name, value):
    if isinstance(value, tuple):
        kind, pad = value
        tmp = tmp_path_factory.mktemp("e")
        target = tmp / "target"
        if kind == "file":
            target.write_text("x")
        elif kind == "dir":
            target.mkdir()
        value = f"{pad}{target}{pad}"
    if "\x00" in value:
        return  # the operating system refuses it in an environment variable
    monkeypatch.setenv(name, value)
    try:
        where = _directory_readers()[name]()
    except env_settings.SettingError as exc:
        _one_line(exc, name)
        event("refused in one line")
        return
    event("accepted")
    if where is not None:
        assert not where.exists() or where.is_dir()
        assert str(where).strip() == str(where)


@FUZZ
@given(st.sampled_from([lookup.STRICT_ENV, paths.BUNDLED_ONLY]), ENV_VALUES)
def test_flags_are_one_or_zero_or_refused_in_one_line(monkeypatch, name, value):
    if isinstance(value, tuple) or "\x00" in value:
        return
    monkeypatch.setenv(name, value)
    try:
        on = env_settings.flag(name)
    except env_settings.SettingError as exc:
        _one_line(exc, name)
        event("refused in one line")
        return
    event("accepted")
    assert on == (value == "1") and value in ("", "0", "1")


def test_the_census_file_variable_refuses_a_directory(tmp_path, monkeypatch):
    monkeypatch.setenv(lookup.LOG_ENV, str(tmp_path))
    with pytest.raises(env_settings.SettingError, match=lookup.LOG_ENV):
        env_settings.file(lookup.LOG_ENV)


# ----------------------------------------------------------------- names given to functions
NAME_CALLS = {
    "load_table schema": (lambda n: data.load_table(FLOWS, n), set(data.SCHEMAS)),
    "ledger entry": (ledger.entry, set(ledger.BY_ID)),
    "campaign table": (measured.campaign_table,
                       {p.stem for p in (ROOT / "data" / "campaigns").glob("*.yaml")}),
}


@FUZZ
@given(st.sampled_from(sorted(NAME_CALLS)),
       st.one_of(st.text(max_size=12), st.sampled_from(["campaing", "Flows", "flows ", "M-F1 ",
                                                         "two_flow", "flows", "M-F1"])))
def test_misspelled_names_are_refused_naming_the_valid_ones(kind, name):
    call, valid = NAME_CALLS[kind]
    if name in valid:
        if kind != "load_table schema" or name == "flows":
            call(name)
        event("valid name")
        return
    with pytest.raises(ParameterError) as exc:
        call(name)
    text = _one_line(exc.value)
    assert any(v in text for v in valid), text
    event("refused naming the valid ones")
