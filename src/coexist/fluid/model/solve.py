"""Method-of-steps integration of the fluid model (Scherrer et al. §4.1.1: fixed step,
10 us by default), compiled with Numba.

Delayed values come from ring buffers one maximum delay long, so memory does not grow with
the simulated time. Integration is explicit Euler on the delay-differential equations; the
queue is kept in [0, B] as eq. (2) prescribes. The run is deterministic: the same
configuration gives byte-identical outputs.

Congestion controls: Reno (eq. 39), CUBIC (eqs. 40-41), BBRv1 (eqs. 9-23) and BBRv2
(eqs. 9-19, 24-32).

How the paper's equations are read where it leaves room:

- Eqs. (11), (13), (16), (20), (26), (27) are update rules for discrete modes, timers and
  resets. Their σ of a time or a mode is taken with K -> ∞ (a step), so a mode flips exactly
  once and a timer resets to 0; a finite-K σ over a timer would flip a mode half-way.
- Eqs. (9) and (18) track a minimum and a maximum; they are applied per step as
  ``τmin -= Γ(τmin - τ)`` and ``x_max += Γ(x_dlv - x_max)`` with Γ taken at K -> ∞ (the
  ReLU): a finite-K Γ leaks its negative tail every step and drags τmin up towards the
  current RTT. Eq. (18) tracks the *delivery* rate x_dlv (its text: "maximum delivery
  rate"), not the sending rate.
- Eq. (17) with an empty queue delivers min(y, C): the link cannot deliver more than its
  capacity even in the instant the queue starts to build.
- σ compares quantities of different units: ``k_sigmoid`` (per packet/s) sharpens rate
  comparisons (eq. 4), ``k_window`` (per packet) the inflight comparison of eq. (29).
- Eq. (14)'s second term is added (the printed minus sign would make rates negative).
- Eq. (25): in cruising mode BBRv2 paces at x_btl (§5.2.1), so the 5/4 probing gain
  applies only outside cruise and down modes.
- Eq. (27) ends cruising when a new probing period starts and sets it when draining ends;
  modes stay in {0, 1}. Eq. (28)'s "previous period" maximum is the value at that
  period's end. Eq. (30) cuts inflight_lo while the path sees any loss (p > 0).
- BBR start-up is not modelled: BBR starts in ProbeBW at the initial window's rate, with
  RTprop equal to the path's propagation delay and, for BBRv2, inflight_hi at
  ``inflight_hi_factor`` initial windows (Insight 5 depends on it).
- Windows never go below one packet.

Two extensions beyond the paper, off by default. The first (``rtprop_expiry``): Linux
BBR's RTprop filter and ProbeRTT timing. Eq. (9) only ever lowers τmin, so BBR's RTprop
stays at the propagation delay whatever the queue. Linux BBR keeps its min-RTT for 10 s
only: when that filter expires (which is when ProbeRTT starts) the next RTT sample
replaces it, even a larger one, and ProbeRTT's own samples can then only lower it. Beside
loss-based flows that keep a standing queue, those samples include their queue, so RTprop,
the BDP estimate and BBR's window (2 x x_btl x RTprop) grow. Linux also holds ProbeRTT for
200 ms counted from the moment its inflight has drained to the ProbeRTT window, not from
entry (eq. 12), so its own queued data has left before it takes its samples, and it stays
until one more round trip has passed as well ("max(200 ms, 1 round)" in ``tcp_bbr.c``).
With the option on, entering ProbeRTT sets τmin to the RTT seen at that moment; the hold
starts one RTT (the one at entry) later, when what was in flight at entry has been
acknowledged, and lasts max(200 ms, the RTT seen then); eq. (9) applies unchanged. (The
model's inflight v of eq. 19 cannot serve as the drain test: it is an integral of rate
differences that need not return to the window.) Mishra et al.'s closed form rests on the
same mechanism (their RTprop includes the queue), and the book tests how far it explains
the fluid model's gap to measurements.

The second (``cubic_recovery``): CUBIC cuts its window once per loss episode, as Linux
does. Eqs. (40a-b) pull ``s`` towards 0 and ``w_max`` towards the window at the rate
losses arrive, for as long as they arrive; in an overflow that lasts a round trip they
keep cutting a window that has already been cut, and the window can collapse to a small
fraction of its peak. Linux reduces cwnd once when it enters fast recovery and not again
for losses in the same window of data; recovery ends when that window has been
acknowledged, about one round trip later. With the option on, a CUBIC flow counts its
expected lost packets (the integral of x(t - d_p) p(t - d_b), the same loss rate as eq.
40); when one packet is lost it sets ``w_max`` to its window and ``s`` to 0 (so eq. 41
restarts at β w_max) and counts no loss for the RTT it sees then; between episodes ``s``
grows at 1 per second and ``w_max`` stays. Linux's fast convergence (a lower ``w_max``
when a cut comes below the previous one) and TCP-friendly region are left out, as in eq.
(41).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ...analysis.fairness import jain
from ...core.params import ParameterError, invalid
from . import cubic, network, printed, published  # published clears stale kernels

CCAS = {"reno": 0, "cubic": 1, "bbr1": 2, "bbr2": 3}
READINGS = ("printed", "published")
#: the reading every figure runs: the model as the authors' code integrates it
DEFAULT_READING = "published"
AQMS = {"droptail": 0, "red": 1}
PACKET_BYTES = 1500


@dataclass(frozen=True)
class Flow:
    """One agent: its CCA and its forward (sender to queue) and backward delays, seconds."""

    cca: str
    d_f: float
    d_b: float

    @property
    def d_p(self) -> float:
        return self.d_f + self.d_b


@dataclass(frozen=True)
class Config:
    """A dumbbell: capacity (packets/s), buffer (packets), agents, AQM and numerics."""

    capacity_pps: float
    buffer_pkts: float
    flows: tuple[Flow, ...]
    duration_s: float = 10.0
    aqm: str = "droptail"
    step_s: float = 1e-5
    sample_s: float = 1e-3
    k_sigmoid: float = network.K_DEFAULT
    k_window: float = 1.0
    l_droptail: float = network.L_DEFAULT
    #: packets; one value, or one per flow. None: the reading's own start (printed: 10
    #: packets; published: each flow's fair share of its own BDP, D_i C / N)
    initial_window: float | tuple[float, ...] | None = None
    inflight_hi_factor: float = 1.25
    rtprop_expiry: bool = False
    cubic_recovery: bool = False
    #: which model: "printed" (the equations as printed, :func:`run`'s own kernel) or
    #: "published" (as the authors' code integrates them, :mod:`.published`)
    reading: str = DEFAULT_READING
    #: published reading: BBRv2's period starts 10 D_i + 1000 x phase ms before t = 0 (one
    #: value, or one per flow, each in [0, 1))
    bbr2_phase: float | tuple[float, ...] = 0.0
    #: published reading: BBR's ProbeRTT interval, s (one value, or one per flow): the
    #: timer's reset and RTprop's staleness window of eqs. (11)-(12), 10 s as published and
    #: in Linux; other values de-synchronise the flows' ProbeRTT (a remedy, not the paper)
    probe_rtt_interval_s: float | tuple[float, ...] = 10.0
    extra: dict = field(default_factory=dict, compare=False)

    def check(self) -> Config:
        """Every value in its valid range, with an error naming the first that is not."""
        if not self.capacity_pps > 0:
            raise invalid("capacity_pps", self.capacity_pps, "> 0")
        if not self.buffer_pkts > 0:
            raise invalid("buffer_pkts", self.buffer_pkts, "> 0")
        if not self.flows:
            raise invalid("flows", self.flows, "at least one flow")
        for i, f in enumerate(self.flows):
            if f.cca not in CCAS:
                raise invalid(f"flows[{i}].cca", f.cca, f"one of {', '.join(CCAS)}")
            if not (f.d_f >= 0 and f.d_b >= 0 and f.d_p > 0):
                raise invalid(f"flows[{i}] delays", (f.d_f, f.d_b), "d_f, d_b >= 0, d_f + d_b > 0")
        if self.aqm not in AQMS:
            raise invalid("aqm", self.aqm, f"one of {', '.join(AQMS)}")
        if not 1e-7 <= self.step_s <= 1e-3:
            raise invalid("step_s", self.step_s, "1e-7 <= step_s <= 1e-3")
        if not self.step_s <= self.sample_s <= self.duration_s:
            raise invalid("sample_s", self.sample_s, "step_s <= sample_s <= duration_s")
        if not 0 < self.duration_s <= 3600:
            raise invalid("duration_s", self.duration_s, "0 < duration_s <= 3600")
        if not (self.k_sigmoid > 0 and self.k_window > 0 and self.l_droptail >= 1):
            raise invalid("k_sigmoid/k_window/l_droptail",
                      (self.k_sigmoid, self.k_window, self.l_droptail),
                      "k_sigmoid > 0, k_window > 0, l_droptail >= 1")
        if self.reading not in READINGS:
            raise invalid("reading", self.reading, f"one of {', '.join(READINGS)}")
        phases = self._per_flow("bbr2_phase", lambda v: 0 <= v < 1, "numbers in [0, 1)")
        intervals = self._per_flow("probe_rtt_interval_s", lambda v: 0.5 <= v <= 60,
                                   "seconds in [0.5, 60] (ProbeRTT itself lasts 0.2 s)")
        if self.reading != "published" and any(v != 10.0 for v in intervals):
            raise invalid("probe_rtt_interval_s", self.probe_rtt_interval_s,
                          "10 with reading='printed' (the published reading's option)")
        if self.reading == "published":
            for name in ("k_sigmoid", "k_window", "l_droptail"):
                if getattr(self, name) != getattr(Config, name):
                    raise invalid(name, getattr(self, name), f"{getattr(Config, name)!r} "
                                  "with reading='published' (the printed reading's option)")
        elif any(phases):
            raise invalid("bbr2_phase", self.bbr2_phase, "0 with reading='printed'")
        if self.initial_window is None:
            pass
        elif isinstance(self.initial_window, tuple):
            if len(self.initial_window) != len(self.flows):
                raise invalid("initial_window", self.initial_window,
                              f"one value per flow ({len(self.flows)}), or a single value")
            for i, w in enumerate(self.initial_window):
                if not w >= 1:
                    raise invalid(f"initial_window[{i}]", w, ">= 1 packet")
        elif not isinstance(self.initial_window, (int, float, np.integer, np.floating)):
            raise invalid("initial_window", self.initial_window,
                          "a number of packets, or a tuple with one per flow")
        elif not self.initial_window >= 1:
            raise invalid("initial_window", self.initial_window, ">= 1 packet")
        if not isinstance(self.rtprop_expiry, bool):
            raise invalid("rtprop_expiry", self.rtprop_expiry, "True or False")
        if not isinstance(self.cubic_recovery, bool):
            raise invalid("cubic_recovery", self.cubic_recovery, "True or False")
        if not self.inflight_hi_factor > 0:
            raise invalid("inflight_hi_factor", self.inflight_hi_factor,
                      "> 0 (BBRv2's initial inflight_hi, in initial windows)")
        return self

    def _per_flow(self, name: str, ok: Callable[[float], bool], valid: str) -> tuple:
        """An option given as one number or one per flow, as a tuple: every value a number
        that ``ok`` accepts, or an error naming the option and ``valid``."""
        value = getattr(self, name)
        values = value if isinstance(value, tuple) else (value,)
        if isinstance(value, tuple) and len(values) != len(self.flows):
            raise invalid(name, value, f"one value per flow ({len(self.flows)}), or a single value")
        if not all(isinstance(v, (int, float, np.integer, np.floating)) and ok(v)
                   for v in values):
            raise invalid(name, value, valid)
        return values


def dumbbell(ccas: list[str], *, capacity_bps: float, rtt_s: float | list[float],
             buffer_bdp: float, **kw) -> Config:
    """Convenience: N agents with base RTTs ``rtt_s`` (half before the queue, half after)."""
    c = capacity_bps / (8 * PACKET_BYTES)
    rtts = [rtt_s] * len(ccas) if np.isscalar(rtt_s) else list(rtt_s)
    if len(rtts) != len(ccas):
        raise ParameterError(f"parameter 'rtt_s' has {len(rtts)} values for {len(ccas)} flows")
    flows = tuple(Flow(cca, r / 2, r / 2) for cca, r in zip(ccas, rtts, strict=True))
    return Config(c, buffer_bdp * c * min(rtts), flows, **kw).check()


BBR_FIELDS = ("x_btl", "x_max", "tau_min", "m_prt", "inflight", "pacing", "m_dwn", "m_crs",
              "w_hi")


@dataclass
class Trace:
    """Sampled model output: per-flow rate, window and RTT; link queue, loss and arrivals;
    per-flow BBR variables (``bbr[name]``, zero for loss-based flows)."""

    config: Config
    t: np.ndarray
    rate_pps: np.ndarray     # (samples, flows)
    window_pkts: np.ndarray  # (samples, flows): cwnd, or BBR's inflight limit in force
    rtt_s: np.ndarray        # (samples, flows)
    queue_pkts: np.ndarray
    loss: np.ndarray
    arrival_pps: np.ndarray
    bbr: dict = field(default_factory=dict)

    OUTPUTS = ("rate_pps", "window_pkts", "rtt_s", "queue_pkts", "loss", "arrival_pps")

    def flows_table(self) -> pd.DataFrame:
        """Tidy per-flow time series (rates in bit/s), with the BBR variables (zero for
        loss-based flows): bandwidth estimate, period maximum, RTprop, ProbeRTT mode,
        inflight, pacing rate, BBRv2's down and cruise modes and inflight_hi."""
        n = len(self.config.flows)
        bits = 8 * PACKET_BYTES
        units = {"x_btl": ("x_btl_bps", bits), "x_max": ("x_max_bps", bits),
                 "tau_min": ("rtprop_s", 1.0), "m_prt": ("probe_rtt", 1.0),
                 "inflight": ("inflight_pkts", 1.0), "pacing": ("pacing_bps", bits),
                 "m_dwn": ("bbr2_down", 1.0), "m_crs": ("bbr2_cruise", 1.0),
                 "w_hi": ("inflight_hi_pkts", 1.0)}
        cols = {
            "t_s": np.repeat(self.t, n),
            "flow": np.tile(np.arange(n), len(self.t)),
            "cca": np.tile([f.cca for f in self.config.flows], len(self.t)),
            "rate_bps": self.rate_pps.ravel() * bits,
            "window_pkts": self.window_pkts.ravel(),
            "rtt_s": self.rtt_s.ravel(),
        }
        for name in BBR_FIELDS:
            col, scale = units[name]
            cols[col] = self.bbr[name].ravel() * scale if name in self.bbr else np.nan
        return pd.DataFrame(cols)

    def link_table(self) -> pd.DataFrame:
        return pd.DataFrame({"t_s": self.t, "queue_pkts": self.queue_pkts, "loss": self.loss,
                             "arrival_bps": self.arrival_pps * 8 * PACKET_BYTES})


