"""Params models of the ``mnemon/*`` requests and ``workspace/executeCommand`` arguments (pydantic).

Field names are camelCase on the wire. :func:`parse_params` validates a raw params value and raises
:class:`~mnemon_ls.errors.InvalidInput` naming the field. Kept apart from :mod:`.protocol` so that the
server can answer ``initialize`` before pydantic is imported (the names are re-exported there lazily).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, StrictBool, ValidationError

from ..ops.base import Params, WorkspaceParams, invalid_input_from, parse_params

__all__ = ["ValidationError", "WorkspaceParams", "invalid_input_from", "parse_params"]


#: The params base of :mod:`mnemon_ls.ops.base` (models not yet moved into the operation layer subclass it).
_Params = Params


class WakeParams(WorkspaceParams):
    """``mnemon/wake``: ``{workspace?, branch?, budgetChars?, viewId?, surface?}``; with ``viewId`` the View's
    pinned wake. ``surface`` ``tool`` is for a wake handed to an assistant's tools (VS Code's language-model
    tools): it names ``mnemon_recall`` where the default (``lsp``) names ``mnemon/recall``."""

    branch: str | None = Field(None, description="render as if on this branch (default: the checked-out one)")
    budget_chars: int | None = Field(None, alias="budgetChars", ge=1024, le=4_194_304, strict=True)
    view_id: str | None = Field(None, alias="viewId")
    surface: Literal["lsp", "tool"] = "lsp"


class TurnBeginParams(WorkspaceParams):
    """``mnemon/turn/begin``: ``{workspace?, parentViewId?}``."""

    parent_view_id: str | None = Field(None, alias="parentViewId")


class TurnEndParams(_Params):
    """``mnemon/turn/end``: ``{viewId, activity?}``; ``activity`` is the turn's review activity
    (:class:`mnemon_ls.records.activity.TurnActivity`: ``userTextLength``, ``toolCallCount``,
    ``uniqueToolCount``, ``toolNames``, ``assistantTextLength``, ``userText``; all optional)."""

    view_id: str = Field(alias="viewId")
    activity: dict[str, Any] | None = None


class RememberArgs(_Params):
    """Argument object of ``mnemon.server.rememberSelection``: ``{uri, text, branches?, importance?, spaceId?,
    languageId?, quiet?}``.

    Without ``spaceId`` the text goes to MEMORY.md (``branches`` scopes it); with ``spaceId`` it is
    remembered in that Memory Space (``branches``, at most one name there, adds a ``branch:<name>`` tag).
    A selection that is a comment loses its comment markers (:mod:`mnemon_ls.comments`) by ``languageId``
    (the editor's language id of the document; default: the one the client opened the document with, else
    the file name's). ``quiet``: the client shows the result itself, so the server sends no
    ``window/showMessage`` for it.
    """

    uri: str
    text: str
    branches: list[str] | None = None
    importance: Literal["critical", "normal", "low"] | None = None
    space_id: str | None = Field(None, alias="spaceId")
    language_id: str | None = Field(None, alias="languageId")
    quiet: StrictBool = False


class ShowWakeArgs(_Params):
    """Argument object of ``mnemon.server.showWakeSnapshot``: ``{uri}`` (a file or folder URI)."""

    uri: str | None = None


class CreateDocumentArgs(_Params):
    """Argument object of ``mnemon.server.createDocumentFromFile``: ``{uri, title?}`` (a file URI)."""

    uri: str
    title: str | None = None


class UpdateDocumentArgs(_Params):
    """Argument object of ``mnemon.server.updateDocumentFromFile``: ``{uri, id?, documentRevision?}`` (a file
    URI; ``id`` picks the document when several name the file; ``documentRevision`` fences the update)."""

    uri: str
    id: str | None = None
    document_revision: int | None = Field(None, alias="documentRevision", strict=True)


