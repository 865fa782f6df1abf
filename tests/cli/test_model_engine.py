"""`coexist model share|nash --engine browser`: the page's closed form under Node prints what
coexist.closed_form prints, text and JSON, and is refused in one line without Node."""

import pytest

from coexist.cli import main
from coexist.live import engine

needs_node = pytest.mark.skipif(engine.node() is None, reason="no 'node' on PATH: the page's "
                                "closed form runs under Node (apt-get install nodejs)")
CASES = [
    ["model", "share", "--buffer-bdp", "5", "--cubic-flows", "3", "--bbr-flows", "2"],
    ["model", "share", "--buffer-bdp", "1.1", "--flows", "50", "--bbr-flows", "50", "--rtt",
     "5ms", "--capacity", "10kbit"],
    ["model", "share", "--buffer-bdp", "150", "--cubic-flows", "4", "--bbr-flows", "0"],
    ["model", "nash", "--flows", "50", "--buffer-bdp", "2"],
    ["model", "nash", "--flows", "10", "--buffer-bdp", "3"],
]


def run(args, capsys):
    code = main(args)
    out = capsys.readouterr()
    return code, out.out, out.err


@needs_node
@pytest.mark.parametrize("json", [[], ["--json"]], ids=["text", "json"])
@pytest.mark.parametrize("args", CASES, ids=lambda a: "-".join(a[1:4]))
def test_the_browser_closed_form_prints_the_native_output(args, json, capsys):
    native = run([*args, *json], capsys)
    page = run([*args, *json, "--engine", "browser"], capsys)
    assert native[0] == 0 and page == native


def test_without_node_the_browser_closed_form_is_refused(monkeypatch, capsys):
    monkeypatch.setattr(engine, "node", lambda: None)
    code, out, err = run([*CASES[0], "--engine", "browser"], capsys)
    assert code == 2 and not out and "node" in err and len(err.strip().splitlines()) == 1
