"""Experiment harness: real Linux CUBIC/BBR/Reno flows through an emulated dumbbell.

Modules: ``spec`` (what an experiment is), ``topology`` (namespaces, veths, bottleneck,
clean-up), ``delay`` (netem or the TUN delay line), ``measure`` (parsers of tool output),
``steal`` and ``wakeups`` (the host's steal and stalls during a run), ``experiment`` (one
run end to end) and the parts it calls: ``ports`` (the flows' ports), ``procs`` (processes in
the namespaces), ``sampling`` (sockets, queue and drop counters), ``early_stop`` (stopping a
run whose lateness gate must fail), ``signals`` (signals during a run and its teardown),
``results`` (a run's tables and summary), ``run_files`` (storing a run); ``campaign``
(grids of runs), ``load`` (background load), ``preflight`` (machine check). What makes a
stored run valid is the data layer's (:mod:`coexist.data.gates`), which the harness applies
and writes through."""
