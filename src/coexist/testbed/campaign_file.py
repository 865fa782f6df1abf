"""A campaign file: the YAML grid of experiments, read, checked and expanded into points.

A campaign file names a grid (or a list of grids) of capacities, RTTs, buffer sizes and flow
mixes, plus durations and repeats. Every point x repeat has a stable key (:class:`Point`).

Flow mixes can be written out (``"cubic:1,bbr:1"``) or generated:
``{mix: 10}`` is every split of 10 flows into CUBIC and BBR (0..10 BBR), and
``{groups: {10ms: 3, 30ms: 3}}`` every per-group CUBIC/BBR split of RTT groups. A grid may
set its own ``repeats``; a point that an earlier grid of the file already lists with the same
settings is the same point (so a second grid can add repeats to some points of the first).

Limits, checked before anything is expanded: a flow entry may generate at most
:data:`MAX_MIXES` mixes and a campaign at most :data:`MAX_POINTS` points (runs), and the
file may nest collections at most :data:`MAX_DEPTH` deep (a campaign needs 6). A file past
one of them, or one YAML cannot parse, is refused in one line naming the file, the line and
column where YAML gives them, the value and the limit.
"""

from __future__ import annotations

import hashlib
import itertools
import math
from dataclasses import dataclass
from pathlib import Path

import yaml

from ..core import sidecars
from ..core.params import ParameterError
from . import spec
from .load import KINDS as LOAD_KINDS
from .wakeups import PROBE_S

GRID_KEYS = {"capacity", "rtt", "buffer_bdp", "flows"}
# deliberate background load (see testbed.load; default none), and a grid's own number of
# repeats (default: the campaign's)
OPTIONAL_GRID_KEYS = {"load", "repeats"}
SETTINGS = {"duration": 60.0, "warmup": 10.0, "interval": 1.0, "sample": 0.5,
            "min_utilisation": 0.95, "stagger": 0.0, "steer_acks": False}
TOP_KEYS = {"name", "title", "figures", "grid", "repeats", "max_attempts", *SETTINGS}
#: wall-clock overhead per run beyond its duration, for ETAs and the time cap: set-up, start
#: and teardown (4 s: the mean gap between full runs of a campaign was 4.4 s, the median 2 s),
#: plus the wake-up probe before the run
OVERHEAD_S = 4.0 + PROBE_S
#: mixes one flow entry may generate (``{groups: ...}`` generates the product of its groups'
#: sizes + 1): the largest stored campaign's entries generate 11 to 16
MAX_MIXES = 10_000
#: runs (points x repeats) a campaign may plan: the stored campaigns plan 5 to 473; 100,000
#: runs of a minute are more than two months of testbed time
MAX_POINTS = 100_000
#: nodes a campaign file may nest (a value inside a ``groups`` mapping is 7 deep); PyYAML
#: composes recursively, so a deeper file would end in a RecursionError, not a refusal
MAX_DEPTH = 16


@dataclass(frozen=True)
class Point:
    """One run of a campaign: the experiment, its repeat index and its stable key."""

    key: str
    repeat: int
    exp: spec.Experiment
    min_utilisation: float
    load: str = "none"


@dataclass(frozen=True)
class Campaign:
    name: str
    title: str
    figures: tuple[str, ...]
    points: tuple[Point, ...]
    max_attempts: int
    path: Path

    def run_dir(self, data_dir: Path) -> Path:
        return Path(data_dir) / "runs" / self.name


def _fail(path: Path, message: str) -> ParameterError:
    return ParameterError(f"{path}: {message}")


class _StrictLoader(yaml.SafeLoader):
    """YAML's safe loader, refusing a key given twice in one mapping (PyYAML would keep
    the last value silently) and nodes nested deeper than :data:`MAX_DEPTH`."""

    _depth = 0

    def compose_node(self, parent: yaml.Node | None, index: object) -> yaml.Node | None:
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise yaml.composer.ComposerError(
                    None, None, f"nested more than {MAX_DEPTH} levels deep; valid: at most "
                    f"{MAX_DEPTH}", self.peek_event().start_mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def _mapping(loader: _StrictLoader, node: yaml.MappingNode) -> dict:
    seen: dict = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"key {key!r} given twice (line {seen[key]} and line "
                f"{key_node.start_mark.line + 1})", key_node.start_mark)
        seen[key] = key_node.start_mark.line + 1
    return loader.construct_mapping(node, deep=True)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


