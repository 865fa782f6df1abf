"""How long a testbed run must be, and which measured runs the answer lets a page use: the
one place pages and tests import it from.

The run-length campaign (``data/campaigns/run_length.yaml``) runs one CUBIC against one
BBR flow for 1,200 s and is read as its own shorter prefixes: per setting, the shortest
length whose share is within a tolerance of the longest's is the run length a campaign
needs there. The parts, one concern each: :mod:`~coexist.measured.run_length_study` (the
study's runs read as prefixes, and its verdict per setting),
:mod:`~coexist.measured.run_length_rule` (the rule that settles a deep-buffer run),
:mod:`~coexist.measured.run_length_campaigns` (that rule applied to each campaign's runs,
and the points a page draws) and :mod:`~coexist.measured.run_length_harness` (what limits
the long runs).
"""

from __future__ import annotations

from .run_length_campaigns import (
    campaign_runs,
    not_settled_text,
    point_labels,
    series_order,
    settle_runs,
    settle_settings,
    settled_points,
    study_label,
)
from .run_length_harness import WIRE_HEADER_BYTES, harness_checks
from .run_length_rule import DEEP_FROM_BDP, NOT_SETTLED, settle, sides
from .run_length_study import (
    LENGTHS_S,
    SCORED,
    TOLERANCE,
    WindowShare,
    campaign_prefixes,
    first_and_longest_text,
    planned_repeats,
    prefix_shares,
    settled_length,
    status_text,
    stored_runs,
    study_reader,
    verdict,
    window_share,
)

__all__ = [
    "DEEP_FROM_BDP", "LENGTHS_S", "NOT_SETTLED", "SCORED", "TOLERANCE", "WIRE_HEADER_BYTES",
    "WindowShare", "campaign_prefixes", "campaign_runs", "first_and_longest_text",
    "harness_checks", "not_settled_text", "planned_repeats", "point_labels", "prefix_shares",
    "series_order", "settle", "settle_runs", "settle_settings", "settled_length",
    "settled_points", "sides", "status_text", "stored_runs", "study_label", "study_reader",
    "verdict", "window_share",
]
