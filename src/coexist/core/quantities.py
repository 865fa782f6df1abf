"""Physical quantities as a reader types them: one strict parser for a number with its unit.

Every command reads rates, times and buffer sizes through :func:`parse`, so ``40ms``,
``0.04s`` and ``40000us`` mean the same everywhere, and everything else is refused in one
line naming the parameter, the value and the valid range: a bare number where the unit is
ambiguous (an RTT of ``40`` could be seconds or milliseconds, a rate of ``50`` bit/s or
Mbit/s), a value outside the plausible range (``1e308``, ``1e-300``), ``nan`` or ``inf``,
digits Python would read but a reader would not (``1_0``, non-ASCII digits), a sign.

The plausible ranges are the notebooks' (:mod:`coexist.book.ledger`): a command accepts what a
figure accepts, in the same units.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal

from .params import invalid

#: unit suffixes (case-insensitive) and their factor to SI
RATE_UNITS = {"bit": 1.0, "bps": 1.0, "kbit": 1e3, "kbps": 1e3, "mbit": 1e6, "mbps": 1e6,
              "gbit": 1e9, "gbps": 1e9}
TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "min": 60.0}

#: the closed-form and fluid models' plausible ranges, as the notebooks' specs give them
#: (:data:`coexist.book.ledger.CAPACITY` and :data:`coexist.book.ledger.RTT`): 10 kbit/s to
#: 100 Gbit/s,
#: 0.1 ms to 10 s (the fluid model, which figures run at the same RTT, reads its delays on
#: a grid of steps and needs 0.1 ms)
MODEL_CAPACITY_BPS = (1e4, 1e11)
MODEL_RTT_S = (1e-4, 10.0)
#: the longest time any command simulates, waits or measures: a day
MAX_TIME_S = 86_400.0

_NUMBER = re.compile(r"\s*((?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:e[+-]?[0-9]+)?)\s*([a-z]*)\s*")


def parse(text: str | float, name: str, units: dict[str, float], low: float, high: float,
          *, unit_required: bool, example: str, si: str) -> float:
    """``text`` in SI units, within ``[low, high]``.

    A number (not text: a YAML or JSON value) is taken in SI. Text is a decimal number with
    an optional exponent and a unit from ``units``; with ``unit_required`` the unit is
    required, otherwise a bare number is in SI (the parameter's name says which, e.g.
    ``duration`` in seconds). Raises :class:`coexist.core.params.ParameterError` in one line
    otherwise."""
    need = "with its unit" if unit_required else f"(a bare number is {si})"
    valid = (f"a {name.split(' ')[0]} {need} such as {example}, between {_si(low, si)} and "
             f"{_si(high, si)}; units: {', '.join(units)}")
    if isinstance(text, bool):
        raise invalid(name, text, valid)
    if isinstance(text, (int, float)):
        value = float(text)
    elif isinstance(text, str):
        m = _NUMBER.fullmatch(text.lower()) if text.isascii() else None
        if not m or (m.group(2) and m.group(2) not in units) or (unit_required
                                                                  and not m.group(2)):
            raise invalid(name, text, valid)
        # in decimal, so "10us" is the double nearest 1e-5 (10 * 1e-6 is one ulp off)
        try:
            value = float(Decimal(m.group(1)) * Decimal(repr(units[m.group(2)]))) \
                if m.group(2) else float(m.group(1))
        except ArithmeticError:  # an exponent beyond what a decimal holds
            raise invalid(name, text, valid) from None
    else:
        raise invalid(name, text, valid)
    if not math.isfinite(value) or not low <= value <= high:
        raise invalid(name, text, valid)
    return value


def _si(value: float, unit: str) -> str:
    return f"{value:g} {unit.split(' ')[0]}"


def rate(text: str | float, name: str = "capacity",
         bounds: tuple[float, float] = MODEL_CAPACITY_BPS) -> float:
    """Bit/s from ``50mbit``, ``100Mbps``, ``1gbit`` (the unit is required in text)."""
    return parse(text, name, RATE_UNITS, *bounds, unit_required=True, example="50mbit",
                 si="bit/s")


def time(text: str | float, name: str, low: float, high: float, *,
         unit_required: bool = False) -> float:
    """Seconds from ``40ms``, ``0.04s``, ``40000us``, ``2min``; with ``unit_required``
    (RTTs, which read naturally in ms) the unit is required, otherwise a bare number is
    seconds (durations, named so)."""
    return parse(text, name, TIME_UNITS, low, high, unit_required=unit_required,
                 example="40ms" if unit_required else "60 or 60s", si="s")