def _integer(value: object) -> bool:
    """An integer, and not a boolean (YAML's ``true`` is not 1 here)."""
    return isinstance(value, int) and not isinstance(value, bool)


def _expand_flows(entry: object, path: Path) -> list[str]:
    """Flow-mix strings from a literal string or a ``mix``/``groups`` generator."""
    if isinstance(entry, str):
        return [entry]
    if isinstance(entry, dict) and set(entry) == {"mix"}:
        n = entry["mix"]
        if not isinstance(n, int) or not 1 <= n <= spec.MAX_FLOWS:
            raise _fail(path, f"flows mix = {n!r}; valid: an integer 1..{spec.MAX_FLOWS}")
        return [f"cubic:{n - b},bbr:{b}" for b in range(n + 1)]
    if isinstance(entry, dict) and set(entry) == {"groups"} and isinstance(entry["groups"], dict):
        groups = list(entry["groups"].items())
        for rtt, n in groups:
            if not _integer(n) or not 1 <= n <= spec.MAX_FLOWS:
                raise _fail(path, f"flows groups: {rtt} = {n!r}; valid: an integer "
                                  f"1..{spec.MAX_FLOWS}")
        count = math.prod(n + 1 for _, n in groups)
        if count > MAX_MIXES:
            raise _fail(path, f"flows groups: {len(groups)} RTT groups of "
                              f"{sum(n for _, n in groups)} flows generate {count} mixes; "
                              f"valid: at most {MAX_MIXES}")
        out = []
        for split in itertools.product(*[range(n + 1) for _, n in groups]):
            out.append(",".join(f"cubic:{n - b}@{rtt},bbr:{b}@{rtt}"
                                for (rtt, n), b in zip(groups, split, strict=True)))
        return out
    raise _fail(path, f"flows entry {entry!r}; valid: a string like 'cubic:1,bbr:1', "
                      "{mix: N} or {groups: {RTT: N, ...}}")


def _slug(value: object) -> str:
    return str(value).replace(":", "").replace(",", "-").replace("@", "at").replace(" ", "")


def _mix_slug(mix: str, exp: spec.Experiment) -> str:
    """Readable key part for a flow mix; long per-flow-RTT mixes are summarised (counts per
    CCA, RTT range) and made unique by a hash of the full mix."""
    slug = _slug(mix)
    if len(slug) <= 60:
        return slug
    counts: dict[str, int] = {}
    for f in exp.flows:
        counts[f.cca] = counts.get(f.cca, 0) + 1
    rtts = [f.rtt_s * 1e3 for f in exp.flows]
    digest = hashlib.sha1(mix.encode()).hexdigest()[:8]
    return ("-".join(f"{c}{n}" for c, n in counts.items())
            + f"-rtt{min(rtts):g}to{max(rtts):g}ms-{digest}")


def _yaml_error(exc: yaml.MarkedYAMLError) -> str:
    """PyYAML's error in one line: where it stopped (line, column), what it expected, and
    the construct it was reading with the line it began on."""
    mark = exc.problem_mark or exc.context_mark
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
    what = " ".join((exc.problem or exc.context or type(exc).__name__).split())
    context = ""
    if exc.context and exc.problem:
        began = exc.context_mark
        context = f" ({' '.join(exc.context.split())}" + \
            (f" from line {began.line + 1})" if began else ")")
    return where + what + context


