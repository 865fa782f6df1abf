"""Typed, range-checked parameters shared by notebooks, the figure runner and the CLI.

Every notebook starts with a ``parameters`` cell of typed defaults. Papermill only warns
about names it does not know and happily injects wrong types, so the contract is enforced
here: one clear error naming the parameter, the offending value and the valid range.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


class ParameterError(ValueError):
    """A parameter is unknown, of the wrong type, or outside its valid range."""


def invalid(name: str, value: Any, valid: str, why: str = "") -> ParameterError:
    """The one error message for a bad value: parameter, value, (why), valid range."""
    extra = f" ({why})" if why else ""
    return ParameterError(f"parameter {name!r} = {value!r} is invalid{extra}; valid: {valid}")


@dataclass(frozen=True)
class Param:
    """One named, typed parameter with an optional numeric range or set of choices."""

    name: str
    kind: type
    default: Any = None
    """The value a notebook runs with when none is given (the figures' parameters take theirs
    from their notebook's parameters cell: :func:`coexist.book.ledger.notebook_defaults`)."""
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    choices: tuple[Any, ...] | None = None
    help: str = ""
    item: type = float
    """Element type when ``kind`` is ``list`` (the range then applies to each element)."""

    def range_text(self) -> str:
        """Human-readable valid range, used verbatim in error messages."""
        if self.choices is not None:
            return "one of " + ", ".join(repr(c) for c in self.choices)
        names = {float: "a number", int: "an integer", str: "a string", bool: "true or false"}
        if self.kind is list:
            kind = f"a non-empty list of {names[self.item].split(' ', 1)[1]}s"
        else:
            kind = names[self.kind]
        if self.low is None and self.high is None:
            return kind
        lo = "" if self.low is None else f"{self.low} {'<' if self.low_open else '<='} "
        hi = "" if self.high is None else f" {'<' if self.high_open else '<='} {self.high}"
        return f"{kind} with {lo}{self.name}{hi}"

    def _fail(self, value: Any, why: str = "") -> ParameterError:
        return invalid(self.name, value, self.range_text(), why)

    def check(self, value: Any) -> Any:
        """Return ``value`` (ints widened to float where a float is expected) or raise."""
        if self.kind is list:
            if not isinstance(value, (list, tuple)) or not value:
                raise self._fail(value, f"got {type(value).__name__}")
            element = Param(self.name, self.item, None, self.low, self.high,
                            self.low_open, self.high_open)
            try:
                return [element.check(v) for v in value]
            except ParameterError:
                raise self._fail(value) from None
        if self.kind is bool:
            if not isinstance(value, bool):
                raise self._fail(value, f"got {type(value).__name__}")
            return value
        if self.kind is str:
            if not isinstance(value, str):
                raise self._fail(value, f"got {type(value).__name__}")
        elif self.kind is int:
            if isinstance(value, bool) or not isinstance(value, int):
                raise self._fail(value, f"got {type(value).__name__}")
        elif self.kind is float:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise self._fail(value, f"got {type(value).__name__}")
            value = float(value)
            if not math.isfinite(value):
                raise self._fail(value, "not finite")
        if self.choices is not None:
            if value not in self.choices:
                raise self._fail(value)
            return value
        if self.low is not None and (value < self.low or (self.low_open and value == self.low)):
            raise self._fail(value)
        if self.high is not None and (value > self.high or (self.high_open and value == self.high)):
            raise self._fail(value)
        return value

    def parse(self, text: str) -> Any:
        """Convert a command-line string to this parameter's type, then check it."""
        if self.kind is list:
            element = Param(self.name, self.item, None)
            try:
                value = [element.parse(part) for part in text.split(",")]
            except ParameterError:
                raise self._fail(text, "not parseable") from None
            return self.check(value)
        try:
            if self.kind is bool:
                low = text.strip().lower()
                if low not in {"true", "false", "1", "0", "yes", "no"}:
                    raise ValueError(text)
                value: Any = low in {"true", "1", "yes"}
            elif self.kind in (int, float) and ("_" in text or not text.isascii()):
                raise ValueError(text)  # Python reads "1_0" as 10 and other digits too
            elif self.kind is int:
                value = int(text)
            elif self.kind is float:
                value = float(text)
            else:
                value = text
        except ValueError:
            raise self._fail(text, "not parseable") from None
        return self.check(value)


Constraint = Callable[[Mapping[str, Any]], "str | None"]


@dataclass(frozen=True)
class Spec:
    """The full parameter contract of one notebook: parameters plus cross-parameter rules."""

    params: tuple[Param, ...]
    constraints: tuple[Constraint, ...] = field(default_factory=tuple)

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.params]

    def get(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise self.unknown([name])

    def unknown(self, names: Iterable[str]) -> ParameterError:
        bad = ", ".join(repr(n) for n in names)
        return ParameterError(
            f"unknown parameter(s) {bad}; accepted names: {', '.join(self.names)}"
        )

    def defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.params}

    def validate(self, values: Mapping[str, Any], *, partial: bool = False) -> dict[str, Any]:
        """Check ``values`` against the spec.

        With ``partial`` the mapping may omit names (defaults fill them); unknown names are
        always an error. Returns the complete, checked parameter dictionary.
        """
        extra = [k for k in values if k not in self.names]
        if extra:
            raise self.unknown(extra)
        missing = [n for n in self.names if n not in values]
        if missing and not partial:
            raise ParameterError(f"missing parameter(s): {', '.join(missing)}")
        out = self.defaults()
        for name, value in values.items():
            out[name] = self.get(name).check(value)
        for rule in self.constraints:
            message = rule(out)
            if message:
                raise ParameterError(message)
        return out

    def from_namespace(self, namespace: Mapping[str, Any]) -> dict[str, Any]:
        """Validate the spec's names as found in a notebook's global namespace."""
        missing = [n for n in self.names if n not in namespace]
        if missing:
            raise ParameterError(
                f"the parameters cell does not define: {', '.join(missing)}"
            )
        return self.validate({n: namespace[n] for n in self.names})


