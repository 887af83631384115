"""Documents in the language server: ``mnemon/documents/{create,update,get,list,search,archive,restore}``.

Each handler parses its params model (:mod:`.params`), calls the folder's Documents Source in a worker
thread and returns the result's wire shape plus ``workspace``; hits and list entries gain an absolute
``path`` (editors open them directly).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Callable

from . import protocol as P
from ..packs.gate import run_held
from .feature import Feature

if TYPE_CHECKING:
    from .server import MnemonLanguageServer

#: The handlers of this module; :mod:`.server` attaches them.
feature = Feature()


async def _documents(ls: MnemonLanguageServer, workspace: str | None, call: Callable[[Any], Any]) -> dict[str, Any]:
    state = ls.registry.resolve(workspace)
    result = await asyncio.to_thread(run_held, state.host, lambda: call(state.host.documents))  # one view of the root
    data = result.to_dict()
    # Editors open hits and list entries directly: give each its absolute path (relativePath is
    # relative to the storage root, which the editor does not know).
    for key in ("results", "documents"):
        for item in data.get(key, []) or []:
            if isinstance(item, dict) and item.get("relativePath") and "path" not in item:
                item["path"] = str(state.host.root / item["relativePath"])
    return data | {"workspace": state.uri}


@feature.request(P.DOCUMENTS_CREATE)
async def documents_create(ls: MnemonLanguageServer, params: Any) -> dict[str, Any]:
    """``mnemon/documents/create`` -> ``MutationResult.to_dict()`` (+ ``maintenance`` after cold archival)."""
    from . import maintenance

    return await maintenance.documents_create(ls, params)  # cold archival when it does not fit


@feature.request(P.DOCUMENTS_UPDATE)
async def documents_update(ls: MnemonLanguageServer, params: Any) -> dict[str, Any]:
    """``mnemon/documents/update`` -> ``MutationResult.to_dict()``; archived documents are immutable (``document-status``)."""
    from . import maintenance

    return await maintenance.documents_update(ls, params)  # cold archival when it does not fit


@feature.request(P.DOCUMENTS_GET)
async def documents_get(ls: MnemonLanguageServer, params: Any) -> dict[str, Any]:
    """``mnemon/documents/get`` -> ``DocumentView.to_dict()`` (record, body, absolute path)."""
    p = P.parse_params(P.DocumentIdParams, params)
    return await _documents(ls, p.workspace, lambda d: d.get(p.id))


@feature.request(P.DOCUMENTS_LIST)
async def documents_list(ls: MnemonLanguageServer, params: Any) -> dict[str, Any]:
    """``mnemon/documents/list`` -> ``Catalog.to_dict()``; each document gains an absolute ``path``."""
    p = P.parse_params(P.DocumentListParams, params)
    return await _documents(ls, p.workspace, lambda d: d.list(p.status))


@feature.request(P.DOCUMENTS_SEARCH)
async def documents_search(ls: MnemonLanguageServer, params: Any) -> dict[str, Any]:
    """``mnemon/documents/search`` -> ``SearchResult.to_dict()``; each hit gains an absolute ``path``."""
    p = P.parse_params(P.DocumentSearchParams, params)
    return await _documents(ls, p.workspace, lambda d: d.search(
        p.query, include_archived=p.include_archived, limit=p.limit, include_content=p.include_content))


@feature.request(P.DOCUMENTS_ARCHIVE)
async def documents_archive(ls: MnemonLanguageServer, params: Any) -> dict[str, Any]:
    """``mnemon/documents/archive`` -> ``MutationResult.to_dict()`` (needs the current ``documentRevision``)."""
    p = P.parse_params(P.DocumentArchiveParams, params)
    return await _documents(ls, p.workspace, lambda d: d.archive(
        p.id, p.document_revision, summary=p.summary, expected_revision=p.expected_revision))


@feature.request(P.DOCUMENTS_RESTORE)
async def documents_restore(ls: MnemonLanguageServer, params: Any) -> dict[str, Any]:
    """``mnemon/documents/restore`` -> ``MutationResult.to_dict()`` (a new active revision)."""
    p = P.parse_params(P.DocumentRestoreParams, params)
    return await _documents(ls, p.workspace, lambda d: d.restore(
        p.id, document_revision=p.document_revision, expected_revision=p.expected_revision))
