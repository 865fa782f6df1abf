"""Fuzz tests for inputs that once ended in a traceback instead of a refusal: campaign files
that expand to too many mixes or runs, nest too deep or do not parse; a directory variable
naming a place where no directory can be made; a reader that closes the pipe of a command.

Each property requires the result or the project's one-line error naming the value and
its limit, before any work, never a traceback (``RecursionError``, ``MemoryError``,
``FileNotFoundError``, "Exception ignored").
"""

import math
import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from coexist.core import settings as env_settings
from coexist.core.params import ParameterError
from coexist.runstore import lookup
from coexist.testbed import campaign_file, spec

SOME = settings(max_examples=40, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])

GRID = "grid:\n  capacity: [20mbit]\n  rtt: [10ms]\n  buffer_bdp: [2]\n"


def _write(tmp_path_factory, text: str):
    d = tmp_path_factory.mktemp("c") / "campaigns"
    d.mkdir()
    path = d / "camp.yaml"
    path.write_text(text)
    return path


def _one_line(exc: Exception, *parts: str) -> str:
    text = str(exc)
    assert text.strip() and "\n" not in text, text
    for part in parts:
        assert part in text, (part, text)
    return text


@SOME
@given(st.lists(st.integers(1, 3), min_size=1, max_size=40))
@example([1] * 60)  # 2**60 mixes: once a MemoryError while expanding them
def test_flow_groups_expand_within_the_mix_limit_or_are_refused_naming_the_count(
        tmp_path_factory, sizes):
    groups = ", ".join(f"{i + 1}ms: {n}" for i, n in enumerate(sizes))
    path = _write(tmp_path_factory, GRID + f"  flows: [{{groups: {{{groups}}}}}]\n")
    count = math.prod(n + 1 for n in sizes)
    try:
        c = campaign_file.load(path)
    except ParameterError as exc:
        if count > campaign_file.MAX_MIXES:
            _one_line(exc, str(path), f"{count} mixes", f"at most {campaign_file.MAX_MIXES}")
            event("refused: too many mixes")
        else:  # within the mix limit: only the flow count may be refused
            assert sum(sizes) > spec.MAX_FLOWS, str(exc)
            _one_line(exc, str(path), str(spec.MAX_FLOWS))
            event("refused: too many flows")
        return
    assert count <= campaign_file.MAX_MIXES and len(c.points) == count
    event("accepted")


@SOME
@given(st.integers(1, 60), st.integers(1, 60), st.integers(1, 100))
def test_a_grid_plans_at_most_the_run_limit_or_is_refused_naming_the_count(
        tmp_path_factory, n_capacities, n_rtts, repeats):
    caps = ", ".join(f"{10 + i}mbit" for i in range(n_capacities))
    rtts = ", ".join(f"{10 + i}ms" for i in range(n_rtts))
    path = _write(tmp_path_factory, f"repeats: {repeats}\ngrid:\n  capacity: [{caps}]\n"
                  f"  rtt: [{rtts}]\n  buffer_bdp: [2]\n  flows: [{{mix: 10}}]\n")
    runs = n_capacities * n_rtts * 11 * repeats
    if runs <= campaign_file.MAX_POINTS:
        event("within the limit")
        return  # loading thousands of points is the other tests' business
    with pytest.raises(ParameterError) as refused:
        campaign_file.load(path)
    _one_line(refused.value, str(path), "runs", f"at most {campaign_file.MAX_POINTS}")
    event("refused: too many runs")


@SOME
@given(st.integers(1, 400), st.sampled_from(["flow", "block", "mapping"]))
@example(20_000, "flow")  # once a RecursionError inside PyYAML
def test_nesting_is_read_to_the_depth_limit_or_refused_naming_it(tmp_path_factory, depth,
                                                                  style):
    # the deepest node: the file's mapping and the grid's above ``flows``, then the nested
    # collections, then (block and mapping styles) the innermost scalar
    if style == "flow":
        value, deepest = "[" * depth + "]" * depth, 2 + depth
    elif style == "block":
        value, deepest = "\n" + "".join("    " + "  " * i + "-\n" for i in range(depth)), \
            3 + depth
    else:
        value, deepest = "{a: " * depth + "1" + "}" * depth, 3 + depth
    path = _write(tmp_path_factory, GRID + f"  flows: {value}\n")
    with pytest.raises(ParameterError) as refused:  # no such file is a valid campaign
        campaign_file.load(path)
    text = _one_line(refused.value, str(path))
    if deepest > campaign_file.MAX_DEPTH:
        assert f"nested more than {campaign_file.MAX_DEPTH}" in text
        assert "line " in text and "column " in text
        event("refused: too deep")
    else:
        event("refused: not a campaign")


