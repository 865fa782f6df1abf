"""Progress bars print nothing but the bar on the book's pages."""

import importlib.util

import nbformat
from nbclient import NotebookClient


def _stderr_of(code: str) -> str:
    """Run ``code`` in a fresh Jupyter kernel, as the book build does; return its stderr."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    return "".join(o.get("text", "") for o in nb.cells[0].outputs
                   if o.get("name") == "stderr")


def test_progress_bars_print_no_widget_warning_in_a_notebook_kernel():
    quiet = _stderr_of("from coexist.core.progress import tqdm\n"
                       "assert list(tqdm(range(3), disable=True)) == [0, 1, 2]")
    assert quiet == ""
    if importlib.util.find_spec("ipywidgets") is None:  # the warning this module silences
        assert "IProgress not found" in _stderr_of("from tqdm.auto import tqdm")