def ordered(low_name: str, high_name: str) -> Constraint:
    """Rule: parameter ``low_name`` must be strictly below ``high_name``."""

    def rule(values: Mapping[str, Any]) -> str | None:
        if values[low_name] >= values[high_name]:
            return (
                f"parameter {low_name!r} = {values[low_name]!r} must be less than "
                f"{high_name!r} = {values[high_name]!r}"
            )
        return None

    rule.text = f"{low_name} < {high_name}"
    return rule


def extreme(value: Any, pick: Callable) -> Any:
    """A list-valued parameter's ``pick`` (``min`` or ``max``) of its values; a single value
    is its own."""
    return pick(value) if isinstance(value, (list, tuple)) else value


def bdp_packets_at_least(capacity_mbps: str, rtt_ms: str, flows: int | str = 1,
                         packet_bytes: int = 1500, factor: int = 1) -> Constraint:
    """Rule: one bandwidth-delay product of ``capacity_mbps`` and ``rtt_ms`` holds at least
    one ``packet_bytes`` packet per flow, so every flow can start with a window of a packet
    or more. ``flows`` is a number or the parameter naming it (times ``factor``, e.g. two
    algorithms of that many flows each); a list-valued parameter counts its smallest
    capacity and RTT and its largest number of flows."""

    def rule(values: Mapping[str, Any]) -> str | None:
        n = factor * (extreme(values[flows], max) if isinstance(flows, str) else flows)
        cap, rtt = extreme(values[capacity_mbps], min), extreme(values[rtt_ms], min)
        pkts = cap * 1e6 * rtt / 1e3 / (8 * packet_bytes)
        if pkts < n:
            return (f"parameters {capacity_mbps!r} = {values[capacity_mbps]!r} and {rtt_ms!r} "
                    f"= {values[rtt_ms]!r} give a BDP of {pkts:.3g} packets; valid: at least "
                    f"one {packet_bytes}-byte packet per flow ({n})")
        return None

    who = flows if isinstance(flows, str) else f"{flows}"
    who = f"{factor} x {who}" if factor != 1 else who
    rule.text = f"{capacity_mbps} x {rtt_ms} >= one {packet_bytes}-B packet per flow ({who})"
    return rule


def holds(text: str, names: Sequence[str], test: Callable[..., bool]) -> Constraint:
    """Rule ``text`` over the parameters ``names``: ``test(*values)`` must be true."""

    def rule(values: Mapping[str, Any]) -> str | None:
        if test(*(values[n] for n in names)):
            return None
        given = ", ".join(f"{n!r} = {values[n]!r}" for n in names)
        return f"parameters {given} break the rule; valid: {text}"

    rule.text = text
    return rule


def describe(rule: Constraint) -> str:
    """What a cross-parameter rule requires, in a few words (``warmup_s < duration_s``)."""
    return getattr(rule, "text", "a rule of its own (see coexist.book.ledger)")


def at_most(small: str, large: str) -> Constraint:
    """Rule: parameter ``small`` must not exceed ``large``."""

    def rule(values: Mapping[str, Any]) -> str | None:
        if values[small] > values[large]:
            return (
                f"parameter {small!r} = {values[small]!r} must not exceed "
                f"{large!r} = {values[large]!r}"
            )
        return None

    rule.text = f"{small} <= {large}"
    return rule


def within(part: str, whole: str) -> Constraint:
    """Rule: every value of the list parameter ``part`` is also a value of ``whole`` (e.g.
    the settings of a finer grid must be settings the coarser grid offers)."""

    def rule(values: Mapping[str, Any]) -> str | None:
        outside = [v for v in values[part]
                   if not any(math.isclose(float(v), float(w)) for w in values[whole])]
        if outside:
            return (
                f"parameter {part!r} = {values[part]!r} is invalid ({outside!r} not in "
                f"{whole!r}); valid: values of {whole!r} = {values[whole]!r}"
            )
        return None

    rule.text = f"every value of {part} is one of {whole}"
    return rule


def check_array(
    name: str,
    value: Any,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    integer: bool = False,
) -> Any:
    """Validate a scalar or array argument of a model function.

    Returns it as a float (or int) NumPy array; raises :class:`ParameterError` naming the
    first offending element, so vectorised model code never silently produces NaN.
    """
    import numpy as np

    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ParameterError(f"parameter {name!r} = {value!r} is not numeric") from None
    spec = Param(name, int if integer else float, None, low, high, low_open, high_open)
    bad = ~np.isfinite(arr)
    if low is not None:
        bad |= (arr < low) | ((arr == low) if low_open else False)
    if high is not None:
        bad |= (arr > high) | ((arr == high) if high_open else False)
    if integer:
        bad |= np.isfinite(arr) & (arr != np.round(arr))
    if np.any(bad):
        first = arr[bad].flat[0]
        shown = int(first) if integer and float(first).is_integer() else float(first)
        raise ParameterError(
            f"parameter {name!r} = {shown!r} is out of range; valid: {spec.range_text()}"
        )
    return arr.astype(int) if integer else arr
