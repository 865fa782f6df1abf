"""The studies the book runs on the fluid model (:mod:`coexist.fluid.model`): each module
answers one question of a figure or a chapter, and registers the stored kinds of result it
computes (:func:`coexist.runstore.lookup.computes`)."""
