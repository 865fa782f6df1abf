"""The built "Your network" section in headless Chromium: served from a local static server,
with a short 2-flow run in the URL, it shows the closed form's numbers as coexist.closed_form
prints them, runs the fluid model in its Web Worker and shows coexist.fluid's share as
printed, and asks for nothing outside the site.

Needs the built book (``coexist book``); skipped without it or Chromium, a failure in CI."""

import functools
import http.server
import os
import shutil
import threading
from pathlib import Path

import pytest

from coexist.closed_form import mishra, nash, ware
from coexist.fluid.model import solve
from coexist.fluid.studies import equilibria

from ..conftest import IN_CI, ROOT

HTML = Path(os.environ.get("COEXIST_BOOK_HTML", ROOT / "_build" / "html"))
PAGE = "notebooks/fig_whatif.html"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.browser
#: a short run: 2 flows, 20 Mbit/s, 40 ms, 3 BDP, 3 s with 1 s of warm-up
SETTING = {"cap": 20, "rtt": 40, "rtt2": 40, "buf": 3, "n": 2, "k": 1, "v": 1,
           "aqm": "droptail", "exp": 0, "dur": 3, "warm": 1, "step": 50}


def _need(condition: bool, why: str) -> None:
    if not condition:
        if IN_CI:
            pytest.fail(why)
        pytest.skip(why)


class _Recorded(http.server.SimpleHTTPRequestHandler):
    """Serves the book's files, noting each request line instead of logging it."""

    def __init__(self, served: list[str], *args, **kw) -> None:
        self.served = served
        super().__init__(*args, **kw)

    def log_message(self, *args) -> None:
        self.served.append(self.path)


@pytest.fixture
def site():
    """The built book served from 127.0.0.1, and the paths it served (the worker's too,
    which the page's own request log does not see)."""
    served: list[str] = []
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Recorded, served, directory=str(HTML)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", served
    server.shutdown()
    server.server_close()


def _native() -> dict:
    """The readouts as coexist.closed_form and coexist.fluid give them for SETTING."""
    s = SETTING
    x, n, k = float(s["buf"]), s["n"], s["k"]
    region = nash.predicted_region(x, n)
    baseline = float(ware.bbr_share(x, capacity_bps=s["cap"] * 1e6, rtt_s=s["rtt"] / 1e3,
                                    n_bbr=k, duration_s=float(s["dur"])))
    lo, hi = nash.whole_flows(region)
    cfg, groups = equilibria.mix_config((k,), n, [s["rtt"] / 1e3], x, s["cap"] * 1e6, "bbr1",
                                        float(s["dur"]), s["step"] * 1e-6, False, False,
                                        "published")
    t = equilibria.group_goodput(solve.run(cfg), float(s["warm"]), groups)
    total = t.goodput_bps * t.flows
    return {
        "share-sync": f"{float(mishra.aggregate_bbr_share(x, n - k, k, synchronised=True)):.3f}",
        "share-desync":
            f"{float(mishra.aggregate_bbr_share(x, n - k, k, synchronised=False)):.3f}",
        "share-ware": f"{baseline:.3f}",
        "nash-crossings": f"{float(region['bbr_flows_sync']):.2f} and "
                          f"{float(region['bbr_flows_desync']):.2f}",
        "nash-region": f"{int(lo)}" if lo == hi else f"{int(lo)} to {int(hi)}",
        "fluid": f"{float(total[t.cca == 'bbr'].sum() / total.sum()):.3f}",
    }


def test_the_page_shows_the_native_numbers_and_stays_on_its_site(site, tmp_path):
    from coexist.book.browser import Page

    origin, served = site
    _need((HTML / PAGE).exists(), "book not built: run `coexist book` first")
    _need(CHROMIUM is not None, "chromium not installed: apt-get install chromium")
    want = _native()
    hash_ = "&".join(f"{k}={v}" for k, v in SETTING.items())
    profile = tmp_path / "profile"
    profile.mkdir()
    page = Page(CHROMIUM, f"{origin}/{PAGE}#{hash_}", profile, timeout=120)
    try:
        page.wait_for("document.querySelector('#coexist-your-network .yn-readout') !== null")
        shown = page.evaluate("Object.fromEntries(Array.from(document.querySelectorAll("
                              "'#coexist-your-network [data-value]'), (e) => [e.dataset.value, "
                              "e.textContent]))")
        page.evaluate("document.querySelector('#coexist-your-network .yn-fluid').parentElement"
                      ".querySelector('button').click()")
        page.wait_for("document.querySelector('#coexist-your-network .yn-fluid').dataset.share",
                      timeout=120)
        shown["fluid"] = page.evaluate(
            "document.querySelector('#coexist-your-network .yn-fluid').dataset.share")
        message = page.evaluate("document.querySelector('#coexist-your-network .yn-message')"
                                ".textContent")
        # the theme declares its THEBE_JS_URL twice on every page (tests/book notes it)
        requests = list(page.requests)
        console = [c for c in page.console if "THEBE_JS_URL" not in c]
    finally:
        page.close()
    assert message == "" and not console, (message, console)
    assert shown == want
    outside = [r for r in requests if not r.startswith((origin, "data:", "blob:"))]
    assert not outside, f"the page asked for {outside[0]}"
    assert "/_static/live/kernel.wasm" in served  # the worker ran the engine from the site


def test_opened_from_a_file_the_page_gives_the_closed_form(tmp_path):
    """A page opened from a file runs the classic script (browsers refuse modules there):
    the closed form shows, and the fluid model's buttons say it needs the book served."""
    from coexist.book.browser import Page

    _need((HTML / PAGE).exists(), "book not built: run `coexist book` first")
    _need(CHROMIUM is not None, "chromium not installed: apt-get install chromium")
    hash_ = "&".join(f"{k}={v}" for k, v in SETTING.items())
    profile = tmp_path / "profile"
    profile.mkdir()
    page = Page(CHROMIUM, f"{(HTML / PAGE).as_uri()}#{hash_}", profile, timeout=60)
    try:
        page.wait_for("document.querySelector('#coexist-your-network .yn-readout') !== null")
        shown = page.evaluate("document.querySelector('#coexist-your-network "
                              "[data-value=\"share-sync\"]').textContent")
        buttons = page.evaluate("Array.from(document.querySelectorAll("
                                "'#coexist-your-network button'), (b) => b.disabled)")
        note = page.evaluate("document.querySelector('#coexist-your-network .yn-progress')"
                             ".textContent")
        heading = page.evaluate("document.querySelector('section#your-network h2') !== null")
    finally:
        page.close()
    x = float(SETTING["buf"])
    assert shown == f"{float(mishra.aggregate_bbr_share(x, 1, 1, synchronised=True)):.3f}"
    assert buttons == [True, True, True] and "served" in note
    assert heading  # the section's own heading and text stay
