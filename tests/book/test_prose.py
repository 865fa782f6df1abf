"""The prose shows numbers that come from data or a model only through claims.

A decimal number or a percentage in a chapter, the README or the text of a notebook must
be a claim or a value the notebook computes (a ``{glue}`` role: :mod:`coexist.book.claims`,
``figures.glue``), inside math or code, a section number of a source paper (§4.5), or one
of the few literals in :data:`ALLOWED`: parameters of a setting, constants of an
algorithm, and values quoted from a source paper with its citation.
"""

import json
import re
from pathlib import Path

import pytest

from coexist.book import claims

ROOT = Path(__file__).resolve().parents[2]

#: chapters not yet held to the rule (none: every chapter is)
PENDING: set[str] = set()

#: literals a page may state as they are: (file, literal, why)
ALLOWED = (
    ("chapters/closed_form.md", "0.7 of its", "CUBIC's β, a constant of the model (eq. 12)"),
    ("chapters/experiments.md", "99.9 %", "a validity gate's threshold (a setting)"),
    ("chapters/experiments.md", "95 %", "a validity gate's threshold (a setting)"),
    ("chapters/experiments.md", "0.1 %", "a validity gate's threshold (a setting)"),
    ("chapters/data_and_rerunning.md", "more than 1 % steal",
     "the harness's threshold for a run disturbed by steal (a setting)"),
    ("chapters/data_and_rerunning.md", "late at 0.1 % or more",
     "the in-run sleepers' threshold, the lateness gate's share (a setting)"),
    ("chapters/fabric.md", "0.5 to 50 BDP", "the FABRIC reproduction's buffer range"),
    ("README.md", "Python 3.11", "a version"),
    ("chapters/intro.md", "Python 3.11", "a version"),
    ("chapters/intro.md", "around 40 % {cite:p}`mishra2022bbr`", "quoted from the paper"),
    ("notebooks/derive_fluid_bbr2.ipynb", "at 2 % loss", "BBRv2's loss threshold (eq. 26)"),
    ("notebooks/derive_ware.ipynb", "backs off to 0.7 of its window", "CUBIC's β"),
    ("notebooks/derive_ware.ipynb", "CUBIC's 0.7", "CUBIC's β"),
    ("notebooks/fig_f_ne.ipynb", "within 0.1 of the flows",
     "the page's threshold for agreement (a setting of the comparison)"),
    ("notebooks/fig_m_f1.ipynb", "the fair share, 0.5", "one of two flows (a constant)"),
    ("notebooks/fig_m_f12.ipynb", "every 0.5 s", "the harness's socket sampling (a setting)"),
    ("notebooks/fig_m_f4.ipynb", "above 100 %", "the link's capacity (a constant)"),
    ("notebooks/fig_m_f8.ipynb", "0.2 s after the warm-up",
     "the harness's queue sampling (a setting)"),
    ("notebooks/fig_p_f1_2.ipynb", "every 0.5 s", "iperf3's reporting interval (a setting)"),
    ("notebooks/fig_p_f1_2.ipynb", "every 0.2 s", "the harness's socket sampling (a setting)"),
    ("notebooks/fig_s_f1.ipynb", "per 0.1-s interval", "iperf3's interval (a setting)"),
    ("notebooks/fig_s_f1.ipynb", "2 × (10 + 5.6) ms", "the paper's RTT (its setting)"),
    ("notebooks/fig_s_f4_5_11_12.ipynb", "per 0.1 s", "iperf3's interval (a setting)"),
    ("notebooks/fig_t_f1.ipynb", "99.9th percentile", "the percentile a gate reads"),
    ("notebooks/fig_t_f4.ipynb", "99.9th percentile", "the percentile a gate reads"),
)

CHECKED = sorted(p for p in [ROOT / "README.md", *(ROOT / "chapters").glob("*.md"),
                             *(ROOT / "notebooks").glob("*.ipynb")]
                 if str(p.relative_to(ROOT)) not in PENDING)


def prose(path: Path) -> str:
    """The text a reader reads in ``path``: a page's Markdown, or a notebook's Markdown
    cells (its code and outputs are not prose)."""
    if path.suffix != ".ipynb":
        return path.read_text(encoding="utf-8")
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
NUMBER = re.compile(r"(?<![\w.§])\d+\.\d+(?:\s?%)?|(?<![\w.§])\d+\s?%")


