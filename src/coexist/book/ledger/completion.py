"""The entries as the book uses them: each declaration completed with its notebook's defaults
(read from its ``parameters`` cell, one literal per name, each checked against its range) and
with the rules its fluid-model runs need, and looked up by id.
"""

from __future__ import annotations

import ast
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from ...core import sidecars
from ...core.params import ParameterError, Spec, extreme, holds
from .entries import DECLARED, FLUID_BDP, NOT_FLUID_RTTS, Entry

#: steps each way the fluid model's delay lines need: its published reading reads each rate
#: back one forward delay later, so it refuses a forward delay (half the RTT) under a step
#: (:func:`coexist.fluid.model.solve.simulate_published`)
STEPS_PER_ONE_WAY_DELAY = 1


def _step_rules(e: Entry) -> tuple:
    """The rule that every RTT a figure's fluid-model runs take spans two integration steps
    (one each way), for a figure that runs the model at a step it accepts; none else."""
    names = e.spec.names
    steps = [n for n in names if n in ("step_us", "fluid_step_us")]
    rtts = [n for n in names if "rtt" in n and n.endswith("_ms")
            and n not in NOT_FLUID_RTTS.get(e.id, ())]
    if not steps or not rtts:
        return ()
    step, k = steps[0], 2 * STEPS_PER_ONE_WAY_DELAY

    def fits(*values: Any) -> bool:
        *rtt_values, step_us = values
        return min(extreme(r, min) for r in rtt_values) * 1e3 >= k * step_us

    return (holds(f"every RTT of {', '.join(rtts)} >= {k} x {step} (a step each way)",
                  (*rtts, step), fits),)


def notebook_defaults(path: Path) -> dict[str, Any]:
    """The defaults a notebook's ``parameters`` cell assigns, in its order: one literal per
    name (papermill replaces these assignments, so nothing else may stand there)."""
    nb = json.loads(sidecars.read_text(path, "notebook"))
    cell = next((c for c in nb.get("cells", []) if c.get("cell_type") == "code"
                 and "parameters" in c.get("metadata", {}).get("tags", [])), None)
    if cell is None:
        raise ParameterError(f"{path.name}: no code cell tagged 'parameters'")
    source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
    out: dict[str, Any] = {}
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise ParameterError(f"{path.name}: the parameters cell is not Python "
                             f"(line {exc.lineno})") from None
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)):
            raise ParameterError(f"{path.name}: the parameters cell may only assign one "
                                 f"literal per name (line {node.lineno})")
        try:
            out[node.targets[0].id] = ast.literal_eval(node.value)
        except (ValueError, TypeError, SyntaxError):
            raise ParameterError(f"{path.name}: parameter {node.targets[0].id!r} is not a "
                                 f"literal (line {node.lineno})") from None
    return out


def _complete(e: Entry) -> Entry:
    """``e`` with every parameter's default read from its notebook, each checked against the
    parameter's range (a name the notebook and the ledger do not share is an error), and
    with the rules its fluid-model runs need (:func:`_step_rules`, :data:`FLUID_BDP`)."""
    given = notebook_defaults(e.path)
    if set(given) != set(e.spec.names):
        raise ParameterError(
            f"{e.notebook}: the parameters cell and the ledger's entry {e.id} differ: only in "
            f"the cell {sorted(set(given) - set(e.spec.names))}, only in the ledger "
            f"{sorted(set(e.spec.names) - set(given))}")
    params = []
    for p in e.spec.params:
        try:
            params.append(replace(p, default=p.check(given[p.name])))
        except ParameterError as exc:
            raise ParameterError(f"{e.notebook}: the default {exc}") from None
    rules = (*e.spec.constraints, *_step_rules(e), *FLUID_BDP.get(e.id, ()))
    return replace(e, spec=Spec(tuple(params), rules))


ENTRIES = tuple(_complete(e) for e in DECLARED)
BY_ID = {e.id: e for e in ENTRIES}
FIGURES = tuple(e for e in ENTRIES if e.kind == "figure")


def entry(entry_id: str) -> Entry:
    """Look up a ledger entry, naming the known ids on a miss."""
    try:
        return BY_ID[entry_id]
    except KeyError:
        raise ParameterError(
            f"unknown figure or notebook id {entry_id!r}; known: {', '.join(BY_ID)}"
        ) from None