def initial_windows(cfg: Config) -> np.ndarray:
    """Each flow's window at the start (packets): ``cfg.initial_window`` per flow."""
    w = 10.0 if cfg.initial_window is None else cfg.initial_window
    return (np.array(w, dtype=float) if isinstance(w, tuple)
            else np.full(len(cfg.flows), float(w)))


def _printed_steps(cfg: Config) -> tuple[float, int, int]:
    """The printed reading's step (s), number of steps and steps per sample."""
    h = cfg.step_s
    return h, int(round(cfg.duration_s / h)), max(1, int(round(cfg.sample_s / h)))


def samples(cfg: Config) -> int:
    """How many samples :func:`run` returns for ``cfg`` (each kernel's own count)."""
    if cfg.reading == "published":
        a = published_arguments(cfg)
        return (a["n_steps"] - 1) // a["every"] + 1
    _, n_steps, every = _printed_steps(cfg)
    return n_steps // every


def first_part(tr: Trace, cfg: Config) -> Trace:
    """The trace :func:`run` gives for ``cfg``, read from the start of ``tr``: the trace of
    a run of the same configuration that lasts at least as long. Both kernels are causal and
    deterministic, and no step depends on the run's length, so a short run's samples are
    the first samples of a longer one, bit for bit; a page that averages one setting over
    several windows runs it once."""
    if (cfg.duration_s > tr.config.duration_s
            or dataclasses.replace(tr.config, duration_s=cfg.duration_s) != cfg):
        raise invalid("cfg", f"{cfg.duration_s:g} s of another setting",
                      f"the configuration of the trace with a duration of at most "
                      f"{tr.config.duration_s:g} s")
    n = samples(cfg)
    return dataclasses.replace(tr, config=cfg, t=tr.t[:n],
                               **{k: getattr(tr, k)[:n] for k in Trace.OUTPUTS},
                               bbr={k: v[:n] for k, v in tr.bbr.items()})


