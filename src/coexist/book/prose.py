"""How long the built book reads: its answer, its sentences and its figure pages' verdicts.

Three measures of the built HTML, against the goals of the book's writing rules
(:data:`GOALS`): the landing page's answer is an abstract of about 150 words and 15
numbers, no sentence runs over 40 words, and a figure page says what it found in a short
verdict before its method. The book's prose test (``tests/book/test_prose.py``) holds the
built book to ceilings that only go down; ``coexist prose`` prints the report.

Definitions (each page's main content, ``article.bd-article``):

- **Prose** is the text of paragraphs (``<p>``) and list items (``<li>``). Each piece of
  text belongs to its nearest enclosing ``<p>`` or ``<li>`` (a *block*), so an item holding
  a paragraph, or a nested list, is counted once. Not prose: headings; code (``<pre>``,
  highlighted blocks, a cell's input, outputs that are printed text: stream, stderr, plain
  text, tracebacks, LaTeX); tables; math (class ``math``, MathJax's elements); images and
  SVG; the provenance line under a figure (a paragraph that opens with *Provenance:*; it
  carries no class); the "Re-run this figure" box (the ``dropdown`` admonition titled so);
  the show/hide labels of a collapsed code cell; heading anchors (``headerlink``); the
  bibliography (``citation``) and toctree navigation. Inline code inside a sentence is
  read as words of that sentence.
- **Collapsed** prose lies inside a ``<details>`` or an element of class ``dropdown`` or
  ``toggle``, except that block's own title (``summary``, ``admonition-title``), which the
  reader sees. *Visible* prose is prose that is not collapsed.
- **Sentences** are split within a block (never across blocks). A sentence ends at ``.``,
  ``!`` or ``?`` (closing quotes or brackets may follow it) followed by whitespace and a
  capital letter (opening quotes or brackets may come first), or by the end of the block.
  A period that ends one of :data:`ABBREVIATIONS` (any case) ends none; a semicolon never
  ends one. **Words** are whitespace-separated tokens.
- **Numbers** are runs of digits with their decimals and thousands separators
  (``1,200``, ``0.37``) and an optional ``%`` after at most one space (``26 %`` is one
  number). Digits inside a name are not numbers: a run counts only if the part of its
  token before it holds no letter or underscore (``M-F1``, ``S-F6-10``, ``BBRv2``,
  ``p99.9`` count none; ``720-1,200`` counts two).

The measures (:meth:`ProseReport.measures`):

1. ``answer_words``, ``answer_numbers``: the visible prose of the landing page's section
   headed :data:`ANSWER_HEADING`, from that heading to the next heading of its level or
   above (its figure's caption is a paragraph of the section and counts).
2. ``sentences_over_40_words``, ``longest_sentence_words``: over every page of the book
   (``_toc.yml``), collapsed prose included.
3. ``median_words_before_method``, ``max_words_before_method``: on each figure page
   (``notebooks/fig_*``), the words of visible prose from the page's first figure (its
   ``<figure>``, else its first image; the figure's caption counts, the question above it
   does not) to the heading :data:`METHOD_HEADING` (the end of the page if it has none).
"""

from __future__ import annotations

import dataclasses
import re
import statistics
from dataclasses import dataclass
from pathlib import Path

from bs4 import BeautifulSoup, NavigableString, Tag
from bs4.element import PreformattedString

#: a sentence over this many words is a long one (the writing rules' limit)
LONG_SENTENCE_WORDS = 40
#: the heading of the landing page's answer, and of a figure page's method
ANSWER_HEADING = "The answer"
METHOD_HEADING = "How this figure is computed"
#: the title of a figure's re-run box and the first word of its provenance line
RERUN_TITLE = "Re-run this figure"
PROVENANCE_LEAD = "Provenance:"
#: abbreviations whose period ends no sentence (matched in any case)
ABBREVIATIONS = ("et al.", "e.g.", "i.e.", "cf.", "vs.", "eq.", "eqs.", "fig.", "figs.",
                 "sec.", "ref.", "refs.", "approx.", "resp.")


@dataclass(frozen=True)
class Goals:
    """The writing rules' goals, one per measure (:meth:`ProseReport.measures`): at most
    this many words and numbers in the answer, sentences over :data:`LONG_SENTENCE_WORDS`
    words in the book, words in its longest sentence, and words of prose before a figure
    page's method (the median over figure pages, and on any one page)."""

    answer_words: int = 150
    answer_numbers: int = 15
    sentences_over_40_words: int = 20
    longest_sentence_words: int = 60
    median_words_before_method: int = 250
    max_words_before_method: int = 500


GOALS = Goals()
MEASURES = tuple(f.name for f in dataclasses.fields(Goals))

