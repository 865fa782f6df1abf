"""Progress bars for long work (tqdm).

``tqdm.auto`` draws a notebook widget where Jupyter can show one and a text bar elsewhere.
In a notebook kernel without ``ipywidgets`` (the book's build) it falls back to the text bar
but first prints a warning, which would end up on the book's pages; this module imports it
with that one warning silenced.
"""

from __future__ import annotations

import warnings
from typing import Any


def tqdm(*args: Any, **kwargs: Any) -> Any:
    """A ``tqdm.auto`` progress bar (same arguments), without the missing-widgets warning."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="IProgress not found")
        from tqdm.auto import tqdm as bar
    return bar(*args, **kwargs)
