"""The shared core every layer stands on: typed parameters and their checks, paths,
provenance, sidecar readers, quantities with units, environment settings and progress bars.
"""
