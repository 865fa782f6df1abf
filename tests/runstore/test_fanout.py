"""The fluid model's sweeps on this machine's threads or on a Dask cluster give the same
table, and a cluster that cannot serve is refused before any work."""

import pandas as pd
import pytest

from coexist.book import runner
from coexist.core.params import ParameterError
from coexist.fluid.studies import equilibria
from coexist.runstore import fanout

SMALL = dict(capacity_bps=10e6, duration_s=2.0, warmup_s=1.0, step_s=1e-4, progress=False)


def _table():
    return equilibria.mix_table([0.02], 2, [1.0, 3.0], **SMALL)


@pytest.mark.slow
def test_a_sweep_on_a_cluster_equals_the_sweep_on_threads(monkeypatch):
    from distributed import Client, LocalCluster, get_task_stream

    monkeypatch.setenv("COEXIST_FLUID_CACHE", "off")  # every run computed, here and there
    monkeypatch.delenv(fanout.SCHEDULER_ENV, raising=False)
    here = _table()
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        assert fanout.reach(cluster.scheduler_address) == 2
        monkeypatch.setenv(fanout.SCHEDULER_ENV, cluster.scheduler_address)
        with get_task_stream(client) as stream:
            there = _table()
        ran = [t for t in stream.data if str(t["key"]).startswith("_on_worker")]
    assert len(ran) == 6  # 2 buffers x 3 mixes, one task each
    pd.testing.assert_frame_equal(here, there)


def test_a_worker_with_other_model_code_refuses_the_run():
    with pytest.raises(RuntimeError, match="not the caller's"):
        fanout._on_worker(abs, -1, "0" * 64)
    assert fanout._on_worker(abs, -1, fanout.lookup.code_hash()) == 1


def test_an_unreachable_scheduler_is_refused_before_any_work(tmp_path):
    with pytest.raises(ParameterError, match="parameter 'scheduler'.*answers within"):
        fanout.reach("tcp://127.0.0.1:9", timeout_s=1)
    with pytest.raises(ParameterError, match="parameter 'scheduler'"):
        runner.run(["M-F1"], out_dir=tmp_path, progress=False,
                   scheduler="tcp://127.0.0.1:9")
    with pytest.raises(ParameterError, match="'jobs' is 0"):
        runner.run(["M-F1"], out_dir=tmp_path, progress=False, jobs=0)
    assert list(tmp_path.iterdir()) == []  # no notebook ran
