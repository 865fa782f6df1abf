"""What Scherrer et al. say about their Figs. 6-10, as tests on the aggregate metrics: the
one place pages and tests import them from.

Section 4.3 of the paper reads its fairness, loss, queue, utilisation and jitter figures in
sentences ("the least fairness arises when ...", "BBRv1 uses most of the buffer
independent of buffer size"). Each sentence is one :class:`Statement`: what the paper
says, the reading of it that is tested, and the test. A test runs on a table of the
metrics per pair, queueing discipline and buffer, the fluid model's or our measurements'
alike (:func:`wide_measured` brings the measured spread into that shape), and returns a
:class:`Verdict`: whether the statement holds in that table, or why it cannot be tested
there (a pair, a discipline or a buffer range it needs is missing), with the numbers that
decide it.

The parts, one concern each: :mod:`~coexist.measured.statement_verdicts` (what a statement
and a verdict are), :mod:`~coexist.measured.aggregate_readings` (the statements and their
readings, as data), :mod:`~coexist.measured.aggregate_checks` (the thresholds and the
checks that decide them) and :mod:`~coexist.measured.aggregate_verdicts` (the verdicts on
the model and the measurements, and what they add up to).
"""

from __future__ import annotations

from .aggregate_checks import (
    CONSISTENT_FACTOR,
    CONSISTENT_POINTS,
    FAIR_JAIN,
    FULL,
    GROWS,
    LOSS_BASED,
    LOSS_SENSITIVE,
    NO_LOSS,
    RISE,
    UNFAIR_JAIN,
    UNFAIRER,
    members,
)
from .aggregate_readings import STATEMENTS
from .aggregate_verdicts import (
    SIDES,
    Tally,
    differences,
    model_only_text,
    tally,
    verdicts,
    wide_measured,
)
from .statement_verdicts import WORDS, Statement, Verdict

__all__ = [
    "CONSISTENT_FACTOR", "CONSISTENT_POINTS", "FAIR_JAIN", "FULL", "GROWS", "LOSS_BASED",
    "LOSS_SENSITIVE", "NO_LOSS", "RISE", "SIDES", "STATEMENTS", "UNFAIRER", "UNFAIR_JAIN",
    "WORDS", "Statement", "Tally", "Verdict", "differences", "members", "model_only_text",
    "tally", "verdicts", "wide_measured",
]
