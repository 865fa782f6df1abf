"""Parameters a reader might choose: random draws from a figure's spec, for re-run tests.

Every accepted parameter set must give the figure (or be refused before any run, naming
the rule it breaks), so the re-run test (``tests/book/test_rerun.py``) executes each figure's
notebook with parameters drawn here: every value inside its ledger range, lists of one to
three values, and cheap numerics where the spec allows them (short fluid runs, a coarse
step, few flows) so that a draw costs seconds, not minutes. The draws are seeded (CI seeds
them with the commit, so each commit tries other values).
"""

from __future__ import annotations

import math
import random
from typing import Any

from ..core.params import Param, ParameterError
from .ledger import Entry


def _number(p: Param, rng: random.Random, low: float, high: float) -> float:
    """A value in [low, high], log-uniform over a wide positive range, else uniform;
    open ends are nudged inside."""
    if p.low_open and low == p.low:
        low = math.nextafter(low, math.inf)
    if p.high_open and high == p.high:
        high = math.nextafter(high, -math.inf)
    if low > 0 and high / low > 100:
        return math.exp(rng.uniform(math.log(low), math.log(high)))
    return rng.uniform(low, high)


def _cheap_bounds(p: Param) -> tuple[float, float]:
    """Where a draw of ``p`` stays cheap: a coarse step, a short run and warm-up, few flows,
    RTTs and buffers that keep the model's delay lines short."""
    low = p.low if p.low is not None else 0.0
    high = p.high if p.high is not None else low + 100.0
    name = p.name
    if name.endswith("step_us"):
        return max(low, min(high, 100.0)), high
    if name.endswith("duration_s") or name == "settle_s":
        # ten-flow runs at the paper's step cost about 5 s of a core per simulated second
        # (S-Options' ten_duration_s): up to 10 s keeps a draw within a minute or so
        return low, min(high, max(low, 5.0) + 5.0)
    if name.endswith("warmup_s"):
        return low, min(high, low + 4.0)
    if name.startswith("n_") or name.endswith(("flows", "_n")) or name == "group_size":
        return low, min(high, low + 3)
    if name.endswith("_ms"):
        return low, min(high, max(low, 1.0) * 100)
    if name.endswith("_bdp"):
        return low, min(high, max(low, 0.5) * 40)
    if name.endswith("points") or name.endswith("_grid"):
        return low, min(high, low + 20)
    return low, high


def draw_value(p: Param, rng: random.Random) -> Any:
    """One value of ``p`` that its spec accepts."""
    if p.choices is not None:
        return rng.choice(p.choices)
    kind = p.item if p.kind is list else p.kind
    if kind is bool:
        return rng.random() < 0.5
    if kind is str:
        if p.kind is list:  # names of things that exist: a non-empty subset of the default
            k = rng.randint(1, len(p.default))
            return sorted(rng.sample(list(p.default), k), key=list(p.default).index)
        return p.default
    low, high = _cheap_bounds(p)

    def one() -> Any:
        v = _number(p, rng, low, high)
        return int(round(v)) if kind is int else float(f"{v:.4g}")

    if p.kind is list:
        values = sorted({one() for _ in range(rng.randint(1, 3))})
        return [p.check([v])[0] for v in values]
    return p.check(one())


def draw(e: Entry, rng: random.Random) -> dict[str, Any]:
    """A parameter set for figure ``e``: every parameter drawn (``out_dir`` excepted). The
    spec's cross-parameter rules are not applied here: a draw that breaks one is a case of
    its own (the runner must refuse it before any run)."""
    return {p.name: draw_value(p, rng) for p in e.spec.params if p.name != "out_dir"}


def as_overrides(values: dict[str, Any]) -> list[tuple[str, str]]:
    """``values`` as ``coexist figures -p NAME VALUE`` pairs (lists comma-separated)."""
    from .figures import value_text

    return [(k, value_text(v)) for k, v in values.items()]


def refusal(e: Entry, values: dict[str, Any]) -> str | None:
    """The one-line error the spec gives ``values`` before any run, or None if it takes
    them."""
    try:
        e.spec.validate(values, partial=True)
    except ParameterError as exc:
        return str(exc)
    return None
