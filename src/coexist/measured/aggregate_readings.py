"""What Scherrer et al. say about their Figs. 6-10 (§4.3), as data: each sentence the paper
writes on its fairness, loss, queue, utilisation and jitter figures is one
:class:`~coexist.measured.statement_verdicts.Statement`, with the reading of it that is
tested (stated here and shown on the page beside the verdict; the readings were written
with the model's tables in view, not registered before) and the check of
:mod:`coexist.measured.aggregate_checks` that tests it on the measured runs' table or the
model's."""

from __future__ import annotations

from . import aggregate_checks as check
from .aggregate_checks import (
    CONSISTENT_FACTOR,
    CONSISTENT_POINTS,
    FAIR_JAIN,
    FULL,
    GROWS,
    NO_LOSS,
    RISE,
    UNFAIR_JAIN,
    UNFAIRER,
)
from .statement_verdicts import Statement

STATEMENTS: tuple[Statement, ...] = (
    # Fig. 6, fairness (§4.3.1)
    Statement("Fig. 6", "the least fairness against BBRv1 in shallow buffers",
              "The least fairness arises when a loss-sensitive CCA (Reno, CUBIC, BBRv2) "
              "competes with BBRv1 in shallow buffers.",
              "Drop-tail, smallest buffer: every loss-sensitive/BBRv1 pair has a lower "
              "Jain index than every other pair.", check.least_fair_shallow),
    Statement("Fig. 6", "higher fairness from 4 BDP",
              "From 4 BDP up, the fairness of these settings increases.",
              f"Drop-tail: each loss-sensitive/BBRv1 pair's index at every buffer of 4 BDP "
              f"or more exceeds its index at the smallest buffer by more than {RISE:g}.",
              check.fairness_higher_from_4),
    Statement("Fig. 6", "RED's low fairness towards BBRv1",
              "Under RED, BBRv1's fairness towards loss-sensitive CCAs is "
              "consistently low.",
              f"RED: each loss-sensitive/BBRv1 pair stays below an index of {UNFAIR_JAIN:g} "
              "at every buffer (one group taking about four fifths of the link).",
              check.red_unfair),
    Statement("Fig. 6", "BBRv2 fairer than BBRv1",
              "BBRv1's fairness issues appear largely resolved with BBRv2, in the model and "
              "in experiments.",
              f"Drop-tail, averaged over the buffers: Reno/BBRv2 fairer than Reno/BBRv1 and "
              f"CUBIC/BBRv2 than CUBIC/BBRv1, each at an index of {FAIR_JAIN:g} or more "
              "(neither group taking more than two thirds of the link).",
              check.bbr2_fairer_than_bbr1),
    Statement("Fig. 6", "BBRv2's unfairness under RED",
              "BBRv2 is still unfair towards loss-based CCAs in RED buffers.",
              f"Averaged over the buffers: Reno/BBRv2's and CUBIC/BBRv2's index under RED "
              f"below {FAIR_JAIN:g} (one group taking more than two thirds of the link) and "
              f"at least {UNFAIRER:g} below drop-tail's.", check.bbr2_unfair_under_red),
    Statement("Fig. 6", "BBRv1's falling fairness in deep buffers",
              "Fairness among BBRv1 flows decreases in deep drop-tail buffers, in the model "
              "only: the experiments do not show it.",
              f"Drop-tail, BBRv1/BBRv1: more than {RISE:g} lower at the largest buffer than "
              "at the smallest. The paper expects it to hold in the model and not in our "
              "measurements.", check.bbr1_less_fair_deep, model_only=True),
    # Fig. 7, loss (§4.3.2)
    Statement("Fig. 7", "low loss of loss-sensitive CCAs",
              "The loss rate of loss-sensitive CCAs in drop-tail buffers is below 1 % and "
              "goes to 0 % as the buffer grows.",
              "Drop-tail, every pair of loss-sensitive CCAs: below 1 % at every buffer, and "
              f"below {100 * NO_LOSS:g} % at the largest.", check.loss_sensitive_low_loss),
    Statement("Fig. 7", "BBRv1's loss of at most 20 %",
              "BBRv1 leads to a considerable loss of at most 20 %.",
              "Every pair with BBRv1, both disciplines, every buffer: at most 20 %.",
              check.bbr1_loss_at_most_20, both=True),
    Statement("Fig. 7", "BBRv1's loss falling with the buffer",
              "With BBRv1 under drop-tail, the loss rate is inversely related to the buffer "
              "size.",
              "Drop-tail, every pair with BBRv1: lower at the largest buffer than at the "
              "smallest.", check.bbr1_loss_falls),
    Statement("Fig. 7", "RED's even loss rates",
              "A RED queue keeps loss rates roughly consistent across buffer sizes.",
              f"RED, every pair: its largest loss rate at most {CONSISTENT_FACTOR:g} times its "
              f"smallest, or at most {100 * CONSISTENT_POINTS:g} percentage point above it.",
              check.red_loss_consistent),
    Statement("Fig. 7", "the model's low RED loss",
              "The model underestimates the loss of loss-sensitive CCAs under RED.",
              "Model against measured loss under RED.",
              check.not_testable("needs measured RED runs; this kernel has no RED module")),
    # Fig. 8, queue (§4.3.3)
    Statement("Fig. 8", "bufferbloat by Reno and CUBIC",
              "Reno and CUBIC cause bufferbloat: consistently high buffer utilisation.",
              "Drop-tail, every pair of Reno and CUBIC: a mean queue of at least half the "
              "buffer at every buffer.", check.loss_based_bloat),
    Statement("Fig. 8", "BBRv2 queueing less alone",
              "BBRv2 beside loss-based CCAs shows high buffer use too; BBRv2 alone uses "
              "less.",
              "Drop-tail, queue over buffer averaged over the buffers: Reno/BBRv2 and "
              "CUBIC/BBRv2 at least half, BBRv2/BBRv2 below both.", check.bbr2_alone_queues_less),
    Statement("Fig. 8", "BBRv1 queueing more than loss-sensitive CCAs",
              "BBRv1 uses the buffer more intensely than loss-sensitive CCAs, alone or "
              "beside them.",
              "Drop-tail, averaged over the buffers: BBRv1/BBRv1 and each X/BBRv1 above "
              "X/X, for X each loss-sensitive CCA.", check.bbr1_queues_most),
    Statement("Fig. 8", "BBRv1 filling any buffer",
              "Under drop-tail, BBRv1 uses most of the buffer independent of the buffer "
              "size.",
              "Drop-tail, BBRv1/BBRv1: a mean queue of at least half the buffer at every "
              "buffer.", check.bbr1_fills_buffer),
    Statement("Fig. 8", "BBRv2's constant queue up to 4 BDP",
              "BBRv2 alone under drop-tail keeps a constant absolute queue up to 4 BDP.",
              "Drop-tail, BBRv2/BBRv2, buffers up to 4 BDP: the largest queue (in BDP) at "
              "most 1.25 times the smallest.", check.bbr2_constant_queue),
    Statement("Fig. 8", "BBRv2's queue growing in large buffers",
              "In large buffers BBRv2's queue grows again, set by its start-up; the model "
              "shows it when inflight_hi starts from a buffer-dependent value.",
              f"Drop-tail, BBRv2/BBRv2 (the model's inflight_hi starts, as the authors' code "
              f"sets it, from a value that grows with the buffer): the queue in BDP at the "
              f"largest buffer at least {GROWS:g} times that at the smallest of 4 BDP or "
              "more.", check.bbr2_queue_grows_deep),
    # Fig. 9, utilisation (§4.3.4)
    Statement("Fig. 9", "full utilisation with BBRv1",
              "BBRv1 and combinations with it fully use the link, under drop-tail and RED.",
              f"Every pair with BBRv1, both disciplines, every buffer: utilisation of "
              f"{FULL:g} or more.", check.bbr1_full, both=True),
    Statement("Fig. 9", "utilisation rising with the buffer",
              "Under drop-tail, the utilisation of loss-sensitive CCAs increases with the "
              "buffer.",
              f"Drop-tail, every pair of loss-sensitive CCAs: more than {RISE / 10:g} higher "
              "at the largest buffer than at the smallest.",
              check.loss_sensitive_utilisation_rises),
    Statement("Fig. 9", "BBRv2's lowest utilisation",
              "BBRv2 gives the lowest utilisation under drop-tail, wasting at most 3 %.",
              "Drop-tail: BBRv2/BBRv2 has the lowest mean utilisation of all pairs and at "
              "least 0.97 at every buffer.", check.bbr2_lowest_utilisation),
    Statement("Fig. 9", "no ProbeRTT among ten senders",
              "Under RED, BBRv2 does not enter ProbeRTT with ten senders; neither does BBRv1 "
              "under either discipline.",
              "The senders' ProbeRTT modes in the ten-sender runs.",
              check.not_testable("the book's aggregate runs keep their metrics, not the senders' "
                            "modes")),
    Statement("Fig. 9", "the model's low BBRv2/Reno utilisation under RED",
              "The model underestimates the utilisation of BBRv2 with Reno in shallow RED "
              "buffers.",
              "Model against measured utilisation of Reno/BBRv2 under RED.",
              check.not_testable("needs measured RED runs and BBRv2, which this kernel lacks")),
    # Fig. 10, jitter (§4.3.5)
    Statement("Fig. 10", "the model's jitter",
              "The fluid model fails to predict jitter.",
              "Model jitter against measured jitter.", check.jitter),
)
