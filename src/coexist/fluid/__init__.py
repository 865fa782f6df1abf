"""Fluid (delay-differential) model of BBRv1, BBRv2, Reno and CUBIC after Scherrer et al.
(IMC 2022). Units throughout: packets, packets per second, seconds.

Modules follow the paper's structure: ``network`` (eqs. 1-8), ``reno`` (eq. 39),
``cubic`` (eqs. 40-41). Each function is a scalar formula that works on floats and on
NumPy arrays alike, so the same code serves the per-step reference and the compiled solver.
"""
