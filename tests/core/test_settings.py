"""Environment variables: every one the package reads is declared in
``coexist.core.settings`` with its kind, default and meaning, and read only through it."""

import ast
import os
from pathlib import Path

import pytest

from coexist.core import settings

SRC = Path(__file__).resolve().parents[2] / "src" / "coexist"


def _environment_uses(path: Path) -> list[str]:
    """Where a module touches ``os.environ`` or calls ``os.getenv``/``os.putenv``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id == "os" and node.attr in ("environ", "getenv", "putenv"):
            found.append(f"{path.relative_to(SRC)}:{node.lineno}")
    return found


def test_only_the_settings_module_touches_the_environment():
    uses = [u for p in sorted(SRC.rglob("*.py")) if p != SRC / "core" / "settings.py"
            for u in _environment_uses(p)]
    assert uses == []


def test_the_scan_finds_a_read(tmp_path):
    probe = SRC / "core" / "settings.py"
    assert _environment_uses(probe)  # the settings module itself reads os.environ


def test_every_declared_variable_is_read_by_the_package():
    # its declaration names it once; a read (here or in another module) names it again
    text = "\n".join(p.read_text() for p in SRC.rglob("*.py"))
    unread = [name for name in settings.VARIABLES if text.count(f'"{name}"') < 2]
    assert unread == []
    for var in settings.VARIABLES.values():
        assert var.kind in ("text", "flag", "directory", "file") and var.meaning and var.default


def test_an_undeclared_name_or_another_kind_is_refused(monkeypatch):
    monkeypatch.setenv("COEXIST_NOT_DECLARED", "1")
    for read in (settings.text, settings.flag, settings.directory, settings.file):
        with pytest.raises(KeyError, match="COEXIST_NOT_DECLARED"):
            read("COEXIST_NOT_DECLARED")
    with pytest.raises(KeyError, match="as a flag"):
        settings.flag("COEXIST_FLUID_CACHE")  # a directory
    with pytest.raises(KeyError):
        settings.export("COEXIST_NOT_DECLARED", "x")


def test_export_sets_and_removes_a_variable_for_children(monkeypatch):
    monkeypatch.delenv("COEXIST_SCHEDULER", raising=False)
    settings.export("COEXIST_SCHEDULER", "tcp://127.0.0.1:8786")
    assert os.environ["COEXIST_SCHEDULER"] == "tcp://127.0.0.1:8786"
    assert settings.text("COEXIST_SCHEDULER") == "tcp://127.0.0.1:8786"
    settings.export("COEXIST_SCHEDULER", None)
    assert "COEXIST_SCHEDULER" not in os.environ
