"""Symbolic derivations of Mishra et al.'s two-flow model (eqs. 5-19), carried out with SymPy.

Each function starts from the equations as printed in the paper, does the algebra the paper
summarises in one sentence, and returns both the derived expression and the paper's printed
form so that notebooks can display them and tests can check they agree exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

C, RTT, B = sp.symbols("C RTT B", positive=True)
b_b, b_c, b_cmin = sp.symbols("b_b b_c b_cmin", positive=True)
lam_b, lam_c, Q_d, RTT_plus = sp.symbols("lambda_b lambda_c Q_d RTT^+", positive=True)
W_max, b_cmax, lam_cmin, lam_cmax = sp.symbols(
    "W_max b_cmax lambda_cmin lambda_cmax", positive=True
)
X, y, beta = sp.symbols("X y beta", positive=True)


@dataclass(frozen=True)
class Step:
    """One derivation step: the expression we derived and the paper's printed one."""

    name: str
    derived: sp.Expr
    paper: sp.Expr

    def holds(self) -> bool:
        """True when derived and printed forms are identical after simplification."""
        return sp.simplify(self.derived - self.paper) == 0


def eq10() -> Step:
    """Eqs. (7)-(9) give the average occupancy ``b_b + b_c = 2 b_cmin + C RTT`` (eq. 10)."""
    eq7 = sp.Eq(lam_b, 2 * lam_b * RTT_plus / (RTT + Q_d))
    eq8 = {Q_d: (b_b + b_c) / C}
    eq9 = {RTT_plus: RTT + b_cmin / C}
    # BBR's rate is non-zero, so eq. (7) forces RTT + Q_d = 2 RTT^+.
    cwnd_bound = sp.solve(eq7.subs(eq8).subs(eq9), b_c)
    occupancy = sp.simplify(b_b + cwnd_bound[0])
    return Step("eq. (10): b_b + b_c", occupancy, 2 * b_cmin + C * RTT)


def eq11() -> Step:
    """Eq. (5) with the queueing delay of eqs. (8) and (10) gives eq. (11)."""
    q_delay = (2 * b_cmin + C * RTT) / C  # eq. (8) with eq. (10)
    derived = (lam_c * RTT + b_c) / (RTT + q_delay)  # right side of eq. (5)
    paper = (lam_c * RTT + b_c) / (2 * RTT + 2 * b_cmin / C)
    return Step("eq. (11): lambda_c", derived, paper)


def eq17() -> Step:
    """Eqs. (12)-(16) combine into eq. (17); returned as ``LHS - RHS``."""
    lam_cmin_expr = b_cmin / (b_cmin + b_b) * C  # eq. (13)
    b_cmax_expr = B - b_b  # eq. (15)
    lam_cmax_expr = b_cmax_expr / (b_cmax_expr + b_b) * C  # eq. (16)
    w_max_expr = b_cmax_expr + lam_cmax_expr * RTT  # eq. (14)
    eq12 = sp.Rational(7, 10) * w_max_expr - lam_cmin_expr * RTT  # right side of eq. (12)
    derived = b_cmin - eq12
    paper = (b_cmin + b_cmin / (b_cmin + b_b) * C * RTT) - sp.Rational(7, 10) * (
        B - b_b + (B - b_b) / B * C * RTT
    )
    return Step("eq. (17)", derived, paper)


def b_cmin_full_buffer() -> sp.Expr:
    """Eq. (10) with the approximation ``b_b + b_c = B``: ``b_cmin = (B - C RTT) / 2``."""
    return sp.solve(sp.Eq(B, 2 * b_cmin + C * RTT), b_cmin)[0]


def eq18() -> Step:
    """Eq. (17) with ``b_cmin`` from eq. (10) and a full buffer is eq. (18) in ``b_b`` alone."""
    derived = eq17().derived.subs(b_cmin, b_cmin_full_buffer())
    half = (B - C * RTT) / 2
    paper = (half + half / (half + b_b) * C * RTT) - sp.Rational(7, 10) * (
        B - b_b + (B - b_b) / B * C * RTT
    )
    return Step("eq. (18)", derived, paper)


def eq19() -> Step:
    """Eq. (11) rearranged with eq. (10) is eq. (19): ``lambda_c (RTT + 2 b_cmin/C) = ...``."""
    lam = sp.solve(sp.Eq(lam_c, eq11().paper), lam_c)[0]
    b_c_from_10 = 2 * b_cmin + C * RTT - b_b
    derived = sp.simplify(lam.subs(b_c, b_c_from_10))
    paper = (2 * b_cmin + C * RTT - b_b) / (RTT + 2 * b_cmin / C)
    return Step("eq. (19): lambda_c", derived, paper)


def eq19_simplified() -> Step:
    """With ``b_cmin = (B - C RTT)/2`` eq. (19) is ``lambda_c = C (B - b_b) / B``."""
    derived = sp.simplify(eq19().paper.subs(b_cmin, b_cmin_full_buffer()))
    return Step("eq. (19) simplified", derived, C * (B - b_b) / B)


def normalised_residual() -> sp.Expr:
    """Eq. (18) in BDP units (``B = X``, ``C RTT = 1``, ``b_b = y``), back-off ``beta``."""
    a = (X - 1) / 2
    return a + a / (a + y) - beta * ((X - y) + (X - y) / X)


def uniqueness_facts() -> dict[str, sp.Expr]:
    """The three facts that make the root of eq. (18) in (0, X) unique.

    ``f''(y) = 2a/(a+y)^3 > 0`` (convex), ``f(0) = (X+1)(1/2 - beta) < 0`` for beta > 1/2,
    ``f(X) = a + a/(a+X) > 0`` for X > 1. A convex function that is negative at the left end
    and positive at the right end of an interval crosses zero exactly once in it.
    """
    f = normalised_residual()
    return {
        "second_derivative": sp.simplify(sp.diff(f, y, 2)),
        "at_zero": sp.factor(sp.simplify(f.subs(y, 0))),
        "at_X": sp.simplify(f.subs(y, X)),
    }


def closed_form_root() -> sp.Expr:
    """The root of the normalised eq. (18) in (0, X) as a formula (a quadratic in ``y``).

    Used only to cross-check the bracketing solver: clearing the denominator ``a + y`` gives
    ``beta (1 + 1/X) y^2 + ...``; the larger root is the one inside the bracket.
    """
    numerator = sp.numer(sp.together(normalised_residual()))
    roots = sp.solve(sp.Eq(numerator, 0), y)
    # pick the root that is positive at a sample point inside the domain
    sample = {X: 3, beta: sp.Rational(7, 10)}
    return max(roots, key=lambda r: float(sp.re(r.subs(sample).evalf())))


ALL_STEPS = (eq10, eq11, eq17, eq18, eq19, eq19_simplified)
