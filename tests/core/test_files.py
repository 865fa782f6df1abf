"""Atomic writes of committed files (coexist.core.files)."""

from __future__ import annotations

import stat

import pytest

from coexist.core import files


def test_atomic_write_replaces_the_file_readable_and_leaves_nothing_else(tmp_path):
    path = tmp_path / "table.csv"
    path.write_text("old\n")
    files.atomic_write(path, "new\n")
    assert path.read_text() == "new\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o644  # mkstemp's 0600 would hide it
    files.atomic_write(path, b"\x00\x01")
    assert path.read_bytes() == b"\x00\x01"
    assert [p.name for p in tmp_path.iterdir()] == ["table.csv"]


def test_a_write_that_fails_leaves_the_old_file_and_no_temporary_one(tmp_path, monkeypatch):
    path = tmp_path / "summary.json"
    path.write_text('{"valid": true}\n')

    def crash(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(files.os, "replace", crash)
    with pytest.raises(OSError, match="disk full"):
        files.atomic_write(path, '{"val')
    assert path.read_text() == '{"valid": true}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["summary.json"]
