"""Fluid-model runs at the testbed's settings, read as the measurements beside them are
read (:mod:`coexist.measured.fluid_vs_measured`): a run's aggregate metrics after its
warm-up, and its queue over time windows with its loss episodes. Both are memoised kinds
(``aggregate``, ``queue_transient``), computed from the run's configuration alone."""

from __future__ import annotations

import pandas as pd

from . import cache, metrics, solve


@cache.computes("aggregate")
def _aggregate(inputs: dict) -> dict:
    """One setting's aggregate metrics (the runs of
    :func:`coexist.measured.fluid_vs_measured.window_metrics`): the run of the memo
    ``inputs``' configuration, averaged after its warm-up."""
    return metrics.aggregate(solve.run(solve.config_from_repr(inputs["config"])),
                             inputs["warmup_s"])


@cache.computes("queue_transient")
def _queue_transient(inputs: dict) -> tuple[list[float], pd.DataFrame]:
    """The run behind :func:`coexist.measured.fluid_vs_measured.model_queue_transient` (its
    memo ``inputs``): the queue share over each window and the run's loss episodes."""
    tr = solve.run(solve.config_from_repr(inputs["config"]))
    return ([metrics.queue_share_between(tr, float(a), float(b)) for a, b in inputs["windows"]],
            metrics.loss_episodes(tr))
