"""The repository's licence and citation metadata: CITATION.cff validates against the
Citation File Format 1.2.0 schema (bundled with its source and licence), and names the
licence the LICENSE file carries."""

import json
from pathlib import Path

import jsonschema
import yaml

ROOT = Path(__file__).resolve().parents[2]


def test_citation_cff_validates_against_the_cff_1_2_schema():
    schema = json.loads((ROOT / "tests" / "fixtures" / "cff" / "schema-1.2.0.json").read_text())
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    jsonschema.validate(cff, schema)  # raises with the offending field
    assert cff["cff-version"] == "1.2.0"
    titles = {r["title"] for r in cff["references"]}
    assert any("BBR-dominant" in t for t in titles) and any("Fluid" in t or "Model-Based" in t
                                                            for t in titles)


def test_the_code_licence_is_the_one_the_citation_and_package_name():
    licence = (ROOT / "LICENSE").read_text().splitlines()[0]
    assert licence == "MIT License"
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert cff["license"] == "MIT"
    assert 'license = "MIT"' in (ROOT / "pyproject.toml").read_text()


def test_a_broken_citation_is_refused_by_the_schema():
    schema = json.loads((ROOT / "tests" / "fixtures" / "cff" / "schema-1.2.0.json").read_text())
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    del cff["authors"]
    try:
        jsonschema.validate(cff, schema)
    except jsonschema.ValidationError as exc:
        assert "authors" in str(exc)
    else:
        raise AssertionError("a CITATION.cff without authors passed the schema")