def config_from_repr(text: str) -> Config:
    """The :class:`Config` whose ``repr`` is ``text``: how a stored run's configuration is
    read back to compute the run again (:mod:`.store`). Only ``Config(...)``, ``Flow(...)``,
    NumPy scalar constructors and literals are accepted, nothing is executed, and the result
    must print as ``text`` again (floats print exactly), so it is the same configuration."""
    import ast

    calls = {"Config": Config, "Flow": Flow}
    scalars = {"np.float64": np.float64, "np.int64": np.int64, "np.bool_": np.bool_}

    def value(node: ast.AST):
        if isinstance(node, ast.Call) and not node.args:
            name = ast.unparse(node.func)
            if name in calls:
                return calls[name](**{k.arg: value(k.value) for k in node.keywords})
        if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
            name = ast.unparse(node.func)
            if name in scalars:
                return scalars[name](value(node.args[0]))
        if isinstance(node, ast.Tuple):
            return tuple(value(v) for v in node.elts)
        if isinstance(node, ast.List):
            return [value(v) for v in node.elts]
        if isinstance(node, ast.Dict) and all(k is not None for k in node.keys):
            return {value(k): value(v) for k, v in zip(node.keys, node.values, strict=True)}
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -value(node.operand)
        if isinstance(node, ast.Constant):
            return node.value
        raise ValueError(f"not part of a configuration: {ast.unparse(node)[:60]}")

    try:
        cfg = value(ast.parse(text, mode="eval").body)
    except (SyntaxError, ValueError, TypeError) as exc:
        raise ParameterError(f"not a fluid-model configuration ({exc}): {text[:80]}") from None
    if not isinstance(cfg, Config) or repr(cfg) != text:
        raise ParameterError(f"not a fluid-model configuration that reads back exactly: "
                             f"{text[:80]}")
    return cfg


