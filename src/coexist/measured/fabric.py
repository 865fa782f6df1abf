"""The public data of the FABRIC reproduction (Srivastava, Fund and Panwar, CNERT 2023).

Their Nash-equilibrium experiment ran 50 flows, 0 to 50 of them BBR, at {50, 100, 500}
Mbit/s x {5, 20, 40, 80} ms, one network setting per FABRIC slice. Each slice left two CSV
files, ``bbr_results.csv`` and ``cubic_results.csv``, with columns ``N_bdp`` (buffer in
BDP), ``flow`` (number of BBR flows of 50), ``trial`` and ``bits_per_second`` (the
algorithm's aggregate throughput). The slice's network setting is not in the CSVs; it is
in the slice's notebook (``btl_capacity`` in Mbit/s, ``base_owd`` in ms each way), which
:func:`fetch` reads too.

A copy of the 24 results files, each slice's setting and the data's MIT licence travels with
the book in ``data/external/fabric/`` (:data:`BUNDLED`, from the commit its README names);
:func:`load` reads it by default, so the book needs no network. :func:`fetch` downloads the
same files from a newer commit of the repository into a cache, for :func:`load` to read
instead.

Rows are never dropped silently: a stray trailing comma is tolerated and reported; any other
malformed row is left out and reported with its file and line.
"""

from __future__ import annotations

import json
import math
import re
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..closed_form import nash
from ..core import paths, settings, sidecars
from .equilibria import DETERMINED_SPAN, region_in_whole_flows, set_span

REPO = "ashutoshs25/bbr-dominance-experiments"
#: the bundled copy (unchanged files, with their licence and source)
BUNDLED = paths.FABRIC
COMMIT = "b99841adb7634fb0b1f02662056165170ee5426c"  # the commit the chapter was written on
BASE = f"https://raw.githubusercontent.com/{REPO}/{COMMIT}/Nash_equilibirium_experiments"
SLICES = tuple(range(1, 13))
N_FLOWS = 50
HEADER = ["N_bdp", "flow", "trial", "bits_per_second"]
#: a slice's ``setting.json`` (written by :func:`fetch` from the slice's notebook)
SETTING = sidecars.obj({"capacity_mbps": sidecars.positive(), "rtt_ms": sidecars.positive(),
                        "source": sidecars.text(nonempty=True)})
ALGORITHMS = ("bbr", "cubic")


class FetchError(RuntimeError):
    """The public data could not be fetched (no network, or the repository changed)."""


@dataclass(frozen=True)
class Problem:
    """A malformed row: where it is, what is wrong, and whether it was kept."""

    source: str
    line: int
    text: str
    reason: str
    kept: bool

    def __str__(self) -> str:
        return (f"{self.source}:{self.line}: {self.reason} "
                f"({'kept' if self.kept else 'left out'}): {self.text!r}")


def external_allowed() -> bool:
    """False while figures are checked against their committed tables, which come from
    bundled data only (``COEXIST_BUNDLED_ONLY=1``, set by ``coexist figures --check``)."""
    return not settings.flag(paths.BUNDLED_ONLY)


def cache_dir() -> Path:
    """Where fetched files live: ``$COEXIST_CACHE/fabric`` or ``~/.cache/coexist/fabric``."""
    return (settings.directory("COEXIST_CACHE") or Path.home() / ".cache" / "coexist") / "fabric"


