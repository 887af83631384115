"""The wake and the turn Views in the language server: ``mnemon/wake``, ``mnemon/turn/begin``,
``mnemon/turn/end`` (the Runtime operations are the operation layer's, :mod:`mnemon_ls.ops.runtime`).

Each handler parses its params model (:mod:`.params`), calls one Host operation in a worker thread and
returns the receipt's wire shape plus ``workspace``; errors are mapped by the server's request wrapper.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput
from . import protocol as P
from . import records as records_feature
from .feature import Feature

if TYPE_CHECKING:
    from .core import MnemonLanguageServer

#: The handlers of this module; :mod:`.server` attaches them.
feature = Feature()


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
