"""Campaigns on the real testbed: killed at random points and resumed; fanned out to Dask.

Skipped without root/netns/iperf3, except in CI (``CI=true``), where they must run.
"""

import json
import os
import random
import signal
import subprocess
import sys
import time

import pytest

from coexist import data
from coexist.data import datapackage, gates
from coexist.testbed import campaign

from .test_integration import _netns, _require_testbed, _stall, _steal

pytestmark = pytest.mark.testbed

TINY = """
grid:
  capacity: [20mbit]
  rtt: [10ms]
  buffer_bdp: [2]
  flows: ["cubic:1", "bbr:1", "cubic:1,bbr:1"]
duration: 3
warmup: 1
interval: 0.5
sample: 0.2
repeats: {repeats}
min_utilisation: 0.5
max_attempts: 3
"""


@pytest.fixture
def tiny(tmp_path, monkeypatch):
    _require_testbed()
    monkeypatch.delenv("COEXIST_RUN_DIR", raising=False)  # the machine's real registry

    def make(repeats: int):
        (tmp_path / "campaigns").mkdir(exist_ok=True)
        path = tmp_path / "campaigns" / "tiny.yaml"
        path.write_text(TINY.format(repeats=repeats))
        return campaign.load(path)

    return make


def _check_consistent(c, data_dir):
    """Every stored run is complete and unique; nothing half-written is visible as data."""
    root = c.run_dir(data_dir)
    keys = [p.key for p in c.points]
    dirs = [p for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))] \
        if root.exists() else []
    for d in dirs:
        assert d.name in keys
        assert {f.name for f in d.iterdir()} == {"summary.json", *data.RUN_FILES.values()}
        s = json.loads((d / "summary.json").read_text())
        assert s["campaign"]["key"] == d.name and s["valid"]
        for table, fname in data.RUN_FILES.items():
            data.load_table(d / fname, table)
    return {d.name for d in dirs}


def test_killed_campaign_loses_and_duplicates_nothing(tiny, tmp_path):
    """Three runs of 3 s, the campaign killed (SIGKILL) three times and then run to its
    end: no finished run disappears or is stored twice, nothing half written is visible,
    and every point ends done or given up with its reasons. The first kill comes just
    after a run is stored, the others at random moments; a run takes about 9 s here, so a
    kill lands in set-up, traffic, storing or the pause between runs."""
    c = tiny(repeats=1)
    seed = int(os.environ.get("KILL_SEED", time.time_ns() % 10_000))
    rng = random.Random(seed)
    cmd = [sys.executable, "-m", "coexist.cli", "campaign", "run", str(c.path),
           "--data", str(tmp_path), "--quiet", "--no-steal-wait"]
    seen: set[str] = set()
    for i in range(3):
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if i == 0:  # the first kill waits for a stored run, so that the next ones can lose it
            deadline = time.monotonic() + 60
            while not _check_consistent(c, tmp_path) and time.monotonic() < deadline:
                time.sleep(0.2)
            time.sleep(rng.uniform(0.0, 3.0))
        else:
            time.sleep(rng.uniform(1.0, 7.0))
        p.kill()
        p.wait(10)
        done = _check_consistent(c, tmp_path)
        assert seen <= done, f"a finished run disappeared (seed {seed})"
        seen = done
    # the hard cap bounds this run: per point, invalid runs worth DISTURBED_FACTOR x
    # max_attempts full runs of wall time (each costs at least OVERHEAD_S of it), one more
    # that crosses the cap and one valid run; a tiny run's real set-up is well under OVERHEAD_S
    worst_s = len(c.points) * (campaign.DISTURBED_FACTOR * c.max_attempts + 2) \
        * (c.points[0].exp.duration_s + campaign.OVERHEAD_S)
    final = subprocess.run(cmd, capture_output=True, text=True, timeout=worst_s + 60)
    st = campaign.status(c, tmp_path)
    # a point may be given up after max_attempts invalid runs (exit code 3) only if the
    # hypervisor's steal explains them; the bookkeeping must hold either way
    assert final.returncode == (3 if st.failed else 0), final.stderr
    _assert_explained_by_host(c, tmp_path, st.failed)
    keys = {p.key for p in c.points}
    assert sorted(st.done + st.failed) == sorted(keys), (f"seed {seed}", final.stdout)
    assert not st.left
    assert _check_consistent(c, tmp_path) == set(st.done)
    assert not list(c.run_dir(tmp_path).rglob(".*partial*"))
    if st.done:
        table = data.load_table(tmp_path / "tiny.csv", "campaign")
        assert sorted(table["key"].unique()) == sorted(st.done)
        assert len(table) == sum(len(p.exp.flows) for p in c.points if p.key in st.done)
    assert datapackage.verify(tmp_path) == []
    assert not any(ns.startswith("cx-") for ns in _netns() - _live_namespaces())
    status = subprocess.run([sys.executable, "-m", "coexist.cli", "campaign", "status",
                             str(c.path), "--data", str(tmp_path)], capture_output=True, text=True)
    assert f"{len(st.done)}/{len(c.points)} done, 0 left" in status.stdout
    if st.failed:
        assert (f"{len(st.failed)} given up after {c.max_attempts} invalid attempts"
                in status.stdout)


