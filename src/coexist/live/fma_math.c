/* The exp and pow algorithms below are Arm's optimized-routines (Szabolcs Nagy), as musl
 * and glibc ship them:
 *
 *   Copyright (c) 2018, Arm Limited.
 *   SPDX-License-Identifier: MIT
 *
 * Permission is hereby granted, free of charge, to any person obtaining a copy of this
 * software and associated documentation files (the "Software"), to deal in the Software
 * without restriction, including without limitation the rights to use, copy, modify, merge,
 * publish, distribute, sublicense, and/or sell copies of the Software, and to permit persons
 * to whom the Software is furnished to do so, subject to the following conditions:
 *
 * The above copyright notice and this permission notice shall be included in all copies or
 * substantial portions of the Software.
 *
 * THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED,
 * INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR
 * PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE
 * FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR
 * OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER
 * DEALINGS IN THE SOFTWARE.
 */

/* exp and pow with the bits of the native kernel's: glibc's on an x86-64 processor with
 * fused multiply-add.
 *
 * The native kernel calls the C library's exp and pow. glibc computes them with Szabolcs
 * Nagy's algorithms (Arm's optimized-routines, MIT licence), and on x86-64 processors with
 * FMA it selects builds in which most a*b + c are single fused operations; musl, which
 * wasi-libc ships, has the same algorithms and tables compiled without fusion, so its exp
 * and pow differ from that glibc's in the last bit for about 7 arguments in 10 000. Here
 * are the same algorithms with every fusion glibc's build makes (read from GCC 12's -mfma
 * code for glibc 2.36, which gives the library's bits) written as an explicit fused
 * operation. The tables are musl's own (__exp_data, __pow_log_data), linked from
 * wasi-libc, the same numbers as glibc's.
 *
 * WebAssembly has no fused multiply-add instruction, and musl's exact software fma takes
 * about 25 ns, most of an exp's time. live_fma returns the same correctly rounded result
 * faster: from the rounded product and the sum's exact error when they decide the
 * rounding (most calls), else from the exact product and sums (Dekker, Knuth), and from
 * musl's fma in the rest (operands near over- or underflow, and a sum within a tiny
 * distance of a rounding boundary).
 *
 * This file is compiled with -ffp-contract=off, so no other operation is fused.
 */
#include <math.h>
#include <stdint.h>

#define EXP_TABLE_BITS 7
#define EXP2_POLY_ORDER 5
extern const struct exp_data {
    double invln2N, shift, negln2hiN, negln2loN;
    double poly[4]; /* C2..C5 */
    double exp2_shift;
    double exp2_poly[EXP2_POLY_ORDER];
    uint64_t tab[2 * (1 << EXP_TABLE_BITS)];
} __exp_data;

#define POW_LOG_TABLE_BITS 7
#define POW_LOG_POLY_ORDER 8
extern const struct pow_log_data {
    double ln2hi, ln2lo;
    double poly[POW_LOG_POLY_ORDER - 1]; /* A[0..6] */
    struct { double invc, pad, logc, logctail; } tab[1 << POW_LOG_TABLE_BITS];
} __pow_log_data;

static inline uint64_t asuint64(double f) { union { double f; uint64_t i; } u = {f}; return u.i; }
static inline double asdouble(uint64_t i) { union { uint64_t i; double f; } u = {i}; return u.f; }
static inline uint32_t top12(double x) { return asuint64(x) >> 52; }

/* a b - p exactly, for p = a b rounded (Veltkamp's split, Dekker's product): exact for
   |a|, |b| < 2^995 and |p| > 2^-900 */
static inline double product_error(double a, double b, double p) {
    const double split = 134217729.0; /* 2^27 + 1 */
    double t = split * a, ah = t - (t - a), al = a - ah;
    t = split * b;
    double bh = t - (t - b), bl = b - bh;
    return ((ah * bh - p) + ah * bl + al * bh) + al * bl;
}

