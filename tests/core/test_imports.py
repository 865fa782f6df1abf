"""The package's import graph, counting imports inside functions too: no cycles, and the
subpackages in layers that import one way only, the shared core at the bottom and the
command line on top (the map is in CONTRIBUTING.md)."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "coexist"


def _modules() -> dict[str, Path]:
    mods = {}
    for p in PACKAGE.rglob("*.py"):
        parts = ("coexist",) + p.relative_to(PACKAGE).with_suffix("").parts
        mods[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = p
    return mods


def _imports(name: str, path: Path, mods: dict[str, Path]) -> set[str]:
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = (package.split(".")[: len(package.split(".")) - node.level + 1]
                    if node.level else [])
            module = ".".join(base + ([node.module] if node.module else []))
            found |= {f"{module}.{a.name}" if f"{module}.{a.name}" in mods else module
                      for a in node.names}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
    return {m for m in found if m in mods and m != name}


#: what each room of ``coexist`` may import besides itself: only the rooms beneath it
LAYERS: dict[str, set[str]] = {
    "core": set(),
    "closed_form": {"core"},
    "analysis": {"core"},
    "data": {"core"},
    "runstore": {"core"},
    "fluid": {"core", "closed_form", "analysis", "runstore"},
    "live": {"core", "closed_form", "analysis", "runstore", "fluid"},
    "testbed": {"core", "analysis", "data"},
    "measured": {"core", "closed_form", "analysis", "data", "runstore", "fluid", "testbed"},
    "book": {"core", "closed_form", "analysis", "data", "runstore", "fluid", "live", "testbed",
             "measured"},
    "cli": {"core", "closed_form", "analysis", "data", "runstore", "fluid", "live", "testbed",
            "measured", "book"},
}


def room(module: str) -> str | None:
    """The subpackage (or top-level module) of ``coexist`` a module lives in."""
    parts = module.split(".")
    return parts[1] if parts[0] == "coexist" and len(parts) > 1 else None


def against_layers(graph: dict[str, set[str]]) -> list[str]:
    """Every import from one room into another that the layers do not allow."""
    return sorted(f"{m} imports {t}" for m, targets in graph.items() for t in targets
                  if room(m) and room(t) and room(t) != room(m)
                  and room(t) not in LAYERS[room(m)])


def cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_no_import_cycle():
    mods = _modules()
    graph = {m: _imports(m, p, mods) for m, p in mods.items()}
    assert graph["coexist.data"] and "coexist.data.gates" in graph["coexist.data"]
    assert "coexist.fluid.model.published" in graph["coexist.fluid.model.solve"]
    assert cycles(graph) == []


def test_cycles_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]


@pytest.mark.parametrize("order", [("coexist.data", "coexist.data.gates"),
                                   ("coexist.data.gates", "coexist.data")])
def test_data_and_gates_import_in_either_order(order):
    code = "; ".join(f"import {m}" for m in order)
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_every_module_lives_in_a_layer():
    rooms = {room(m) for m in _modules()} - {None}
    assert rooms == set(LAYERS), f"rooms without a layer: {rooms - set(LAYERS)}"


def test_imports_run_one_way_through_the_layers():
    mods = _modules()
    graph = {m: _imports(m, p, mods) for m, p in mods.items()}
    # the reader sees relative imports and those inside functions: these are each
    assert "coexist.data" in graph["coexist.testbed.campaign"]
    assert "coexist.testbed.campaign" in graph["coexist.measured.fluid_vs_measured"]
    assert against_layers(graph) == []


def test_the_layers_are_an_order():
    """No two rooms may import each other, so the layers are a hierarchy."""
    for a, below in LAYERS.items():
        assert all(a not in LAYERS[b] for b in below), a


def test_an_import_against_the_layers_is_named():
    graph = {"coexist.data.tables": {"coexist.testbed.gates", "coexist.core.params"},
             "coexist.fluid.model.solve": {"coexist.measured.runs"}}
    assert against_layers(graph) == ["coexist.data.tables imports coexist.testbed.gates",
                                     "coexist.fluid.model.solve imports coexist.measured.runs"]
