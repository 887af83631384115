"""Mnemon Packs in the language server: what follows an import.

The ``mnemon/pack/*`` requests are operations (:mod:`mnemon_ls.ops.packs`, bound by :mod:`.operations`).
After a ``packs.import`` that wrote (not a dry run), every other open folder on the same storage root
drops its cached Documents and Memory Spaces Sources (:func:`mnemon_ls.packs.importer.release_sources`:
they are rebuilt from the swapped directories on next use) and the server sends ``mnemon/packImported``
``{workspace, receipt}``: an observer of the operation (:func:`register`).

No pydantic at import time (the server imports this module before answering ``initialize``).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..folders import FolderState
    from .core import MnemonLanguageServer

IMPORTED = "mnemon/packImported"


def register(server: "MnemonLanguageServer") -> None:
    """Observe ``packs.import`` on ``server`` (module doc)."""

    def observe(state: "FolderState", operation: Any, data: Any, error: Exception | None) -> None:
        if error is not None or operation.name != "packs.import" or not isinstance(data, dict) or data.get("dryRun"):
            return
        from ..packs.importer import release_sources

        root = os.path.realpath(state.host.root)
        for other in list(server.registry.folders.values()):
            if other is not state and os.path.realpath(other.host.root) == root:
                release_sources(other.host)
        server.protocol.notify(IMPORTED, {"workspace": state.uri, "receipt": data})

    server.observers.append(observe)