def parse_csv(text: str, source: str) -> tuple[pd.DataFrame, list[Problem]]:
    """Rows of one results file, and the problems found in it."""
    problems: list[Problem] = []
    lines = text.splitlines()
    if not lines:
        raise sidecars.DataError(f"{source}: empty file; expected the header "
                                 f"{','.join(HEADER)}")
    head = lines[0].strip().split(",")
    if head[-1] == "" and head[:-1] == HEADER:
        problems.append(Problem(source, 1, lines[0], "trailing comma in the header", True))
        head = head[:-1]
    if head != HEADER:
        raise sidecars.DataError(f"{source}:1: header {lines[0]!r}; expected "
                                 f"{','.join(HEADER)}")
    rows = []
    seen: dict[str, int] = {}
    for i, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        if line.strip() in seen:  # kept (two streams can carry the same rate) but reported
            problems.append(Problem(source, i, line, f"the same row as line "
                                    f"{seen[line.strip()]}", True))
        seen.setdefault(line.strip(), i)
        fields = line.strip().split(",")
        if len(fields) == 5 and fields[4] == "":
            problems.append(Problem(source, i, line, "stray trailing comma", True))
            fields = fields[:4]
        if len(fields) != 4:
            problems.append(Problem(source, i, line, f"{len(fields)} fields, expected 4",
                                    False))
            continue
        try:
            n_bdp, flow, trial, bps = (float(fields[0]), int(fields[1]), int(fields[2]),
                                       float(fields[3]))
        except ValueError:
            problems.append(Problem(source, i, line, "a field is not a number", False))
            continue
        if not (math.isfinite(n_bdp) and n_bdp > 0 and 0 <= flow <= N_FLOWS and trial >= 1
                and math.isfinite(bps) and bps >= 0):
            problems.append(Problem(source, i, line,
                                    f"out of range (finite N_bdp > 0, flow in 0..{N_FLOWS}, "
                                    "trial >= 1, bits_per_second >= 0)", False))
            continue
        rows.append((n_bdp, flow, trial, bps))
    return pd.DataFrame(rows, columns=HEADER), problems


def parse_setting(notebook_text: str, source: str) -> tuple[float, float]:
    """(capacity in Mbit/s, base RTT in ms) from a slice notebook's configuration cell."""
    cap = re.search(r"btl_capacity\s*=\s*([0-9.]+)", notebook_text)
    owd = re.search(r"base_owd\s*=\s*([0-9.]+)", notebook_text)
    if not cap or not owd:
        raise ValueError(f"{source}: no 'btl_capacity = ...' and 'base_owd = ...' found")
    return float(cap.group(1)), 2 * float(owd.group(1))


def _get(url: str, timeout: float) -> str:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.read().decode("utf-8")
    except (urllib.error.URLError, OSError, TimeoutError) as exc:
        raise FetchError(f"cannot fetch {url}: {exc}") from exc


def fetch(dest: Path | None = None, timeout: float = 10.0, progress: bool = True,
          slices: tuple[int, ...] = SLICES) -> Path:
    """Download each slice's two results files and its network setting into ``dest``
    (default :func:`cache_dir`); files already there are kept. Raises :class:`FetchError`."""
    from ..core.progress import tqdm

    dest = Path(dest) if dest is not None else cache_dir()
    for s in tqdm(slices, desc="FABRIC data", unit="slice", disable=not progress):
        d = dest / f"slice_{s}"
        d.mkdir(parents=True, exist_ok=True)
        for algo in ALGORITHMS:
            f = d / f"{algo}_results.csv"
            if not f.exists():
                text = _get(f"{BASE}/slice_{s}_results/{algo}_results.csv", timeout)
                tmp = f.with_suffix(".partial")
                tmp.write_text(text, encoding="utf-8")
                tmp.replace(f)
        setting = d / "setting.json"
        if not setting.exists():
            cap, rtt = parse_setting(_get(f"{BASE}/slice_{s}.ipynb", timeout),
                                     f"slice_{s}.ipynb")
            setting.write_text(json.dumps({"capacity_mbps": cap, "rtt_ms": rtt,
                                           "source": f"{REPO}@{COMMIT}"}), encoding="utf-8")
    return dest


def read_setting(path: Path) -> dict:
    """A slice's ``setting.json``: capacity (Mbit/s) and RTT (ms) as positive finite numbers
    and the text naming their source; anything else raises :class:`coexist.data.DataError`
    naming the file and the field."""
    return sidecars.read_json(Path(path), SETTING, "FABRIC setting")


