"""The operation layer: every operation a person or an assistant can invoke, declared once.

- :mod:`.base`: what an operation is (:class:`~.base.Operation`), the params base and the surface bindings;
- :mod:`.registry`: every operation of every tier module (``OPERATIONS`` of :mod:`.spaces` ...);
- :mod:`.execute`: the one ``execute()`` every surface calls (parse, resolve, gate, call, map errors);
- :mod:`.errors`: exceptions -> the :mod:`mnemon_ls.errors` vocabulary, and its JSON-RPC numbers;
- :mod:`.command_ids` / :mod:`.command_args`: the language server's editor commands (``workspace/executeCommand``):
  their ids (light, advertised before the registry loads) and argument objects, bound by the operations'
  :class:`~.surfaces.LspCommand`;
- :mod:`.client`: what the language server gives a session operation (``mnemon/wake``, the turn Views,
  ``mnemon/status``: :mod:`.session`);
- :mod:`.modeltext` / :mod:`.humantext`: results as text for a model and for a person.

Importing this package imports nothing (the language server loads it after answering ``initialize``).
"""
