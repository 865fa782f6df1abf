"""Fuzz tests: every parser and loader meets arbitrary input with a result in its valid
range or with its own one-line error, never another exception, and quickly.

Each property draws a few hundred inputs (hypothesis; text, bytes, JSON and YAML shaped
like the real inputs and not). The counts per test are in ``EXAMPLES``.
"""

import json
import os
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coexist import cli, data
from coexist.core.params import Param, ParameterError
from coexist.measured import fabric
from coexist.testbed import campaign, spec

EXAMPLES = int(os.environ.get("COEXIST_FUZZ_EXAMPLES", "300"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])

#: text near the real inputs: numbers, units, separators, ranges, exponents, unicode
NEARLY = st.one_of(
    st.text(max_size=30),
    st.from_regex(r"\s*-?[0-9_.]{0,8}(e[+-]?[0-9]{1,4})?\s*(ms|s|us|mbit|gbit|kbit|bps|x)?"
                  r"(-[0-9.]{0,6}(ms|s)?)?\s*", fullmatch=True),
    st.from_regex(r"(cubic|bbr|bbr1|bbr2|reno|vegas)(:[0-9]{0,12})?(@[0-9.]{0,5}ms)?"
                  r"(,(cubic|bbr|reno)(:[0-9]{0,12})?)*", fullmatch=True),
)


def _one_line(exc: Exception) -> None:
    assert str(exc).strip() and "\n" not in str(exc).strip(), str(exc)


def _quick(call):
    start = time.perf_counter()
    try:
        return call()
    finally:
        assert time.perf_counter() - start < 2.0


@FUZZ
@given(NEARLY)
def test_rates_and_times_parse_into_range_or_fail_in_one_line(text):
    for parse, low, high in ((lambda t: spec.parse_rate(t), *spec.CAPACITY_RANGE),
                             (lambda t: spec.parse_time(t, "rtt", 1e-4, 10.0), 1e-4, 10.0)):
        try:
            value = _quick(lambda: parse(text))  # noqa: B023
        except ParameterError as exc:
            _one_line(exc)
        else:
            assert low <= value <= high


@FUZZ
@given(NEARLY)
def test_flow_lists_parse_within_limits_or_fail_in_one_line(text):
    try:
        flows = _quick(lambda: spec.parse_flows(text, 0.02))
    except ParameterError as exc:
        _one_line(exc)
    else:
        assert 1 <= len(flows) <= spec.MAX_FLOWS
    try:
        ccas = _quick(lambda: cli.fluid._fluid_flows(text))
    except ParameterError as exc:
        _one_line(exc)
    else:
        assert 1 <= len(ccas) <= 100


@FUZZ
@given(NEARLY)
def test_rtt_ranges_parse_ordered_or_fail_in_one_line(text):
    try:
        lo, hi = _quick(lambda: cli.fluid._rtt_range(text))
    except ParameterError as exc:
        _one_line(exc)
    else:
        assert 1e-4 <= lo <= hi <= 10.0


@FUZZ
@given(NEARLY, st.sampled_from([int, float, bool, list]))
def test_parameters_parse_into_range_or_fail_in_one_line(text, kind):
    p = Param("x", kind, None, low=0.0, high=100.0, item=float) if kind is not bool \
        else Param("x", bool, None)
    try:
        value = _quick(lambda: p.parse(text))
    except ParameterError as exc:
        _one_line(exc)
    else:
        if kind in (int, float):
            assert 0.0 <= value <= 100.0
        if kind is list:
            assert all(0.0 <= v <= 100.0 for v in value)


@FUZZ
@given(st.one_of(st.binary(max_size=400),
                 st.lists(st.lists(st.sampled_from(["0", "1.5", "cubic", "bbr", "", "nan",
                                                    "-1", "x", "0.02", "9e6"]),
                                   min_size=0, max_size=11), max_size=6)
                 .map(lambda rows: "\n".join(",".join(r) for r in rows).encode())))
