"""Nash equilibria in the measured runs: which mixes of CUBIC and BBR flows no flow gains by
leaving, how firmly, and where they lie against the closed form's predicted region. The
measured counterpart of :mod:`coexist.closed_form.nash`, on the per-run table of
:mod:`coexist.measured.runs`; the one place pages and tests import it from.

The parts, one concern each: :mod:`~coexist.measured.mix_equilibria` (the
equilibria of the measured mixes and how firm each is),
:mod:`~coexist.measured.group_equilibria` (those of the RTT-group campaigns) and
:mod:`~coexist.measured.equilibria_vs_models` (the measured equilibria against the
closed form's region and the fluid model's sets)."""

from __future__ import annotations

from .equilibria_vs_models import (
    DETERMINED_SPAN,
    against_region,
    compare_sets,
    distance_to_nearest,
    distance_to_region,
    nearest_equilibrium_distances,
    region_in_whole_flows,
    set_span,
    set_widths,
)
from .group_equilibria import (
    group_layout_keys,
    grouped_checked,
    grouped_found,
    grouped_long,
    grouped_rates,
    mix_status_table,
    observed_grouped_equilibria,
    rates_at_equilibria,
)
from .mix_equilibria import (
    FIRMNESS,
    SETTING,
    campaigns_by_setting,
    equilibria_by_campaign,
    equilibrium_firmness,
    firmness_labels,
    moved_by_repeats,
    observed_equilibria,
    per_flow_goodput,
    run_margins,
    run_order,
    switch_gains,
)

__all__ = [
    "DETERMINED_SPAN", "FIRMNESS", "SETTING", "against_region", "campaigns_by_setting",
    "compare_sets", "distance_to_nearest", "distance_to_region", "equilibria_by_campaign",
    "equilibrium_firmness", "firmness_labels", "group_layout_keys", "grouped_checked",
    "grouped_found", "grouped_long", "mix_status_table", "grouped_rates", "moved_by_repeats",
    "nearest_equilibrium_distances", "observed_equilibria", "observed_grouped_equilibria",
    "per_flow_goodput", "rates_at_equilibria", "region_in_whole_flows", "run_margins",
    "run_order", "set_span", "set_widths", "switch_gains",
]