def load(path: Path) -> Campaign:
    """Parse and check a campaign file; every experiment in it is validated up front."""
    path = Path(path)
    try:
        doc = yaml.load(sidecars.read_text(path, "campaign file"),  # noqa: S506 (safe)
                        Loader=_StrictLoader)
    except sidecars.DataError as exc:
        raise _fail(path, f"cannot read campaign: {str(exc).removeprefix(f'{path}: ')}") \
            from None
    except yaml.MarkedYAMLError as exc:
        raise _fail(path, f"cannot read campaign: {_yaml_error(exc)}") from None
    except (OSError, yaml.YAMLError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise _fail(path, f"cannot read campaign: {first}") from None  # one line
    if not isinstance(doc, dict):
        raise _fail(path, "a campaign is a mapping of settings and a grid")
    unknown = set(doc) - TOP_KEYS
    if unknown:
        raise _fail(path, f"unknown key(s) {sorted(unknown)}; valid: {sorted(TOP_KEYS)}")
    name = doc.get("name", path.stem)
    if name != path.stem:
        raise _fail(path, f"name {name!r} must equal the file name {path.stem!r}")
    repeats = doc.get("repeats", 1)
    max_attempts = doc.get("max_attempts", 3)
    for key, value in (("repeats", repeats), ("max_attempts", max_attempts)):
        if not _integer(value) or not 1 <= value <= 100:
            raise _fail(path, f"{key} = {value!r}; valid: an integer 1..100")
    figures = doc.get("figures", [])
    if not isinstance(figures, list) or not all(isinstance(f, str) for f in figures):
        raise _fail(path, f"figures = {figures!r}; valid: a list of figure ids")
    grids = doc.get("grid")
    grids = [grids] if isinstance(grids, dict) else grids
    if not grids or not isinstance(grids, list) or not all(isinstance(g, dict) for g in grids):
        raise _fail(path, "grid must be a mapping (or a list of mappings) of "
                          f"{sorted(GRID_KEYS)} and optional overrides of {sorted(SETTINGS)}")
    points: dict[str, Point] = {}
    planned = 0
    for grid in grids:
        earlier = set(points)  # a point an earlier grid lists too is one point, if identical
        grid_repeats = grid.get("repeats", repeats)
        if not _integer(grid_repeats) or not 1 <= grid_repeats <= 100:
            raise _fail(path, f"grid repeats = {grid_repeats!r}; valid: an integer 1..100")
        unknown = set(grid) - GRID_KEYS - OPTIONAL_GRID_KEYS - set(SETTINGS)
        missing = GRID_KEYS - set(grid)
        if unknown or missing:
            raise _fail(path, f"grid keys: unknown {sorted(unknown)}, missing {sorted(missing)}")
        settings = {k: grid.get(k, doc.get(k, v)) for k, v in SETTINGS.items()}
        axes = {k: grid[k] if isinstance(grid[k], list) else [grid[k]]
                for k in GRID_KEYS | ({"load"} & set(grid))}
        empty = sorted(k for k, v in axes.items() if not v)
        if empty:  # an empty axis would plan no run at all, silently
            raise _fail(path, f"grid axis {empty} is empty; valid: one value or more")
        mixes = [m for entry in axes["flows"] for m in _expand_flows(entry, path)]
        loads = axes.get("load", ["none"])
        bad = [x for x in loads if x not in LOAD_KINDS]
        if bad:
            raise _fail(path, f"load {bad}; valid: {', '.join(LOAD_KINDS)}")
        planned += len(axes["capacity"]) * len(axes["rtt"]) * len(axes["buffer_bdp"]) \
            * len(mixes) * len(loads) * grid_repeats
        if planned > MAX_POINTS:
            raise _fail(path, f"the grid plans {planned} runs or more; valid: at most "
                              f"{MAX_POINTS}")
        for cap, rtt, buf, mix, kind in itertools.product(
                axes["capacity"], axes["rtt"], axes["buffer_bdp"], mixes, loads):
            try:
                exp = spec.experiment(capacity=cap, rtt=rtt, buffer_bdp=buf, flows=mix,
                                      duration=settings["duration"], warmup=settings["warmup"],
                                      interval=settings["interval"], sample=settings["sample"],
                                      stagger=settings["stagger"],
                                      steer_acks=settings["steer_acks"])
            except ParameterError as exc:
                raise _fail(path, f"point {cap}, {rtt}, {buf} BDP, {mix}: {exc}") from None
            mu = settings["min_utilisation"]
            if not isinstance(mu, (int, float)) or not 0 <= mu <= 1:
                raise _fail(path, f"min_utilisation = {mu!r}; valid: 0..1")
            suffix = "" if kind == "none" else f"-load{kind}"
            for r in range(grid_repeats):
                key = f"{_slug(cap)}-{_slug(rtt)}-b{buf:g}-{_mix_slug(mix, exp)}{suffix}-r{r}"
                point = Point(key, r, exp, float(mu), kind)
                if key in earlier and points[key] == point:
                    continue  # e.g. a second grid that adds repeats to some points
                if key in points:
                    raise _fail(path, f"grid point {key} appears twice"
                                + (" with different settings" if key in earlier else ""))
                points[key] = point
    return Campaign(name, doc.get("title", name), tuple(figures),
                    tuple(points.values()), max_attempts, path)

