"""The index of figures and equations, and the campaigns each figure declares."""

import pytest

from coexist import book_index, data, figures, ledger, paths


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


def test_figure_index_names_every_figure_and_existing_campaigns():
    table = book_index.figures()
    assert table.figure.tolist() == [e.id for e in ledger.FIGURES]
    known = {p.stem for p in (paths.DATA / "campaigns").glob("*.yaml")} | {"*"}
    for e in ledger.FIGURES:
        assert set(e.campaigns) <= known, e.id
        assert (paths.ROOT / table.set_index("figure").loc[e.id, "table"]).exists()


def test_undeclared_campaign_named_in_the_error(monkeypatch):
    monkeypatch.setattr(data, "CAMPAIGNS_READ", {"two_flow", "mixed_rtt"})
    with pytest.raises(figures.FigureError, match="mixed_rtt"):
        figures.check_campaigns("M-F1")
    monkeypatch.setattr(data, "CAMPAIGNS_READ", {"two_flow"})
    figures.check_campaigns("M-F1")
    monkeypatch.setattr(data, "CAMPAIGNS_READ", {"two_flow", "fluctuation"})
    figures.check_campaigns("T-F1")  # reads every campaign


def test_reading_a_campaign_table_records_it(monkeypatch):
    from coexist import measured

    monkeypatch.setattr(data, "CAMPAIGNS_READ", set())
    measured.campaign_table("two_flow")
    measured.coverage("fluctuation")
    assert data.CAMPAIGNS_READ == {"two_flow", "fluctuation"}


def test_every_change_the_edition_page_lists_is_filled_from_a_claim():
    from coexist import edition

    table = edition.changes()
    assert len(table) >= 10
    assert not table["This edition"].str.contains(r"\{").any()
    with pytest.raises(KeyError, match="no_such_claim"):
        edition.fill("{no_such_claim}", edition.claim_texts())