/* fma(a, b, -p) for p = a b rounded: the product's rounding error, exact */
static inline double product_rounding(double a, double b, double p) {
    double ap = fabs(p);
    if (fabs(a) < 0x1p995 && fabs(b) < 0x1p995 && ap < 0x1p1000 && ap > 0x1p-900)
        return product_error(a, b, p);
    return fma(a, b, -p);
}

/* half the gap between r and its nearer neighbour (its ulp, or half of it below a power
   of two); 0 for a subnormal r */
static inline double half_gap(double r) {
    uint64_t ir = asuint64(r);
    double half = asdouble(ir & 0x7ff0000000000000ull) * 0x1p-53;
    return (ir & 0x000fffffffffffffull) == 0 ? half * 0.5 : half;
}

/* fma(a, b, c), correctly rounded (see above) */
double live_fma(double a, double b, double c) {
    double p = a * b;
    if (a == 0.0 || b == 0.0) return p + c; /* an exact product, signed zeros too */
    double ap = fabs(p);
    if (!(fabs(a) < 0x1p995 && fabs(b) < 0x1p995 && ap < 0x1p1000 && ap > 0x1p-900 &&
          fabs(c) < 0x1p1000))
        return fma(a, b, c);
    /* first without the product's error pl (|pl| <= |p| 2^-53): p + c = r0 + e0 exactly,
       and a b + c = r0 + e0 + pl rounds to r0 when e0 + pl stays inside half the gap */
    double r0 = p + c, b0 = r0 - p, e0 = (p - (r0 - b0)) + (c - b0);
    if (fabs(e0) + ap * 0x1p-53 < half_gap(r0)) return r0;
    double pl = product_error(a, b, p); /* a b = p + pl */
    if (pl == 0.0) return p + c;
    double s = p + c, bs = s - p, e = (p - (s - bs)) + (c - bs); /* p + c = s + e */
    double t = pl + e, bt = t - pl, dt = (pl - (t - bt)) + (e - bt); /* pl + e = t + dt */
    double r = s + t;
    if (dt == 0.0) return r; /* s + t is the exact a b + c: r is its rounding */
    double br = r - s, er = (s - (r - br)) + (t - br); /* s + t = r + er */
    if (!(fabs(r) > 0x1p-900 && fabs(r) < 0x1p1000)) return fma(a, b, c);
    /* a b + c = r + er + dt: r is its rounding when that lies nearer r than half the
       gap to r's neighbour on either side */
    if (fabs(er + dt) < half_gap(r)) return r;
    return fma(a, b, c);
}

/* glibc's error paths without errno: the value they return */
static double oflow(uint32_t sign) { double y = 0x1p769 * 0x1p769; return sign ? -y : y; }
static double uflow(uint32_t sign) { double y = 0x1p-767 * 0x1p-767; return sign ? -y : y; }
static double invalid(double x) { return (x - x) / (x - x); }
static double divzero(uint32_t sign) { return (sign ? -1.0 : 1.0) / 0.0; }

#define N_EXP (1 << EXP_TABLE_BITS)
#define InvLn2N __exp_data.invln2N
#define NegLn2hiN __exp_data.negln2hiN
#define NegLn2loN __exp_data.negln2loN
#define Shift __exp_data.shift
#define C2 __exp_data.poly[0]
#define C3 __exp_data.poly[1]
#define C4 __exp_data.poly[2]
#define C5 __exp_data.poly[3]

/* scale (1 + tmp) where it may over- or underflow (exp's and pow's specialcase); glibc's
   build fuses only the k > 0 branch's scale + scale * tmp (the other reuses the product) */
static double specialcase(double tmp, uint64_t sbits, uint64_t ki) {
    double scale, y;
    if ((ki & 0x80000000) == 0) {
        sbits -= 1009ull << 52;
        scale = asdouble(sbits);
        return 0x1p1009 * live_fma(scale, tmp, scale);
    }
    sbits += 1022ull << 52;
    scale = asdouble(sbits);
    double st = scale * tmp;
    y = scale + st;
    if (fabs(y) < 1.0) {
        double hi, lo, one = 1.0;
        if (y < 0.0) one = -1.0;
        lo = scale - y + st;
        hi = one + y;
        lo = one - hi + y + lo;
        y = (hi + lo) - one;
        if (y == 0.0) y = asdouble(sbits & 0x8000000000000000);
    }
    return 0x1p-1022 * y;
}

