"""An edited equation reaches the compiled kernels: Numba's cache of a kernel does not
notice a change in the modules it inlines, so the package removes it itself."""

from coexist.fluid.model import numba_cache


def test_a_changed_equation_module_removes_the_kernels_cache_and_only_it(tmp_path,
                                                                        monkeypatch):
    here = tmp_path / "fluid"
    (here / "__pycache__").mkdir(parents=True)
    for name in numba_cache.INLINED:
        (here / name).write_text("x = 1\n")
    cached = here / "__pycache__"
    kernel = cached / "published.integrate-223.py311.nbc"
    index = cached / "printed.integrate-245.py311.nbi"
    other = cached / "stability.jacobian-10.py311.nbi"
    for p in (kernel, index, other):
        p.write_text("")
    monkeypatch.setattr(numba_cache, "HERE", here)
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "no-cache"))
    assert sorted(numba_cache.forget_stale_kernels()) == sorted([kernel, index])
    assert other.exists()
    kernel.write_text("")                        # compiled again from these equations
    assert numba_cache.forget_stale_kernels() == []
    (here / "bbr.py").write_text("x = 2\n")      # an equation edited
    assert numba_cache.forget_stale_kernels() == [kernel]


def test_a_cache_file_that_cannot_be_removed_leaves_the_stamp_unwritten(tmp_path,
                                                                       monkeypatch):
    """Importing the model never fails for a cache it may not touch; the stamp stays old,
    so the next import tries again."""
    here = tmp_path / "fluid"
    (here / "__pycache__").mkdir(parents=True)
    for name in numba_cache.INLINED:
        (here / name).write_text("x = 1\n")
    kernel = here / "__pycache__" / "published.integrate-223.py311.nbc"
    kernel.write_text("")
    monkeypatch.setattr(numba_cache, "HERE", here)
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "no-cache"))

    def refuse(self, missing_ok=False):
        raise PermissionError("read-only")

    monkeypatch.setattr(type(kernel), "unlink", refuse)
    assert numba_cache.forget_stale_kernels() == []
    assert not (here / "__pycache__" / "coexist-inlined.sha256").exists()


def test_the_user_wide_cache_is_searched_too(tmp_path, monkeypatch):
    here = tmp_path / "src" / "fluid"
    here.mkdir(parents=True)
    for name in numba_cache.INLINED:
        (here / name).write_text("x = 1\n")
    user = tmp_path / "xdg" / "numba" / here.relative_to(here.anchor)
    user.mkdir(parents=True)
    kernel = user / "printed.integrate-245.py311.nbi"
    kernel.write_text("")
    monkeypatch.setattr(numba_cache, "HERE", here)
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert numba_cache.forget_stale_kernels() == [kernel]