def _invalid_attempts(c, data_dir) -> dict[str, list[dict]]:
    """Every stored invalid attempt's summary, by point."""
    root = c.run_dir(data_dir) / "_invalid"
    out: dict[str, list[dict]] = {}
    for p in sorted(root.glob("*/summary.json")) if root.exists() else []:
        s = json.loads(p.read_text())
        out.setdefault(s["campaign"]["key"], []).append(s)
    return out


def _assert_explained_by_host(c, data_dir, keys) -> None:
    """Points without a valid run may only have failed because the host stalled us.

    As in ``test_cubic_vs_bbr_run``: an attempt during which the hypervisor took more than
    1 % of the machine's CPU, or 1 ms of CPU time within a second of the traffic, or which
    the in-run sleepers saw stalled for at least 0.1 % of the time (``gates.held_up``), must
    have failed on timing gates only, and fewer than ``max_attempts`` undisturbed attempts of a
    point may have failed (the campaign then gave up once its invalid runs had taken
    ``DISTURBED_FACTOR x max_attempts`` runs' worth of time).
    """
    attempts = _invalid_attempts(c, data_dir)
    st = campaign.status(c, data_dir)
    for key in keys:
        runs = attempts.get(key, [])
        why = [(s["invalid_reasons"], _steal(s), _stall(s)) for s in runs]
        for s in runs:
            if gates.held_up(s):
                assert gates.timing_only(s), (key, why)
        undisturbed = [s for s in runs if not gates.disturbed(s)]
        assert len(undisturbed) < c.max_attempts, (key, why)
        assert key in st.failed, (key, why)
        assert st.used[key] >= campaign.DISTURBED_FACTOR * c.max_attempts - 1e-9, (key, why)


def _live_namespaces() -> set[str]:
    """Namespaces of runs whose owner is alive (e.g. a campaign running on this machine)."""
    from coexist.testbed import topology

    live: set[str] = set()
    d = topology.registry_dir()
    for entry in d.glob("*.json") if d.exists() else []:
        doc = json.loads(entry.read_text())
        if topology._alive(doc["pid"]):
            live.update(doc["namespaces"])
    return live


def test_dask_local_cluster_runs_campaign(tiny, tmp_path):
    from distributed import LocalCluster

    c = tiny(repeats=1)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster:
        st = campaign.run(c, tmp_path, scheduler=cluster.scheduler_address, progress=False,
                          limit=2)
    # --limit counts executions: two runs went to the worker, each stored as valid or as an
    # invalid attempt (a 3-s run on this VM can fail a gate)
    assert len(st.done) + sum(st.attempts.values()) == 2
    assert len(st.left) == 3 - len(st.done)
    assert _check_consistent(c, tmp_path) == set(st.done)
    assert datapackage.verify(tmp_path) == []


def test_sigint_during_campaign_keeps_finished_runs(tiny, tmp_path):
    c = tiny(repeats=1)
    p = subprocess.Popen([sys.executable, "-m", "coexist.cli", "campaign", "run", str(c.path),
                          "--data", str(tmp_path), "--quiet", "--steal-limit", "1",
                          "--steal-max-wait", "20"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60  # a 3-s run on a quiet host is done in about 10 s
    while not campaign.status(c, tmp_path).done and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(1.0)
    p.send_signal(signal.SIGINT)
    assert p.wait(30) == 130
    done = _check_consistent(c, tmp_path)
    if not done:  # no attempt was valid in a minute: the hypervisor must explain it
        st = campaign.status(c, tmp_path)
        _assert_explained_by_host(c, tmp_path, st.failed)
        tried = _invalid_attempts(c, tmp_path)
        for key in set(tried) - set(st.failed):  # the point being retried when SIGINT came
            undisturbed = [s for s in tried[key] if not gates.disturbed(s)]
            assert len(undisturbed) < c.max_attempts, key
        assert tried
    assert len(done) < 3
    assert datapackage.verify(tmp_path) == []
    # every stored attempt records the steal measured just before it and the wait for it
    stored = [json.loads(f.read_text())["campaign"]
              for f in c.run_dir(tmp_path).rglob("summary.json")]
    assert stored and all(0 <= s["waited_for_quiet_s"] <= 25 for s in stored), stored
    assert all(s["steal_before_pct"] is None or 0 <= s["steal_before_pct"] <= 100
               for s in stored)