def run(cfg: Config) -> Trace:
    """Integrate ``cfg`` and return the sampled trace."""
    cfg.check()
    if cfg.reading == "published":
        return simulate_published(cfg)[0]
    h, n_steps, every = _printed_steps(cfg)
    df = np.array([int(round(f.d_f / h)) for f in cfg.flows], dtype=np.int64)
    db = np.array([int(round(f.d_b / h)) for f in cfg.flows], dtype=np.int64)
    out, link = printed.integrate(
        np.array([CCAS[f.cca] for f in cfg.flows], dtype=np.int64), df, db,
        np.array([f.d_p for f in cfg.flows]), float(cfg.capacity_pps), float(cfg.buffer_pkts),
        AQMS[cfg.aqm], float(cfg.k_sigmoid), float(cfg.l_droptail), h, n_steps, every,
        initial_windows(cfg), cubic.C_CUBIC, cubic.BETA_CUBIC,
        float(cfg.inflight_hi_factor), float(cfg.k_window), bool(cfg.rtprop_expiry),
        bool(cfg.cubic_recovery))
    t = np.arange(link.shape[1]) * every * h
    bbr = {name: out[3 + j] for j, name in enumerate(BBR_FIELDS)}
    return Trace(cfg, t, out[0], out[1], out[2], link[0], link[1], link[2], bbr)


