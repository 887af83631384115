"""The handlers of one feature module (runtime, documents, spaces, actions), collected at import time and
attached to the server by :mod:`.server` (the way esbonio keeps ``features/<area>``).

A feature module defines its handlers at module level with ``@feature.request(method)`` (a ``mnemon/*``
request: its errors become JSON-RPC errors with ``data.code``), ``@feature.feature(method, options)`` (a
plain LSP feature) and ``@feature.command(name)`` (a ``workspace/executeCommand`` command). Nothing is
registered until :meth:`Feature.attach` runs, so a module can be imported (and tested) on its own.
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable

Handler = Callable[..., Any]


class Feature:
    """Handlers collected by decorators: ``requests`` (method, fn), ``features`` (method, options, fn),
    ``commands`` (name, fn)."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, Callable[..., Awaitable[Any]]]] = []
        self.features: list[tuple[str, Any, Handler]] = []
        self.commands: list[tuple[str, Handler]] = []

    def request(self, method: str) -> Callable[[Handler], Handler]:
        """Collect an async ``mnemon/*`` handler ``fn(ls, params)`` for ``method``."""
        def decorate(fn: Handler) -> Handler:
            self.requests.append((method, fn))
            return fn
        return decorate

    def feature(self, method: str, options: Any = None) -> Callable[[Handler], Handler]:
        """Collect a plain LSP feature handler (``server.feature(method, options)``)."""
        def decorate(fn: Handler) -> Handler:
            self.features.append((method, options, fn))
            return fn
        return decorate

    def command(self, name: str) -> Callable[[Handler], Handler]:
        """Collect a ``workspace/executeCommand`` handler for command ``name``."""
        def decorate(fn: Handler) -> Handler:
            self.commands.append((name, fn))
            return fn
        return decorate

    def attach(self, server: Any, mnemon_request: Callable[[str], Callable[[Handler], Handler]]) -> None:
        """Register every collected handler on ``server``; requests go through ``mnemon_request`` (the
        server's error-mapping wrapper)."""
        for method, fn in self.requests:
            mnemon_request(method)(fn)
        for method, options, fn in self.features:
            server.feature(method, options)(fn) if options is not None else server.feature(method)(fn)
        for name, fn in self.commands:
            server.command(name)(fn)
