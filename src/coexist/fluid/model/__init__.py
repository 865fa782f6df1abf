"""The fluid model itself: its equations, one function each in the paper's order, the two
kernels that integrate them (the published and the printed reading), the paper's set-up of
a run, the configuration and trace, the aggregate metrics and the NumPy oracle. See
:mod:`coexist.fluid` for the map."""
