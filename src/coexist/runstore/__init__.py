"""The store of a deterministic model's runs, apart from the model itself.

A run is a function of its inputs and of the model's code, so it is kept under a key that
hashes both (:mod:`.source_key`, over the packages the model declares). :mod:`.lookup` is
the memo every model call goes through (the committed store, then a local layer, else the
registered computation); :mod:`.store` reads, writes and checks the committed store
(``data/model-runs``); :mod:`.codec` is its exact JSON encoding; :mod:`.refresh` computes
stale runs again and verifies stored ones bit for bit; :mod:`.fanout` runs a sweep's
independent runs on threads or a Dask cluster. Nothing here imports the model: the model's
package declares itself and its kinds register themselves where they are defined.
"""
