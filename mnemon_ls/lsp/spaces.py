"""Memory Spaces in the language server: ``mnemon/spaces/*``, ``mnemon/remember``, ``mnemon/recall``,
``mnemon/related``, ``mnemon/link`` and ``mnemon/forget``.

Each handler parses its params model (:mod:`.params`), calls one Host or Spaces operation in a worker
thread and returns the result's wire shape plus ``workspace`` (a list becomes ``{spaces: [...]}``).
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


async def _spaces(ls: MnemonLanguageServer, workspace: str | None, call: Callable[[Any], Any]) -> Any:
    state = ls.registry.resolve(workspace)
    result = await asyncio.to_thread(run_held, state.host, call, state.host)  # one view of the root
    if isinstance(result, list):
        return {"spaces": [item.to_dict() for item in result], "workspace": state.uri}
    data = result.to_dict() if hasattr(result, "to_dict") else result
    return data | {"workspace": state.uri}


@feature.request(P.SPACES_LIST)
async def spaces_list(ls: MnemonLanguageServer, params: Any) -> Any:
    """``mnemon/spaces/list`` -> ``{spaces: [SpaceView], workspace}`` (credential field names only, never values)."""
    p = P.parse_params(P.SpacesListParams, params)
    return await _spaces(ls, p.workspace, lambda h: h.spaces.list_spaces(active_only=p.active_only))


@feature.request(P.SPACES_CREATE)
async def spaces_create(ls: MnemonLanguageServer, params: Any) -> Any:
    """``mnemon/spaces/create`` -> ``SpaceView`` (the first native space gets id ``default``)."""
    p = P.parse_params(P.SpaceCreateParams, params)
    return await _spaces(ls, p.workspace, lambda h: h.spaces.create_space(p.name, p.description, active=p.active,
                                                                          provider=p.provider))


@feature.request(P.SPACES_UPDATE)
async def spaces_update(ls: MnemonLanguageServer, params: Any) -> Any:
    """``mnemon/spaces/update`` -> ``SpaceView``."""
    p = P.parse_params(P.SpaceUpdateParams, params)
    return await _spaces(ls, p.workspace, lambda h: h.spaces.update_space(p.space_id, name=p.name,
                                                                          description=p.description))


@feature.request(P.SPACES_ACTIVATE)
async def spaces_activate(ls: MnemonLanguageServer, params: Any) -> Any:
    """``mnemon/spaces/activate`` -> ``SpaceView`` (active spaces are read by recall)."""
    p = P.parse_params(P.SpaceIdParams, params)
    return await _spaces(ls, p.workspace, lambda h: h.spaces.activate(p.space_id))


@feature.request(P.SPACES_DEACTIVATE)
async def spaces_deactivate(ls: MnemonLanguageServer, params: Any) -> Any:
    """``mnemon/spaces/deactivate`` -> ``SpaceView``."""
    p = P.parse_params(P.SpaceIdParams, params)
    return await _spaces(ls, p.workspace, lambda h: h.spaces.deactivate(p.space_id))


@feature.request(P.SPACES_DELETE)
async def spaces_delete(ls: MnemonLanguageServer, params: Any) -> Any:
    """``mnemon/spaces/delete`` -> ``{deleted, providerId, defaultStore, message}`` (never the last native store)."""
    p = P.parse_params(P.SpaceIdParams, params)
    return await _spaces(ls, p.workspace, lambda h: h.spaces.delete_space(p.space_id))


@feature.request(P.SPACES_STATUS)
async def spaces_status(ls: MnemonLanguageServer, params: Any) -> Any:
    """``mnemon/spaces/status`` -> ``{space, status}`` (counts, edges, schema, index)."""
    p = P.parse_params(P.SpaceIdParams, params)
    return await _spaces(ls, p.workspace, lambda h: h.spaces.space_status(p.space_id))


@feature.request(P.SPACES_MERGE)
async def spaces_merge(ls: MnemonLanguageServer, params: Any) -> Any:
    """``mnemon/spaces/merge`` -> ``{targetId, status, sources: [...]}`` (non-destructive; sources deactivated only when fully accounted for)."""
    p = P.parse_params(P.SpaceMergeParams, params)
    return await _spaces(ls, p.workspace, lambda h: h.spaces.merge(p.source_ids, p.target_id,
                                                                   deactivate_sources=p.deactivate_sources))


@feature.request(P.REMEMBER)
async def remember(ls: MnemonLanguageServer, params: Any) -> Any:
    """``mnemon/remember`` -> ``WriteReceipt.to_dict()``; ``scopeToBranch`` adds a ``branch:<current>`` tag."""
    p = P.parse_params(P.RememberParams, params)
    return await _spaces(ls, p.workspace, lambda h: h.spaces.remember(
        p.content, space_id=p.space_id, category=p.category, importance=p.importance, tags=p.tags,
        entities=p.entities, source=p.source, branch=h.current_branch() if p.scope_to_branch else None))


@feature.request(P.RECALL)
async def recall(ls: MnemonLanguageServer, params: Any) -> Any:
    """``mnemon/recall`` -> ``RecallResult.to_dict()`` with the workspace's branch scope (``branchRecall``, ``detachedHeadPolicy``)."""
    p = P.parse_params(P.RecallParams, params)
    return await _spaces(ls, p.workspace, lambda h: h.recall(
        p.query, spaces=p.spaces, limit=p.limit, mode=p.mode, category=p.category, source=p.source,
        intent=p.intent))


@feature.request(P.RELATED)
async def related(ls: MnemonLanguageServer, params: Any) -> Any:
    """``mnemon/related`` -> ``{spaceId, spaceName, id, items: [... depth, edgeType]}``."""
    p = P.parse_params(P.RelatedParams, params)
    return await _spaces(ls, p.workspace, lambda h: h.spaces.related(
        p.space_id, p.id, depth=p.depth, edge_type=p.edge_type, limit=p.limit))


@feature.request(P.LINK)
async def link(ls: MnemonLanguageServer, params: Any) -> Any:
    """``mnemon/link`` -> ``WriteReceipt.to_dict()`` (both ids must exist and not be forgotten)."""
    p = P.parse_params(P.LinkParams, params)
    return await _spaces(ls, p.workspace, lambda h: h.spaces.link(
        p.space_id, p.source_id, p.target_id, edge_type=p.edge_type, weight=p.weight))


@feature.request(P.FORGET)
async def forget(ls: MnemonLanguageServer, params: Any) -> Any:
    """``mnemon/forget`` -> ``WriteReceipt.to_dict()`` (soft delete by exact id)."""
    p = P.parse_params(P.ForgetParams, params)
    return await _spaces(ls, p.workspace, lambda h: h.spaces.forget(p.space_id, p.id))
