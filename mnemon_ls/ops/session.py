"""The language server's session operations: the status of every open folder (``session.status``) and the
turn Views an assistant reads through (``session.turnBegin``, ``session.turnEnd``).

They belong to the client's session, not to one folder (:class:`~.surfaces.LspMethod` ``session``): they run
with ``call.client`` (:class:`~.client.ClientSession`) and no host. A View (DESIGN.md section 1) pins what one
turn reads, the wake text and the Runtime revision, for the whole turn; a child turn (``parentViewId``) reads
exactly its parent's, even after the parent ended. The turn's ``activity``, handed to ``turnEnd``, feeds the
review cues of the records (:class:`mnemon_ls.lsp.records.RecordsFeature`). The wake itself is
``workspace.wake`` (:mod:`.workspace`; ``mnemon/wake`` with ``viewId`` answers a View's pinned wake).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from .base import Call, LspMethod, Operation, Params, WorkspaceParams
from .client import PROTOCOL_VERSION
from .spaces import registry_notes
from .wake import session_wake


class SessionStatusParams(Params):
    """``mnemon/status``: ``{}`` (every open folder)."""


class TurnBeginParams(WorkspaceParams):
    """``mnemon/turn/begin``: ``{workspace?, parentViewId?}``."""

    parent_view_id: str | None = Field(None, alias="parentViewId", description="a child turn of this View: it "
                                                                                "reads exactly its parent's wake")


class TurnEndParams(Params):
    """``mnemon/turn/end``: ``{viewId, activity?}``; ``activity`` is the turn's review activity
    (:class:`mnemon_ls.records.activity.TurnActivity`: ``userTextLength``, ``toolCallCount``,
    ``uniqueToolCount``, ``toolNames``, ``assistantTextLength``, ``userText``; all optional)."""

    view_id: str = Field(alias="viewId", description="the View mnemon/turn/begin answered")
    activity: dict[str, Any] | None = Field(None, description="the turn's counts (userTextLength, toolCallCount, "
                                                              "uniqueToolCount, toolNames, assistantTextLength, "
                                                              "userText), for the review cues")


def _status(call: Call, _p: Any) -> dict[str, Any]:
    """``{version, protocolVersion, workspaces: [{uri, name, <the Host's status on the branch the server last
    announced>, path, records, notes?}]}``, one row per open folder; ``notes`` (lines) when the folder's space
    registry says something of itself (:func:`~.spaces.registry_notes`, as ``workspace.status`` says it on the
    other surfaces: a damaged file rebuilt, a kept copy, a file of a newer version)."""
    from .. import __version__

    client = call.client
    rows = []
    for folder in client.folders():
        row = {"uri": folder.uri, "name": folder.name, **folder.host.status(folder.branch), "path": str(folder.path),
               **client.status(folder)}
        said = registry_notes(None, Call(folder.host, "lsp"))
        if said:
            row["notes"] = said
        rows.append(row)
    return {"version": __version__, "protocolVersion": PROTOCOL_VERSION, "workspaces": rows}


def _turn_begin(call: Call, p: TurnBeginParams) -> dict[str, Any]:
    """A new View pinning the folder's wake (with ``parentViewId``: a child reading its parent's); the folder's
    pending review suggestion is cancelled. ``{viewId, wake, revisions, parentViewId}``."""
    client = call.client
    if p.parent_view_id is not None:
        view = client.views.begin_child(p.parent_view_id)
    else:
        folder = client.folder(p.workspace)
        snapshot = session_wake(client, folder)
        view = client.views.begin(folder.uri, snapshot, {"runtime": snapshot["storeRevision"]})
    client.turn_began(view.workspace)
    return {"viewId": view.view_id, "wake": view.wake, "revisions": view.revisions,
            "parentViewId": view.parent_view_id}


def _turn_end(call: Call, p: TurnEndParams) -> dict[str, Any]:
    """End the View (it stays readable for its children): ``{viewId, ended: true}``, plus ``review`` with an
    ``activity``. Bad counts are refused before anything changes, not even the View."""
    from ..records.activity import parse_turn_activity

    parse_turn_activity(p.activity)  # raises InvalidInput naming activity.<key>
    client = call.client
    view = client.views.end(p.view_id)
    if p.activity is None:
        return {"viewId": view.view_id, "ended": True}
    return {"viewId": view.view_id, "ended": True, "review": client.turn_ended(view.workspace, p.activity)}


OPERATIONS = (
    Operation(
        "session.status", SessionStatusParams, _status,
        "The server's version and protocol version, and every open folder's status: where its memory lives, the "
        "branch last announced, Runtime usage, Documents, problems, the records of this session and, as notes, what "
        "its Memory Space registry says of itself (a damaged file rebuilt, a file of a newer version).",
        lsp=LspMethod("mnemon/status", session=True)),
    Operation(
        "session.turnBegin", TurnBeginParams, _turn_begin,
        "Begin an assistant turn: a View pinning the wake and the Runtime revision the turn reads (a child of "
        "parentViewId reads its parent's); a pending review suggestion is cancelled.",
        lsp=LspMethod("mnemon/turn/begin", session=True)),
    Operation(
        "session.turnEnd", TurnEndParams, _turn_end,
        "End a turn's View (it stays readable for its children); with the turn's activity, the review cues "
        "accumulate it and say whether an idle review suggestion is armed.",
        lsp=LspMethod("mnemon/turn/end", session=True)),
)
