"""Workspace-wide operations: the wake snapshot (``workspace.wake``) and the workspace's status
(``workspace.status``).

The wake's run function and command live in :mod:`.wake` (no pydantic: the command line's light path runs
them). The wake repairs the Runtime projections first (a hand edit of USER.md/MEMORY.md is imported, or saved
and reported) and renders the snapshot for the current git branch; who reads it decides which commands it
names (an assistant's tools, the language server's client, or the command line). The language server's
``mnemon/wake`` is a session request (:class:`~.surfaces.LspMethod` ``session``: it reads turn Views, renders the
branch the server announces and announces repairs) with its own wire params (:class:`LspWakeParams`).
The language server's ``mnemon/status`` (every open folder) is :mod:`.session`'s.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from . import command_ids, modeltext, wake
from ..runtime.model import BRANCH_PATTERN, MAX_BRANCH_CHARS
from .base import Call, LspCommand, LspMethod, McpTool, Operation, WorkspaceParams
from .command_args import ShowWakeArgs
from .published import integer_range, limits
from .spaces import registry_notes


class WakeParams(WorkspaceParams):
    """``wake``: ``{workspace?, branch?, budgetChars? (1024..4194304 characters)}``."""

    branch: str | None = Field(None, description="render as if on this branch (default: the checked-out one)",
                               json_schema_extra=limits(maxLength=MAX_BRANCH_CHARS, pattern=BRANCH_PATTERN))
    budget_chars: int | None = Field(None, alias="budgetChars", strict=True,  # bounds: the Host's (names "budget")
                                     description="largest snapshot in characters (1024..4194304)",
                                     json_schema_extra=integer_range(1024, 4_194_304, optional=True))


class LspWakeParams(WakeParams):
    """``mnemon/wake``: ``{workspace?, branch?, budgetChars? (1024..4194304, refused here naming
    budgetChars), viewId?, surface?}``; with ``viewId`` the turn View's pinned wake. ``surface`` ``tool`` is for
    a wake handed to an assistant's tools (VS Code's language-model tools): it names ``mnemon_recall`` where the
    default (``lsp``) names ``mnemon/recall``."""

    budget_chars: int | None = Field(None, alias="budgetChars", ge=1024, le=4_194_304, strict=True,
                                     description="largest snapshot in characters (1024..4194304)")
    view_id: str | None = Field(None, alias="viewId", description="answer this turn View's pinned wake "
                                                                  "(mnemon/turn/begin)")
    surface: Literal["lsp", "tool"] = Field("lsp", description="who reads it: lsp names mnemon/recall, tool "
                                                               "names mnemon_recall")


class StatusParams(WorkspaceParams):
    """``status``: ``{workspace?}``."""


def _status(call: Call, _p: Any) -> dict[str, Any]:
    data = call.host.status()
    if (call.host.root / "data").is_dir():
        views = [view.to_dict() for view in call.host.spaces.list_spaces()]
        data["spaces"] = {"total": len(views), "active": sum(1 for v in views if v["active"])}
    else:
        data["spaces"] = {"total": 0, "active": 0}
    return data


OPERATIONS = (
    Operation(
        "workspace.wake", WakeParams, wake.run,
        "The wake snapshot: USER.md, MEMORY.md for the current git branch, and covers of Documents and Memory "
        "Spaces (projections repaired first).",
        text=lambda d: modeltext.bounded(d["text"]),
        inline=True,
        mcp=McpTool(
            "mnemon_wake",
            "The wake snapshot: USER.md, MEMORY.md (filtered to the current git branch) and short covers of Documents "
            "and Memory Spaces. Read it at the start of a session, or again after a long pause.",
            fields=("branch", "workspace")),
        lsp=LspMethod("mnemon/wake", params=LspWakeParams, session=True),
        lsp_command=LspCommand(
            command_ids.SHOW_WAKE_SNAPSHOT, ShowWakeArgs,
            "The folder's wake snapshot, as mnemon/wake renders it, written read-only under the storage root's "
            "state/ and opened (window/showDocument when the client supports it; else the answer's path/uri).",
            answer=("text", "revision", "storeRevision"), render="wake", show=True),
        cli=wake.COMMAND),
    Operation(
        "workspace.status", StatusParams, _status,
        "Where this workspace's memory lives, its branch, Runtime usage, Documents and Memory Spaces counts, and "
        "any problem found.",
        text=modeltext.status, notes=registry_notes,
        mcp=McpTool(
            "mnemon_status",
            "Where this workspace's memory lives, its branch, how full Runtime memory is, Documents and Memory Spaces "
            "counts, and any problem found. Use it when a memory tool fails or the user asks.")),
)
