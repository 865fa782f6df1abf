"""Fluid (delay-differential) model of BBRv1, BBRv2, Reno and CUBIC after Scherrer et al.
(IMC 2022), in two readings, and the studies built on it. Units of the configuration:
packets, packets per second, seconds.

The public face::

    from coexist.fluid import Config, Flow, run, dumbbell

Two subpackages:

- :mod:`.model`: the equations and their kernels. The published reading (the default,
  ``DEFAULT_READING``): the equations as the authors' code integrates them
  (:mod:`.model.published`, checked against that code's own outputs), with the paper's
  set-up of a run (:mod:`.model.paper_setup`). The printed reading
  (``Config(reading="printed")``, :mod:`.model.printed`): the equations as the paper prints
  them. The equations follow the paper's structure, one function each: ``network`` (eqs.
  1-8), ``reno`` (eq. 39), ``cubic`` (eqs. 40-41), ``bbr`` (eqs. 9-19), ``bbr1`` (eqs.
  20-23), ``bbr2`` (eqs. 24-32), ``smooth`` (σ, Γ and the indicator). ``solve`` holds the
  configuration, the trace and ``run``; ``metrics`` the paper's aggregate metrics;
  ``oracle`` integrates the printed reading step by step in NumPy, the yardstick of the
  compiled kernel; ``numba_cache`` keeps Numba's cache of the kernels true to them.
- :mod:`.studies`: what the book asks of the model: Nash equilibria of the CUBIC/BBR
  choice, run length, step convergence, the periodic fluctuation, the insights, the reduced
  models of §5, the runs beside the authors' outputs and beside the measurements. Each
  stored kind of result is registered where it is computed.

Runs are memoised and stored by :mod:`coexist.runstore`, which knows nothing of the model:
importing this package declares it (its source and that of the closed form and the series
analysis it reads make up every stored run's key).
"""

from ..runstore import source_key

source_key.declare_model("coexist.fluid", "coexist.closed_form", "coexist.analysis")

from .model.solve import (  # noqa: E402  (the model is declared before its modules load)
    CCAS,
    DEFAULT_READING,
    Config,
    Flow,
    Trace,
    dumbbell,
    run,
)

__all__ = ["CCAS", "DEFAULT_READING", "Config", "Flow", "Trace", "dumbbell", "run"]
