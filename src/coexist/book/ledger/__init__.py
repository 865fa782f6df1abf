"""The figure ledger: every executable notebook, its parameter contract and its outputs.

One entry per notebook. Figure notebooks (kind ``figure``) regenerate one paper figure and
write ``<id>.svg`` plus the tidy ``<id>.csv`` they plotted; derivation notebooks carry the
algebra of one model. Both start with a ``parameters`` cell that :func:`check` validates.

Each parameter is declared once: its type, range and meaning in the ledger, its default in
the notebook's parameters cell (where papermill and a reader look for it), from which the
ledger reads it (:func:`notebook_defaults`) and checks it against the range.

- :mod:`.specs`: the shared parameters, the helpers that make a spec, shared meanings
- :mod:`.entries`: the entries as data, the campaigns each reads, their fluid-model rules
- :mod:`.completion`: the entries with their notebooks' defaults, looked up by id
- :mod:`.notebook_check`: the check a notebook calls on its parameters
"""

from ...core.paths import EXPECTED, NOTEBOOKS, ROOT  # noqa: F401 (re-exported)
from .completion import (  # noqa: F401 (re-exported)
    BY_ID,
    ENTRIES,
    FIGURES,
    STEPS_PER_ONE_WAY_DELAY,
    entry,
    notebook_defaults,
)
from .entries import (  # noqa: F401 (re-exported)
    CAMPAIGNS,
    FLUID_BDP,
    GROUPS_BDP,
    NOT_FLUID_RTTS,
    Entry,
)
from .notebook_check import assigned_before_check, check  # noqa: F401 (re-exported)
from .specs import (  # noqa: F401 (re-exported)
    BUF_MAX,
    BUF_MIN,
    CAPACITY,
    CURVE,
    CURVE_RULES,
    DURATION,
    FLUCTUATION_READING,
    FLUID_CAPACITY,
    FLUID_RULE,
    MEANINGS,
    NE_NUMERICS,
    OUT_DIR,
    PACKET,
    PERIOD_RULES,
    POINTS,
    RTT,
    TRACE_BUFFER,
    TRACE_RTT,
    TWO_FLOW_LONGEST_S,
    meaning,
)

__all__ = ["Entry", "ENTRIES", "FIGURES", "check", "entry"]
