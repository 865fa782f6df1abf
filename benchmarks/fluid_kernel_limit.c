/* The published reading's kernel (coexist.fluid.published.integrate) as a plain C loop:
 * the same equations in the same order, without the sampled traces. It is the yardstick
 * of benchmarks/fluid_kernel_limit.py, which checks that both give the same metrics and
 * compares their speed. Compiled without -ffast-math, so every operation rounds as in
 * the compiled Python kernel.
 *
 * Input on stdin: n n_steps start h capacity buffer red expiry recovery, then per flow
 * cca d0 dd w0 x0_est w_hi0 tstr0. Output: the 5 metrics, the n rate sums, and the
 * seconds the loop took.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { RENO, CUBIC, BBR1, BBR2 };
#define SHARP 500.0
#define SMOOTH 5.0
#define LOSS_ABRUPTNESS 100.0

static inline double sig(double x, double k) {
    if (k * x > 40.0) return 1.0;
    if (k * x < -40.0) return 0.0;
    if (x >= 0.0) return 1.0 / (1.0 + exp(-k * x));
    return 1.0 - 1.0 / (1.0 + exp(k * x));
}
/* sig(x) and sig(-x) from one exponential, the bits of two sig calls (the kernel's
   _sig_both) */
static inline void sig_both(double x, double k, double *pos, double *neg) {
    if (k * x > 40.0) { *pos = 1.0; *neg = 0.0; return; }
    if (k * x < -40.0) { *pos = 0.0; *neg = 1.0; return; }
    if (x >= 0.0) { double s = 1.0 / (1.0 + exp(-k * x)); *pos = s; *neg = 1.0 - s; return; }
    double s = 1.0 / (1.0 + exp(k * x));
    *pos = 1.0 - s;
    *neg = s;
}
/* x^3 with pow's bits: exact in double-double, pow near a rounding midpoint (the
   kernel's _cube) */
static inline double cube(double x) {
    double p = x * x, e = fma(x, x, -p), hi = p * x, e2 = fma(p, x, -hi);
    double lo = e2 + e * x, r = hi + lo;
    lo = lo - (r - hi);
    double q = (4503599627370496.0 + 1.0) * r;
    double ufp = fabs(q - (1.0 - 0x1p-53) * q);
    if (!(1e-290 < fabs(r) && fabs(r) < 1e290) || fabs(r) == ufp || fabs(lo) > 0.46 * 0x1p-52 * ufp)
        return pow(x, 3.0);
    return r;
}
static inline double idc(double x) { return x >= 0.0 ? 1.0 : 0.0; }
static inline double gam(double x) { return x * sig(x, SHARP); }
static inline double pyround(double x) {
    double r = floor(x + 0.5);
    if (r - x == 0.5 && fmod(r, 2.0) != 0.0) r -= 1.0;
    return r;
}
static inline long at(long slot, long k, long d, long r) {
    if (d >= k) return 0;
    long s = slot - d;
    return s < 0 ? s + r : s;
}
static inline double dmin(double a, double b) { return a < b ? a : b; }
static inline double dmax(double a, double b) { return a > b ? a : b; }
/* Python's int() of a float: truncation toward zero */
static inline long trunc_l(double x) { return (long)x; }
/* Python's float % for the non-negative operands used here */
static double *zeros(long m) { return calloc((size_t)m, sizeof(double)); }