def load(root: Path | None = None) -> tuple[pd.DataFrame, list[Problem]]:
    """Per-flow throughput of every (setting, buffer, mix, trial) in the slices under
    ``root`` (default: the bundled copy, :data:`BUNDLED`), and every malformed row found.
    Columns: capacity_mbps, rtt_ms, buffer_bdp, n_bbr, trial, bbr_bps and cubic_bps (per
    flow; NaN where the mix has no such flow)."""
    root = Path(root) if root is not None else BUNDLED
    slices = sorted(p for p in root.glob("slice_*") if (p / "setting.json").exists())
    if not slices:
        raise sidecars.DataError(f"{root}: no FABRIC slice (slice_*/setting.json) here; "
                                 "coexist.measured.fabric.fetch() downloads them")
    parts, problems = [], []
    for d in slices:
        setting = read_setting(d / "setting.json")
        per_algo = {}
        for algo in ALGORITHMS:
            f = d / f"{algo}_results.csv"
            shown = f.relative_to(BUNDLED.parents[2]) if f.is_relative_to(BUNDLED.parents[2]) \
                else f  # the bundled copy by its path in the repository
            table, found = parse_csv(sidecars.read_text(f, "FABRIC results file"), str(shown))
            problems += found
            per_algo[algo] = table.groupby(["N_bdp", "flow", "trial"]).bits_per_second.sum()
        both = pd.concat(per_algo, axis=1).reset_index()
        k = both["flow"].to_numpy()
        with np.errstate(divide="ignore", invalid="ignore"):
            bbr = np.where(k > 0, both["bbr"] / k, np.nan)
            cubic = np.where(k < N_FLOWS, both["cubic"] / (N_FLOWS - k), np.nan)
        parts.append(pd.DataFrame({
            "capacity_mbps": setting["capacity_mbps"], "rtt_ms": setting["rtt_ms"],
            "buffer_bdp": both["N_bdp"], "n_bbr": k, "trial": both["trial"],
            "bbr_bps": bbr, "cubic_bps": cubic}))
    return pd.concat(parts, ignore_index=True), problems


def equilibria(table: pd.DataFrame, tol: float = 0.0) -> pd.DataFrame:
    """Empirical Nash equilibria per (capacity, RTT, buffer): per-flow throughput averaged
    over trials, then the unilateral-deviation test. A setting lacking some mix gets one row
    with NaN and its mix count."""
    return nash.table_equilibria(table, ["capacity_mbps", "rtt_ms", "buffer_bdp"], N_FLOWS,
                                 tol)


def placement(buffer_bdp: float, bbr_flows: float, n_flows: int) -> tuple[str, bool]:
    """Where an equilibrium of ``n_flows`` flows falls against the closed form's region for
    that many flows, widened to whole flows (Mishra et al. eq. 25): "inside", "above" or
    "below" it, or "no prediction (≤ 1 BDP)"; and whether it lies within one flow of it."""
    region = region_in_whole_flows(buffer_bdp, int(n_flows))
    if region is None:
        return "no prediction (≤ 1 BDP)", False
    lo, hi = region
    where = "inside" if lo <= bbr_flows <= hi else ("above" if bbr_flows > hi else "below")
    return where, bool(lo - 1 <= bbr_flows <= hi + 1)


def fraction_gaps(points: pd.DataFrame, ours: str, theirs: str,
                  key: tuple[str, ...] = ("capacity_mbps", "rtt_ms", "buffer_bdp")
                  ) -> pd.DataFrame:
    """The settings (``key``) where both sources (``points``' ``source``) found an
    equilibrium: each source's equilibria as fractions of its flows (lists, in order), and
    ``gap``, ours minus theirs for the closest pair (a negative gap: fewer BBR flows here)."""
    mine = points[points.source == ours].groupby(list(key)).fraction.apply(list)
    other = points[points.source == theirs].groupby(list(key)).fraction.apply(list)
    rows = []
    for k in other.index.intersection(mine.index):
        gap = min((a - b for a in mine[k] for b in other[k]), key=abs)
        rows.append({**dict(zip(key, k, strict=True)), "ours": mine[k], "theirs": other[k],
                     "gap": gap})
    return pd.DataFrame(rows, columns=[*key, "ours", "theirs", "gap"])


def determined(points: pd.DataFrame,
               key: tuple[str, ...] = ("source", "capacity_mbps", "rtt_ms", "buffer_bdp")
               ) -> pd.Series:
    """Whether each equilibrium (a row of ``points``, with ``bbr_flows``) belongs to a set
    that places the mix: its source's equilibria at the same setting and buffer (``key``)
    span at most :data:`~coexist.measured.equilibria.DETERMINED_SPAN` flow counts, in that
    source's own flows. A wider set passes mixes that a deviation test at this precision
    cannot tell apart, so it is left out of every comparison."""
    span = points.groupby(list(key)).bbr_flows.transform(set_span)
    return span <= DETERMINED_SPAN
