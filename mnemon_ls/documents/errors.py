"""Errors only the Documents Source raises (to move into :mod:`mnemon_ls.errors` when it is wired).

Both subclass :class:`~mnemon_ls.errors.MnemonError`, so the CLI and the language server already map
them (``code`` -> JSON-RPC ``data.code``, ``exit_code`` -> CLI exit status) without knowing them.
"""

from __future__ import annotations

from typing import Any

from ..errors import EXIT_REJECTED, MnemonError


class DocumentCapacityError(MnemonError):
    """A create, update or restore would push the active documents past ``activeLimitBytes``.

    ``data``: ``projected`` (UTF-8 bytes of every active rendered file after the change), ``limit``
    (bytes), ``used`` (bytes now), ``candidates`` (the other active documents, least recently accessed
    first: ``[{id, title, relativePath, sizeBytes, lastAccessedAt, updatedAt, revision}]``). Nothing
    was written. Reference section 5.6 (the TypeScript plugin's ``DocumentCapacityError``).
    """

    code = "document-capacity"
    exit_code = EXIT_REJECTED

    def __init__(self, message: str, *, projected: int, limit: int, used: int,
                 candidates: list[dict[str, Any]]) -> None:
        super().__init__(message, projected=projected, limit=limit, used=used, candidates=candidates)
        self.projected = projected
        self.limit = limit
        self.used = used
        self.candidates = candidates


class DocumentStatusError(MnemonError):
    """The operation needs the other status: updating or archiving an archived document (archived
    documents are immutable), restoring an active one. ``data``: ``id``, ``status`` (current),
    ``required`` (the status the operation needs)."""

    code = "document-status"
    exit_code = EXIT_REJECTED
