"""The model's code as the store's keys see it: which source files make up the model, and
one digest of what they compute.

The store knows nothing of the model it keeps runs of. The model declares itself
(:func:`declare_model`): the package whose modules compute the stored kinds, then the
packages beneath it that its results read. Every ``.py`` file under those packages, in
subfolders too, is the model's source (:func:`model_sources`), so a new module can never
drop out of the key; the store's own machinery lives in another package and needs no list
of files left out. A kind registers itself where it is defined (:func:`kinds_loaded`
imports every module of the model's package, so the registrations run without a list of
module names).
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib
import io
import pkgutil
import threading
import tokenize
from collections.abc import Sequence
from pathlib import Path

#: the model's packages by dotted name, the one that computes the stored kinds first
#: (set once by :func:`declare_model`; read through :func:`model_packages`)
_DECLARED: list[tuple[str, ...]] = []


def declare_model(*packages: str) -> None:
    """Declare the model whose runs are stored: its package first (where the stored kinds
    are computed), then the packages beneath it whose code its results read. The model's
    package calls this when it is imported; a second, different declaration is refused."""
    if not packages:
        raise ValueError("declare_model needs at least the model's package")
    if _DECLARED and _DECLARED[0] != packages:
        raise RuntimeError(f"the store already keeps the runs of {_DECLARED[0]}, "
                           f"not {packages}")
    if not _DECLARED:
        _DECLARED.append(tuple(packages))


def model_packages() -> tuple[str, ...]:
    """The declared model's packages (:func:`declare_model`), the model's own first."""
    if not _DECLARED:
        raise RuntimeError("no model declared: import the model's package "
                           "(coexist.fluid) before looking up its runs")
    return _DECLARED[0]


def package_dir(name: str) -> Path:
    """The folder of an importable package."""
    module = importlib.import_module(name)
    return Path(module.__file__).resolve().parent


def load_kinds() -> None:
    """Import every module of the model's package, subpackages included, so that each
    stored kind has registered its computation where it is defined."""
    top = model_packages()[0]
    package = importlib.import_module(top)
    for info in pkgutil.walk_packages(package.__path__, prefix=top + "."):
        importlib.import_module(info.name)


def model_sources(folders: Sequence[Path] | None = None) -> list[Path]:
    """Every Python source file under ``folders`` (default: the declared model's
    packages), at any depth: the code whose change must change every key."""
    if folders is None:
        folders = [package_dir(name) for name in model_packages()]
    return sorted(p for top in folders for p in top.rglob("*.py")
                  if "__pycache__" not in p.parts)


def _docstring_starts(tree: ast.AST) -> list[tuple[int, int]]:
    """Where each docstring begins, as (line, byte column) of its string: the first
    statement of the module, a class or a function when it is a string alone."""
    starts = []
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
                and body and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            starts.append((body[0].lineno, body[0].col_offset))
    return starts


def _tokens(source: str) -> list[tuple[str, str, tuple[int, int]]]:
    """The source's tokens as (kind, text, start), an f-string as one
    ``STRING`` token whichever Python reads it: 3.12 splits an f-string into
    ``FSTRING_START`` ... ``FSTRING_END``, which are joined here into the literal's text."""
    lines = io.StringIO(source).readlines()

    def text(start: tuple[int, int], end: tuple[int, int]) -> str:
        if start[0] == end[0]:
            return lines[start[0] - 1][start[1]:end[1]]
        return (lines[start[0] - 1][start[1]:] + "".join(lines[start[0]:end[0] - 1])
                + lines[end[0] - 1][:end[1]])

    out, depth, opened = [], 0, None
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        kind = tokenize.tok_name[tok.type]
        if kind == "FSTRING_START":
            depth += 1
            if depth == 1:
                opened = tok
            continue
        if depth:
            if kind == "FSTRING_END":
                depth -= 1
                if depth == 0:
                    out.append(("STRING", text(opened.start, tok.end), opened.start))
            continue
        out.append((kind, tok.string, tok.start))
    return out


#: tokens that are layout, not code: comments, line breaks inside brackets, the file's end
_LAYOUT = frozenset({"COMMENT", "NL", "ENCODING", "ENDMARKER"})


def code_of(source: str) -> str:
    """What a module computes, as text: its tokens without docstrings, comments or layout,
    one per line as kind and text (indentation as ``INDENT``/``DEDENT``, a statement's end
    as ``NEWLINE``). Rewording a docstring or a comment, or re-wrapping a line, leaves it
    unchanged, so the stored runs keep their keys; any change to a statement or an
    expression changes it (adding redundant brackets too, which is conservative).

    Tokens, not the syntax tree: ``ast.dump``'s text changes between Python minor versions
    (new fields, 3.13 leaves out empty ones), so a tree-keyed store would miss on every run
    under another Python. Python's tokens are the language's lexical grammar, which
    releases extend rather than re-spell; the one change in how existing code tokenizes,
    3.12's split f-strings, is joined back into one string token (:func:`_tokens`)."""
    starts = set(_docstring_starts(ast.parse(source)))
    lines = io.StringIO(source).readlines()
    kept, skipping, own_line = [], False, False
    for kind, text, start in _tokens(source):
        if kind in _LAYOUT:
            continue
        column_bytes = len(lines[start[0] - 1][:start[1]].encode()) if kind == "STRING" else 0
        if kind == "STRING" and (start[0], column_bytes) in starts:
            # the docstring and its implicit continuations; its NEWLINE too where it is a
            # statement of its own (``def f(): "doc"`` keeps the NEWLINE that ends the def)
            skipping = True
            own_line = not kept or kept[-1].split(" ", 1)[0] in ("NEWLINE", "INDENT", "DEDENT")
            continue
        if skipping:
            if kind == "STRING":
                continue
            skipping = False
            if kind == "NEWLINE" and own_line:
                continue
        if kind in ("INDENT", "DEDENT", "NEWLINE"):
            text = ""
        kept.append(f"{kind} {text}")
    return "\n".join(kept)


def source_digest(paths: Sequence[Path], base: Path) -> str:
    """sha256 over ``paths`` in order: each file's path under ``base`` and its code
    (:func:`code_of`)."""
    h = hashlib.sha256()
    for path in paths:
        h.update(path.relative_to(base).as_posix().encode() + b"\0")
        h.update(code_of(path.read_text(encoding="utf-8")).encode() + b"\0")
    return h.hexdigest()


#: one thread at a time parses the model's source: ``ast.parse`` run in two threads at once
#: can fail on this CPython 3.11 ("SystemError: AST constructor recursion depth mismatch",
#: as in cpython#106905), and runs are looked up from several threads (the reference test
#: met it on a clean clone)
_PARSING = threading.Lock()


@functools.lru_cache(maxsize=1)
def code_hash() -> str:
    """sha256 over the model's source files (:func:`model_sources`), each named by its path
    under the package that holds the model's package (``coexist``) and read for its code
    alone (:func:`code_of`)."""
    with _PARSING:
        sources = model_sources()
        return source_digest(sources, package_dir(model_packages()[0]).parent)
