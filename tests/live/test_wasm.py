"""The committed engine: built from its sources with the pinned toolchain, importing
nothing from its host, loading nothing from outside the site."""

import re

import pytest

from coexist.live import wasm

HERE = wasm.HERE
PAGE_MODULES = ("engine.mjs", "setup.mjs", "worker.mjs", "client.mjs")


def _sections(wasm: bytes) -> list[int]:
    """The ids of a WebAssembly module's sections, in order."""
    assert wasm[:8] == b"\0asm\1\0\0\0"
    ids, at = [], 8
    while at < len(wasm):
        ids.append(wasm[at])
        at += 1
        size = shift = 0
        while True:  # LEB128
            byte = wasm[at]
            at += 1
            size |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                break
        at += size
    assert at == len(wasm)
    return ids


def test_the_engine_imports_nothing_from_its_host():
    """A browser has no WASI: the module has no import section (id 2)."""
    ids = _sections(wasm.WASM.read_bytes())
    assert 2 not in ids and 7 in ids  # no imports; exports


@pytest.mark.skipif(wasm.toolchain()[0] is None,
                    reason=f"no WebAssembly toolchain: {wasm.toolchain()[1]}")
def test_the_committed_engine_is_its_sources_built_with_the_pinned_flags():
    assert wasm.rebuilt_bytes() == wasm.WASM.read_bytes(), (
        "kernel.wasm is not kernel.c and fma_math.c built: run python -m coexist.live.wasm "
        "and commit kernel.wasm")


@pytest.mark.parametrize("name", PAGE_MODULES)
def test_the_pages_modules_load_nothing_from_another_site(name):
    text = (HERE / name).read_text()
    assert not re.search(r"https?:|//cdn|unpkg|jsdelivr", text)
    for spec in re.findall(r"^import .* from \"([^\"]+)\";$", text, flags=re.M):
        assert spec.startswith("./"), spec
    for spec in re.findall(r"import\(\"([^\"]+)\"\)", text):
        assert spec.startswith("node:"), spec  # Node's own, only where there is no fetch


def test_the_toolchain_check_names_what_is_missing(monkeypatch):
    monkeypatch.setattr(wasm.shutil, "which", lambda _: None)
    clang, why = wasm.toolchain()
    assert clang is None and "wasi-libc" in why and "clang" in why
