"""Citations of code in memory (issue 24): the model and hashing (:mod:`.model`), freshness against the working
tree with its cache (:mod:`.freshness`) and the side files each Source keeps them in (:mod:`.store`).

Base layer: the Sources never import it; the Host builds a :class:`~mnemon_ls.citations.store.Citations` per
workspace and the operation layer (:mod:`mnemon_ls.ops.citing`) resolves, stores and shows citations.
"""
