"""What changed between the book's first edition and this one, for the conclusions that
rest on the fluid model.

The first edition's statements are data (``data/reference/first_edition.csv``), each
quoted with the file it comes from at that edition's commit; this edition's side is a
template filled from the committed claims (``notebooks/expected/*.claims.csv``), which the
figure check holds equal to what the notebooks compute. So the page cannot drift from
the figures, and a claim that disappears fails the build.
"""

from __future__ import annotations

import re

import pandas as pd

from ..core import paths
from . import claims

FIRST_EDITION = paths.DATA / "reference" / "first_edition.csv"
FIELD = re.compile(r"\{([a-z][a-z0-9_]*)\}")


def claim_texts(expected=paths.EXPECTED) -> dict[str, str]:
    """Every committed claim's text, by key."""
    out: dict[str, str] = {}
    for path in sorted(expected.glob(f"*{claims.SUFFIX}")):
        out.update({k: c.text for k, c in claims.read(path).items()})
    return out


def fill(template: str, texts: dict[str, str]) -> str:
    """``template`` with each ``{key}`` replaced by that claim's text; an unknown key is an
    error naming it, never left blank."""
    def one(m: re.Match) -> str:
        if m.group(1) not in texts:
            raise KeyError(f"first_edition.csv names the claim {m.group(1)!r}, which no "
                           "figure makes")
        return texts[m.group(1)]

    return FIELD.sub(one, template)


def changes(path=FIRST_EDITION, expected=paths.EXPECTED) -> pd.DataFrame:
    """One row per conclusion: what it is, its page, the first edition's value, this
    edition's, and where the first edition's is quoted from."""
    table = pd.read_csv(path)
    texts = claim_texts(expected)
    return pd.DataFrame({"Conclusion": table["conclusion"], "Page": table["page"],
                         "First edition": table["before"],
                         "This edition": [fill(t, texts) for t in table["after"]],
                         "Quoted from": table["source"]})
