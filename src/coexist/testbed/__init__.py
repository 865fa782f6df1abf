"""Experiment harness: real Linux CUBIC/BBR/Reno flows through an emulated dumbbell.

Modules: ``spec`` (what an experiment is), ``topology`` (namespaces, veths, bottleneck,
clean-up), ``delay`` (netem or the TUN delay line), ``measure`` (parsers of tool output),
``gates`` (validity), ``experiment`` (one run end to end), ``preflight`` (machine check).
"""
