"""The pygls language server: protocol models (:mod:`.protocol`), handlers (:mod:`.server`) and the
server-side file watchers (:mod:`.watch`). Only this package imports pygls."""
