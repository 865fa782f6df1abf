/* The page's fluid-model kernel: coexist.fluid.model.published.integrate (the published
 * reading) written out in C, operation for operation, for WebAssembly.
 *
 * It is the loop of benchmarks/fluid_kernel_limit.c with what a page needs besides the
 * metrics: each flow's ProbeRTT interval, twin flows computed once (copy_of, as the
 * kernel's), and the sampled traces (every `every` steps: the selected per-flow variables
 * and the link's queue, loss signal and arrival rate). Sampling only copies values, so a
 * run's arithmetic is the same with or without traces. Compiled without -ffast-math and
 * with -ffp-contract=off, so every operation rounds as in the compiled Python kernel. Its
 * exp, pow and fma are fma_math.c's: exp and pow give glibc's bits (the native kernel's);
 * log (of the constant 0.9) and fmod are musl's, linked statically from wasi-libc, and exact
 * or correctly rounded. The module imports nothing: memory comes from an arena of its
 * own.
 *
 * Units as the kernel's: ms, packets, packets per ms.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#define EXPORT(name) __attribute__((export_name(name)))

enum { RENO, CUBIC, BBR1, BBR2 };
enum { N_FIELDS = 12 }; /* x, w, tau, xbtl, xmax, tmin, mprt, v, xpcg, mdwn, mcrs, whi */
#define SHARP 500.0
#define SMOOTH 5.0
#define LOSS_ABRUPTNESS 100.0

typedef int64_t i64;

double live_exp(double x);           /* fma_math.c */
double live_pow(double x, double y); /* fma_math.c */
double live_fma(double a, double b, double c); /* fma_math.c: fma, correctly rounded */

/* ---- memory: a bump arena above the static data, reset before each run ---- */
extern unsigned char __heap_base;
static uintptr_t arena_top;

/* `bytes` of zeroed memory, 16-byte aligned, growing the module's memory as needed; 0 when
   the memory cannot grow that far (the caller reports it) */
EXPORT("live_alloc") void *live_alloc(uint32_t bytes) {
    if (!arena_top) arena_top = (uintptr_t)&__heap_base;
    uint64_t size = ((uint64_t)bytes + 15u) & ~(uint64_t)15u;
    uint64_t p = ((uint64_t)arena_top + 15u) & ~(uint64_t)15u, end = p + size;
    uint64_t have = (uint64_t)__builtin_wasm_memory_size(0) * 65536u;
    if (end > 0xFFFFFFF0u) return 0;
    if (end > have) {
        uint64_t pages = (end - have + 65535u) / 65536u;
        if (__builtin_wasm_memory_grow(0, (size_t)pages) == (size_t)-1) return 0;
    }
    uint64_t *b = (uint64_t *)(uintptr_t)p;
    for (uint64_t j = 0; j < size / 8u; j++) b[j] = 0; /* a run reuses the memory */
    arena_top = (uintptr_t)end;
    return (void *)(uintptr_t)p;
}

/* forget every allocation (the memory stays with the module for the next run) */
EXPORT("live_reset") void live_reset(void) { arena_top = (uintptr_t)&__heap_base; }

/* ---- the kernel's smooth functions (coexist.fluid.model.smooth), same bits ---- */
static inline double sig(double x, double k) {
    if (k * x > 40.0) return 1.0;
    if (k * x < -40.0) return 0.0;
    if (x >= 0.0) return 1.0 / (1.0 + live_exp(-k * x));
    return 1.0 - 1.0 / (1.0 + live_exp(k * x));
}
/* sig(x) and sig(-x) from one exponential (smooth.sig_both) */
static inline void sig_both(double x, double k, double *pos, double *neg) {
    if (k * x > 40.0) { *pos = 1.0; *neg = 0.0; return; }
    if (k * x < -40.0) { *pos = 0.0; *neg = 1.0; return; }
    if (x >= 0.0) { double s = 1.0 / (1.0 + live_exp(-k * x)); *pos = s; *neg = 1.0 - s; return; }
    double s = 1.0 / (1.0 + live_exp(k * x));
    *pos = 1.0 - s;
    *neg = s;
}
/* x^3 with pow's bits: exact in double-double, pow near a rounding midpoint
   (published._cube) */