_BLOCKS = {"p", "li"}
_SKIPPED_TAGS = {"pre", "table", "script", "style", "svg", "img", "math", "mjx-container",
                 "button", "input", "textarea", "select", "template", "noscript"}
_SKIPPED_CLASSES = {"math", "MathJax", "MathJax_Display", "cell_input", "highlight",
                    "headerlink", "citation", "toctree-wrapper", "pst-scrollable-table-container"}
_PRINTED_OUTPUTS = {"stream", "stderr", "text_plain", "traceback", "error", "text_latex"}
_COLLAPSING_CLASSES = {"dropdown", "toggle"}
_BREAKS = {"br", "div", "p", "li", "ul", "ol", "dl", "dt", "dd", "figure", "figcaption",
           "section", "blockquote", "details", "summary", "aside"}
_HEADINGS = {f"h{i}": i for i in range(1, 7)}


@dataclass(frozen=True)
class Block:
    """One paragraph's or list item's own text (whitespace collapsed), and whether it is
    collapsed (:mod:`definitions <coexist.book.prose>`)."""

    text: str
    collapsed: bool


@dataclass(frozen=True)
class Page:
    """A page's prose in reading order: its blocks, its headings as (position, level, text)
    with position the number of blocks before the heading, and where its first figure
    starts (a position likewise; None on a page without one)."""

    name: str
    title: str
    blocks: tuple[Block, ...]
    headings: tuple[tuple[int, int, str], ...]
    figure: int | None


@dataclass(frozen=True)
class Sentence:
    """One sentence of the book: the page it is on, its words and its text."""

    page: str
    words: int
    text: str
    collapsed: bool


def _classes(tag: Tag) -> set[str]:
    return set(tag.get("class") or ())


def _title(tag: Tag) -> str:
    """A collapsible block's title (its ``summary`` or ``admonition-title``), or ''."""
    head = tag.find(["summary", "p"], recursive=False)
    if head is None or (head.name == "p" and "admonition-title" not in _classes(head)):
        return ""
    return " ".join(head.get_text().split())


def is_skipped(tag: Tag) -> bool:
    """Whether ``tag`` and all it holds are not prose (see the module's definitions)."""
    classes = _classes(tag)
    if tag.name in _SKIPPED_TAGS or classes & _SKIPPED_CLASSES:
        return True
    if any(c.startswith("highlight-") for c in classes):
        return True
    if "output" in classes and classes & _PRINTED_OUTPUTS:
        return True
    if tag.name == "summary" and isinstance(tag.parent, Tag) and "hide" in _classes(tag.parent):
        return True  # the show/hide label of a collapsed code cell
    if "dropdown" in classes and _title(tag).startswith(RERUN_TITLE):
        return True
    return tag.name == "p" and tag.get_text().lstrip().startswith(PROVENANCE_LEAD)


def _collapses(tag: Tag) -> bool:
    return tag.name == "details" or bool(_classes(tag) & _COLLAPSING_CLASSES)


def _is_title(tag: Tag) -> bool:
    return tag.name == "summary" or (tag.name == "p" and "admonition-title" in _classes(tag))


class _Reader:
    """Walks a page's main content once, in document order, collecting its blocks, its
    headings and its first figure."""

    def __init__(self) -> None:
        self.parts: list[list[str]] = []
        self.collapsed: list[bool] = []
        self.headings: list[tuple[int, int, str]] = []
        self.figure: int | None = None
        self.first_image: int | None = None

    def walk(self, node: Tag, block: int | None, collapsed: bool, outside: bool) -> None:
        """Read the children of ``node``: ``block`` is the block their text belongs to,
        ``collapsed`` whether they lie in a collapsed block, ``outside`` whether ``node``
        itself does (the state of a collapsible block's title)."""
        for child in node.children:
            if isinstance(child, NavigableString):
                if block is not None and not isinstance(child, PreformattedString):
                    self.parts[block].append(str(child))
                continue
            if not isinstance(child, Tag):
                continue
            if child.name in ("img", "svg") and self.first_image is None:
                self.first_image = len(self.parts)
            if child.name in _HEADINGS:
                text = "".join(t for t in child.find_all(string=True)
                               if "headerlink" not in _classes(t.parent))
                self.headings.append((len(self.parts), _HEADINGS[child.name],
                                      " ".join(text.split())))
                continue
            if is_skipped(child):
                continue
            if block is not None and child.name in _BREAKS:
                self.parts[block].append(" ")
            inner = collapsed or _collapses(child)
            if _collapses(node) and _is_title(child):
                inner = outside
            if child.name in _BLOCKS:
                self.parts.append([])
                self.collapsed.append(inner)
                self.walk(child, len(self.parts) - 1, inner, collapsed)
            else:
                if child.name == "figure" and self.figure is None:
                    self.figure = len(self.parts)
                self.walk(child, block, inner, collapsed)


