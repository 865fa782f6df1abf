"""Claims: made, written, compared and shown in the README as the figures' tables are."""

import shutil
from pathlib import Path

import pandas as pd
import pytest

from coexist.book import claims, ledger, runner
from coexist.core.params import ParameterError

from ..conftest import built_tables

ROOT = Path(__file__).resolve().parents[2]


def test_claim_formats_once_and_writes_the_figure_claims(tmp_path):
    text = claims.claim("T-X", "tx_share", 0.41234, "{:.2f}", out_dir=str(tmp_path))
    assert text == "0.41"
    claims.claim("T-X", "tx_runs", 12, "{:d} runs", out_dir=str(tmp_path))
    claims.claim("T-X", "tx_list", "10, 9 and 6", "{}", out_dir=str(tmp_path))
    made = claims.read(tmp_path / "T-X.claims.csv")
    assert made["tx_share"] == claims.Claim("tx_share", 0.41234, "0.41")
    assert made["tx_runs"].text == "12 runs" and made["tx_runs"].value == 12.0
    assert made["tx_list"].value == "10, 9 and 6"


@pytest.mark.parametrize("key,value,what", [
    ("Bad-Key", 1.0, "key"), ("tx_nan", float("nan"), "finite"),
    ("tx_list", [1.0], "a number or a text"), ("tx_bool", True, "a number or a text")])
def test_claim_refuses_bad_keys_and_values(tmp_path, key, value, what):
    with pytest.raises(ParameterError, match=what):
        claims.claim("T-X", key, value, out_dir=str(tmp_path))


def test_a_claim_the_parameters_do_not_give_says_so(tmp_path):
    """None (e.g. an error against measurements where none were made) is the explicit
    "not available" claim, in the text and in the file; NaN stays an error."""
    assert claims.claim("T-X", "tx_missing", None, "{:.2f}", str(tmp_path)) == \
        claims.NOT_AVAILABLE
    stored = claims.read(tmp_path / f"T-X{claims.SUFFIX}")["tx_missing"]
    assert stored.text == stored.value == claims.NOT_AVAILABLE


def test_the_committed_claims_all_have_values():
    """At the committed defaults every claim is available: "not available" is for a
    reader's own parameters only."""
    from coexist.book import ledger

    files = [p for e in ledger.FIGURES
             if (p := ledger.EXPECTED / f"{e.id}{claims.SUFFIX}").exists()]
    assert len(files) > 20
    missing = [(p.name, c.key) for p in files for c in claims.read(p).values()
               if claims.NOT_AVAILABLE in c.text]
    assert missing == []


def test_compare_names_each_claim_that_moved(tmp_path):
    old, new = tmp_path / "old.csv", tmp_path / "new.csv"
    base = [claims.Claim("a", 0.5, "0.50"), claims.Claim("b", "x", "x"),
            claims.Claim("c", 3.0, "3")]
    claims.write(base, old)
    claims.write(base, new)
    assert claims.compare(new, old, 1e-6, 1e-9) == []
    claims.write([claims.Claim("a", 0.5 + 1e-12, "0.50"), *base[1:]], new)
    assert claims.compare(new, old, 1e-6, 1e-9) == []
    claims.write([claims.Claim("a", 0.52, "0.52"), base[1], claims.Claim("d", 1.0, "1")], new)
    problems = claims.compare(new, old, 1e-6, 1e-9)
    assert any(p.startswith("claim a: '0.52'") for p in problems)
    assert any("claim c: not made any more" in p for p in problems)
    assert any("claim d: new, not committed" in p for p in problems)
    assert claims.compare(tmp_path / "none.csv", tmp_path / "none2.csv", 1, 1) == []
    assert "none committed" in claims.compare(new, tmp_path / "none.csv", 1, 1)[0]


def test_a_figure_with_claims_commits_them():
    """Every figure the README's findings name has committed claims holding them."""
    for figure_id, key, page in claims.FINDINGS:
        assert ledger.entry(figure_id).kind == "figure"
        assert (ROOT / page).exists()
        committed = claims.read(ledger.EXPECTED / f"{figure_id}{claims.SUFFIX}")
        assert key in committed, (figure_id, key)


