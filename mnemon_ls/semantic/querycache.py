"""The query vectors a backend remembers (:class:`QueryCache`): a bounded least-recently-used map.

A recall embeds its query once per process and configuration: a federated recall asks every space with the same
query, an editor asks again as the user types on, and a hook recalls the prompt the assistant sees next. A hit
costs microseconds instead of a forward pass of the model (12-25 ms CPU for the bundled one,
bench/results/semantic.md) or an HTTP round trip to an endpoint.
"""

from __future__ import annotations

import threading
from typing import Any

#: Query vectors a backend remembers: at most this many, ``dim x 4`` bytes each (1.5 KiB at 384 dimensions, so at
#: most 96 KiB for the bundled model); the least recently used goes first.
QUERY_CACHE = 64


class QueryCache:
    """At most ``entries`` query vectors (``(dim,)`` float32 each: ``entries x dim x 4`` bytes in all) by key,
    least recently used first out. Keys are :func:`~.backends.query_key` tuples ``(model id, the normalised
    query)``, so a vector is never reused for another model or another text. :meth:`get` returns a copy (a caller
    may change it). Thread-safe."""

    def __init__(self, entries: int = QUERY_CACHE) -> None:
        if entries < 1:
            raise ValueError("entries must be at least 1")
        self.entries = entries
        self._held: dict[Any, Any] = {}
        self._lock = threading.Lock()

    def get(self, key: Any) -> Any:
        """A copy of the vector of ``key`` (now the most recently used), or ``None``."""
        with self._lock:
            vector = self._held.pop(key, None)
            if vector is None:
                return None
            self._held[key] = vector
        return vector.copy()

    def put(self, key: Any, vector: Any) -> None:
        """Remember ``vector`` (kept as given: the caller hands over a vector it no longer changes) for ``key``,
        letting the least recently used go while more than :attr:`entries` are held."""
        with self._lock:
            self._held.pop(key, None)
            self._held[key] = vector
            while len(self._held) > self.entries:
                self._held.pop(next(iter(self._held)))

    def __contains__(self, key: Any) -> bool:
        with self._lock:
            return key in self._held

    def __len__(self) -> int:
        with self._lock:
            return len(self._held)

    def clear(self) -> None:
        """Forget every vector."""
        with self._lock:
            self._held.clear()
