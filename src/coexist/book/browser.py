"""A minimal Chrome DevTools Protocol client (headless Chromium, tornado's websocket): a
built page opened the way a reader opens it, so the book's checks can move a slider and
read the chart back, or measure what a page shows (:mod:`coexist.book.reader_view`)."""

from __future__ import annotations

import json
import subprocess
import time
import urllib.request
from pathlib import Path

from tornado.ioloop import IOLoop
from tornado.websocket import websocket_connect


class Page:
    """One headless Chromium showing one page; ``evaluate`` runs JavaScript in it."""

    def __init__(self, chromium: str, url: str, profile: Path, timeout: float = 30.0) -> None:
        self.timeout = timeout
        self.proc = subprocess.Popen(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
             "--no-first-run", "--disable-background-networking", "--disable-component-update",
             "--disable-sync", f"--user-data-dir={profile}", "--remote-debugging-port=0",
             "--allow-file-access-from-files", url],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + timeout
        while not port_file.exists() or not port_file.read_text().strip():
            if time.monotonic() > deadline or self.proc.poll() is not None:
                self.close()
                raise RuntimeError("Chromium did not open its debugging port")
            time.sleep(0.1)
        port = int(port_file.read_text().split()[0])
        while True:
            targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list"))
            pages = [t for t in targets if t.get("type") == "page"]
            if pages or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        self.loop = IOLoop(make_current=False)
        self.ws = self.loop.run_sync(lambda: websocket_connect(pages[0]["webSocketDebuggerUrl"],
                                                               max_message_size=1 << 28))
        self.next_id = 0
        self.console: list[str] = []
        self.requests: list[str] = []
        self.call("Runtime.enable")
        self.call("Network.enable")
        self.call("Page.enable")
        self.call("Page.reload", ignoreCache=True)  # load again, now with requests recorded

    def call(self, method: str, **params):
        self.next_id += 1
        mid = self.next_id

        async def go():
            await self.ws.write_message(json.dumps({"id": mid, "method": method,
                                                    "params": params}))
            while True:
                msg = json.loads(await self.ws.read_message())
                if msg.get("method") == "Network.requestWillBeSent":
                    self.requests.append(msg["params"]["request"]["url"])
                if msg.get("method") == "Runtime.exceptionThrown":
                    self.console.append(json.dumps(msg["params"])[:500])
                if msg.get("id") == mid:
                    return msg

        msg = self.loop.run_sync(go, timeout=self.timeout)
        if "error" in msg:
            raise RuntimeError(f"{method}: {msg['error']}")
        return msg["result"]

    def evaluate(self, expression: str):
        r = self.call("Runtime.evaluate", expression=expression, returnByValue=True,
                      awaitPromise=True)
        if "exceptionDetails" in r:
            raise RuntimeError(f"{expression!r}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def show(self, page: Path) -> None:
        """Open ``page`` and wait until it and its images have loaded."""
        self.call("Page.navigate", url=page.as_uri())
        self.wait_for("document.readyState === 'complete' && Array.from("
                      "document.querySelectorAll('img')).every(i => i.complete)")

    def wait_for(self, expression: str, timeout: float | None = None):
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise TimeoutError(f"still false after waiting: {expression}")
            time.sleep(0.2)

    def close(self) -> None:
        try:
            if getattr(self, "ws", None) is not None:
                self.ws.close()
        finally:
            self.proc.kill()
            self.proc.wait(10)
