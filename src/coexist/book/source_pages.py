"""The package's and the tests' source as pages of the built site.

The index of equations links every equation to the definition that implements it and to the
tests that call that definition; a reader of the online book follows the link to the code,
highlighted, at the line where the definition or the test starts, without leaving the site
or needing the repository. The pages are plain HTML written once the book is built
(:func:`write`), one per Python file of ``src/coexist`` and ``tests``, each line anchored
(``#L-<line>``).
"""

from __future__ import annotations

import html
from pathlib import Path

from ..core import paths

#: where the pages go, under the built site's root
SOURCE_DIR = "_source"
#: the trees rendered, relative to the repository's root
TREES = ("src/coexist", "tests")


def files(root: Path = paths.ROOT) -> list[str]:
    """Every Python file of :data:`TREES`, as a path relative to ``root`` (``/``-separated)."""
    return sorted(p.relative_to(root).as_posix() for tree in TREES
                  for p in (root / tree).rglob("*.py") if "__pycache__" not in p.parts)


def href(relpath: str, line: int | None = None, depth: int = 1) -> str:
    """The link to ``relpath``'s page (at ``line``) from a page ``depth`` directories below
    the site's root (a notebook page, ``notebooks/x.html``, is 1 deep)."""
    anchor = f"#L-{line}" if line else ""
    return f"{'../' * depth}{SOURCE_DIR}/{relpath}.html{anchor}"


def render(relpath: str, text: str) -> str:
    """One file's page: its path, a link back to the index, and the code with each line
    numbered and anchored."""
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer

    fmt = HtmlFormatter(linenos="inline", lineanchors="L", anchorlinenos=True, wrapcode=True)
    back = "../" * (relpath.count("/") + 1) + "notebooks/book_index.html"
    name = html.escape(relpath)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{name}</title><style>{fmt.get_style_defs('.highlight')}\n"
            "body{font-family:sans-serif;margin:1.5rem 2rem}"
            ".highlight pre{font-size:13px;line-height:1.4}"
            ".highlight .linenos{color:#888;margin-right:1em}</style></head><body>"
            f"<p><a href=\"{back}\">Index of figures and equations</a> · <code>{name}</code></p>"
            f"{highlight(text, PythonLexer(), fmt)}</body></html>\n")


def write(outdir: Path, root: Path = paths.ROOT) -> int:
    """Write the page of every file whose page is missing or older than the file (or than
    this module, which renders them) under ``outdir``/:data:`SOURCE_DIR`; the number
    written. A rebuild after a prose edit renders none."""
    done = 0
    renderer = Path(__file__).stat().st_mtime
    for relpath in files(root):
        out = Path(outdir) / SOURCE_DIR / f"{relpath}.html"
        if out.exists() and out.stat().st_mtime >= max(renderer,
                                                         (root / relpath).stat().st_mtime):
            continue
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(render(relpath, (root / relpath).read_text(encoding="utf-8")),
                       encoding="utf-8")
        done += 1
    return done
