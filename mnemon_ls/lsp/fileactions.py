"""The code action about the file itself: "Create document from file", or "Update document from file"
when an active document already names the file in its ``sourcePaths``; and the command of the latter.

Never offered for a file of a storage root (the wake snapshot rendering under ``state/``, managed
documents under ``documents/``, ``USER.md``/``MEMORY.md``, anything else under the workspace's root
or the root holding ``USER.md``): a document of those would copy memory into memory.

:func:`document_action` is called by the ``textDocument/codeAction`` handler (:mod:`.actions`); the commands
the actions run are bound by :mod:`.commands` (:func:`refuse_storage_file` is theirs too).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, Callable

from lsprotocol import types

from ..folders import FolderState, uri_to_path
from ..ops.command_ids import CREATE_DOCUMENT_FROM_FILE, UPDATE_DOCUMENT_FROM_FILE

log = logging.getLogger("mnemon_ls.lsp")


def storage_roots(state: FolderState) -> list[Path]:
    """Real paths of the directories whose files are memory, not workspace files: the folder's storage
    root and the root that holds its ``USER.md`` (``runtimeUserScope``)."""
    roots = [state.host.root, state.host.resolution.user_root]
    out: list[Path] = []
    for root in roots:
        real = Path(os.path.realpath(root))
        if real not in out:
            out.append(real)
    return out


def in_storage_root(state: FolderState, path: Path) -> bool:
    """Whether ``path`` (resolved through links) lies in one of :func:`storage_roots`."""
    real = Path(os.path.realpath(path))
    return any(real == root or root in real.parents for root in storage_roots(state))


def refuse_storage_file(state: FolderState, path: Path) -> None:
    """Raise :class:`~mnemon_ls.errors.InvalidInput` (field ``uri``) when ``path`` is in a storage root,
    except a managed document, which the Documents Source refuses with its own message."""
    from ..errors import InvalidInput

    managed = Path(os.path.realpath(state.host.root / "documents"))
    real = Path(os.path.realpath(path))
    if in_storage_root(state, path) and managed not in real.parents:
        raise InvalidInput("uri", f"{path} is a file of a storage root (memory itself), not a workspace file")


def document_action(state: FolderState, uri: str,
                    make: Callable[[str, str, dict[str, Any]], types.CodeAction]) -> types.CodeAction | None:
    """The file action for ``uri``: ``None`` for a non-file URI or a file in a storage root; "Update
    document from file" (``{uri, id, documentRevision}`` of the one active document naming the file, or
    ``{uri}`` and a title saying how many when several do); else "Create document from file" ``{uri}``.
    ``make(title, command, argument)`` builds the CodeAction. Reads the index only when it exists."""
    if not uri.startswith("file:"):
        return None
    try:
        path = uri_to_path(uri)
    except Exception:  # a URI the host cannot map: no file action
        return None
    if in_storage_root(state, path):
        return None
    try:
        records = state.host.documents.documents_for_source(path)
    except Exception as exc:  # an unreadable index: still offer the create (it will say what is wrong)
        log.debug("documents_for_source failed: %s", exc)
        records = []
    if len(records) == 1:
        record = records[0]
        return make(f"Update document from file ({record.title})", UPDATE_DOCUMENT_FROM_FILE,
                    {"uri": uri, "id": record.id, "documentRevision": record.revision})
    if records:
        return make(f"Update document from file ({len(records)} documents name it)", UPDATE_DOCUMENT_FROM_FILE,
                    {"uri": uri})
    return make("Create document from file", CREATE_DOCUMENT_FROM_FILE, {"uri": uri})
