"""The "Your network" page as one classic script (``your_network.js``), written from the
page's modules when the book is built.

Browsers refuse ES modules on a page opened from a file (``file://``: the module's origin is
null), but run a classic script. So the book serves the page's modules joined into one
script: each module inside its own function scope, its ``export`` keywords dropped and its
exports returned, each ``import`` turned into a read of the exports of a module placed
before it, ``import.meta.url`` into the script's own address. The code is the modules'
own, character for character otherwise, so what the tests check in the modules is what the
page runs. The fluid model still runs in a module worker (worker.mjs), which needs the
page served; opened from a file, the page shows the closed form and says so.
"""

from __future__ import annotations

import re

from .wasm import HERE

#: the page's modules, each after those it imports
MODULES = ("closed_form.mjs", "setup.mjs", "client.mjs", "fluid_share.mjs",
           "your_network.mjs")
#: the script's file name in the book's _static/live
SCRIPT = "your_network.js"

_EXPORT = re.compile(r"^export (?:async )?(?:function|const|class|let) (\w+)", re.M)
_IMPORT_NAMES = re.compile(r'^import \{([^}]*)\} from "\./([\w.]+)";$', re.M)
_IMPORT_ALL = re.compile(r'^import \* as (\w+) from "\./([\w.]+)";$', re.M)


def _var(module: str) -> str:
    """The name of a module's exports in the script."""
    return "__" + module.removesuffix(".mjs")


def _scope(module: str, placed: set[str]) -> str:
    """One module as a function scope that returns its exports."""
    text = (HERE / module).read_text(encoding="utf-8")
    names = _EXPORT.findall(text)

    def one(match: re.Match, whole: bool) -> str:
        source = match.group(2)
        if source not in placed:
            raise ValueError(f"{module} imports {source}, which is not placed before it")
        if whole:
            return f"const {match.group(1)} = {_var(source)};"
        return f"const {{{match.group(1)}}} = {_var(source)};"

    text = _IMPORT_NAMES.sub(lambda m: one(m, False), text)
    text = _IMPORT_ALL.sub(lambda m: one(m, True), text)
    if re.search(r"^import ", text, re.M):
        raise ValueError(f"{module}: an import this script cannot place")
    text = re.sub(r"^export ", "", text, flags=re.M).replace("import.meta.url", "__SCRIPT_URL")
    return (f"const {_var(module)} = (() => {{\n{text}\n"
            f"return {{ {', '.join(names)} }};\n}})();\n")


def classic_script() -> str:
    """The page's modules (:data:`MODULES`) as one classic script."""
    placed: set[str] = set()
    parts = ["// The \"Your network\" page's modules (coexist.live) joined into one classic "
             "script by coexist.live.bundle.\n(() => {\n"
             "const __SCRIPT_URL = document.currentScript.src;\n"]
    for module in MODULES:
        parts.append(_scope(module, placed))
        placed.add(module)
    parts.append("})();\n")
    return "".join(parts)
