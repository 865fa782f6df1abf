"""Re-running every figure with parameters a reader might choose (``coexist.book.rerun``): each
draw inside the ledger's ranges must give the figure and its table, or be refused before
any run in one line naming the rule it breaks. ``make test`` runs one draw per figure
(marker ``rerun``), seeded with the commit, so each commit tries other values; ``make
fuzz-figures`` runs more (``RERUN_DRAWS``, ``RERUN_SEED``). Each outcome is appended to
``_build/rerun-outcomes.jsonl``.
"""

import json
import os
import random

import pandas as pd
import pytest

from coexist.book import ledger, rerun, runner
from coexist.core.params import ParameterError
from coexist.core.provenance import git_commit

from ..conftest import ROOT

DRAWS = int(os.environ.get("COEXIST_RERUN_DRAWS", "1"))
SEED = os.environ.get("COEXIST_RERUN_SEED") or git_commit().get("commit") or "uncommitted"
OUTCOMES = ROOT / "_build" / "rerun-outcomes.jsonl"


def test_draws_lie_inside_every_range_and_are_reproducible():
    for e in ledger.FIGURES:
        a, b = (rerun.draw(e, random.Random(f"x{e.id}")) for _ in range(2))
        assert a == b
        for name, value in a.items():
            assert e.spec.get(name).check(value) == value


@pytest.mark.rerun
@pytest.mark.parametrize("e", ledger.FIGURES, ids=lambda e: e.id)
def test_a_figure_rerun_with_drawn_parameters_gives_its_figure_or_a_one_line_refusal(
        e, tmp_path):
    rng = random.Random(f"{SEED}:{e.id}")
    for i in range(DRAWS):
        values = rerun.draw(e, rng)
        refused = rerun.refusal(e, values)
        outcome = {"figure": e.id, "seed": SEED, "draw": i, "values": values}
        if refused is not None:  # the runner refuses it the same way, before any run
            with pytest.raises(ParameterError, match="must|invalid|valid"):
                runner.run([e.id], rerun.as_overrides(values), out_dir=tmp_path / str(i),
                           progress=False)
            assert "\n" not in refused
            _record({**outcome, "outcome": "refused before any run", "why": refused})
            continue
        try:
            (res,) = runner.run([e.id], rerun.as_overrides(values), out_dir=tmp_path / str(i),
                                progress=False)
        except runner.CheckFailed as exc:
            _record({**outcome, "outcome": "failed", "why": str(exc)[:400]})
            raise
        assert res.svg.stat().st_size > 1000 and len(pd.read_csv(res.csv)) > 0
        _record({**outcome, "outcome": "figure and table"})


def _record(line: dict) -> None:
    OUTCOMES.parent.mkdir(parents=True, exist_ok=True)
    with open(OUTCOMES, "a") as fh:
        fh.write(json.dumps(line, default=str) + "\n")