def test_check_built_fails_on_an_edited_claim_and_names_it(tmp_path):
    out = built_tables(tmp_path)
    runner.check_built(out)
    edited = tmp_path / "expected"
    shutil.copytree(ledger.EXPECTED, edited)
    path = edited / f"M-F6{claims.SUFFIX}"
    table = pd.read_csv(path)
    table.loc[0, "value"] = float(table.loc[0, "value"]) * 1.01
    table.to_csv(path, index=False)
    with pytest.raises(runner.CheckFailed, match=f"M-F6: claim {table.loc[0, 'key']}"):
        runner.check_built(out, edited)
    path.unlink()
    with pytest.raises(runner.CheckFailed, match="M-F6: claims written but none committed"):
        runner.check_built(out, edited)


def test_readme_findings_are_the_committed_claims():
    readme = (ROOT / "README.md").read_text()
    block = claims.readme_block(ledger.EXPECTED)
    assert block in readme, "README.md's findings differ: run `coexist claims --readme`"
    assert claims.with_readme_block(readme, block) == readme
    assert len(block.splitlines()) - 2 <= 6  # at most six findings


def test_readme_block_names_a_missing_claim(tmp_path):
    with pytest.raises(ParameterError, match="mf1_finding"):
        claims.readme_block(tmp_path)


def test_best_by_range_names_the_closest_model_per_range():
    import pandas as pd

    acc = pd.DataFrame({"buffer_range_bdp": ["1-2", "1-2", "2-5", "2-5", "5-30"],
                        "model": ["a", "b", "a", "b", "a"],
                        "mean_abs_error": [0.3, 0.1, 0.05, 0.2, float("nan")]})
    assert claims.best_by_range(acc) == "1-2 BDP: b (0.10); 2-5 BDP: a (0.05)"
    assert claims.best_by_range(acc, worst=True) == "1-2 BDP: a (0.30); 2-5 BDP: b (0.20)"
    assert claims.best_by_range(acc.iloc[4:]) == "no range with a value"
    # every model within the resolution of the best is named with it, closest first
    close = acc.assign(mean_abs_error=[0.11, 0.1, 0.05, 0.2, float("nan")])
    assert claims.best_by_range(close, within=0.02) == \
        "1-2 BDP: b (0.10) and a (0.11); 2-5 BDP: a (0.05)"
    assert claims.best_by_range(close, worst=True, within=0.02) == \
        "1-2 BDP: a (0.11) and b (0.10); 2-5 BDP: b (0.20)"
    assert claims.best_by_range(close, within=0.005) == "1-2 BDP: b (0.10); 2-5 BDP: a (0.05)"


def test_a_rerun_answers_for_every_committed_claim(tmp_path):
    """A run with other parameters that could not make a claim (its branch needs a
    measurement the setting lacks) gets it as "not available"; the claims it made stay."""
    committed = tmp_path / f"T-X{claims.SUFFIX}"
    claims.write([claims.Claim("tx_a", 1.0, "1.00"), claims.Claim("tx_b", 2.0, "2.00")],
                 committed)
    out = tmp_path / "out"
    claims.claim("T-Y", "tx_a", 3.0, "{:.2f}", str(out))
    (out / f"T-Y{claims.SUFFIX}").rename(out / f"T-X{claims.SUFFIX}")
    assert claims.complete("T-X", out, committed) == ["tx_b"]
    made = claims.read(out / f"T-X{claims.SUFFIX}")
    assert made["tx_a"].text == "3.00" and made["tx_b"].text == claims.NOT_AVAILABLE
    assert claims.complete("T-X", out, committed) == []


def test_span_is_a_range_one_value_or_none():
    assert claims.span([10.04, 10.6, 10.2]) == "10.0-10.6"
    assert claims.span([10.2, 10.21]) == "10.2"
    assert claims.span([3, 5], "{:d}") == "3-5"
    assert claims.span([float("nan")]) == "none"
    assert claims.span([]) == "none"
    assert claims.span([-0.12, 0.9]) == "-0.1 to 0.9"
    assert claims.span([-0.003, 3.2]) == "0.0-3.2"  # rounded to zero, not below it


def test_key_part_writes_a_number_as_a_valid_part_of_a_key():
    assert [claims.key_part(v) for v in (40.0, 0.5, 9.478, 1000.0)] == [
        "40", "0p5", "9p478", "1000"]
    assert all(claims.KEY.match(f"k_{claims.key_part(v)}ms") for v in (2.0, 0.25, 12.5))
