"""The argument objects of the ``workspace/executeCommand`` commands (pydantic): the commands' argument syntax,
as the command line has its options. Each command then runs an operation of :mod:`mnemon_ls.ops` (the
``mnemon/*`` requests' params models are the operations').

Field names are camelCase on the wire. :func:`parse_params` validates a raw params value and raises
:class:`~mnemon_ls.errors.InvalidInput` naming the field. Kept apart from :mod:`.protocol` so that the
server can answer ``initialize`` before pydantic is imported (the names are re-exported there lazily).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, StrictBool, ValidationError

from ..ops.base import Params, WorkspaceParams, invalid_input_from, parse_params

__all__ = ["ValidationError", "WorkspaceParams", "invalid_input_from", "parse_params"]


#: The params base of :mod:`mnemon_ls.ops.base`.
_Params = Params


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


