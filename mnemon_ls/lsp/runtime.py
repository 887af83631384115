"""Runtime memory in the language server: ``mnemon/runtime/mutate``, ``mnemon/runtime/snapshot``,
``mnemon/wake`` and the turn Views (``mnemon/turn/begin``, ``mnemon/turn/end``).

Each handler parses its params model (:mod:`.params`), calls one Host operation in a worker thread and
returns the receipt's wire shape plus ``workspace``; errors are mapped by the server's request wrapper.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput
from . import protocol as P
from . import records as records_feature
from ..packs.gate import run_held
from .feature import Feature

if TYPE_CHECKING:
    from .server import MnemonLanguageServer

#: The handlers of this module; :mod:`.server` attaches them.
feature = Feature()


@feature.request(P.RUNTIME_MUTATE)
async def runtime_mutate(ls: MnemonLanguageServer, params: Any) -> dict[str, Any]:
    """``mnemon/runtime/mutate`` (:class:`RuntimeMutateParams`) -> the Runtime receipt + ``workspace``."""
    from ..runtime import ops

    p = P.parse_params(P.RuntimeMutateParams, params)
    request = ops.validate_request(p.action, p.target, p.content, p.old_text, p.importance, p.branches)
    state = ls.registry.resolve(p.workspace)
    try:
        receipt = await asyncio.to_thread(run_held, state.host, state.host.mutate_runtime, request, p.routes)
    except Exception as exc:  # a full USER.md: mnemon/maintenanceRequired with the compaction plan
        ls.maintenance_feature.capacity_error(state, exc)
        raise
    if isinstance(receipt.detail.get("maintenance"), dict):  # MEMORY.md archival: mnemon/maintenanceCompleted
        ls.maintenance_feature.completed(state, receipt.detail["maintenance"])
    if receipt.preserved:
        ls.announce_lost_edits(state.uri, state.host.runtime.store_for(request.target), receipt)
    return receipt.to_dict() | {"workspace": state.uri}


@feature.request(P.RUNTIME_SNAPSHOT)
async def runtime_snapshot(ls: MnemonLanguageServer, params: Any) -> dict[str, Any]:
    """``mnemon/runtime/snapshot`` -> ``{workspace, revision, entries, usage: {user, memory}, problems}`` (all entries, no branch filter)."""
    p = P.parse_params(P.WorkspaceParams, params)
    state = ls.registry.resolve(p.workspace)
    effective = await asyncio.to_thread(run_held, state.host, state.host.runtime.read)
    limits = state.settings.runtime_memory
    return {
        "workspace": state.uri,
        "revision": effective.revision,
        "entries": [e.to_json() for e in (*effective.user, *effective.memory)],
        "usage": {t: {"used": effective.used[t], "limit": limits.limit_for(t)} for t in ("user", "memory")},
        "problems": list(effective.all_problems),
    }


@feature.request(P.WAKE)
async def wake(ls: MnemonLanguageServer, params: Any) -> dict[str, Any]:
    """``mnemon/wake`` (:class:`WakeParams`) -> ``WakeSnapshot.to_dict()`` + ``workspace``; with ``viewId`` the View's pinned wake."""
    from ..runtime.model import branch_name_problem

    p = P.parse_params(P.WakeParams, params)
    if p.view_id is not None:
        return ls.views.get(p.view_id).wake
    state = ls.registry.resolve(p.workspace)
    if p.branch is not None and branch_name_problem(p.branch.strip()):
        raise InvalidInput("branch", f"{branch_name_problem(p.branch.strip())} (got {p.branch!r})")
    return await ls.wake_for(state, p.branch, p.budget_chars, p.surface)


@feature.request(P.TURN_BEGIN)
async def turn_begin(ls: MnemonLanguageServer, params: Any) -> dict[str, Any]:
    """``mnemon/turn/begin`` -> ``{viewId, wake, revisions, parentViewId}`` (a child reads its parent's pinned wake)."""
    p = P.parse_params(P.TurnBeginParams, params)
    if p.parent_view_id is not None:
        view = ls.views.begin_child(p.parent_view_id)
    else:
        state = ls.registry.resolve(p.workspace)
        snapshot = await ls.wake_for(state)
        view = ls.views.begin(state.uri, snapshot, {"runtime": snapshot["storeRevision"]})
    ls.records_feature.turn_began(view.workspace)
    return {"viewId": view.view_id, "wake": view.wake, "revisions": view.revisions,
            "parentViewId": view.parent_view_id}


@feature.request(P.TURN_END)
async def turn_end(ls: MnemonLanguageServer, params: Any) -> dict[str, Any]:
    """``mnemon/turn/end`` -> ``{viewId, ended: true}``; the View stays readable for its children. With
    ``activity`` (the turn's counts) also ``review``: the accumulated score and whether an idle review
    suggestion is armed (:meth:`mnemon_ls.lsp.records.RecordsFeature.turn_ended`)."""
    p = P.parse_params(P.TurnEndParams, params)
    records_feature.check_activity(p.activity)  # bad counts change nothing, not even the View
    view = ls.views.end(p.view_id)
    if p.activity is None:
        return {"viewId": view.view_id, "ended": True}
    review = await ls.records_feature.turn_ended(view.workspace, p.activity)
    return {"viewId": view.view_id, "ended": True, "review": review}
