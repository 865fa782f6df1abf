"""Method-of-steps integration of the fluid model (Scherrer et al. §4.1.1: fixed step,
10 us by default), compiled with Numba.

Delayed values come from ring buffers one maximum delay long, so memory does not grow with
the simulated time. Integration is explicit Euler on the delay-differential equations; the
queue is kept in [0, B] as eq. (2) prescribes. The run is deterministic: the same
configuration gives byte-identical outputs.

Congestion controls implemented so far: Reno (eq. 39) and CUBIC (eqs. 40-41).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from numba import njit

from ..params import ParameterError
from . import cubic, network

CCAS = {"reno": 0, "cubic": 1}
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
    l_droptail: float = network.L_DEFAULT
    initial_window: float = 10.0
    extra: dict = field(default_factory=dict, compare=False)

    def check(self) -> Config:
        """Every value in its valid range, with an error naming the first that is not."""
        def bad(name, value, valid):
            return ParameterError(f"parameter {name!r} = {value!r} is invalid; valid: {valid}")

        if not self.capacity_pps > 0:
            raise bad("capacity_pps", self.capacity_pps, "> 0")
        if not self.buffer_pkts > 0:
            raise bad("buffer_pkts", self.buffer_pkts, "> 0")
        if not self.flows:
            raise bad("flows", self.flows, "at least one flow")
        for i, f in enumerate(self.flows):
            if f.cca not in CCAS:
                raise bad(f"flows[{i}].cca", f.cca, f"one of {', '.join(CCAS)}")
            if not (f.d_f >= 0 and f.d_b >= 0 and f.d_p > 0):
                raise bad(f"flows[{i}] delays", (f.d_f, f.d_b), "d_f, d_b >= 0, d_f + d_b > 0")
        if self.aqm not in AQMS:
            raise bad("aqm", self.aqm, f"one of {', '.join(AQMS)}")
        if not 1e-7 <= self.step_s <= 1e-3:
            raise bad("step_s", self.step_s, "1e-7 <= step_s <= 1e-3")
        if not self.step_s <= self.sample_s <= self.duration_s:
            raise bad("sample_s", self.sample_s, "step_s <= sample_s <= duration_s")
        if not 0 < self.duration_s <= 3600:
            raise bad("duration_s", self.duration_s, "0 < duration_s <= 3600")
        if not (self.k_sigmoid > 0 and self.l_droptail >= 1):
            raise bad("k_sigmoid/l_droptail", (self.k_sigmoid, self.l_droptail),
                      "k_sigmoid > 0, l_droptail >= 1")
        if not self.initial_window >= 1:
            raise bad("initial_window", self.initial_window, ">= 1 packet")
        return self


def dumbbell(ccas: list[str], *, capacity_bps: float, rtt_s: float | list[float],
             buffer_bdp: float, **kw) -> Config:
    """Convenience: N agents with base RTTs ``rtt_s`` (half before the queue, half after)."""
    c = capacity_bps / (8 * PACKET_BYTES)
    rtts = [rtt_s] * len(ccas) if np.isscalar(rtt_s) else list(rtt_s)
    if len(rtts) != len(ccas):
        raise ParameterError(f"parameter 'rtt_s' has {len(rtts)} values for {len(ccas)} flows")
    flows = tuple(Flow(cca, r / 2, r / 2) for cca, r in zip(ccas, rtts, strict=True))
    return Config(c, buffer_bdp * c * min(rtts), flows, **kw).check()


@njit(cache=True)
def _sigmoid(v, k):
    z = math.exp(-abs(k * v))
    return 1.0 / (1.0 + z) if v >= 0 else z / (1.0 + z)


@njit(cache=True)
def _integrate(cca, df_steps, db_steps, dp_s, capacity, buffer, aqm, k, l_exp, h, n_steps,
               every, w0, c_cubic, beta):
    n = cca.shape[0]
    ring = int(max(df_steps.max(), db_steps.max()) + df_steps.max() + db_steps.max()) + 2
    x_hist = np.zeros((ring, n))
    q_hist = np.zeros(ring)
    p_hist = np.zeros(ring)
    w = np.full(n, w0)
    s = np.zeros(n)
    w_max = np.full(n, w0)
    for i in range(n):
        if cca[i] == 1:  # start on the cubic curve at w0: s such that window(s) = w0
            kk = (w_max[i] * (1.0 - beta) / c_cubic) ** (1.0 / 3.0)
            s[i] = kk
    q = 0.0
    n_out = n_steps // every
    out_x = np.zeros((n_out, n))
    out_w = np.zeros((n_out, n))
    out_tau = np.zeros((n_out, n))
    out_q = np.zeros(n_out)
    out_p = np.zeros(n_out)
    out_y = np.zeros(n_out)
    x = np.zeros(n)
    tau = np.zeros(n)
    for step in range(n_steps):
        slot = step % ring
        # rates now (eq. 8), from the window and the latency of the ACK arriving now (eq. 3)
        for i in range(n):
            back = (step - db_steps[i]) % ring
            tau[i] = dp_s[i] + q_hist[back] / capacity
            if cca[i] == 1:
                kk = (w_max[i] * (1.0 - beta) / c_cubic) ** (1.0 / 3.0)
                w[i] = c_cubic * (s[i] - kk) ** 3 + w_max[i]  # eq. (41)
                if w[i] < 1.0:
                    w[i] = 1.0
            x[i] = w[i] / tau[i]
            x_hist[slot, i] = x[i]
        # arrival at the link (eq. 1), loss (eqs. 4-6), queue (eq. 2)
        y = 0.0
        for i in range(n):
            y += x_hist[(step - df_steps[i]) % ring, i]
        if aqm == 0:
            fill = q / buffer
            fill = 0.0 if fill < 0.0 else (1.0 if fill > 1.0 else fill)
            excess = 1.0 - capacity / y if y > capacity else 0.0
            p = _sigmoid(y - capacity, k) * excess * fill ** l_exp
        else:
            p = q / buffer
        dq = (1.0 - p) * y - capacity
        q_hist[slot] = q
        p_hist[slot] = p
        if step % every == 0 and step // every < n_out:
            o = step // every
            out_q[o] = q
            out_p[o] = p
            out_y[o] = y
            for i in range(n):
                out_x[o, i] = x[i]
                out_w[o, i] = w[i]
                out_tau[o, i] = tau[i]
        # window updates from ACKs of packets sent one propagation RTT ago (eqs. 39-40)
        for i in range(n):
            x_ack = x_hist[(step - df_steps[i] - db_steps[i]) % ring, i]
            p_ack = p_hist[(step - db_steps[i]) % ring]
            if cca[i] == 0:
                w[i] += h * (x_ack * (1.0 - p_ack) / w[i] - x_ack * p_ack * w[i] / 2.0)
                if w[i] < 1.0:
                    w[i] = 1.0
            else:
                ds = 1.0 - s[i] * x_ack * p_ack
                dwm = (w[i] - w_max[i]) * x_ack * p_ack
                s[i] += h * ds
                w_max[i] += h * dwm
                if s[i] < 0.0:
                    s[i] = 0.0
        q += h * dq
        if q < 0.0:
            q = 0.0
        elif q > buffer:
            q = buffer
    return out_x, out_w, out_tau, out_q, out_p, out_y


@dataclass
class Trace:
    """Sampled model output: per-flow rate, window and RTT; link queue, loss and arrivals."""

    config: Config
    t: np.ndarray
    rate_pps: np.ndarray     # (samples, flows)
    window_pkts: np.ndarray  # (samples, flows)
    rtt_s: np.ndarray        # (samples, flows)
    queue_pkts: np.ndarray
    loss: np.ndarray
    arrival_pps: np.ndarray

    def flows_table(self) -> pd.DataFrame:
        """Tidy per-flow time series (rate in bit/s)."""
        n = len(self.config.flows)
        return pd.DataFrame({
            "t_s": np.repeat(self.t, n),
            "flow": np.tile(np.arange(n), len(self.t)),
            "cca": np.tile([f.cca for f in self.config.flows], len(self.t)),
            "rate_bps": self.rate_pps.ravel() * 8 * PACKET_BYTES,
            "window_pkts": self.window_pkts.ravel(),
            "rtt_s": self.rtt_s.ravel(),
        })

    def link_table(self) -> pd.DataFrame:
        return pd.DataFrame({"t_s": self.t, "queue_pkts": self.queue_pkts, "loss": self.loss,
                             "arrival_bps": self.arrival_pps * 8 * PACKET_BYTES})


def run(cfg: Config) -> Trace:
    """Integrate ``cfg`` and return the sampled trace."""
    cfg.check()
    h = cfg.step_s
    to_steps = np.vectorize(lambda d: int(round(d / h)))
    df = to_steps([f.d_f for f in cfg.flows]).astype(np.int64)
    db = to_steps([f.d_b for f in cfg.flows]).astype(np.int64)
    n_steps = int(round(cfg.duration_s / h))
    every = max(1, int(round(cfg.sample_s / h)))
    x, w, tau, q, p, y = _integrate(
        np.array([CCAS[f.cca] for f in cfg.flows], dtype=np.int64), df, db,
        np.array([f.d_p for f in cfg.flows]), float(cfg.capacity_pps), float(cfg.buffer_pkts),
        AQMS[cfg.aqm], float(cfg.k_sigmoid), float(cfg.l_droptail), h, n_steps, every,
        float(cfg.initial_window), cubic.C_CUBIC, cubic.BETA_CUBIC)
    t = np.arange(len(q)) * every * h
    return Trace(cfg, t, x, w, tau, q, p, y)
