"""The book's bibliography: every work it cites is in ``chapters/references.bib`` with a
DOI or a URL, and every citation in a page names an entry of it."""

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BIB = ROOT / "chapters" / "references.bib"
#: entries that can carry neither: (key, why)
NO_LINK = {"fluctuation": "the copy the book works from names no authors, venue or address"}


def entries() -> dict[str, str]:
    text = BIB.read_text(encoding="utf-8")
    starts = list(re.finditer(r"^@(\w+)\{([\w-]+),", text, re.M))
    return {m.group(2): text[m.start():(starts[i + 1].start() if i + 1 < len(starts)
                                        else len(text))]
            for i, m in enumerate(starts)}


def cited_keys() -> dict[str, set[str]]:
    """Per page (chapter or notebook markdown), the keys its {cite} roles name."""
    pages = {}
    for path in sorted((ROOT / "chapters").glob("*.md")):
        pages[str(path.relative_to(ROOT))] = path.read_text(encoding="utf-8")
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        pages[str(path.relative_to(ROOT))] = "\n".join(
            "".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    return {page: {k.strip() for m in re.finditer(r"\{cite(?::\w+)?\}`([^`]+)`", text)
                   for k in m.group(1).split(",")}
            for page, text in pages.items()}


def test_every_entry_has_a_doi_or_a_url():
    found = entries()
    assert len(found) >= 12
    missing = [k for k, body in found.items()
               if not re.search(r"^\s*(doi|url)\s*=", body, re.M) and k not in NO_LINK]
    assert missing == []
    assert set(NO_LINK) <= set(found)


def test_every_citation_names_an_entry_and_the_source_papers_are_cited():
    found = set(entries())
    cited = cited_keys()
    unknown = {page: keys - found for page, keys in cited.items() if keys - found}
    assert unknown == {}
    everywhere = set().union(*cited.values())
    for key in ("mishra2022bbr", "scherrer2022model", "ware2019modeling", "cardwell2016bbr",
                "rfc9438", "cardwell2022bbrdraft", "floyd1993red", "mishra2019census",
                "srivastava2023fabric", "sarpkaya2025sharing", "fluctuation"):
        assert key in everywhere, f"{key} is never cited"


def test_the_references_page_lists_every_entry_and_is_in_the_table_of_contents():
    page = (ROOT / "chapters" / "references.md").read_text(encoding="utf-8")
    assert re.search(r"```\{bibliography\}\n:all:\n```", page)
    assert "file: chapters/references" in (ROOT / "_toc.yml").read_text(encoding="utf-8")
    config = (ROOT / "_config.yml").read_text(encoding="utf-8")
    assert "- chapters/references.bib" in config