def published_arguments(cfg: Config, warmup_s: float = 0.0) -> dict:
    """The arguments of :func:`.published.integrate` for ``cfg`` (published reading), in ms
    and packets as the kernel takes them, by name."""
    cfg.check()
    h = round(cfg.step_s * 1e3, 12)  # ms
    n = len(cfg.flows)
    d0 = np.array([round(f.d_f * 1e3, 9) for f in cfg.flows])
    dd = np.array([round(f.d_p * 1e3, 9) for f in cfg.flows])
    if not (d0 >= h).all():
        raise invalid("flows[].d_f", float(d0.min()) / 1e3,
                      f">= step_s ({cfg.step_s:g} s): the link reads each rate d_f back")
    cap = cfg.capacity_pps / 1e3
    n_steps = int(cfg.duration_s * 1000 / h)
    start = int(warmup_s * 1000 / h)
    if not 0 <= start < n_steps:
        raise invalid("warmup_s", warmup_s, f"0 <= warmup_s < duration_s = {cfg.duration_s:g}")
    every = max(1, int(round(cfg.sample_s * 1e3 / h)))
    w0 = (initial_windows(cfg) if cfg.initial_window is not None else dd * cap / n)
    cca = np.array([CCAS[f.cca] for f in cfg.flows], dtype=np.int64)  # RENO ... BBR2
    phase = np.broadcast_to(np.asarray(cfg.bbr2_phase, dtype=float), (n,))
    tstr0 = np.where((cca == published.BBR2).any(), -10.0 * dd - phase * 1000.0, 0.0)
    prt = np.broadcast_to(np.asarray(cfg.probe_rtt_interval_s, dtype=float) * 1000.0,
                          (n,)).copy()
    x0_est = w0 / dd[0]
    w_hi0 = cfg.inflight_hi_factor * w0
    twins = published.copies(cca, d0, dd, w0, x0_est, w_hi0, tstr0, prt)
    return {"cca": cca, "d0": d0, "dd": dd, "capacity": cap, "buffer": float(cfg.buffer_pkts),
            "red": cfg.aqm == "red", "h": h, "n_steps": n_steps, "start": start,
            "every": every, "w0": w0, "x0_est": x0_est, "w_hi0": w_hi0, "tstr0": tstr0,
            "prt": prt, "copy_of": twins,
            "expiry": cfg.rtprop_expiry, "recovery": cfg.cubic_recovery}


