"""Reading the stored testbed runs: per-campaign tables, measured equilibria, comparisons
with the models, socket states, the fluctuation, the run-length study, FABRIC's results and
the fluid model beside the measurements.
"""
