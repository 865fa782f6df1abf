"""The check a notebook calls after its parameters cell: every name assigned before it
(the parameters cell, papermill's injected cell) must be one its entry accepts, and every
value must be in range, so a stray ``papermill -p`` name stops the run in one line.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from typing import Any

from .completion import entry


def check(entry_id: str, namespace: Mapping[str, Any]) -> dict[str, Any]:
    """Validate a notebook's parameters as they stand after papermill's injection.

    Papermill only warns about a name the parameters cell does not define and runs the
    notebook on its defaults; here every name assigned by a cell executed before this
    check (the parameters cell, papermill's injected cell: the kernel's input history
    ``In``) must be one of the spec's, so ``papermill -p n_flow 20`` stops with the same
    one-line error as ``coexist figures``."""
    spec = entry(entry_id).spec
    stray = sorted(assigned_before_check(namespace.get("In") or []) - set(spec.names))
    if stray:
        raise spec.unknown(stray)
    return spec.from_namespace(namespace)


def assigned_before_check(history: Sequence[str]) -> set[str]:
    """The names bound by plain assignments in the cells of ``history`` (a kernel's ``In``)
    executed before the first cell that calls ``ledger.check``. Imports and definitions do
    not count; a cell that is not Python (a magic) is skipped."""
    names: set[str] = set()
    for source in history:
        if not isinstance(source, str):
            continue
        if "ledger.check(" in source:
            break
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in tree.body:
            targets = (node.targets if isinstance(node, ast.Assign) else
                       [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign))
                       else [])
            names |= set(_bound(targets))
    return names


def _bound(targets: Sequence[ast.expr]) -> list[str]:
    """The names an assignment binds: plain names, also inside tuples, lists and starred
    targets; not the object of an attribute or item assignment (``x.a = 1`` binds no name)."""
    out: list[str] = []
    for t in targets:
        if isinstance(t, ast.Name):
            out.append(t.id)
        elif isinstance(t, (ast.Tuple, ast.List)):
            out += _bound(t.elts)
        elif isinstance(t, ast.Starred):
            out += _bound([t.value])
    return out
