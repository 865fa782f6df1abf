"""Fluid (delay-differential) model of BBRv1, BBRv2, Reno and CUBIC after Scherrer et al.
(IMC 2022), in two readings. Units of the configuration: packets, packets per second,
seconds.

- The published reading (``published``, the default of ``solve.Config`` and of every
  helper: ``solve.DEFAULT_READING``): the equations as the authors' code integrates them
  (the code that produced the paper's figures), checked against that code's own outputs
  (``authors``, ``data/reference/``).
- The printed reading (``solve``'s own kernel, ``Config(reading="printed")``): the
  equations as the paper prints them, with the choices ``solve`` documents, kept where it
  teaches something (the readings page).

The equations live in modules that follow the paper's structure, one function each:
``network`` (eqs. 1-8), ``reno`` (eq. 39) and ``cubic`` (eqs. 40-41), on floats and NumPy
arrays alike; ``bbr`` (BBR's shared core, eqs. 9-19), ``bbr1`` (eqs. 20-23) and ``bbr2``
(eqs. 24-32), compiled functions in both readings that the two kernels inline (``smooth``
holds σ, Γ and the indicator as each reading writes them; ``kernel_cache`` keeps Numba's
cache of the kernels true to them).

``solve`` holds the configuration (``Config``, ``Flow``), the trace and ``run``, which
integrates either reading (the published one through ``published.integrate``, the kernel
of the authors' equations). ``authors`` compares runs with the authors' code's outputs;
``convergence`` and ``run_length`` run either reading at several steps and run lengths;
``metrics`` computes the paper's aggregate metrics from a trace; ``equilibria`` searches
Nash equilibria of the CUBIC/BBR choice; ``stability`` holds the reduced models of §5;
``cache`` memoises runs on disk; ``fanout`` runs a sweep's independent runs on threads or
a Dask cluster; ``reference`` integrates the printed reading step by step in NumPy, the
yardstick of ``solve``'s compiled kernel.
"""
