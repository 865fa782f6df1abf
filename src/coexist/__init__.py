"""Models, solvers and tooling for the executable book on BBR/CUBIC coexistence."""

__version__ = "0.1.0"
