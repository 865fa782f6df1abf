"""Publishing: the figure ledger, claims, figures, the runner, the book build and its Sphinx
extension, the equation index, the edition, the PDF, the reader's view and re-run draws.
"""
