"""The "Your network" page's own JavaScript (your_network.mjs, fluid_share.mjs) under Node:
its range checks name the parameter, the value and the range; its settings survive the URL;
its fluid-model share and Nash equilibria are coexist.fluid's for the same runs (sums taken
in order rather than numpy's pairwise order: the same to 1e-9 of a rate, the same share as
printed, the same equilibria)."""

import json
import subprocess

import numpy as np
import pytest

from coexist.closed_form import nash
from coexist.fluid.model import paper_setup, solve
from coexist.fluid.studies import equilibria
from coexist.live import engine, wasm

pytestmark = pytest.mark.skipif(engine.node() is None, reason="no 'node' on PATH: the page "
                                "runs under Node here (apt-get install nodejs)")
#: relative difference of two goodputs summed in different orders (3-s runs: a few
#: thousand samples, each sum's rounding below 1e-12 of it), fixed before comparing
GOODPUT_RTOL = 1e-9


def node_eval(body: str):
    """Run ``body`` (JavaScript with the page's modules imported as cf, yn, fs, su and the
    worker's handle) under Node; it ends with ``out(value)``, which comes back as JSON."""
    head = "\n".join(
        f'import * as {name} from "{(wasm.HERE / f).as_uri()}";'
        for name, f in (("yn", "your_network.mjs"), ("fs", "fluid_share.mjs"),
                        ("su", "setup.mjs")))
    head += f'\nimport {{ handle }} from "{(wasm.HERE / "worker.mjs").as_uri()}";'
    head += "\nconst out = (v) => process.stdout.write(JSON.stringify(v));\n"
    done = subprocess.run([engine.node(), "--input-type=module", "-e", head + body],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_value_outside_its_range_gets_one_line_naming_it():
    got = node_eval("""
const s = yn.readHash("#cap=5000&n=20&k=3");
out([yn.problems(s), yn.problems(yn.readHash("#n=20&k=3"), true),
     yn.problems(yn.readHash("#n=4&k=5")), yn.problems(yn.readHash("")),
     yn.readHash(yn.writeHash(yn.readHash("#cap=12.5&v=2&aqm=red&exp=1"))),
     yn.readHash("#rtt=80"), yn.problems(yn.readHash("#rtt=80&rtt2=60"))]);""")
    beyond, fluid, mix, none, again, single, spread = got
    assert beyond == ["Capacity (Mbit/s) = 5000 is outside the valid range 1 to 1000"]
    assert len(fluid) == 1 and "Flows = 20" in fluid[0] and "2 to 10" in fluid[0]
    assert mix == ["BBR flows = 5 is outside the valid range 0 to 4 (the flows)"]
    assert none == []
    assert (again["cap"], again["v"], again["aqm"], again["exp"]) == (12.5, 2, "red", 1)
    assert single["rtt2"] == 80  # no spread unless the URL gives one
    assert spread == ["RTT spread up to = 60 ms is outside the valid range 80 to 500 ms "
                      "(at least the RTT)"]


def test_the_pages_defaults_are_the_figures():
    """The page opens on WhatIf's default setting and run length, so the default fluid
    share is the figure's."""
    got = node_eval("out(yn.readHash(''));")
    assert (got["cap"], got["rtt"], got["buf"], got["n"], got["k"]) == (100, 40, 2, 2, 1)
    assert (got["dur"], got["warm"], got["step"]) == (120, 30, 50)


def _python_table(n, variant, rtts, buffer, capacity, duration, warmup, aqm="droptail"):
    """Per-flow goodput and standard error of each algorithm in every mix, as
    coexist.fluid.studies.equilibria computes them (without its store)."""
    rows = {}
    for k in range(n + 1):
        cfg, groups = equilibria.mix_config((k,), n, [rtts[0]], buffer, capacity, variant,
                                            duration, 5e-5, False, False, "published")
        if rtts[0] != rtts[-1] or aqm != "droptail":
            ccas = [f.cca for f in cfg.flows]
            pps = capacity / (8 * solve.PACKET_BYTES)
            rr = list(np.linspace(rtts[0], rtts[-1], n))
            cfg = solve.dumbbell(ccas, capacity_bps=capacity, rtt_s=rr, buffer_bdp=buffer,
                                 duration_s=duration, step_s=5e-5, aqm=aqm,
                                 sample_s=max(5e-5, min(1e-3, n / pps)), reading="published",
                                 **paper_setup.start(ccas, rr, buffer * pps * rtts[0], pps))
        rows[k] = equilibria.group_goodput(solve.run(cfg), warmup, groups)
    return rows


@pytest.mark.parametrize(("variant", "rtts", "aqm"), [
    ("bbr1", (0.04, 0.04), "droptail"), ("bbr2", (0.02, 0.05), "red")])
def test_the_fluid_share_and_equilibria_are_pythons(variant, rtts, aqm):
    n, buffer, capacity, duration, warmup = 3, 2.0, 20e6, 3.0, 1.0
    phases = list(paper_setup.paper_phases(n))
    got = node_eval(f"""
const table = [];
for (let k = 0; k <= {n}; k++) {{
  const setup = fs.mixSetup({{ n: {n}, k, variant: "{variant}", capacityBps: {capacity},
    rttLoS: {rtts[0]}, rttHiS: {rtts[1]}, bufferBdp: {buffer}, durationS: {duration},
    warmupS: {warmup}, stepS: 5e-5, aqm: "{aqm}", rtpropExpiry: false,
    phases: {json.dumps(phases)} }});
  const args = su.dumbbell(setup);
  const r = await handle({{ args, wasm: new URL("{(wasm.WASM).as_uri()}") }});
  const good = fs.goodput(r, args, {warmup});
  table.push({{ share: fs.bbrShare(good, setup.ccas), cubic: fs.perFlow(good, setup.ccas, true),
    bbr: fs.perFlow(good, setup.ccas, false) }});
}}
out({{ table, eq: fs.equilibria(table) }});""")
    want = _python_table(n, variant, list(rtts), buffer, capacity, duration, warmup, aqm)
    rates, spread = {}, {}
    for k, t in want.items():
        by = {c: t[t.cca == c].iloc[0] for c in t.cca}
        page = got["table"][k]
        for cca in ("cubic", "bbr"):
            if cca in by:
                assert page[cca]["bps"] == pytest.approx(by[cca].goodput_bps, rel=GOODPUT_RTOL)
                assert page[cca]["se"] == pytest.approx(by[cca].goodput_se_bps, rel=1e-6,
                                                        abs=1e-3)
            else:
                assert page[cca] is None
        total = t.goodput_bps * t.flows
        share = float(total[t.cca == "bbr"].sum() / total.sum())
        assert f"{page['share']:.3f}" == f"{share:.3f}"
        rates[(k,)] = {(0, c): float(v) for c, v in zip(t.cca, t.goodput_bps, strict=True)}
        spread[(k,)] = {(0, c): float(v) for c, v in zip(t.cca, t.goodput_se_bps, strict=True)}
    assert got["eq"] == [m[0] for m in nash.grouped_equilibria(rates, [n], spread=spread)]


def test_the_book_serves_the_engine_and_the_phase_table(tmp_path):
    """The site gets every module, the committed kernel.wasm byte for byte, and BBRv2's
    phases for 2 to 10 flows as Python draws them (paper_phases, seed 1)."""
    from types import SimpleNamespace

    from coexist.book import sphinxext

    app = SimpleNamespace(builder=SimpleNamespace(format="html"), outdir=str(tmp_path))
    sphinxext._copy_live(app, None)
    live = tmp_path / sphinxext.LIVE_DIR
    for src in [*wasm.HERE.glob("*.mjs"), wasm.WASM]:
        assert (live / src.name).read_bytes() == src.read_bytes()
    phases = json.loads((live / "bbr2_phases.json").read_text())
    assert phases == {str(n): list(paper_setup.paper_phases(n)) for n in range(2, 11)}


def test_the_classic_script_is_the_modules_code(tmp_path):
    """your_network.js (coexist.live.bundle) parses as a classic script and holds every
    line of the page's modules but their import and export keywords."""
    from coexist.live import bundle

    script = tmp_path / bundle.SCRIPT
    script.write_text(bundle.classic_script())
    done = subprocess.run([engine.node(), "--check", str(script)], capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, done.stderr
    lines = set(script.read_text().splitlines())
    for module in bundle.MODULES:
        for line in (wasm.HERE / module).read_text().splitlines():
            if not line.startswith(("import ", "export ")) and "import.meta" not in line:
                assert line in lines, (module, line)
