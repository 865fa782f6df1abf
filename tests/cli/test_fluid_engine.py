"""`coexist fluid run --engine browser`: the page's engine under Node prints what the native
kernel prints, and refuses what it cannot run in one line, before running anything."""

import json
import time

import pytest

from coexist.cli import main
from coexist.live import engine

needs_node = pytest.mark.skipif(engine.node() is None, reason="no 'node' on PATH: the page's "
                                "engine runs under Node (apt-get install nodejs)")
BOOK = ["fluid", "run", "--ccas", "cubic:2,bbr2:2", "--capacity", "20mbit",
        "--rtt", "20ms-40ms", "--buffer-bdp", "2", "--duration", "3s", "--warmup", "1s",
        "--rtprop-expiry", "--json"]
AUTHORS = ["fluid", "run", "--setup", "authors", "--ccas", "reno:2,bbr1:2", "--capacity",
           "10mbit", "--link-latency", "10ms", "--source-latency", "5ms-10ms",
           "--buffer-units", "2", "--aqm", "red", "--duration", "3s", "--warmup", "1s",
           "--json"]


def run(args, capsys):
    code = main(args)
    out = capsys.readouterr()
    return code, out.out, out.err


@needs_node
@pytest.mark.parametrize("args", [BOOK, AUTHORS], ids=["book", "authors"])
def test_the_browser_engine_prints_the_native_runs_json(args, capsys):
    code, native, err = run(args, capsys)
    assert code == 0, err
    code, page, err = run([*args, "--engine", "browser"], capsys)
    assert code == 0, err
    assert json.loads(page) == json.loads(native) and page == native


@needs_node
def test_the_browser_engine_says_so_in_its_text(capsys):
    code, out, err = run([*BOOK[:-1], "--duration", "1s", "--warmup", "0.5s", "--engine",
                          "browser"], capsys)
    assert code == 0, err
    assert "the page's engine" in out.splitlines()[0]


@pytest.mark.parametrize(("extra", "name", "valid"), [
    (["--reading", "printed"], "reading", "published"),
    (["--step", "5us"], "step", "10us to 1ms"),
])
def test_what_the_engine_cannot_run_is_refused_in_one_line(extra, name, valid, capsys):
    start = time.perf_counter()
    code, out, err = run([*BOOK, *extra, "--engine", "browser"], capsys)
    assert code == 2 and not out
    assert len(err.strip().splitlines()) == 1, err
    assert f"'{name}'" in err and valid in err and "--engine browser" in err
    assert time.perf_counter() - start < 5  # before any run


def test_without_node_the_browser_engine_is_refused(monkeypatch, capsys):
    monkeypatch.setattr(engine, "node", lambda: None)
    code, out, err = run([*BOOK, "--engine", "browser"], capsys)
    assert code == 2 and not out and "node" in err and len(err.strip().splitlines()) == 1


def test_a_run_beyond_the_engines_memory_is_refused_before_it_runs(monkeypatch, capsys):
    monkeypatch.setattr(engine, "node", lambda: "/usr/bin/node")
    monkeypatch.setattr(engine, "MAX_BYTES", 2 ** 20)
    code, out, err = run([*BOOK, "--engine", "browser"], capsys)
    assert code == 2 and not out and len(err.strip().splitlines()) == 1
    assert "'flows'" in err and "GiB" in err