static inline double cube(double x) {
    double p = x * x, e = live_fma(x, x, -p), hi = p * x, e2 = live_fma(p, x, -hi);
    double lo = e2 + e * x, r = hi + lo;
    lo = lo - (r - hi);
    double q = (4503599627370496.0 + 1.0) * r;
    double ufp = fabs(q - (1.0 - 0x1p-53) * q);
    if (!(1e-290 < fabs(r) && fabs(r) < 1e290) || fabs(r) == ufp ||
        fabs(lo) > 0.46 * 0x1p-52 * ufp)
        return live_pow(x, 3.0);
    return r;
}
static inline double idc(double x) { return x >= 0.0 ? 1.0 : 0.0; }
static inline double gam(double x) { return x * sig(x, SHARP); }
/* Python's round(): halves to even */
static inline double pyround(double x) {
    double r = floor(x + 0.5);
    if (r - x == 0.5 && fmod(r, 2.0) != 0.0) r -= 1.0;
    return r;
}
/* the ring slot of step max(k - d, 0), given slot = k mod r (published._at) */
static inline i64 at(i64 slot, i64 k, i64 d, i64 r) {
    if (d >= k) return 0;
    i64 s = slot - d;
    return s < 0 ? s + r : s;
}
static inline double dmin(double a, double b) { return a < b ? a : b; }
static inline double dmax(double a, double b) { return a > b ? a : b; }
/* int() of a float as the native kernel computes it: truncation toward zero, and x86's
   0x8000000000000000 for NaN and beyond the range (the saturating conversion this is
   compiled to gives that only below it) */
static inline i64 trunc_l(double x) { return fabs(x) < 0x1p63 ? (i64)x : INT64_MIN; }
/* m zeroed doubles, or 0 beyond what 32-bit memory can hold */
static double *zeros(i64 m) {
    if (m < 0 || m > 0x1FFFFFFE) return 0;
    return live_alloc((uint32_t)(m * (i64)sizeof(double)));
}
static i64 imin(i64 a, i64 b) { return a < b ? a : b; }

/* Integrate n_steps steps of h ms (published.integrate's arguments; cca and copy_of as
   32-bit integers). Writes metrics[5], rate_sum[n], the selected per-flow fields (bit j of
   `fields` selects field j; each selected field a block of n_out x n values, in field
   order) into trace, and q, pc, y (three blocks of n_out values) into link, n_out being
   (n_steps - 1) / every + 1. Returns 0, or 1 when memory ran out. */
