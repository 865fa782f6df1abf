"""What each page of the built book shows a reader who does not click anything.

A page is opened in headless Chromium at a laptop's window width and measured as laid out:
the share of its visible text that is code, the lines of raw printed output (a cell's
stdout or a plain-text result, not a table or a figure), the preformatted lines wider than
their box (cut off at the column's edge; a block that wraps its lines has none), the
tables wider than the column, and the links that lead nowhere. Collapsed code (a
``hide-input`` cell) is not visible and does not count. The book's reader-view test
(``tests/book/test_browser.py``) holds every page to :data:`LIMITS`; ``coexist pages``
prints the table.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..core.params import invalid
from ..core.paths import ROOT

#: the window the pages are measured in, pixels (a laptop's; the figures are sized for it)
WINDOW_WIDTH_PX, WINDOW_HEIGHT_PX = 1280, 900
#: characters of code that fit a code block in that window: 640 px of room in the theme's
#: 14-px monospace at 8.43 px a character (measured in the built book); visible code and
#: the chapters' code blocks keep their lines this short
CODE_COLUMN_CHARS = 75


@dataclass(frozen=True)
class Limits:
    """What a page may show: figure pages at most ``figure_code_share`` of their visible
    text as code (derivation pages keep their code: it is the derivation), no page any raw
    printed output, no line wider than its box, no table wider than the column and no link
    to a missing file."""

    figure_code_share: float = 0.05
    raw_output_lines: int = 0
    overflowing_lines: int = 0
    overflowing_tables: int = 0
    broken_links: int = 0


LIMITS = Limits()

#: measured in the page: ``innerText`` holds only what is rendered, so a collapsed cell's
#: code and anything in a closed ``<details>`` are left out; a line's width is its text
#: measured in the box's own font
_MEASURE = r"""
(() => {
  const art = document.querySelector('article.bd-article') || document.querySelector('main')
    || document.body;
  const chars = s => s.replace(/\s+/g, '').length;
  const shown = e => e.getClientRects().length > 0;
  const canvas = document.createElement('canvas').getContext('2d');
  const inOutput = e => e.closest('.cell_output') !== null;
  let code = 0, raw = 0, over = 0, overTables = 0;
  const overSamples = [];
  for (const pre of art.querySelectorAll('pre')) {
    if (!shown(pre)) continue;
    const text = pre.innerText;
    if (inOutput(pre)) {
      const box = pre.closest('.output');
      if (box && ['stream', 'stderr', 'text_plain', 'traceback'].some(
          c => box.classList.contains(c)))
        raw += text.split('\n').filter(l => l.trim() !== '').length;
    } else {
      code += chars(text);
    }
    const style = getComputedStyle(pre);
    if (style.whiteSpace === 'pre-wrap' || style.whiteSpace === 'break-spaces') continue;
    canvas.font = `${style.fontStyle} ${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
    const room = pre.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    for (const line of text.split('\n')) {
      if (canvas.measureText(line.replace(/\t/g, '    ')).width > room + 1) {
        over += 1;
        if (overSamples.length < 3) overSamples.push(line.slice(0, 80));
      }
    }
  }
  const column = art.clientWidth;
  for (const t of art.querySelectorAll('table')) {
    if (shown(t) && t.getBoundingClientRect().width > column + 1) overTables += 1;
  }
  return {total: chars(art.innerText), code: code, raw: raw, over: over,
          overTables: overTables, overSamples: overSamples,
          links: Array.from(art.querySelectorAll('a[href]')).map(a => a.getAttribute('href'))};
})()
"""


def pages(html_dir: Path) -> list[tuple[str, Path]]:
    """The book's pages in reading order (``_toc.yml``), as (document name, HTML file)."""
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    return [(name, html_dir / f"{name}.html")
            for name in re.findall(r"(?:root|file): (\S+)", toc)]


def require_built(todo: list[tuple[str, Path]]) -> list[tuple[str, Path]]:
    """``todo`` itself, once every page of it is built (else one line naming the first)."""
    missing = [str(p) for _, p in todo if not p.exists()]
    if missing:
        raise FileNotFoundError(f"not built: {missing[0]} (run `make book` first)")
    return todo


def broken_links(page: Path, hrefs: list[str]) -> list[str]:
    """The links of ``page`` to a file of the built book that is not there (external links,
    anchors within the page and ``mailto:`` are not checked: the book is built offline)."""
    broken = []
    for href in hrefs:
        if re.match(r"^[a-z][a-z0-9+.-]*:", href) or href.startswith("#"):
            continue
        target = href.split("#", 1)[0].split("?", 1)[0]
        if target and not (page.parent / target).resolve().exists():
            broken.append(href)
    return broken


def find_chromium(chromium: str | None = None) -> str:
    """``chromium`` if given, else the Chromium on the PATH (one line if there is none)."""
    found = chromium or shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        raise RuntimeError("chromium not installed: apt-get install chromium")
    return found


def _measured(files: list[tuple[str, Path]], chromium: str) -> list[dict]:
    """Open each file in one browser at the laptop window's size and measure it."""
    from .browser import Page

    rows = []
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as profile:
        browser = Page(chromium, files[0][1].as_uri(), Path(profile), timeout=120)
        try:
            browser.call("Emulation.setDeviceMetricsOverride", width=WINDOW_WIDTH_PX,
                         height=WINDOW_HEIGHT_PX, deviceScaleFactor=1, mobile=False)
            for name, path in files:
                browser.show(path)
                m = browser.evaluate(_MEASURE)
                stem = Path(name).name
                kind = ("figure" if stem.startswith("fig_") else
                        "derivation" if stem.startswith("derive_") else "chapter")
                rows.append({"page": name, "kind": kind, "visible_chars": m["total"],
                             "code_chars": m["code"],
                             "code_share": m["code"] / m["total"] if m["total"] else 0.0,
                             "raw_output_lines": m["raw"], "overflowing_lines": m["over"],
                             "overflow_examples": m["overSamples"],
                             "overflowing_tables": m["overTables"],
                             "broken_links": broken_links(path, m["links"])})
        finally:
            browser.close()
    return rows


def measure_file(path: Path, chromium: str | None = None) -> dict:
    """The measurements of one HTML file (see :func:`measure`)."""
    return _measured([(path.stem, path)], find_chromium(chromium))[0]


def measure(html_dir: Path, chromium: str | None = None,
            only: list[str] | None = None) -> pd.DataFrame:
    """One row per page of the built book in ``html_dir``: its kind (figure, derivation,
    chapter), the characters of visible text and of visible code, the code's share, the
    raw output lines, the overflowing preformatted lines (with up to three of them) and
    tables, and the broken links."""
    every = pages(html_dir.resolve())
    unknown = sorted(set(only or []) - {n for n, _ in every})
    if unknown:
        raise invalid("page", unknown[0], "a page of _toc.yml, e.g. " + every[1][0])
    todo = require_built([(n, p) for n, p in every if only is None or n in only])
    return pd.DataFrame(_measured(todo, find_chromium(chromium)))


def failures(table: pd.DataFrame, limits: Limits = LIMITS) -> list[str]:
    """One line per page and limit it breaks (empty: every page reads as it should)."""
    out = []
    for r in table.itertuples():
        if r.kind == "figure" and r.code_share > limits.figure_code_share:
            out.append(f"{r.page}: {r.code_share:.0%} of the visible text is code "
                       f"(at most {limits.figure_code_share:.0%}: collapse it, hide-input)")
        if r.raw_output_lines > limits.raw_output_lines:
            out.append(f"{r.page}: {r.raw_output_lines} lines of raw printed output "
                       f"(at most {limits.raw_output_lines}: a table, a claim or nothing)")
        if r.overflowing_lines > limits.overflowing_lines:
            out.append(f"{r.page}: {r.overflowing_lines} preformatted lines wider than the "
                       f"column, e.g. {r.overflow_examples[0]!r}")
        if r.overflowing_tables > limits.overflowing_tables:
            out.append(f"{r.page}: {r.overflowing_tables} tables wider than the column")
        if len(r.broken_links) > limits.broken_links:
            out.append(f"{r.page}: links to missing files {r.broken_links[:3]}")
    return out