/* exp(x + xtail) with the sign bias of pow (0 for exp itself) */
static inline double exp_inline(double x, double xtail, uint32_t sign_bias, int pow_form) {
    uint32_t abstop = top12(x) & 0x7ff;
    if (abstop - top12(0x1p-54) >= top12(512.0) - top12(0x1p-54)) {
        if (abstop - top12(0x1p-54) >= 0x80000000) {
            double one = 1.0 + x;
            return sign_bias ? -one : one;
        }
        if (abstop >= top12(1024.0)) {
            if (!pow_form) {
                if (asuint64(x) == asuint64(-INFINITY)) return 0.0;
                if (abstop >= top12(INFINITY)) return 1.0 + x;
            }
            return asuint64(x) >> 63 ? uflow(sign_bias) : oflow(sign_bias);
        }
        abstop = 0;
    }
    double kd = live_fma(InvLn2N, x, Shift); /* z = InvLn2N x; kd = z + Shift */
    uint64_t ki = asuint64(kd);
    kd -= Shift;
    double r = live_fma(kd, NegLn2loN, live_fma(kd, NegLn2hiN, x));
    r += xtail;
    uint64_t idx = 2 * (ki % N_EXP);
    uint64_t top = (ki + sign_bias) << (52 - EXP_TABLE_BITS);
    double tail = asdouble(__exp_data.tab[idx]);
    uint64_t sbits = __exp_data.tab[idx + 1] + top;
    double r2 = r * r;
    double tmp = live_fma(r2 * r2, live_fma(r, C5, C4), live_fma(r2, live_fma(r, C3, C2), tail + r));
    if (abstop == 0) return specialcase(tmp, sbits, ki);
    double scale = asdouble(sbits);
    return live_fma(scale, tmp, scale);
}

double live_exp(double x) { return exp_inline(x, 0.0, 0, 0); }

#define N_LOG (1 << POW_LOG_TABLE_BITS)
#define OFF 0x3fe6955500000000ull
#define A __pow_log_data.poly
#define SIGN_BIAS (0x800 << EXP_TABLE_BITS)

/* log(x) as hi + tail, about 15 bits beyond a double (glibc's FMA form) */
static inline double log_inline(uint64_t ix, double *tail) {
    uint64_t tmp = ix - OFF;
    int i = (int)((tmp >> (52 - POW_LOG_TABLE_BITS)) % N_LOG);
    int k = (int)((int64_t)tmp >> 52);
    uint64_t iz = ix - (tmp & 0xfffull << 52);
    double z = asdouble(iz), kd = (double)k;
    double invc = __pow_log_data.tab[i].invc, logc = __pow_log_data.tab[i].logc,
           logctail = __pow_log_data.tab[i].logctail;
    /* fma(z, invc, -1): z/c - 1 is a double (glibc's note), so z invc - 1 is exact as the
       rounded product less 1 (exact: Sterbenz) plus the product's error */
    double zc = z * invc;
    double r = (zc - 1.0) + product_rounding(z, invc, zc);
    double t1 = live_fma(kd, __pow_log_data.ln2hi, logc);
    double t2 = t1 + r;
    double lo1 = live_fma(kd, __pow_log_data.ln2lo, logctail);
    double lo2 = t1 - t2 + r;
    double ar = A[0] * r, ar2 = r * ar, ar3 = r * ar2;
    double hi = t2 + ar2;
    double lo3 = product_rounding(r, ar, ar2); /* fma(ar, r, -ar2) */
    double lo4 = t2 - hi + ar2;
    /* p = ar3 (A1 + r A2 + ar2 (A3 + r A4 + ar2 (A5 + r A6))), its last product fused
       into lo's sum */
    double q = live_fma(ar2, live_fma(ar2, live_fma(r, A[6], A[5]), live_fma(r, A[4], A[3])), live_fma(r, A[2], A[1]));
    double lo = live_fma(ar3, q, lo1 + lo2 + lo3 + lo4);
    double y = hi + lo;
    *tail = hi - y + lo;
    return y;
}