def read_page(html: str, name: str = "") -> Page:
    """The prose of one built page (``html``, its text), as :class:`Page`."""
    soup = BeautifulSoup(html, "html.parser")
    main = (soup.select_one("article.bd-article") or soup.find("main") or soup.body or soup)
    reader = _Reader()
    reader.walk(main, None, False, False)
    blocks = tuple(Block(" ".join("".join(p).split()), c)
                   for p, c in zip(reader.parts, reader.collapsed, strict=True))
    figure = reader.figure if reader.figure is not None else reader.first_image
    h1 = next((t for _, level, t in reader.headings if level == 1), name)
    return Page(name, h1, blocks, tuple(reader.headings), figure)


_END = re.compile(r"[.!?][\"'”’)\]]*(?=\s|$)")
_OPENING = "\"'“‘([¿¡"


def _ends_abbreviation(text: str, period: int) -> bool:
    """Whether the period at ``text[period]`` ends one of :data:`ABBREVIATIONS`."""
    head = text[:period + 1].lower()
    for abbr in ABBREVIATIONS:
        if head.endswith(abbr):
            before = len(head) - len(abbr) - 1
            if before < 0 or not head[before].isalnum():
                return True
    return False


def sentences(text: str) -> list[str]:
    """The sentences of one block's text (see the module's definitions)."""
    text = " ".join(text.split())
    out, start = [], 0
    for m in _END.finditer(text):
        rest = text[m.end():].lstrip().lstrip(_OPENING)
        if rest and not rest[0].isupper():
            continue
        if text[m.start()] == "." and _ends_abbreviation(text, m.start()):
            continue
        out.append(text[start:m.end()].strip())
        start = m.end()
    tail = text[start:].strip()
    return [s for s in [*out, tail] if s]


def words(text: str) -> int:
    """The number of whitespace-separated tokens of ``text``."""
    return len(text.split())


_NUMBER = re.compile(r"\d+(?:[.,]\d+)*(?: ?%)?")


def numbers(text: str) -> list[str]:
    """The numbers of ``text`` (see the module's definitions), as written."""
    text = " ".join(text.split())
    found = []
    for m in _NUMBER.finditer(text):
        token_start = text.rfind(" ", 0, m.start()) + 1
        if not any(c.isalpha() or c == "_" for c in text[token_start:m.start()]):
            found.append(m.group(0))
    return found


def section(page: Page, heading: str) -> tuple[Block, ...]:
    """The blocks of ``page`` under the first heading whose text is ``heading``, up to the
    next heading of its level or above; a page without that heading is an error."""
    for i, (at, level, text) in enumerate(page.headings):
        if text == heading:
            end = next((p for p, lv, _ in page.headings[i + 1:] if lv <= level),
                       len(page.blocks))
            return page.blocks[at:end]
    raise ValueError(f"{page.name}: no heading {heading!r}")


def words_before_method(page: Page) -> int:
    """Words of visible prose from the page's first figure (its caption included) to its
    method heading (:data:`METHOD_HEADING`; the page's end if it has none); 0 on a page
    without a figure."""
    if page.figure is None:
        return 0
    end = next((at for at, _, text in page.headings if text == METHOD_HEADING),
               len(page.blocks))
    return sum(words(b.text) for b in page.blocks[page.figure:end] if not b.collapsed)


@dataclass(frozen=True)
class ProseReport:
    """The three measures of a built book, with the detail behind them: the answer's text,
    every sentence over :data:`LONG_SENTENCE_WORDS` words (longest first) and each figure
    page's words before its method (in the book's order)."""

    answer: str
    answer_words: int
    answer_numbers: int
    long_sentences: tuple[Sentence, ...]
    longest: Sentence | None
    before_method: tuple[tuple[str, str, int], ...]  # (page, title, words)

    def measures(self) -> dict[str, float]:
        """Each measure by name (:data:`MEASURES`)."""
        counts = [w for _, _, w in self.before_method]
        return {"answer_words": self.answer_words, "answer_numbers": self.answer_numbers,
                "sentences_over_40_words": len(self.long_sentences),
                "longest_sentence_words": self.longest.words if self.longest else 0,
                "median_words_before_method": statistics.median(counts) if counts else 0,
                "max_words_before_method": max(counts, default=0)}

    def missed(self, goals: Goals = GOALS) -> list[str]:
        """One line per measure above its goal (empty: every goal is met)."""
        limit = dataclasses.asdict(goals)
        return [f"{name}: {value:g} (goal: at most {limit[name]})"
                for name, value in self.measures().items() if value > limit[name]]