BROKEN = st.sampled_from([
    "grid:\n  capacity: [20mbit\n  rtt: [10ms]\n", "grid: {capacity: [20mbit]",
    "grid:\n\tcapacity: [20mbit]\n", "a: b: c\n", "- a\nb: c\n", "grid: &x\n  rtt: *y\n",
    "grid:\n  capacity: '20mbit\n", "grid:\n  capacity: [20mbit]\n rtt: [10ms]\n",
    "%YAML 9.9\n---\na: 1\n", "grid: !!python/object:os.system x\n", "a: @b\n",
])


@SOME
@given(BROKEN, st.integers(0, 3))
def test_malformed_campaign_files_are_refused_with_line_and_column(tmp_path_factory, text,
                                                                    blank_lines):
    path = _write(tmp_path_factory, "\n" * blank_lines + text)
    with pytest.raises(ParameterError) as refused:
        campaign_file.load(path)
    msg = _one_line(refused.value, str(path), "cannot read campaign")
    where = msg.split("cannot read campaign: ", 1)[1]
    assert where.startswith("line ") and ", column " in where, msg
    line = int(where.split(",")[0].removeprefix("line "))
    assert blank_lines < line <= blank_lines + text.count("\n") + 1, msg
    event("refused with its place")


UNMAKEABLE = st.sampled_from(["/proc/coexist-cache", "/proc/coexist/a/b", "/sys/coexist",
                              "/dev/null/cache", "/etc/hostname/x/y"])


@SOME
@given(st.sampled_from([lookup.ENV, "COEXIST_CACHE", "COEXIST_RUN_DIR"]), UNMAKEABLE)
def test_a_directory_variable_where_no_directory_can_be_made_is_refused(monkeypatch, name,
                                                                         value):
    monkeypatch.setenv(name, value)
    with pytest.raises(env_settings.SettingError) as refused:
        env_settings.directory(name)
    _one_line(refused.value, name, repr(value))
    event("refused in one line")


def test_the_memo_refuses_an_unmakeable_directory_before_it_keeps_a_run(monkeypatch):
    """Where a run is kept locally (``lookup.put``, which once ended in mkdir's
    FileNotFoundError under ``/proc``), the variable is refused in one line first."""
    monkeypatch.setenv(lookup.ENV, "/proc/coexist-cache")
    with pytest.raises(env_settings.SettingError) as refused:
        lookup.put("fluid-run", {"probe": 1}, {"x": 1})
    _one_line(refused.value, lookup.ENV, "/proc")
    assert not os.path.exists("/proc/coexist-cache")


COMMANDS = st.sampled_from([
    ["model", "share", "--capacity", "10mbit", "--rtt", "20ms", "--buffer-bdp", "2", "--json"],
    ["model", "share", "--capacity", "10mbit", "--rtt", "20ms", "--buffer-bdp", "2"],
    ["model", "nash", "--buffer-bdp", "2", "--flows", "10", "--json"],
    ["fluid", "run", "--ccas", "cubic,bbr1", "--capacity", "10mbit", "--rtt", "20ms",
     "--buffer-bdp", "1", "--duration", "2", "--warmup", "1", "--json"],
    ["--help"], ["fluid", "run", "--help"],
])


@settings(max_examples=8, deadline=None)
@given(COMMANDS)
def test_a_closed_pipe_ends_a_command_quietly(args):
    """The reader has gone before the command writes (``coexist ... | true``): the command
    stops without a traceback or Python's "Exception ignored" report, exit status 141."""
    read, write = os.pipe()
    os.close(read)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # buffered, as
    try:                                                                    # in a shell
        p = subprocess.run([sys.executable, "-m", "coexist.cli", *args], stdout=write,
                           stderr=subprocess.PIPE, text=True, env=env, timeout=300)
    finally:
        os.close(write)
    assert p.returncode in (141, 1), (args, p.returncode, p.stderr)
    assert "Traceback" not in p.stderr and "Exception ignored" not in p.stderr, p.stderr
    event(f"exit {p.returncode}")