def _strip(text: str) -> str:
    """The prose of a page without code, math, roles, link targets and comments."""
    # code, math and glue blocks, and tables quoted from a source (a ``{table}`` whose
    # caption says where it is quoted from); any other directive's text is prose
    text = re.sub(r"^(```|~~~)(\w*|\{(?:code-cell|math|glue)\}.*|\{table\} Quoted from .*)\n"
                  r".*?^\1\s*$", " ", text, flags=re.S | re.M)
    if claims.README_START in text:  # the README's findings: claims, checked as such
        text = claims.with_readme_block(text, "")
    text = re.sub(r"<!--.*?-->", " ", text, flags=re.S)
    text = re.sub(r"\$\$.*?\$\$", " ", text, flags=re.S)
    text = re.sub(r"\$[^$\n]+\$", " ", text)
    text = re.sub(r"\{[\w:-]+\}`[^`]*`", " ", text)  # roles: {glue:text}`...`, {doc}`...`
    text = re.sub(r"`[^`\n]*`", " ", text)
    text = re.sub(r"\]\([^)]*\)", "]", text)  # link targets
    text = re.sub(r"https?://\S+", " ", text)
    return re.sub(r"§\d+(\.\d+)*", " ", text)


def stray_numbers(path: Path) -> list[str]:
    """Decimal numbers and percentages of ``path`` that are neither claims nor allowed."""
    rel = str(path.relative_to(ROOT))
    text = prose(path)
    for file, literal, _ in ALLOWED:
        if file == rel:
            assert literal in text, f"{rel}: allowed literal {literal!r} no longer used"
            text = text.replace(literal, " ")
    found = []
    for line in _strip(text).splitlines():
        found += [f"{rel}: {m.group(0)!r} in {line.strip()[:90]!r}"
                  for m in NUMBER.finditer(line)]
    return found


@pytest.mark.parametrize("path", CHECKED, ids=lambda p: str(p.relative_to(ROOT)))
def test_prose_states_results_only_through_claims(path):
    assert stray_numbers(path) == []


def test_the_scan_finds_a_typed_result(tmp_path, monkeypatch):
    page = ROOT / "chapters" / "closed_form.md"
    text = page.read_text(encoding="utf-8")
    assert NUMBER.search(_strip(text + "\nBBR gets 62.6 % of the link.\n"))
    assert not NUMBER.search(_strip("BBR gets {glue:text}`x.ipynb::k:s` of it ($0.7 W$)."))
    assert not NUMBER.search(_strip("```\n0.5\n```\nsee §4.5 and `0.25`"))
    assert not NUMBER.search(_strip("```{table} Quoted from X (2020).\n| a | 0.5 % |\n```\n"))
    assert NUMBER.search(_strip("```{note}\nBBR gets 0.5 of it.\n```\n"))


def test_pending_and_allowed_name_existing_files():
    for rel in PENDING | {f for f, _, _ in ALLOWED}:
        assert (ROOT / rel).exists(), rel


def test_readme_is_a_front_page():
    """At most 700 words, code included, and its headline figure is committed."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.split()) <= 700
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
    assert images and all((ROOT / i).exists() for i in images)


def test_every_quoted_claim_is_committed():
    """Each ``{glue}`` role of a chapter names a claim its notebook commits, so a mistyped
    key or a claim a notebook no longer makes fails here, not only in a book build."""
    from coexist.book import ledger

    by_notebook = {e.path.stem: e for e in ledger.ENTRIES}
    missing = []
    for path in CHECKED:
        for nb, key in claims.QUOTE.findall(path.read_text(encoding="utf-8")):
            entry = by_notebook.get(Path(nb).stem)
            made = (ledger.EXPECTED / f"{entry.id}{claims.SUFFIX}") if entry else None
            if made is None or not made.exists() or key not in claims.read(made):
                missing.append(f"{path.relative_to(ROOT)}: {nb}::{key}")
    assert missing == []
    assert claims.QUOTE.findall("{glue:text}`../notebooks/fig_m_f1.ipynb::mf1_x:s`") == [
        ("../notebooks/fig_m_f1.ipynb", "mf1_x")]


def _code_block_lines(text: str) -> list[str]:
    """The lines of a page's fenced code blocks (not of directives such as ``{glue}``)."""
    lines, fence = [], None
    for line in text.splitlines():
        m = re.match(r"^(```+|~~~+)(.*)$", line)
        if fence is None and m:
            fence = m.group(1) if not m.group(2).startswith("{") else "directive:" + m.group(1)
        elif fence is not None and line.strip() == fence.removeprefix("directive:"):
            fence = None
        elif fence is not None and not fence.startswith("directive:"):
            lines.append(line)
    return lines


@pytest.mark.parametrize("path", sorted((ROOT / "chapters").glob("*.md")),
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_code_blocks_fit_the_column(path):
    """A command or listing in a chapter fits the text column, as the built book's
    reader-view test requires of every page (wrap a long command with a backslash)."""
    from coexist.book.reader_view import CODE_COLUMN_CHARS

    wide = [line for line in _code_block_lines(path.read_text(encoding="utf-8"))
            if len(line) > CODE_COLUMN_CHARS]
    assert wide == []


def test_the_code_block_scan_finds_a_wide_line_and_skips_directives():
    text = ("```bash\n" + "x" * 80 + "\n```\n\n```{glue:figure} k\n" + "y" * 90 +
            "\n```\n")
    assert _code_block_lines(text) == ["x" * 80]