def test_tables_load_or_fail_naming_the_file(tmp_path_factory, content):
    header = ",".join(f.name for f in data.SCHEMAS["flows"]).encode() + b"\n"
    path = tmp_path_factory.mktemp("t") / "flows.csv"
    for body in (content, header + content):
        path.write_bytes(body)
        try:
            _quick(lambda: data.load_table(path, "flows"))
        except data.DataError as exc:
            assert str(path) in str(exc)


JSONISH = st.recursive(st.none() | st.booleans() | st.floats(allow_nan=False) | st.text(max_size=8)
                       | st.integers(), lambda inner: st.lists(inner, max_size=4)
                       | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=12)


@FUZZ
@given(st.one_of(JSONISH, st.fixed_dictionaries(
    {k: JSONISH for k in data.SUMMARY_FIELDS if k != "valid"},
    optional={"valid": st.booleans()})))
def test_summaries_load_or_fail_naming_the_file(tmp_path_factory, doc):
    s = _read_json(tmp_path_factory, "summary.json", doc, data.read_summary)
    assert s is None or (isinstance(s["valid"], bool) and isinstance(s["gates"], list))


@FUZZ
@given(JSONISH)
def test_fabric_settings_load_or_fail_naming_the_file(tmp_path_factory, doc):
    s = _read_json(tmp_path_factory, "setting.json", doc, fabric.read_setting)
    assert s is None or (s["capacity_mbps"] > 0 and s["rtt_ms"] > 0)


def _read_json(tmp_path_factory, name: str, doc, reader) -> dict | None:
    """``reader`` on ``doc`` written as ``name``: its result, or None after a one-line
    :class:`coexist.data.DataError` naming the file."""
    path = tmp_path_factory.mktemp("j") / name
    path.write_text(json.dumps(doc))
    try:
        return _quick(lambda: reader(path))
    except data.DataError as exc:
        assert str(path) in str(exc)
        _one_line(exc)
        return None


YAML_LINES = st.lists(st.sampled_from([
    "grid:", "  capacity: [20mbit]", "  rtt: [20ms]", "  buffer_bdp: [1, 2]",
    '  flows: ["cubic:1,bbr:1"]', "  flows: []", "duration: 5", "duration: 6", "warmup: 1",
    "repeats: 2", "repeats: true", "repeats: -1", "figures: M-F1", "figures: [M-F1]",
    "max_attempts: 3", "name: other", "grid: 3", "  load: [disco]", "  rtt: fast", "- a",
    "{", "  capacity: [1e400mbit]", "  buffer_bdp: [0]"]), max_size=12)


@FUZZ
@given(YAML_LINES)
def test_campaign_files_load_or_fail_naming_the_file(tmp_path_factory, lines):
    d = tmp_path_factory.mktemp("c") / "campaigns"
    d.mkdir()
    path = d / "camp.yaml"
    path.write_text("\n".join(lines) + "\n")
    try:
        c = _quick(lambda: campaign.load(path))
    except ParameterError as exc:
        assert str(path) in str(exc)
        _one_line(exc)
    else:
        assert c.points and all(1 <= len(p.exp.flows) <= spec.MAX_FLOWS for p in c.points)


@pytest.mark.parametrize("args", [
    ["model", "share", "--buffer-bdp", "1e308"], ["model", "nash", "--flows", "1e3"],
    ["fluid", "run", "--ccas", "cubic", "--capacity", "1e308", "--rtt", "40ms",
     "--buffer-bdp", "1"],
    ["fluid", "run", "--ccas", "cubic", "--capacity", "10mbit", "--rtt", "40ms",
     "--buffer-bdp", "1", "--duration", "1e308"],
])
def test_huge_numbers_are_refused_in_one_line(args, capsys):
    with pytest.raises(SystemExit) as ended:
        code = cli.main(args)
        raise SystemExit(code)
    assert ended.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err and len(err.splitlines()) == 1, err