/* 0 if not an integer, 1 if odd, 2 if even (iy: a non-zero finite double's bits) */
static inline int checkint(uint64_t iy) {
    int e = iy >> 52 & 0x7ff;
    if (e < 0x3ff) return 0;
    if (e > 0x3ff + 52) return 2;
    if (iy & ((1ull << (0x3ff + 52 - e)) - 1)) return 0;
    if (iy & (1ull << (0x3ff + 52 - e))) return 1;
    return 2;
}
static inline int zeroinfnan(uint64_t i) { return 2 * i - 1 >= 2 * asuint64(INFINITY) - 1; }

double live_pow(double x, double y) {
    uint32_t sign_bias = 0;
    uint64_t ix = asuint64(x), iy = asuint64(y);
    uint32_t topx = top12(x), topy = top12(y);
    if (topx - 0x001 >= 0x7ff - 0x001 || (topy & 0x7ff) - 0x3be >= 0x43e - 0x3be) {
        if (zeroinfnan(iy)) {
            if (2 * iy == 0) return 1.0;
            if (ix == asuint64(1.0)) return 1.0;
            if (2 * ix > 2 * asuint64(INFINITY) || 2 * iy > 2 * asuint64(INFINITY)) return x + y;
            if (2 * ix == 2 * asuint64(1.0)) return 1.0;
            if ((2 * ix < 2 * asuint64(1.0)) == !(iy >> 63)) return 0.0;
            return y * y;
        }
        if (zeroinfnan(ix)) {
            double x2 = x * x;
            if (ix >> 63 && checkint(iy) == 1) {
                x2 = -x2;
                sign_bias = 1;
            }
            if (2 * ix == 0 && iy >> 63) return divzero(sign_bias);
            return iy >> 63 ? 1 / x2 : x2;
        }
        if (ix >> 63) {
            int yint = checkint(iy);
            if (yint == 0) return invalid(x);
            if (yint == 1) sign_bias = SIGN_BIAS;
            ix &= 0x7fffffffffffffff;
            topx &= 0x7ff;
        }
        if ((topy & 0x7ff) - 0x3be >= 0x43e - 0x3be) {
            if (ix == asuint64(1.0)) return 1.0;
            if ((topy & 0x7ff) < 0x3be) return ix > asuint64(1.0) ? 1.0 + y : 1.0 - y;
            return (ix > asuint64(1.0)) == (topy < 0x800) ? oflow(0) : uflow(0);
        }
        if (topx == 0) {
            ix = asuint64(x * 0x1p52);
            ix &= 0x7fffffffffffffff;
            ix -= 52ull << 52;
        }
    }
    double lo;
    double hi = log_inline(ix, &lo);
    double ehi = y * hi;
    double elo = live_fma(y, lo, product_rounding(y, hi, ehi)); /* fma(y, hi, -ehi) inside */
    return exp_inline(ehi, elo, sign_bias, 1);
}

/* out[j] = exp(a[j]) (op 0), pow(a[j], b[j]) (1), musl's log(a[j]) (2), live_fma(a[j],
   b[j], c[j]) (3) or musl's fma (4), for j < n: how tests compare these functions with the
   native library's, and live_fma with musl's, argument by argument */
__attribute__((export_name("live_libm")))
void live_libm(int32_t op, const double *a, const double *b, const double *c, double *out,
               int32_t n) {
    for (int32_t j = 0; j < n; j++)
        out[j] = op == 0 ? live_exp(a[j]) : op == 1 ? live_pow(a[j], b[j])
               : op == 2 ? log(a[j]) : op == 3 ? live_fma(a[j], b[j], c[j])
               : fma(a[j], b[j], c[j]);
}
