"""The fluid model as published: Scherrer et al.'s equations as the authors' code integrates
them (the code that produced the paper's figures), compiled with Numba.

Where the printed equations and the authors' code differ, this module follows the code; the
book's page "Reading the equations" lists every such point with the printed form beside it,
and :mod:`.solve` keeps the literal printed reading (``Config(reading="printed")``). The
code's conventions, all kept here:

- **Units.** Time in milliseconds, rates in packets per millisecond, windows in packets
  (packets of 1514 B in the paper's configurations). The constants of the paper then read
  per millisecond: eq. (18)'s max filter relaxes at 5/ms, eq. (9)'s min filter at 1/ms, and
  the smooth step σ has sharpness 500 per unit of its argument (ms or packets/ms), the
  pulses of eq. (21) sharpness 5.
- **Integration.** Explicit Euler on a fixed step (10 us in the paper), each variable kept
  as a history and read back at whole steps: a delay of d ms reads the value ``int(d/h)``
  steps back (truncated, as the code does), the link sees a flow's rate its source latency
  ``d0`` back (rounded), and nothing is read before the start (index 0). BBRv2's look back
  to the previous period counts from int(t/h), one step short where k h / h rounds below
  k, as in the code.
- **Network (eqs. 1-6).** q' = (1 - p) y - C held in [0, B]. Drop-tail (eq. 4) has two
  loss signals: ``p`` = 1 - C/y while the queue is full and y > C (Reno's and CUBIC's
  feedback), and the continuous ``pc`` = (1 - C/y)(q/B)^100 (BBRv2's loss signal and the
  loss metric). RED (eq. 6): p = pc = q/B.
- **Feedback lookbacks.** An ACK arriving now reports the rate sent one RTT ago, the RTT
  being the one measured one propagation delay ago (τ(t - D)), so the lookback includes
  queueing delay; its loss is the link's loss τ(t - D) - d0 ago.
- **Reno (eq. 39)** as printed, with the discrete drop signal.
- **CUBIC (eqs. 40-41).** While the drop signal exceeds 1e-6 at the flow's lookback,
  ``s`` (ms) relaxes to 0 at 1/ms and ``w_max`` towards the window two RTTs back at 1/ms;
  otherwise s grows by 1 per ms. w = 0.4 (s/1000 + 2 - cbrt(0.7 w_max/0.4))^3 + w_max:
  K with the printed b = 0.7 and a 2-s offset, at least one packet. Start: s = 0 and
  w_max = 1.1 w0.
- **BBR (eqs. 9-23).** Delivery rate x(t - τ) C / y(t - τ + d0) when the link was
  saturated or queued; ProbeRTT mode and timer relax towards their targets at 1/ms once the
  timer (10 s, 200 ms in ProbeRTT) has run out, and mode is the rounded relaxed value;
  cwnd 2 ceil(x_btl RTprop) (ProbeRTT: 4 packets); max filter with a 10-ms reset at the
  period start; x_btl moves to x_max at the period's end (sharp σ, 1/ms) for BBRv1; pulses
  of 1/4 at phase ``i mod 6`` with σ of sharpness 5; a period lasts 8 RTprop.
- **BBRv2 (eqs. 24-32), as the code's §3.1 reading.** Period min(2 + i/N s, 63 RTprop);
  inflight_hi grows while it binds as 2^(t/RTprop) and falls by 0.3/RTT per ms while the
  loss signal is at least 2 %, never below 1.15 estimated BDPs; inflight_lo equals
  inflight_hi outside cruise and falls by -ln(0.9)/RTT per ms in cruise under that loss;
  the window is min(2 ceil(BDP), inflight_lo, 0.85 inflight_hi in cruise); down mode starts
  after one RTprop when inflight exceeds 499/400 BDP or loss reaches 2 %, and ends when
  inflight falls to min(BDP, 0.85 inflight_hi) or after 10 RTprop; x_btl takes the larger
  of the current and previous period's maxima while down; ProbeRTT window BDP/2. Start: in
  cruise, the period begun 10 D_i + U s earlier (U uniform in [0, 1), seeded), inflight_hi
  (1 + max(b - 4, 0)/2) 5/4 w0 with b the buffer in units of the paper's link BDP.
- **Two Linux mechanisms, off by default** (as in :mod:`.solve`): ``rtprop_expiry``, BBR's
  min-RTT filter expiring at each ProbeRTT entry, where RTprop takes the RTT sample of that
  moment, even a larger one (eq. 9 then only lowers it again); ``cubic_recovery``, CUBIC
  reacting to a loss episode once, as Linux's fast recovery does: at the first loss it
  sees it sets w_max to its window and s to 0, and it ignores losses for the RTT it sees
  then, instead of relaxing s and w_max for as long as losses arrive.
- **ProbeRTT interval, an option** (not in the paper): each BBR flow's interval (``prt``,
  the timer's reset and the window over which RTprop must have fallen, both 10 s as
  published) may differ, to de-synchronise the flows' ProbeRTT; 10 s for every flow is
  the published model, bit for bit.
- **Start.** Every flow's window is its fair share of its own BDP, w0 = D_i C / N; BBR's
  bandwidth estimates start at w0 / D_0 (flow 0's RTT, as in the code); BBRv1's window at
  that estimate times its RTT.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from . import bbr, bbr1, bbr2, numba_cache
from .smooth import idc as _idc

numba_cache.forget_stale_kernels()  # before the kernels' cache is read

RENO, CUBIC, BBR1, BBR2 = 0, 1, 2, 3
MSS_BYTES = 1514  # the paper's packet size (Ethernet frame of a 1460-B segment + headers)
LOSS_ABRUPTNESS = 100.0  # drop-tail's continuous loss exponent
N_METRICS = 5  # queue sum, lost volume, sent volume, utilisation sum, jitter sum


#: Rump's 2^52 + 1, which finds the leading power of two of a double
_PHI = 2.0 ** 52 + 1.0


@intrinsic
def _fma(typingctx, a, b, c):
    """a b + c rounded once (LLVM's fma: the processor's instruction, or the C library's
    exact software fma where there is none)."""
    sig = types.float64(types.float64, types.float64, types.float64)

    def codegen(context, builder, signature, args):
        d = ir.DoubleType()
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(d, [d, d, d]),
                                            "llvm.fma.f64")
        return builder.call(fn, args)
    return sig, codegen


@njit(cache=True, inline="always")
def _cube_rounded(x):
    """x^3 formed in double-double (error below 2^-100 relative) and rounded once, the
    correctly rounded cube; and whether the C library's pow must return the same double.
    Its pow is within 0.54 units in the last place (glibc's bound), so it must where the
    exact cube lies more than 0.04 of a unit from a rounding midpoint; not so nearer a
    midpoint (about 8 % of arguments), at a power of two, or near under- or overflow."""
    p = x * x
    e = _fma(x, x, -p)  # x^2 = p + e exactly
    hi = p * x
    e2 = _fma(p, x, -hi)  # p x = hi + e2 exactly
    lo = e2 + e * x
    r = hi + lo
    lo = lo - (r - hi)  # what r leaves of the cube
    q = _PHI * r
    ufp = abs(q - (1.0 - 2.0 ** -53) * q)  # r's leading power of two (Rump)
    certain = 1e-290 < abs(r) < 1e290 and abs(r) != ufp and abs(lo) <= 0.46 * 2.0 ** -52 * ufp
    return r, certain


@njit(cache=True, inline="always")
def _cube(x):
    """``x ** 3.0`` with the C library's bits at about half its cost (CUBIC's eq. 40 takes
    one cube per flow and step, and the library's pow was half a CUBIC step's time): the
    exact cube where pow must return it (:func:`_cube_rounded`), pow itself elsewhere."""
    r, certain = _cube_rounded(x)
    return r if certain else x ** 3.0


@njit(cache=True, inline="always")
def _at(slot, k, d, r):
    """The ring slot of step max(k - d, 0), given ``slot`` = k mod r (and d < r)."""
    if d >= k:
        return 0
    s = slot - d
    return s + r if s < 0 else s


def copies(cca, d0, dd, w0, x0_est, w_hi0, tstr0, prt) -> np.ndarray:
    """Each flow's twin for :func:`integrate`: the first earlier flow it repeats bit for
    bit, or itself.

    The model is deterministic and a flow's equations read only its own state, its own
    inputs and the shared link, so two flows with the same inputs and the same start take
    the same values at every step. What a flow's equations read besides: Reno and CUBIC
    (eqs. 39-41) nothing of their index, so flows of one of them with the same source
    latency, RTT and initial window are twins; BBRv1 its pulse phase ``i mod 6`` (eq. 21),
    so BBRv1 flows six apart with the same inputs (initial estimates, period start, ProbeRTT
    interval too) are; BBRv2 its period length ``2 + i/N`` s (eq. 28), so it has none. Sums
    over flows keep their order, so the results carry the same bits either way.
    """
    n = len(cca)
    twin = np.arange(n, dtype=np.int64)
    for i in range(n):
        for j in range(i):
            if twin[j] != j or cca[i] != cca[j]:
                continue
            same = d0[i] == d0[j] and dd[i] == dd[j] and w0[i] == w0[j]
            if cca[i] == BBR1:
                same = (same and i % 6 == j % 6 and x0_est[i] == x0_est[j]
                        and w_hi0[i] == w_hi0[j] and tstr0[i] == tstr0[j]
                        and prt[i] == prt[j])
            elif cca[i] == BBR2:
                same = False
            if same:
                twin[i] = j
                break
    return twin


@njit(cache=True, nogil=True)
def integrate(cca, d0, dd, capacity, buffer, red, h, n_steps, start, every, w0, x0_est,
              w_hi0, tstr0, prt, copy_of, expiry=False, recovery=False):
    """Integrate ``n_steps`` steps of ``h`` ms; return sampled traces and the metrics.

    ``cca`` per flow (RENO, CUBIC, BBR1, BBR2); ``d0`` source latency and ``dd`` RTT (ms);
    ``capacity`` packets/ms; ``buffer`` packets; ``red`` RED instead of drop-tail; ``start``
    the first step counted in the metrics; ``every`` the sampling stride; ``w0`` initial
    windows; ``x0_est`` BBR's initial bandwidth estimate; ``w_hi0`` BBRv2's initial
    inflight_hi; ``tstr0`` the initial period start (ms); ``prt`` each flow's ProbeRTT
    interval (ms; the published model's 10 s for every flow, eqs. 11-12: the timer's reset
    and the window over which RTprop must have fallen). ``copy_of[i]`` is ``i`` for a flow
    computed here, or an earlier flow whose every value flow ``i`` repeats bit for bit
    (:func:`copies`): such a flow is not computed again, and the link, the traces and
    the metrics read its twin. ``expiry`` and ``recovery`` are
    the two Linux mechanisms of :func:`.solve.simulate_published` (off: the code as
    published).
    """
    n = cca.shape[0]
    d_max = dd.max()
    # ring lengths: the feedback lookbacks (at most 2 RTTs plus a full queue), BBRv2's
    # period (eq. 28's maximum of the previous period), and eq. 11's 10-s RTprop window
    r_s = min(int((2.0 * d_max + buffer / capacity + 20.0) / h) + 3, n_steps + 1)
    r_t = min(int(3100.0 / h) + 3, n_steps + 1)
    r_10 = min(int(prt.max() / h) + 3, n_steps + 1)
    any_bbr = False
    for i in range(n):
        if cca[i] >= BBR1:
            any_bbr = True
    if not any_bbr:
        r_t = 1
        r_10 = 1
    xs = np.zeros((r_s, n))
    ws = np.zeros((r_s, n))
    taus = np.zeros((r_s, n))
    mprts = np.zeros((r_s, n))
    tprts = np.zeros((r_s, n))
    xmaxs = np.zeros((r_t, n))
    tmins = np.zeros((r_10, n))
    qs = np.zeros(r_s)
    ys = np.zeros(r_s)
    ps = np.zeros(r_s)
    pcs = np.zeros(r_s)
    # current values (index k - 1 while step k is computed)
    w = w0.copy()
    x = w0 / dd
    tau = dd.copy()
    wmax = 1.1 * w0
    s = np.zeros(n)
    k_cubic = np.zeros(n)  # eq. (41)'s K, and the w_max it was computed for
    k_at = np.full(n, -1.0)
    rec_left = np.zeros(n)  # recovery option: ms left of the current loss episode
    m_last = np.zeros(n)  # expiry option: the ProbeRTT mode of the previous step
    xbtl = x0_est.copy()
    xmax = x0_est.copy()
    xdel = x0_est.copy()
    xpcg = x0_est.copy()
    tmin = dd.copy()
    tprt = prt.copy()
    mprt = np.zeros(n)
    mcrs = np.full(n, -1.0)
    mdwn = np.zeros(n)
    whi = w_hi0.copy()
    wlo = w0.copy()
    tstr = tstr0.copy()
    for i in range(n):
        if cca[i] == BBR1:
            w[i] = xbtl[i] * tmin[i]
            x[i] = w[i] / dd[i]
        elif cca[i] == BBR2:
            tprt[i] = 5000.0
    has_bbr2 = False
    for i in range(n):
        if cca[i] == BBR2:
            has_bbr2 = True
    if has_bbr2:
        for i in range(n):
            mcrs[i] = 1.0
    v = w.copy()
    q = 0.0
    y = 0.0
    for i in range(n):
        y += w[i] / dd[i]
        xs[0, i] = x[i]
        ws[0, i] = w[i]
        taus[0, i] = tau[i]
        tprts[0, i] = tprt[i]
        xmaxs[0, i] = xmax[i]
        tmins[0, i] = tmin[i]
    ys[0] = y
    n_out = (n_steps - 1) // every + 1
    out = np.zeros((12, n_out, n))
    out_link = np.zeros((3, n_out))
    metrics = np.zeros(N_METRICS)
    rate_sum = np.zeros(n)
    d0_steps = np.empty(n, np.int64)
    tau_steps = np.empty(n, np.int64)
    tau2_steps = np.empty(n, np.int64)
    tauq_steps = np.empty(n, np.int64)
    for i in range(n):
        d0_steps[i] = int(round(d0[i] / h))
        tau_steps[i] = int(dd[i] / h)
        tau2_steps[i] = int(2 * dd[i] / h)
        tauq_steps[i] = int((dd[i] - d0[i]) / h)
    s_prt = np.zeros(n, dtype=np.int64)  # eq. (11)'s window, steps
    for i in range(n):
        s_prt[i] = int(prt[i] / h)
    s16 = int(16.0 / h)
    s1ms = int(1.0 / h)
    for k in range(n_steps):
        ks = k % r_s
        kt = k % r_t
        k10 = k % r_10
        if k > 0:
            # eq. (1)-(2): arrivals at the link, queue
            y = 0.0
            for i in range(n):  # a copy's rate is its twin's, in the same order of sums
                y += xs[_at(ks, k, d0_steps[i], r_s), copy_of[i]]
            q = min(max(0.0, q + ((1.0 - ps[_at(ks, k, 1, r_s)]) * y - capacity) * h), buffer)
            ys[ks] = y
            qs[ks] = q
            t = k * h
            q_delay = q / capacity
            for i in range(n):
                if copy_of[i] != i:  # a copy of an earlier flow: its twin is computed
                    continue
                tau[i] = dd[i] + q_delay  # eq. (3)
                lb_tau = _at(ks, k, tau_steps[i], r_s)
                tau_lb = taus[lb_tau, i]
                c = cca[i]
                # the rate one RTT back (CUBIC does not read it)
                lb_x = _at(ks, k, int(tau_lb / h), r_s) if c != CUBIC else 0
                lb_p = _at(ks, k, int((tau_lb - d0[i]) / h), r_s)
                if c == RENO:  # eq. (39)
                    xa = xs[lb_x, i]
                    pa = ps[lb_p]
                    w[i] = max(1.0, w[i] + h * (xa * (1.0 - pa) / w[i] - xa * pa * w[i] / 2.0))
                    x[i] = w[i] / tau[i]
                elif c == CUBIC:  # eqs. (40)-(41)
                    lost = _idc(ps[lb_p] - 1e-6)
                    if recovery:  # one cut per loss episode, none for a round trip after
                        if rec_left[i] > 0.0:
                            rec_left[i] -= h
                        elif lost > 0.0:
                            wmax[i] = w[i]
                            s[i] = 0.0
                            rec_left[i] = tau[i]
                        s[i] = s[i] + h
                    else:
                        w_2tau = ws[_at(ks, k, tau2_steps[i], r_s), i]
                        wmax[i] = wmax[i] + h * lost * (w_2tau - wmax[i])
                        s[i] = s[i] + h * (1.0 - lost * s[i])
                    if wmax[i] != k_at[i]:  # K changes only with w_max (same bits)
                        k_cubic[i] = (wmax[i] * 0.7 / 0.4) ** (1.0 / 3.0)
                        k_at[i] = wmax[i]
                    f = s[i] / 1000.0 + 2.0 - k_cubic[i]
                    w[i] = max(1.0, 0.4 * _cube(f) + wmax[i])
                    x[i] = w[i] / tau[i]
                else:
                    t_net = t - tstr[i]
                    rtprop = tmins[_at(k10, k, tau_steps[i], r_10), i]
                    if c == BBR1:  # eq. (20) / (24): the period
                        t_pbw = bbr1.period_ms(rtprop)
                    else:
                        t_pbw = bbr2.period_ms(rtprop, i, n)
                    # eq. (17): delivery rate
                    xdel_new = bbr.delivery_rate_published(
                        xs[lb_x, i], ys[lb_p], qs[_at(ks, k, tauq_steps[i], r_s)], capacity)
                    xdel[i] = xdel_new
                    # eqs. (11)-(13): ProbeRTT mode and timer
                    expired = bbr.probe_rtt_expired(tprts[lb_tau, i])
                    stale = bbr.rtprop_stale(tmin[i], tmins[_at(k10, k, s_prt[i], r_10), i])
                    m_tau = mprts[lb_tau, i]
                    mprt[i] = bbr.probe_rtt_mode_step(mprt[i], m_tau, expired, stale, h)
                    tprt[i] = bbr.probe_rtt_timer_step(tprt[i], m_tau, expired, stale, prt[i], h)
                    m_val = bbr.mode(mprt[i])
                    if expiry and m_val > m_last[i]:  # Linux: the expired filter takes
                        tmin[i] = tau_lb  # the next sample, even a larger one
                    m_last[i] = m_val
                    crs = max(mcrs[i], 0.0)
                    # eq. (23) / (31): window
                    bdp = xbtl[i] * rtprop
                    if c == BBR1:
                        w_prt = bbr1.PROBE_RTT_WINDOW
                        w_pbw = bbr1.probe_bw_window_published(bdp)
                    else:
                        w_prt = bbr2.probe_rtt_window_published(bdp)
                        w_pbw = bbr2.probe_bw_window_published(bdp, wlo[i], whi[i], crs)
                    w[i] = bbr.window_published(m_val, w_pbw, w_prt)
                    # eq. (18): max filter, reset at the period start
                    xmax[i] = bbr.max_filter_step(xmax[i], xdel_new, t_net, m_val, h)
                    # eq. (20) / (28): bottleneck estimate
                    if c == BBR1:
                        xbtl[i] = bbr1.bottleneck_step(xbtl[i], xmax[i], t_net, t_pbw, m_val, h)
                    else:
                        # the code counts this lookback from int(t/h), which is k - 1
                        # where k h / h rounds below k
                        back = int(t_pbw / h) + (k - int(t / h))
                        xbtl[i] = bbr2.bottleneck_step(xbtl[i], xmaxs[_at(kt, k, back, r_t), i],
                                                       xmax[i], mdwn[i], m_val)
                    # eq. (19): inflight
                    dv_pbw = x[i] - xdel_new
                    drain = 0.0  # BBRv2's drain target, read by eq. (19) and eq. (27)
                    if c == BBR2:
                        drain = bbr2.drain_target(bdp, whi[i])
                        dv_pbw = bbr2.inflight_cruise_derivative(dv_pbw, crs, drain, v[i])
                    v[i] = bbr.inflight_step(v[i], dv_pbw, w[i], m_val, h)
                    # eqs. (21)-(22) / (25)-(26): pacing
                    dmdwn = 0.0
                    if c == BBR1:
                        ph0, ph1 = bbr1.pulses_published(t_net, rtprop, i % 6)
                    else:
                        dmdwn = bbr2.down_mode_change(mdwn[i], crs, t_net, rtprop, v[i], bdp,
                                                      pcs[lb_p], drain)
                        mdwn[i] = mdwn[i] + dmdwn
                        ph0, ph1 = bbr2.pulses_published(crs, t_net, rtprop, mdwn[i])
                    xpcg[i] = bbr.pacing_rate(xbtl[i], ph0, ph1)
                    x[i] = bbr.rate_published(m_val, w[i], tau_lb, xpcg[i], v[i], tau[i])
                    if c == BBR2:  # eqs. (29)-(30), as the code's §3.1 reading
                        bdp = xbtl[i] * rtprop
                        pc_lb = pcs[lb_p]
                        whi_new = bbr2.inflight_hi_step(whi[i], crs, t_net, rtprop, v[i], pc_lb,
                                                        dd[i], bdp, h)
                        wlo[i] = bbr2.inflight_lo_step(wlo[i], whi_new, mcrs[i], crs, pc_lb,
                                                       dd[i], h)
                        whi[i] = whi_new
                        mcrs[i] = bbr2.cruise_step(mcrs[i], crs, dmdwn, t_net, t_pbw, h)
                    tmin[i] = bbr.rtprop_step(tmin[i], tau_lb, h)  # eq. (9): RTprop
                    tstr[i] = bbr.period_start_step(tstr[i], t, t_pbw)  # eq. (16): period start
                    mprts[ks, i] = mprt[i]
                    tprts[ks, i] = tprt[i]
                    xmaxs[kt, i] = xmax[i]
                    tmins[k10, i] = tmin[i]
                xs[ks, i] = x[i]
                ws[ks, i] = w[i]
                taus[ks, i] = tau[i]
            # eqs. (4)/(6): loss
            if red:
                ql = q if n > 1 else qs[_at(ks, k, s16, r_s)]
                p = min(max(ql / buffer, 0.0), 1.0)
                pc = p
            else:
                p = (1.0 - capacity / y) if (q == buffer and y > capacity) else 0.0
                p = max(0.0, min(p, 1.0))
                pc = (1.0 - capacity / y) * (q / buffer) ** LOSS_ABRUPTNESS if y > capacity else 0.0
                pc = max(0.0, min(pc, 1.0))
            ps[ks] = p
            pcs[ks] = pc
        else:
            p = 0.0
            pc = 0.0
        if k >= start:  # the authors' metrics (process_trace.analyze_trace)
            metrics[0] += q
            metrics[1] += pc * y
            metrics[2] += y
            metrics[3] += (min(y / capacity, 1.0) if q <= 0.0 else 1.0)
            for i in range(n):
                rate_sum[i] += x[copy_of[i]]
            if k >= start + s1ms and (k - start) % s1ms == 0:
                metrics[4] += abs(taus[ks, 0] - taus[_at(ks, k, s1ms, r_s), 0])
        if k % every == 0:
            o = k // every
            out_link[0, o] = q
            out_link[1, o] = pc
            out_link[2, o] = y
            per_flow = (x, w, tau, xbtl, xmax, tmin, mprt, v, xpcg, mdwn, mcrs, whi)
            for j in range(12):
                for i in range(n):
                    out[j, o, i] = per_flow[j][copy_of[i]]
    return out, out_link, metrics, rate_sum
