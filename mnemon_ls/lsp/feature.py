"""The handlers of one feature module (code actions), collected at import time and attached to the server by
:mod:`.server` (the way esbonio keeps ``features/<area>``).

A feature module defines its handlers at module level with ``@feature.feature(method, options)`` (a plain LSP
feature). Nothing is registered until :meth:`Feature.attach` runs, so a module can be imported (and tested)
on its own. There is no ``mnemon/*`` request and no ``workspace/executeCommand`` command here: every one is
an operation of :mod:`mnemon_ls.ops`, bound by :mod:`.operations` and :mod:`.commands`.
"""

from __future__ import annotations

from typing import Any, Callable

Handler = Callable[..., Any]


class Feature:
    """Handlers collected by decorators: ``features`` (method, options, fn)."""

    def __init__(self) -> None:
        self.features: list[tuple[str, Any, Handler]] = []

    def feature(self, method: str, options: Any = None) -> Callable[[Handler], Handler]:
        """Collect a plain LSP feature handler (``server.feature(method, options)``)."""
        def decorate(fn: Handler) -> Handler:
            self.features.append((method, options, fn))
            return fn
        return decorate

    def attach(self, server: Any) -> None:
        """Register every collected handler on ``server``."""
        for method, options, fn in self.features:
            server.feature(method, options)(fn) if options is not None else server.feature(method)(fn)
