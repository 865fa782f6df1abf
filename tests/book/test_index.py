"""The index of figures and equations, and the campaigns each figure declares."""

import re

import pytest

from coexist import data
from coexist.book import figures, ledger, source_pages
from coexist.book import index as book_index
from coexist.core import paths


def test_citations_are_read_with_their_ranges():
    assert book_index.cited("eq. 9 and eqs. 40-41, eq. (18), eqs. (40a-b)") == [9, 40, 41,
                                                                               18, 40]
    assert book_index.cited("eqs. 5-20") == list(range(5, 21))
    assert book_index.cited("no equation, 2022-2023") == []


def test_every_equation_of_both_papers_has_code_that_cites_it():
    eqs = book_index.equations()
    missing = book_index.gaps(eqs, {"Mishra et al.": 25, "Scherrer et al.": 41})
    assert missing["Scherrer et al."] == []
    assert missing["Mishra et al."] == [1]  # CUBIC's window law, which the paper recalls
    tested = eqs.groupby(["paper", "equation"]).n_tests.max()
    assert (tested > 0).all(), tested[tested == 0]  # every equation reached by some test


def test_the_equation_index_links_each_definition_and_test_to_its_line(tmp_path):
    eqs = book_index.equations()
    rows = book_index.equations_for_reader(eqs, links=True)
    assert len(rows) == len(eqs.groupby(["paper", "equation"]))
    cells = " ".join(rows["Implemented by"]) + " " + " ".join(rows["Tests (per file)"])
    hrefs = set(re.findall(r'href="([^"]+)"', cells))
    assert any("/src/coexist/" in h for h in hrefs) and any("/tests/" in h for h in hrefs)
    assert source_pages.write(tmp_path / "site") == len(source_pages.files())
    assert source_pages.write(tmp_path / "site") == 0  # nothing changed: nothing rendered
    page_dir = tmp_path / "site" / "notebooks"  # the index is a notebook page
    for h in sorted(hrefs):
        target, _, anchor = h.partition("#L-")
        page = (page_dir / target).resolve()
        assert page.exists(), h
        if not anchor:  # a test file that imports a module: the file itself
            assert "/tests/" in h
            continue
        line = int(anchor)
        assert f'id="L-{line}"' in page.read_text(encoding="utf-8"), h
        code = (paths.ROOT / page.relative_to(tmp_path / "site" / source_pages.SOURCE_DIR)
                .as_posix().removesuffix(".html")).read_text(encoding="utf-8")
        first = code.splitlines()[line - 1]
        assert line == 1 or re.match(r"\s*(def|class|async def) ", first), (h, first)


def test_a_source_page_anchors_every_line_and_escapes_the_code():
    page = source_pages.render("tests/x.py", "a = '<b>'\nb = 2\n")
    assert page.count('id="L-') == 2 and "<b>" not in page.split("</p>", 1)[1]
    assert 'href="../../notebooks/book_index.html"' in page


def test_figure_index_names_every_figure_and_existing_campaigns():
    table = book_index.figures()
    assert table.figure.tolist() == [e.id for e in ledger.FIGURES]
    known = {p.stem for p in (paths.DATA / "campaigns").glob("*.yaml")} | {"*"}
    for e in ledger.FIGURES:
        assert set(e.campaigns) <= known, e.id
        assert (paths.ROOT / table.set_index("figure").loc[e.id, "table"]).exists()


def _read(*campaigns: str) -> None:
    """A record of exactly ``campaigns`` read."""
    data.forget_reads()
    for name in campaigns:
        data.note_read(name)


def test_undeclared_campaign_named_in_the_error(no_campaigns_read):
    _read("two_flow", "mixed_rtt")
    with pytest.raises(figures.FigureError, match="mixed_rtt"):
        figures.check_campaigns("M-F1")
    _read("two_flow")
    figures.check_campaigns("M-F1")
    _read("two_flow", "fluctuation")
    figures.check_campaigns("T-F1")  # reads every campaign


def test_reading_a_campaign_table_records_it(no_campaigns_read):
    from coexist.measured import runs as measured

    measured.campaign_table("two_flow")
    measured.coverage("fluctuation")
    assert data.campaigns_read() == {"two_flow", "fluctuation"}


def test_every_change_the_edition_page_lists_is_filled_from_a_claim():
    from coexist.book import edition

    table = edition.changes()
    assert len(table) >= 10
    assert not table["This edition"].str.contains(r"\{").any()
    with pytest.raises(KeyError, match="no_such_claim"):
        edition.fill("{no_such_claim}", edition.claim_texts())