int main(void) {
    long n, n_steps, start;
    int red, expiry, recovery;
    double h, capacity, buffer;
    if (scanf("%ld %ld %ld %lf %lf %lf %d %d %d", &n, &n_steps, &start, &h, &capacity,
              &buffer, &red, &expiry, &recovery) != 9) return 2;
    long *cca = malloc(n * sizeof(long));
    double *d0 = zeros(n), *dd = zeros(n), *w0 = zeros(n), *x0 = zeros(n), *whi0 = zeros(n),
           *tstr = zeros(n);
    for (long i = 0; i < n; i++)
        if (scanf("%ld %lf %lf %lf %lf %lf %lf", &cca[i], &d0[i], &dd[i], &w0[i], &x0[i],
                  &whi0[i], &tstr[i]) != 7) return 2;
    double d_max = 0.0;
    for (long i = 0; i < n; i++) d_max = dmax(d_max, dd[i]);
    long r_s = (long)((2.0 * d_max + buffer / capacity + 20.0) / h) + 3;
    if (r_s > n_steps + 1) r_s = n_steps + 1;
    long r_t = (long)(3100.0 / h) + 3, r_10 = (long)(10000.0 / h) + 3;
    if (r_t > n_steps + 1) r_t = n_steps + 1;
    if (r_10 > n_steps + 1) r_10 = n_steps + 1;
    int any_bbr = 0, has_bbr2 = 0;
    for (long i = 0; i < n; i++) {
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
           *mdwn = zeros(n), *whi = zeros(n), *wlo = zeros(n), *v = zeros(n),
           *rate_sum = zeros(n), metrics[5] = {0, 0, 0, 0, 0};
    long *d0_steps = malloc(n * sizeof(long)), *tau_steps = malloc(n * sizeof(long)),
         *tau2_steps = malloc(n * sizeof(long)), *tauq_steps = malloc(n * sizeof(long));
    for (long i = 0; i < n; i++) {
        w[i] = w0[i];
        x[i] = w0[i] / dd[i];
        tau[i] = dd[i];
        wmax[i] = 1.1 * w0[i];
        k_at[i] = -1.0;
        xbtl[i] = xmax[i] = xdel[i] = xpcg[i] = x0[i];
        tmin[i] = dd[i];
        tprt[i] = 10000.0;
        mcrs[i] = -1.0;
        whi[i] = whi0[i];
        wlo[i] = w0[i];
    }
    for (long i = 0; i < n; i++) {
        if (cca[i] == BBR1) {
            w[i] = xbtl[i] * tmin[i];
            x[i] = w[i] / dd[i];
        } else if (cca[i] == BBR2) {
            tprt[i] = 5000.0;
        }
    }
    if (has_bbr2)
        for (long i = 0; i < n; i++) mcrs[i] = 1.0;
    double q = 0.0, y = 0.0;
    for (long i = 0; i < n; i++) {
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
    for (long i = 0; i < n; i++) {
        d0_steps[i] = (long)pyround(d0[i] / h);
        tau_steps[i] = trunc_l(dd[i] / h);
        tau2_steps[i] = trunc_l(2 * dd[i] / h);
        tauq_steps[i] = trunc_l((dd[i] - d0[i]) / h);
    }
    long s10 = trunc_l(10000.0 / h), s16 = trunc_l(16.0 / h), s1ms = trunc_l(1.0 / h);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    double p = 0.0, pc = 0.0;
    for (long k = 0; k < n_steps; k++) {
        long ks = k % r_s, kt = k % r_t, k10 = k % r_10;
        if (k > 0) {
            y = 0.0;
            for (long i = 0; i < n; i++) y += xs[at(ks, k, d0_steps[i], r_s) * n + i];
            q = dmin(dmax(0.0, q + ((1.0 - ps[at(ks, k, 1, r_s)]) * y - capacity) * h), buffer);
            ys[ks] = y;
            qs[ks] = q;
            double t = k * h, q_delay = q / capacity;
            for (long i = 0; i < n; i++) {
                tau[i] = dd[i] + q_delay;
                long lb_tau = at(ks, k, tau_steps[i], r_s);
                double tau_lb = taus[lb_tau * n + i];
                long c = cca[i];
                long lb_x = c != CUBIC ? at(ks, k, trunc_l(tau_lb / h), r_s) : 0;
                long lb_p = at(ks, k, trunc_l((tau_lb - d0[i]) / h), r_s);
                if (c == RENO) {
                    double xa = xs[lb_x * n + i], pa = ps[lb_p];
                    w[i] = dmax(1.0, w[i] + h * (xa * (1.0 - pa) / w[i] - xa * pa * w[i] / 2.0));
                    x[i] = w[i] / tau[i];
                } else if (c == CUBIC) {
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
                        k_cubic[i] = pow(wmax[i] * 0.7 / 0.4, 1.0 / 3.0);
                        k_at[i] = wmax[i];
                    }
                    double f = s[i] / 1000.0 + 2.0 - k_cubic[i];
                    w[i] = dmax(1.0, 0.4 * cube(f) + wmax[i]);
                    x[i] = w[i] / tau[i];
                } else {
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
                    double stale = idc(tmin[i] - tmins[at(k10, k, s10, r_10) * n + i]);
                    double m_tau = mprts[lb_tau * n + i];
                    mprt[i] = mprt[i] + h * (expired * (stale * (1.0 - m_tau) - mprt[i]));
                    tprt[i] = tprt[i] + h * (expired * (10000.0 - 9800.0 * stale * (1.0 - m_tau)
                                                        - tprt[i]) - 1.0);
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
                        long back = trunc_l(t_pbw / h) + (k - trunc_l(t / h));
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
                    if (c == BBR2) {
                        bdp = xbtl[i] * rtprop;
                        double pc_lb = pcs[lb_p];
                        double grow = (1.0 - crs) * idc(t_net - rtprop) * sig(v[i] - whi[i], SMOOTH);
                        if (grow != 0.0) grow = grow * pow(2.0, t_net / rtprop);
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
            if (red) {
                double ql = n > 1 ? q : qs[at(ks, k, s16, r_s)];
                p = dmin(dmax(ql / buffer, 0.0), 1.0);
                pc = p;
            } else {
                p = (q == buffer && y > capacity) ? (1.0 - capacity / y) : 0.0;
                p = dmax(0.0, dmin(p, 1.0));
                pc = y > capacity ? (1.0 - capacity / y) * pow(q / buffer, LOSS_ABRUPTNESS) : 0.0;
                pc = dmax(0.0, dmin(pc, 1.0));
            }
            ps[ks] = p;
            pcs[ks] = pc;
        } else {
            p = 0.0;
            pc = 0.0;
        }
        if (k >= start) {
            metrics[0] += q;
            metrics[1] += pc * y;
            metrics[2] += y;
            metrics[3] += q <= 0.0 ? dmin(y / capacity, 1.0) : 1.0;
            for (long i = 0; i < n; i++) rate_sum[i] += x[i];
            if (k >= start + s1ms && (k - start) % s1ms == 0)
                metrics[4] += fabs(taus[ks * n] - taus[at(ks, k, s1ms, r_s) * n]);
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    for (int j = 0; j < 5; j++) printf("%.17g\n", metrics[j]);
    for (long i = 0; i < n; i++) printf("%.17g\n", rate_sum[i]);
    printf("%.9f\n", (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
    return 0;
}