def simulate_published(cfg: Config, warmup_s: float = 0.0) -> tuple[Trace, dict]:
    """Integrate ``cfg`` (a :class:`Config` with ``reading="published"``) with the kernel of
    :mod:`.published` (:func:`.published.integrate`).

    Returns the sampled :class:`.solve.Trace` and the authors' metrics over
    ``t >= warmup_s``, computed on every step as their ``analyze_trace`` does: mean queue
    (packets), Jain index of the flows' mean rates, loss (dropped over sent volume, from the
    continuous loss signal), utilisation, jitter (mean change of flow 0's RTT per ms, ms) and
    each flow's mean rate (packets/s).
    """
    a = published_arguments(cfg, warmup_s)
    h, n_steps, start, every = a["h"], a["n_steps"], a["start"], a["every"]
    out, link, m, rate_sum = published.integrate(**a)
    counted = n_steps - start
    jitter_n = len(range(start + int(1 / h), n_steps, int(1 / h)))
    rates = rate_sum / counted
    summary = {"avg_queue_pkts": m[0] / counted, "loss": m[1] / m[2] if m[2] > 0 else 0.0,
               "utilization": m[3] / counted,
               "jain": jain(rates),
               "jitter_ms": m[4] / jitter_n if jitter_n else float("nan"),
               "rates_pps": rates * 1e3}
    t = np.arange(link.shape[1]) * every * h / 1e3
    scale = (1e3, 1.0, 1e-3, 1e3, 1e3, 1e-3, 1.0, 1.0, 1e3, 1.0, 1.0, 1.0)
    for j, factor in enumerate(scale):  # in place: the traces are most of a run's memory
        if factor != 1.0:
            out[j] *= factor
    bbr = {name: out[3 + j] for j, name in enumerate(BBR_FIELDS)}
    trace = Trace(cfg, t, out[0], out[1], out[2], link[0], link[1], link[2] * 1e3, bbr)
    return trace, summary