EXPORT("live_run")
int live_run(int32_t n, int32_t n_steps32, int32_t start32, int32_t every32, int32_t fields,
             double h, double capacity, double buffer, int32_t red, int32_t expiry,
             int32_t recovery, const int32_t *cca, const int32_t *copy_of, const double *d0,
             const double *dd, const double *w0, const double *x0_est, const double *whi0,
             const double *tstr0, const double *prt, double *metrics, double *rate_sum,
             double *trace, double *link) {
    i64 n_steps = n_steps32, start = start32, every = every32;
    double d_max = dd[0], prt_max = prt[0];
    for (i64 i = 0; i < n; i++) {
        d_max = dmax(d_max, dd[i]);
        prt_max = dmax(prt_max, prt[i]);
    }
    i64 r_s = imin(trunc_l((2.0 * d_max + buffer / capacity + 20.0) / h) + 3, n_steps + 1);
    i64 r_t = imin(trunc_l(3100.0 / h) + 3, n_steps + 1);
    i64 r_10 = imin(trunc_l(prt_max / h) + 3, n_steps + 1);
    int any_bbr = 0, has_bbr2 = 0;
    for (i64 i = 0; i < n; i++) {
        if (cca[i] >= BBR1) any_bbr = 1;
        if (cca[i] == BBR2) has_bbr2 = 1;
    }
    if (!any_bbr) r_t = r_10 = 1;
    double *xs = zeros(r_s * n), *ws = zeros(r_s * n), *taus = zeros(r_s * n),
           *mprts = zeros(r_s * n), *tprts = zeros(r_s * n), *xmaxs = zeros(r_t * n),
           *tmins = zeros(r_10 * n), *qs = zeros(r_s), *ys = zeros(r_s), *ps = zeros(r_s),
           *pcs = zeros(r_s);
    double *w = zeros(n), *x = zeros(n), *tau = zeros(n), *wmax = zeros(n), *s = zeros(n),
           *k_cubic = zeros(n), *k_at = zeros(n), *rec_left = zeros(n), *m_last = zeros(n),
           *xbtl = zeros(n), *xmax = zeros(n), *xdel = zeros(n), *xpcg = zeros(n),
           *tmin = zeros(n), *tprt = zeros(n), *mprt = zeros(n), *mcrs = zeros(n),
           *mdwn = zeros(n), *whi = zeros(n), *wlo = zeros(n), *v = zeros(n), *tstr = zeros(n);
    i64 *steps = (i64 *)zeros(5 * (i64)n);
    if (!xs || !ws || !taus || !mprts || !tprts || !xmaxs || !tmins || !qs || !ys || !ps ||
        !pcs || !tstr || !steps)
        return 1;
    i64 *d0_steps = steps, *tau_steps = steps + n, *tau2_steps = steps + 2 * n,
        *tauq_steps = steps + 3 * n, *s_prt = steps + 4 * n;
    double *per_flow[N_FIELDS] = {x, w, tau, xbtl, xmax, tmin, mprt, v, xpcg, mdwn, mcrs, whi};
    for (i64 i = 0; i < n; i++) {
        w[i] = w0[i];
        x[i] = w0[i] / dd[i];
        tau[i] = dd[i];
        wmax[i] = 1.1 * w0[i];
        k_at[i] = -1.0;
        xbtl[i] = xmax[i] = xdel[i] = xpcg[i] = x0_est[i];
        tmin[i] = dd[i];
        tprt[i] = prt[i];
        mcrs[i] = -1.0;
        whi[i] = whi0[i];
        wlo[i] = w0[i];
        tstr[i] = tstr0[i];
    }
    for (i64 i = 0; i < n; i++) {
        if (cca[i] == BBR1) {
            w[i] = xbtl[i] * tmin[i];
            x[i] = w[i] / dd[i];
        } else if (cca[i] == BBR2) {
            tprt[i] = 5000.0;
        }
    }
    if (has_bbr2)
        for (i64 i = 0; i < n; i++) mcrs[i] = 1.0;
    double q = 0.0, y = 0.0;
    for (i64 i = 0; i < n; i++) {
        v[i] = w[i];
        y += w[i] / dd[i];
        xs[i] = x[i];
        ws[i] = w[i];
        taus[i] = tau[i];
        tprts[i] = tprt[i];
        xmaxs[i] = xmax[i];
        tmins[i] = tmin[i];
    }
    ys[0] = y;
    i64 n_out = (n_steps - 1) / every + 1;
    for (int j = 0; j < 5; j++) metrics[j] = 0.0;
    for (i64 i = 0; i < n; i++) {
        rate_sum[i] = 0.0;
        d0_steps[i] = trunc_l(pyround(d0[i] / h));
        tau_steps[i] = trunc_l(dd[i] / h);
        tau2_steps[i] = trunc_l(2 * dd[i] / h);
        tauq_steps[i] = trunc_l((dd[i] - d0[i]) / h);
        s_prt[i] = trunc_l(prt[i] / h);
    }
    i64 s16 = trunc_l(16.0 / h), s1ms = trunc_l(1.0 / h);
    double p = 0.0, pc = 0.0;
    for (i64 k = 0; k < n_steps; k++) {
        i64 ks = k % r_s, kt = k % r_t, k10 = k % r_10;
        if (k > 0) {
            /* eqs. (1)-(2): arrivals at the link, queue (a copy's rate is its twin's) */
            y = 0.0;
            for (i64 i = 0; i < n; i++) y += xs[at(ks, k, d0_steps[i], r_s) * n + copy_of[i]];
            q = dmin(dmax(0.0, q + ((1.0 - ps[at(ks, k, 1, r_s)]) * y - capacity) * h), buffer);
            ys[ks] = y;
            qs[ks] = q;
            double t = k * h, q_delay = q / capacity;
            for (i64 i = 0; i < n; i++) {
                if (copy_of[i] != i) continue; /* its twin is computed */
                tau[i] = dd[i] + q_delay;      /* eq. (3) */
                i64 lb_tau = at(ks, k, tau_steps[i], r_s);
                double tau_lb = taus[lb_tau * n + i];
                int c = cca[i];
                i64 lb_x = c != CUBIC ? at(ks, k, trunc_l(tau_lb / h), r_s) : 0;
                i64 lb_p = at(ks, k, trunc_l((tau_lb - d0[i]) / h), r_s);
                if (c == RENO) { /* eq. (39) */
                    double xa = xs[lb_x * n + i], pa = ps[lb_p];
                    w[i] = dmax(1.0, w[i] + h * (xa * (1.0 - pa) / w[i] - xa * pa * w[i] / 2.0));
                    x[i] = w[i] / tau[i];
                } else if (c == CUBIC) { /* eqs. (40)-(41) */
                    double lost = idc(ps[lb_p] - 1e-6);
                    if (recovery) {
                        if (rec_left[i] > 0.0) {
                            rec_left[i] -= h;
                        } else if (lost > 0.0) {
                            wmax[i] = w[i];
                            s[i] = 0.0;
                            rec_left[i] = tau[i];
                        }
                        s[i] = s[i] + h;
                    } else {
                        double w_2tau = ws[at(ks, k, tau2_steps[i], r_s) * n + i];
                        wmax[i] = wmax[i] + h * lost * (w_2tau - wmax[i]);
                        s[i] = s[i] + h * (1.0 - lost * s[i]);
                    }
                    if (wmax[i] != k_at[i]) {
                        k_cubic[i] = live_pow(wmax[i] * 0.7 / 0.4, 1.0 / 3.0);
                        k_at[i] = wmax[i];
                    }
                    double f = s[i] / 1000.0 + 2.0 - k_cubic[i];
                    w[i] = dmax(1.0, 0.4 * cube(f) + wmax[i]);
                    x[i] = w[i] / tau[i];
                } else { /* BBRv1 (eqs. 9-23) and BBRv2 (eqs. 24-32) */
                    double t_net = t - tstr[i];
                    double rtprop = tmins[at(k10, k, tau_steps[i], r_10) * n + i];
                    double t_pbw = c == BBR1 ? 8.0 * rtprop
                                             : dmin(2000.0 + (double)i / n * 1000.0, 63.0 * rtprop);
                    double y_p = ys[lb_p], x_lb = xs[lb_x * n + i], xdel_new;
                    if (y_p >= capacity || qs[at(ks, k, tauq_steps[i], r_s)] > 0.0)
                        xdel_new = x_lb / y_p * capacity;
                    else
                        xdel_new = x_lb;
                    xdel[i] = xdel_new;
                    double expired = idc(-tprts[lb_tau * n + i]);
                    double stale = idc(tmin[i] - tmins[at(k10, k, s_prt[i], r_10) * n + i]);
                    double m_tau = mprts[lb_tau * n + i];
                    mprt[i] = mprt[i] + h * (expired * (stale * (1.0 - m_tau) - mprt[i]));
                    tprt[i] = tprt[i] + h * (expired * (prt[i] - (prt[i] - 200.0) * stale *
                                                        (1.0 - m_tau) - tprt[i]) - 1.0);
                    double m_val = pyround(mprt[i]);
                    if (expiry && m_val > m_last[i]) tmin[i] = tau_lb;
                    m_last[i] = m_val;
                    double crs = dmax(mcrs[i], 0.0);
                    double bdp = xbtl[i] * rtprop, w_prt, w_pbw;
                    if (c == BBR1) {
                        w_prt = 4.0;
                        w_pbw = 2.0 * ceil(bdp);
                    } else {
                        w_prt = bdp / 2.0;
                        w_pbw = dmin(2.0 * ceil(bdp), dmin(wlo[i], (1.0 - crs * 0.15) * whi[i]));
                    }
                    w[i] = (1.0 - m_val) * w_pbw + m_val * w_prt;
                    xmax[i] = xmax[i] + h * (1.0 - m_val) * (
                        5.0 * gam(xdel_new - xmax[i]) - sig(10.0 - t_net, SHARP) * xmax[i]);
                    if (c == BBR1) {
                        xbtl[i] = xbtl[i] + h * (1.0 - m_val) * (
                            sig(t_net - t_pbw + 10.0, SHARP) * (xmax[i] - xbtl[i]));
                    } else {
                        i64 back = trunc_l(t_pbw / h) + (k - trunc_l(t / h));
                        double xmax_t = xmaxs[at(kt, k, back, r_t) * n + i];
                        double sample = dmax(xmax_t, xmax[i]);
                        xbtl[i] = xbtl[i] + (1.0 - m_val) * idc(mdwn[i] - 0.1) * (sample - xbtl[i]);
                    }
                    double dv_pbw = x[i] - xdel_new;
                    if (c == BBR2) {
                        double drain = dmin(bdp, 0.85 * whi[i]);
                        dv_pbw = (1.0 - crs) * dv_pbw + crs * (drain - v[i]);
                    }
                    double dv = (1.0 - m_val) * dv_pbw + m_val * (w[i] - v[i]);
                    v[i] = dmax(v[i] + h * dv, 0.0);
                    double x_ifl = w[i] / tau_lb, dmdwn = 0.0, ph0, ph1;
                    if (c == BBR1) {
                        double phi = (double)(i % 6);
                        double s_end, s_next;
                        sig_both((phi + 1) * rtprop - t_net, SMOOTH, &s_end, &s_next);
                        ph0 = 0.25 * sig(t_net - phi * rtprop, SMOOTH) * s_end;
                        ph1 = s_next != 0.0 ?
                              0.25 * s_next * sig((phi + 2) * rtprop - t_net, SMOOTH) : 0.0;
                    } else {
                        double drain = dmin(bdp, 0.85 * whi[i]);
                        double pc_lb = pcs[lb_p];
                        dmdwn = ((1.0 - crs) * idc(t_net - rtprop) *
                                 dmin(idc(v[i] - 499.0 / 400.0 * bdp) + idc(pc_lb - 0.02), 1.0) *
                                 (1.0 - mdwn[i]) -
                                 mdwn[i] * dmin(idc(drain - v[i]) + idc(t_net - 10.0 * rtprop), 1.0));
                        mdwn[i] = mdwn[i] + dmdwn;
                        ph0 = (1.0 - crs) * sig(t_net - rtprop, SHARP) * (1.0 - mdwn[i]) * 0.25;
                        ph1 = mdwn[i] * 0.25;
                    }
                    xpcg[i] = xbtl[i] * (1.0 + ph0 - ph1);
                    double x_pbw = dmin(x_ifl, xpcg[i]);
                    x[i] = (1.0 - m_val) * x_pbw + m_val * (v[i] / tau[i]);
                    if (c == BBR2) { /* eqs. (29)-(30), (27) */
                        bdp = xbtl[i] * rtprop;
                        double pc_lb = pcs[lb_p];
                        double grow = (1.0 - crs) * idc(t_net - rtprop) * sig(v[i] - whi[i], SMOOTH);
                        if (grow != 0.0) grow = grow * live_pow(2.0, t_net / rtprop);
                        double dwhi = grow - (1.0 - crs) * idc(pc_lb - 0.02) * 0.3 / dd[i] * whi[i];
                        double whi_new = dmax(whi[i] + h * dwhi, 1.15 * bdp);
                        double dwlo = ((1.0 - mcrs[i]) * (whi_new - wlo[i]) / h -
                                       crs * idc(pc_lb - 0.02) * -log(0.9) / dd[i] * wlo[i]);
                        whi[i] = whi_new;
                        wlo[i] = wlo[i] + h * dwlo;
                        double dmcrs = (idc(-dmdwn - 0.1) * (1.0 - crs) - idc(t_net - t_pbw) * crs) / h;
                        mcrs[i] = mcrs[i] + h * dmcrs;
                    }
                    tmin[i] = tmin[i] + h * (-gam(tmin[i] - tau_lb));
                    tstr[i] = tstr[i] + idc(t - tstr[i] - t_pbw) * (t - tstr[i]);
                    mprts[ks * n + i] = mprt[i];
                    tprts[ks * n + i] = tprt[i];
                    xmaxs[kt * n + i] = xmax[i];
                    tmins[k10 * n + i] = tmin[i];
                }
                xs[ks * n + i] = x[i];
                ws[ks * n + i] = w[i];
                taus[ks * n + i] = tau[i];
            }
            if (red) { /* eq. (6) */
                double ql = n > 1 ? q : qs[at(ks, k, s16, r_s)];
                p = dmin(dmax(ql / buffer, 0.0), 1.0);
                pc = p;
            } else { /* eq. (4) */
                p = (q == buffer && y > capacity) ? (1.0 - capacity / y) : 0.0;
                p = dmax(0.0, dmin(p, 1.0));
                pc = y > capacity ? (1.0 - capacity / y) * live_pow(q / buffer, LOSS_ABRUPTNESS) : 0.0;
                pc = dmax(0.0, dmin(pc, 1.0));
            }
            ps[ks] = p;
            pcs[ks] = pc;
        } else {
            p = 0.0;
            pc = 0.0;
        }
        if (k >= start) { /* the authors' metrics */
            metrics[0] += q;
            metrics[1] += pc * y;
            metrics[2] += y;
            metrics[3] += q <= 0.0 ? dmin(y / capacity, 1.0) : 1.0;
            for (i64 i = 0; i < n; i++) rate_sum[i] += x[copy_of[i]];
            if (k >= start + s1ms && (k - start) % s1ms == 0)
                metrics[4] += fabs(taus[ks * n] - taus[at(ks, k, s1ms, r_s) * n]);
        }
        if (k % every == 0) { /* the sampled traces: copies only */
            i64 o = k / every;
            link[o] = q;
            link[n_out + o] = pc;
            link[2 * n_out + o] = y;
            double *dst = trace;
            for (int j = 0; j < N_FIELDS; j++) {
                if (!(fields >> j & 1)) continue;
                for (i64 i = 0; i < n; i++) dst[o * n + i] = per_flow[j][copy_of[i]];
                dst += n_out * n;
            }
        }
    }
    return 0;
}
