"""The page's engine: the fluid model in the reader's browser, tied to the native kernel.

``kernel.c`` is the published reading's kernel (:func:`coexist.fluid.model.published.integrate`)
in C, operation for operation; ``kernel.wasm`` is it compiled to WebAssembly (how and why it
is committed as built: :mod:`.wasm`). ``engine.mjs`` loads the module with no imports from
its host (a browser has no WASI) and runs it; ``setup.mjs`` builds a run's arguments from a
page's inputs (a dumbbell) as the Python set-up does; ``worker.mjs`` runs the engine in a
Web Worker and ``client.mjs`` is the page's side of that worker; ``closed_form.mjs`` is the
closed form (:mod:`coexist.closed_form`'s equations with Python's bits: they need no
rounding library function); ``run_node.mjs`` runs the worker's handler, or the closed form,
under Node for the command line (``coexist fluid run|model ... --engine browser``) and CI.
``your_network.mjs`` is the "Your network" section of the WhatIf page (its controls, their
ranges, the URL, the readouts) and ``fluid_share.mjs`` turns the engine's runs into the
book's goodputs, shares and equilibria; the book copies this folder into its site
(:mod:`coexist.book.sphinxext`) with the page's modules joined into one classic script
(:mod:`.bundle`), which a page opened from a file still runs.
:mod:`.engine` drives it from Python: the native kernel's arguments in, its raw sums and
sampled traces out, so tests/live can compare the two bit for bit.

Everything the page loads lives in this folder; nothing comes from another site.
"""