def measure_pages(pages: list[Page], answer_page: str) -> ProseReport:
    """:class:`ProseReport` of ``pages`` (the book's, in reading order), the answer read
    from the page named ``answer_page``."""
    by_name = {p.name: p for p in pages}
    if answer_page not in by_name:
        raise ValueError(f"no page {answer_page!r} among the pages measured")
    answer = [b for b in section(by_name[answer_page], ANSWER_HEADING) if not b.collapsed]
    text = " ".join(b.text for b in answer if b.text)
    every = [Sentence(p.name, words(s), s, b.collapsed)
             for p in pages for b in p.blocks for s in sentences(b.text)]
    every.sort(key=lambda s: -s.words)
    before = tuple((p.name, p.title, words_before_method(p)) for p in pages
                   if Path(p.name).name.startswith("fig_"))
    return ProseReport(text, words(text), len(numbers(text)),
                       tuple(s for s in every if s.words > LONG_SENTENCE_WORDS),
                       every[0] if every else None, before)


def measure(html_dir: Path, names: list[str] | None = None) -> ProseReport:
    """:class:`ProseReport` of the book built in ``html_dir``: its pages ``names``
    (document names such as ``notebooks/fig_m_f1``; default: every page of ``_toc.yml``
    in its order, the first being the landing page)."""
    from .reader_view import pages as toc_pages
    from .reader_view import require_built

    todo = ([(n, html_dir / f"{n}.html") for n in names] if names is not None
            else toc_pages(html_dir))
    require_built(todo)
    pages = [read_page(path.read_text(encoding="utf-8"), name) for name, path in todo]
    return measure_pages(pages, todo[0][0])


def _short(title: str) -> str:
    """A page's title up to its figure id (``M-F1 · ...`` -> ``M-F1``)."""
    return title.split(" · ", 1)[0] if " · " in title else title


def text_report(report: ProseReport, goals: Goals = GOALS, top: int = 10,
                every_page: bool = False) -> str:
    """The report as text: one line per measure against its goal, then the longest
    sentences, the pages with the most sentences over the limit and the figure pages with
    the most prose before their method (``top`` of each; every one with ``every_page``)."""
    m, limit = report.measures(), dataclasses.asdict(goals)

    def mark(*names: str) -> str:
        return "ok   " if all(m[n] <= limit[n] for n in names) else "MISS "

    pages = sorted(report.before_method, key=lambda r: -r[2])
    worst = _label(report, pages[0][0]) if pages else "-"
    longest = f", on {_label(report, report.longest.page)}" if report.longest else ""
    lines = [
        f"{mark('answer_words', 'answer_numbers')}answer: {m['answer_words']} words "
        f"(goal <= {goals.answer_words}), {m['answer_numbers']} numbers "
        f"(goal <= {goals.answer_numbers})",
        f"{mark('sentences_over_40_words')}sentences over {LONG_SENTENCE_WORDS} words: "
        f"{m['sentences_over_40_words']} (goal <= {goals.sentences_over_40_words})",
        f"{mark('longest_sentence_words')}longest sentence: {m['longest_sentence_words']} "
        f"words (goal <= {goals.longest_sentence_words}){longest}",
        f"{mark('median_words_before_method')}prose before {METHOD_HEADING!r}: median "
        f"{m['median_words_before_method']:g} words over {len(pages)} figure pages "
        f"(goal <= {goals.median_words_before_method})",
        f"{mark('max_words_before_method')}most prose before the method: "
        f"{m['max_words_before_method']:g} words on {worst} "
        f"(goal <= {goals.max_words_before_method})",
    ]
    n, which = (None, "all") if every_page else (top, f"top {top}")
    lines += ["", f"Sentences over {LONG_SENTENCE_WORDS} words, longest first ({which}):"]
    lines += [f"{s.words:4d}  {_label(report, s.page)}{' (collapsed)' if s.collapsed else ''}: "
              f"{s.text}"
              for s in report.long_sentences[:n]]
    per_page: dict[str, list[int]] = {}
    for s in report.long_sentences:
        per_page.setdefault(s.page, []).append(s.words)
    lines += ["", f"Pages by sentences over {LONG_SENTENCE_WORDS} words ({which}):"]
    lines += [f"{len(w):4d}  {_label(report, page)} (longest {max(w)})"
              for page, w in sorted(per_page.items(), key=lambda r: -len(r[1]))[:n]]
    lines += ["", f"Figure pages by words before the method ({which}):"]
    lines += [f"{w:5d}  {_label(report, page)}" for page, _, w in pages[:n]]
    return "\n".join(lines)


def _label(report: ProseReport, page: str) -> str:
    """``page``, with its figure id if it is a figure page (``notebooks/fig_m_f1 (M-F1)``)."""
    title = next((t for p, t, _ in report.before_method if p == page), None)
    return f"{page} ({_short(title)})" if title else page
