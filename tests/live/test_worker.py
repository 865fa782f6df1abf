"""The page's engine in a browser: headless Chromium loads a page from a local server, the
page runs the engine in its Web Worker (client.mjs, worker.mjs), from the kernel's
arguments and from its own set-up of a dumbbell (setup.mjs), and gets the native kernel's
bits back. The page's requests all go to its own server, and the server saw the
worker load the engine and the module from it."""

import functools
import http.server
import json
import shutil
import threading

import numpy as np
import pytest

from coexist.fluid.model import paper_setup, published, solve
from coexist.live import compare, wasm

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(CHROMIUM is None,
                                 reason="chromium not installed: apt-get install chromium")]
PAGE = """<!doctype html><meta charset="utf-8"><title>engine</title>
<script type="module">
import { LiveEngine } from "./client.mjs";
const live = new LiveEngine();
window.runIt = async (request) => {
  const r = await (request.setup ? live.runDumbbell(request.setup) : live.run(request.args));
  return { metrics: Array.from(r.metrics), rate_sum: Array.from(r.rate_sum),
           x: Array.from(r.traces.x), q: Array.from(r.link.q), n_out: r.n_out };
};
window.ready = true;
</script>"""


@pytest.fixture
def site(tmp_path):
    """The engine's files and a page that uses them, served from 127.0.0.1."""
    root = tmp_path / "site"
    root.mkdir()
    for name in ("engine.mjs", "setup.mjs", "worker.mjs", "client.mjs", "kernel.wasm"):
        shutil.copy(wasm.HERE / name, root / name)
    (root / "index.html").write_text(PAGE)
    served: list[str] = []
    handler = functools.partial(_Recorded, served, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", served
    server.shutdown()
    server.server_close()


class _Recorded(http.server.SimpleHTTPRequestHandler):
    """Serves the site's files, noting each path asked for instead of logging it."""

    def __init__(self, served: list[str], *args, **kw) -> None:
        self.served = served
        super().__init__(*args, **kw)

    def log_message(self, *args) -> None:
        self.served.append(self.path)


def test_the_page_runs_the_engine_in_its_worker_with_the_native_bits(site, tmp_path):
    from coexist.book.browser import Page

    origin, served = site
    cfg = compare.config(["cubic", "bbr2"], 20e6, [0.02, 0.04], 2.0, 2.0, rtprop_expiry=True)
    a = solve.published_arguments(cfg, 0.5)
    out, link, metrics, rate_sum = published.integrate(**a)
    args = {k: v.tolist() if isinstance(v, np.ndarray) else v for k, v in a.items()}
    args["fields"] = ["x"]
    setup = {"ccas": ["cubic", "bbr2"], "capacityBps": 20e6, "rttsS": [0.02, 0.04],
             "bufferBdp": 2.0, "durationS": 2.0, "warmupS": 0.5, "stepS": cfg.step_s,
             "sampleS": cfg.sample_s, "rtpropExpiry": True, "fields": ["x"],
             "bbr2Phases": list(paper_setup.paper_phases(2))}
    profile = tmp_path / "profile"
    profile.mkdir()
    page = Page(CHROMIUM, f"{origin}/index.html", profile, timeout=120)
    try:
        page.wait_for("window.ready === true")
        results = [page.evaluate(f"runIt({json.dumps(r)})")
                   for r in ({"args": args}, {"setup": setup})]
        requests = list(page.requests)
    finally:
        page.close()
    for got in results:  # the kernel's arguments, and the page's own set-up of them
        assert compare.same_bits(metrics, got["metrics"]).all()
        assert compare.same_bits(rate_sum, got["rate_sum"]).all()
        assert compare.same_bits(out[0], np.reshape(got["x"], (got["n_out"], -1))).all()
        assert compare.same_bits(link[0], got["q"]).all()
    assert requests and all(r.startswith(origin) for r in requests), requests
    assert {p.rsplit("/", 1)[-1] for p in served} >= {"client.mjs", "worker.mjs",
                                                      "engine.mjs", "kernel.wasm"}, served
