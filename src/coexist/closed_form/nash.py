"""Nash equilibria of the CUBIC/BBR choice, from a model (eq. 25) or from a throughput table.

A *mix* is the number of BBR flows among ``n`` otherwise identical flows (§4.1) or, with
several RTT groups, one such count per group (§4.5). A mix is a Nash equilibrium when no
single flow gains by switching algorithm while all others stay put: the unilateral-deviation
test of §4.4. The same test runs on the model's per-flow predictions and on measured
(or fluid-model) per-flow averages, so model and data are judged by one rule. It can return
several equilibria or none.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

import numpy as np

from ..core.params import ParameterError, check_array
from . import mishra

CUBIC, BBR = "cubic", "bbr"

#: how many standard errors of the difference a switch must gain by, where the averages
#: come with theirs: two, the usual threshold for two estimates to be clearly apart
SPREAD_Z = 2.0


def _check_flows(names: tuple[str, str], cubic: np.ndarray, bbr: np.ndarray) -> None:
    """Per-mix values must be finite and >= 0 wherever the mix has such a flow: CUBIC in
    mixes ``0..n-1``, BBR in ``1..n`` (the other entries are never read)."""
    n = cubic.shape[-1] - 1
    for name, part in ((names[0], cubic[..., :n]), (names[1], bbr[..., 1:])):
        if np.any(~np.isfinite(part)) or np.any(part < 0):
            raise ParameterError(
                f"parameter {name!r} must be finite and >= 0 for every mix with such a flow"
            )


def equilibrium_mask(cubic_bps, bbr_bps, tol: float = 0.0, cubic_se=None, bbr_se=None,
                     z: float = SPREAD_Z) -> np.ndarray:
    """Which mixes pass the unilateral-deviation test, vectorised over leading axes.

    ``cubic_bps[..., k]`` and ``bbr_bps[..., k]`` are the per-flow average throughputs of a
    CUBIC and a BBR flow in the mix with ``k`` BBR flows (``k = 0..n``; the entries with no
    such flow, ``cubic[..., n]`` and ``bbr[..., 0]``, are ignored). A CUBIC flow that switches
    moves the mix to ``k + 1`` and gets ``bbr[k + 1]``; a BBR flow that switches gets
    ``cubic[k - 1]``. A switch counts as profitable only if it gains more than ``tol`` times
    the flow's current throughput.

    ``cubic_se`` and ``bbr_se`` (same shape, optional) are the standard errors of those
    averages. With them a switch must also gain more than ``z`` combined standard errors
    (``z * hypot(se_now, se_then)``): a gain the averages cannot tell from their own spread
    is no reason to switch, so the test returns every mix that is an equilibrium within the
    averages' precision (an epsilon-equilibrium with epsilon set by the data).
    """
    cubic = np.asarray(cubic_bps, dtype=float)
    bbr = np.asarray(bbr_bps, dtype=float)
    if cubic.shape != bbr.shape or cubic.shape[-1] < 2:
        raise ParameterError(
            "parameters 'cubic_bps' and 'bbr_bps' must have the same shape with at least "
            f"2 mixes on the last axis; got {cubic.shape} and {bbr.shape}"
        )
    n = cubic.shape[-1] - 1
    _check_flows(("cubic_bps", "bbr_bps"), cubic, bbr)
    tol = float(check_array("tol", tol, low=0.0))
    z = float(check_array("z", z, low=0.0))
    if (cubic_se is None) != (bbr_se is None):
        raise ParameterError("parameters 'cubic_se' and 'bbr_se' go together: give both or "
                             "neither")
    if cubic_se is None:
        noise = np.zeros(cubic.shape[:-1] + (n,))
    else:
        cse, bse = (np.asarray(a, dtype=float) for a in (cubic_se, bbr_se))
        if cse.shape != cubic.shape or bse.shape != cubic.shape:
            raise ParameterError(
                f"parameters 'cubic_se' and 'bbr_se' must have the shape of the throughputs "
                f"{cubic.shape}; got {cse.shape} and {bse.shape}")
        _check_flows(("cubic_se", "bbr_se"), cse, bse)
        # the switch between mix k (CUBIC flow) and mix k + 1 (BBR flow) compares these two
        noise = z * np.hypot(cse[..., :n], bse[..., 1:])
    ok = np.ones(cubic.shape, dtype=bool)
    # a CUBIC flow in mix k (k < n) must not gain by becoming BBR (mix k + 1)
    ok[..., :n] &= bbr[..., 1:] - cubic[..., :n] <= np.maximum(cubic[..., :n] * tol, noise)
    # a BBR flow in mix k (k > 0) must not gain by becoming CUBIC (mix k - 1)
    ok[..., 1:] &= cubic[..., :n] - bbr[..., 1:] <= np.maximum(bbr[..., 1:] * tol, noise)
    return ok


def equilibria(cubic_bps: Sequence[float], bbr_bps: Sequence[float], tol: float = 0.0,
               cubic_se=None, bbr_se=None, z: float = SPREAD_Z) -> list[int]:
    """Numbers of BBR flows at which the mix is a Nash equilibrium (§4.4), ascending
    (standard errors as in :func:`equilibrium_mask`)."""
    return [int(k) for k in np.flatnonzero(
        equilibrium_mask(cubic_bps, bbr_bps, tol, cubic_se, bbr_se, z))]


def table_equilibria(per_flow, by: Sequence[str], n_flows: int, tol: float = 0.0):
    """Equilibria of every setting in a table of per-flow throughputs (measured or published).

    ``per_flow`` has the columns ``by`` (the setting), ``n_bbr`` (the mix) and per-flow
    ``cubic_bps`` and ``bbr_bps`` (NaN where the mix has no such flow); repeats of a mix are
    averaged. One row per equilibrium with ``by``, ``mixes`` and ``bbr_flows``; a setting
    lacking some of the mixes ``0..n_flows`` gets one row with NaN and its mix count,
    never a guess.
    """
    import pandas as pd

    rows = []
    for key, g in per_flow.groupby(list(by)):
        m = g.groupby("n_bbr")[["cubic_bps", "bbr_bps"]].mean()
        base = {**dict(zip(by, key, strict=True)), "mixes": len(m)}
        if list(m.index) != list(range(n_flows + 1)):
            rows.append({**base, "bbr_flows": np.nan})
            continue
        for k in equilibria(m["cubic_bps"].to_numpy(), m["bbr_bps"].to_numpy(), tol):
            rows.append({**base, "bbr_flows": float(k)})
    return pd.DataFrame(rows, columns=[*by, "mixes", "bbr_flows"])


def grouped_equilibria(
    throughput: Mapping[tuple[int, ...], Mapping[tuple[int, str], float]],
    group_sizes: Sequence[int],
    tol: float = 0.0,
    spread: Mapping[tuple[int, ...], Mapping[tuple[int, str], float]] | None = None,
    z: float = SPREAD_Z,
) -> list[tuple[int, ...]]:
    """Nash equilibria over per-group BBR counts, for flows in several RTT groups (§4.5).

    ``throughput[mix][(group, cca)]`` is the per-flow average of a ``cca`` flow of ``group``
    in ``mix`` (a tuple of BBR counts per group). Every mix in the product of
    ``range(size + 1)`` must be present. Flows of one group are interchangeable, so a mix is
    an equilibrium when no CUBIC flow of any group gains by turning BBR (its group's count
    rises by one) and no BBR flow gains by turning CUBIC. With one group this is
    :func:`equilibria`. ``spread`` (same layout, optional) holds the standard errors of the
    averages: a switch must then also gain more than ``z`` combined standard errors, as in
    :func:`equilibrium_mask`.
    """
    sizes = _group_sizes(group_sizes)
    mixes = list(itertools.product(*(range(s + 1) for s in sizes)))
    missing = [m for m in mixes if m not in throughput]
    if missing:
        raise ParameterError(
            f"throughput table lacks {len(missing)} mix(es), e.g. {missing[0]}; every "
            f"combination of 0..size BBR flows per group {sizes} is needed"
        )

    return [m for m, v in _verdicts(throughput, sizes, mixes, tol, spread=spread, z=z).items()
            if v[0] == EQUILIBRIUM]


def rates_by_mix(table, column: str = "goodput_bps") -> dict:
    """The throughput mapping of :func:`grouped_equilibria` and :func:`grouped_mix_status`,
    mix -> {(group, algorithm): per-flow goodput}, from a long pandas table of one setting
    (columns ``mix``, ``group``, ``cca``, ``goodput_bps``; one row per mix, group and
    algorithm), as :func:`coexist.fluid.studies.equilibria.mix_table` and
    :func:`coexist.measured.equilibria.grouped_rates` give them, so model and measurement
    are read alike.
    ``column`` picks another column of the same layout (e.g. the averages' standard errors).
    """
    return {m: {(int(g), c): float(v) for g, c, v in zip(part["group"], part["cca"],
                                                          part[column], strict=True)}
            for m, part in table.groupby("mix")}


def mix_label(mix: Sequence[int]) -> str:
    """A mix of RTT groups as text, its BBR counts per group joined by dashes ("0-3-3")."""
    return "-".join(map(str, mix))


def _group_sizes(group_sizes: Sequence[int]) -> list[int]:
    """``group_sizes`` as ints, each group holding at least one flow."""
    sizes = [int(s) for s in group_sizes]
    if not sizes or any(s < 1 for s in sizes):
        raise ParameterError(f"parameter 'group_sizes' = {group_sizes!r}; valid: sizes >= 1")
    return sizes


#: verdicts of :func:`grouped_mix_status`
EQUILIBRIUM, NOT_EQUILIBRIUM, UNDECIDED = "equilibrium", "not an equilibrium", "undecided"


def _verdicts(throughput, sizes: list[int], mixes, tol: float,
              names: Sequence[str] | None = None, spread=None, z: float = SPREAD_Z) -> dict:
    """Verdict and reason for each of ``mixes`` (all stored), from whatever neighbours are;
    ``names`` name the groups in the reasons (default "group 0", "group 1", ...);
    ``spread`` the averages' standard errors (see :func:`grouped_equilibria`)."""
    z = float(check_array("z", z, low=0.0))

    def noise(mix, group, cca, to, new) -> float:
        if spread is None:
            return 0.0
        try:
            a, b = float(spread[mix][(group, cca)]), float(spread[to][(group, new)])
        except KeyError:
            raise ParameterError(f"spread table lacks the {cca} flow of group {group} in mix "
                                 f"{mix} or the {new} flow in {to}") from None
        if not (np.isfinite(a) and np.isfinite(b) and a >= 0 and b >= 0):
            raise ParameterError(f"spread of group {group} between mixes {mix} and {to} = "
                                 f"{a!r}, {b!r}; valid: finite and >= 0")
        return z * float(np.hypot(a, b))
    names = [f"group {g}" for g in range(len(sizes))] if names is None else names

    def rate(mix: tuple[int, ...], group: int, cca: str) -> float:
        try:
            value = float(throughput[mix][(group, cca)])
        except KeyError:
            raise ParameterError(
                f"throughput table lacks the {cca} flow of group {group} in mix {mix}"
            ) from None
        if not np.isfinite(value) or value < 0:
            raise ParameterError(f"throughput of {cca} group {group} in mix {mix} = {value!r}")
        return value

    out = {}
    for mix in mixes:
        gains, missing = [], []
        for g, size in enumerate(sizes):
            moves = []
            if mix[g] < size:  # a CUBIC flow of group g exists and may switch
                moves.append((CUBIC, BBR, mix[:g] + (mix[g] + 1,) + mix[g + 1 :]))
            if mix[g] > 0:  # a BBR flow of group g exists and may switch
                moves.append((BBR, CUBIC, mix[:g] + (mix[g] - 1,) + mix[g + 1 :]))
            for old, new, to in moves:
                if to not in throughput:
                    missing.append(to)
                    continue
                now, then = rate(mix, g, old), rate(to, g, new)
                if then - now > max(now * tol, noise(mix, g, old, to, new)):
                    gains.append((then / now - 1.0 if now > 0 else np.inf, g, old, new))
        if gains:
            gain, g, old, new = max(gains)
            out[mix] = (NOT_EQUILIBRIUM, f"a {old} flow of {names[g]} gains {gain:.1%} as {new}")
        elif missing:
            out[mix] = (UNDECIDED, f"{len(missing)} deviation(s) not stored, e.g. to {missing[0]}")
        else:
            out[mix] = (EQUILIBRIUM, "no single flow gains by switching")
    return out


def grouped_mix_status(
    throughput: Mapping[tuple[int, ...], Mapping[tuple[int, str], float]],
    group_sizes: Sequence[int],
    tol: float = 0.0,
    group_names: Sequence[str] | None = None,
) -> dict[tuple[int, ...], tuple[str, str]]:
    """What a partial throughput table already says about each of its mixes (§4.4-4.5).

    Same table and test as :func:`grouped_equilibria`, but mixes may be missing, as while a
    campaign is under way. Each stored mix gets a verdict and its reason: ``"not an
    equilibrium"`` as soon as one stored deviation gains (the largest gain is named),
    ``"equilibrium"`` when every deviation is stored and none gains, otherwise
    ``"undecided"``. Verdicts never change as mixes are added, except undecided ones; on a
    complete table the equilibria are exactly those of :func:`grouped_equilibria`.
    ``group_names`` (default "group 0", "group 1", ...) name the groups in the reasons.
    """
    sizes = _group_sizes(group_sizes)
    valid = set(itertools.product(*(range(s + 1) for s in sizes)))
    stray = [m for m in throughput if tuple(m) not in valid]
    if stray:
        raise ParameterError(
            f"throughput table has mix {stray[0]!r}, outside 0..size BBR flows per group {sizes}"
        )
    if group_names is not None and len(group_names) != len(sizes):
        raise ParameterError(
            f"parameter 'group_names' has {len(group_names)} names; valid: one per group "
            f"({len(sizes)})"
        )
    return _verdicts(throughput, sizes, sorted(throughput), tol, group_names)


def model_table(buffer_bdp, n_flows: int, *, synchronised: bool, capacity_bps=1.0):
    """Per-flow CUBIC and BBR throughput predicted for every mix ``k = 0..n_flows``.

    Returns two arrays of shape ``buffer_bdp.shape + (n_flows + 1,)`` (eqs. 21-24); entries
    for an algorithm absent from the mix are NaN.
    """
    n = int(check_array("n_flows", n_flows, low=2, integer=True))
    x = np.asarray(buffer_bdp, dtype=float)[..., None]
    k = np.arange(n + 1)
    result = mishra.multi_flow(
        x, n - k, k, capacity_bps=capacity_bps, synchronised=synchronised
    )
    return result.cubic_per_flow_bps, result.bbr_per_flow_bps


def predicted_bbr_flows(buffer_bdp, n_flows: int, *, synchronised: bool):
    """Eq. (25): the (real) number of BBR flows at which BBR's per-flow rate equals C/N.

    Synchronised CUBIC flows leave BBR a share independent of the mix, so the crossing is
    ``N * share``. De-synchronised, the back-off (eq. 22) depends on ``Nc = N - Nb``; the
    crossing solves ``share(N - n) = n / N`` for real ``n``, where the left side falls and
    the right side rises with ``n``. If BBR is still above the fair share with a single
    CUBIC flow left, the line AB stays above it (Case 1 of §4.1) and the answer is ``N``.
    """
    n = int(check_array("n_flows", n_flows, low=2, integer=True))
    return _crossing(mishra._check_buffer(buffer_bdp), n, synchronised)


def _crossing(x: np.ndarray, n: int, synchronised: bool) -> np.ndarray:
    """Eq. (25) crossing for validated buffers ``x`` and flow count ``n``."""
    if synchronised:
        return n * mishra.share_unchecked(x)

    def gap(nb):
        return mishra.share_unchecked(x, mishra.desync_backoff(n - nb)) - nb / n

    above = gap(np.full_like(x, n - 1.0)) >= 0
    root = mishra.bisect(lambda mid: gap(mid) > 0, np.zeros_like(x), np.full_like(x, n - 1.0),
                         steps=60)
    return np.where(above, float(n), root)


def predicted_region(buffer_bdp, n_flows: int) -> dict[str, np.ndarray]:
    """Both bounds of the predicted equilibrium (real crossings), as in Fig. 9's region."""
    n = int(check_array("n_flows", n_flows, low=2, integer=True))
    x = mishra._check_buffer(buffer_bdp)
    return {
        "bbr_flows_sync": _crossing(x, n, synchronised=True),
        "bbr_flows_desync": _crossing(x, n, synchronised=False),
    }


def whole_flows(region: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """A :func:`predicted_region` widened outwards to whole flows, since an equilibrium is a
    whole number of flows. A bound that is a whole number up to float error (3 BDP and 10
    flows: 5 - 9e-16) is that number, not widened by one more flow."""
    lo = np.minimum(region["bbr_flows_sync"], region["bbr_flows_desync"])
    hi = np.maximum(region["bbr_flows_sync"], region["bbr_flows_desync"])
    return np.floor(np.round(lo, 9)), np.ceil(np.round(hi, 9))
