"""Experiment harness: real Linux CUBIC/BBR/Reno flows through an emulated dumbbell.

Modules: ``spec`` (what an experiment is), ``topology`` (namespaces, veths, bottleneck,
clean-up), ``delay`` (netem or the TUN delay line), ``measure`` (parsers of tool output),
``steal`` and ``wakeups`` (the host's steal and stalls during a run), ``experiment`` (one
run end to end), ``campaign`` (grids of runs), ``load`` (background load), ``preflight``
(machine check). What makes a stored run valid is the data layer's
(:mod:`coexist.data.gates`), which the harness applies and writes through."""
