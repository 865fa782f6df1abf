"""How ``kernel.wasm`` is made from ``kernel.c`` and ``fma_math.c``, and the check that it
was.

The page's engine is committed as built (``kernel.wasm``, about 27 kB), not built by
``make book``, for three reasons:

- **The book builds without a WebAssembly toolchain.** Readers who build the book (the
  Binder/conda environment, a laptop without clang's wasm32 target and wasi-libc) get the
  same page as CI; only a change to ``kernel.c`` needs the toolchain.
- **The bytes the page ships are the bytes CI compared.** The comparison with the native
  kernel (tests/live) runs the committed module, not one rebuilt on the test machine.
- **The build is reproducible, so the commit is checked.** With the pinned toolchain
  (:data:`TOOLCHAIN`: Debian bookworm's clang and lld 14 and wasi-libc) and :data:`FLAGS`,
  the same source gives the same bytes in any directory; a test rebuilds the module and
  requires identical bytes wherever that toolchain is installed (``make system-deps`` installs
  it), so a ``kernel.c`` changed without its ``kernel.wasm`` fails CI.

The flags: no fast-math and ``-ffp-contract=off`` (no fused multiply-add but the two
explicit ones of the kernel's cube), so every operation rounds as in the Numba kernel;
``-mnontrapping-fptoint``, a float's truncation to an integer in one instruction (every
browser since 2021 has it; the kernel's ``trunc_l`` gives x86's value beyond the range
itself); ``-nostartfiles`` and ``--no-entry``, a library of three exported functions with no WASI
start-up; ``--strip-all``, no names or producers section (fewer bytes, nothing of the build
machine). exp and pow are ``fma_math.c``'s, glibc's algorithms with glibc's fused
operations, so they return the native kernel's bits where musl's differ in the last one;
log, fmod and fma are musl's, linked statically from wasi-libc. The module then imports
nothing, which the engine checks when it loads it.

``python -m coexist.live.wasm`` rebuilds ``kernel.wasm`` (commit it with its sources).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCES = (HERE / "kernel.c", HERE / "fma_math.c")
WASM = HERE / "kernel.wasm"
#: the toolchain whose output is committed: clang's version and the Debian packages
TOOLCHAIN = {"clang": "14.0.6", "debian": ("clang", "lld", "wasi-libc",
                                           "libclang-rt-14-dev-wasm32")}
SYSROOT = "/usr"  # Debian's wasi-libc: /usr/include/wasm32-wasi, /usr/lib/wasm32-wasi
FLAGS = ("--target=wasm32-wasi", f"--sysroot={SYSROOT}", "-O2", "-ffp-contract=off",
         "-mnontrapping-fptoint", "-nostartfiles", "-Wl,--no-entry", "-Wl,--strip-all")


def toolchain() -> tuple[str | None, str]:
    """The clang to build with, or None, and why not: absent, another version than the
    pinned one (whose bytes would differ), or without wasi-libc."""
    clang = shutil.which("clang")
    if clang is None:
        return None, ("no clang (apt-get install " + " ".join(TOOLCHAIN["debian"]) + ")")
    banner = subprocess.run([clang, "--version"], capture_output=True, text=True,
                            check=False).stdout
    found = re.search(r"clang version (\S+)", banner)
    version = found.group(1) if found else "unknown"
    if version != TOOLCHAIN["clang"]:
        return None, f"clang {version}, not the pinned {TOOLCHAIN['clang']}"
    if not (Path(SYSROOT) / "lib" / "wasm32-wasi" / "libc.a").exists():
        return None, "no wasi-libc (apt-get install wasi-libc)"
    return clang, ""


def compile_wasm(sources: tuple[Path, ...], out: Path) -> Path:
    """Compile ``sources`` with the pinned flags into ``out``; an error naming the missing
    part of the toolchain, or the compiler's message."""
    clang, why = toolchain()
    if clang is None:
        raise RuntimeError(f"cannot build the page's engine: {why}")
    done = subprocess.run([clang, *FLAGS, "-o", str(out), *map(str, sources), "-lm"],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"clang failed on {', '.join(s.name for s in sources)}:\n"
                           f"{done.stderr.strip()}")
    return out


def rebuilt_bytes(sources: tuple[Path, ...] = SOURCES) -> bytes:
    """What the pinned toolchain makes of ``sources``, built in a scratch directory."""
    with tempfile.TemporaryDirectory() as tmp:
        return compile_wasm(sources, Path(tmp) / "kernel.wasm").read_bytes()


def main() -> int:
    """Rebuild ``kernel.wasm`` beside ``kernel.c``."""
    try:
        data = rebuilt_bytes()
    except RuntimeError as exc:
        print(f"coexist.live.wasm: {exc}", file=sys.stderr)
        return 1
    changed = not WASM.exists() or WASM.read_bytes() != data
    WASM.write_bytes(data)
    print(f"{WASM} {'rebuilt' if changed else 'unchanged'} ({len(data)} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
