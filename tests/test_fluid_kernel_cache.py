"""An edited equation reaches the compiled kernels: Numba's cache of a kernel does not
notice a change in the modules it inlines, so the package removes it itself."""

from coexist.fluid import kernel_cache


def test_a_changed_equation_module_removes_the_kernels_cache_and_only_it(tmp_path,
                                                                        monkeypatch):
    here = tmp_path / "fluid"
    (here / "__pycache__").mkdir(parents=True)
    for name in kernel_cache.INLINED:
        (here / name).write_text("x = 1\n")
    cached = here / "__pycache__"
    kernel = cached / "published.integrate-223.py311.nbc"
    index = cached / "solve._integrate-245.py311.nbi"
    other = cached / "stability.jacobian-10.py311.nbi"
    for p in (kernel, index, other):
        p.write_text("")
    monkeypatch.setattr(kernel_cache, "HERE", here)
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    assert sorted(kernel_cache.forget_stale_kernels()) == sorted([kernel, index])
    assert other.exists()
    kernel.write_text("")                        # compiled again from these equations
    assert kernel_cache.forget_stale_kernels() == []
    (here / "bbr.py").write_text("x = 2\n")      # an equation edited
    assert kernel_cache.forget_stale_kernels() == [kernel]
