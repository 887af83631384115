"""The argument objects of the language server's editor commands (``workspace/executeCommand``, ids in
:mod:`.command_ids`): the commands' argument syntax, as the command line has its options. Each is the ``args``
of the :class:`~.surfaces.LspCommand` of the operations the command runs, which maps it onto their params.

Field names are camelCase on the wire; unknown fields are refused and flags are strict (:class:`~.base.Params`).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, StrictBool

from .base import Params

#: Highest document revision a request may expect: the largest integer JSON carries exactly (2**53 - 1); a
#: revision counts updates, so no document reaches it, and an error repeats it in 16 digits at most.
MAX_REVISION = 2**53 - 1


def document_revision_field(default: Any = None) -> Any:
    """The ``documentRevision`` field of a params model or a command's arguments (``default`` ``...``: required):
    the one rule of an expected document revision on every surface, a JSON integer in 1..:data:`MAX_REVISION`
    (refused ``must be an integer in 1..9007199254740991 (got 0)``; a revision that is not the document's is a
    ``revision-conflict``)."""
    return Field(default, alias="documentRevision", strict=True, ge=1, le=MAX_REVISION,
                 description="expected document revision")


class LspPosition(Params):
    """An LSP ``Position``: ``{line, character}``, both 0-based (``character`` in the client's position
    encoding; only ``line`` is used here)."""

    line: int = Field(ge=0, strict=True, description="0-based line")
    character: int = Field(ge=0, strict=True, description="0-based character of the line")


class LspRange(Params):
    """An LSP ``Range``: ``{start, end}`` (:class:`LspPosition`; ``end`` exclusive, so an end at character 0
    of a later line ends the selection on the line before)."""

    start: LspPosition
    end: LspPosition


class RememberArgs(Params):
    """Argument object of ``mnemon.server.rememberSelection``: ``{uri, text, range?, branches?, importance?,
    spaceId?, languageId?, quiet?}``.

    Without ``spaceId`` the text goes to MEMORY.md (``branches`` scopes it); with ``spaceId`` it is
    remembered in that Memory Space (``branches``, at most one name there, adds a ``branch:<name>`` tag).
    A selection that is a comment loses its comment markers (:mod:`mnemon_ls.comments`) by ``languageId``
    (the editor's language id of the document; default: the one the client opened the document with, else
    the file name's). ``quiet``: the client shows the result itself, so the server sends no
    ``window/showMessage`` for it.
    """

    uri: str = Field(description="the document the text was selected in (a file URI): its folder's memory")
    text: str = Field(description="the selected text (a comment loses its comment markers)")
    range: LspRange | None = Field(None, description="where the text was selected: the memory cites those lines of "
                                                     "the file when they are saved as selected (skipped otherwise)")
    branches: list[str] | None = Field(None, description="show it only on these git branches (a Memory Space: "
                                                         "at most one, a branch:<name> tag)")
    importance: Literal["critical", "normal", "low"] | None = Field(None, description="default normal (a Memory "
                                                                                      "Space: 5, 3, 1)")
    space_id: str | None = Field(None, alias="spaceId", description="remember it in this Memory Space instead of "
                                                                    "MEMORY.md")
    language_id: str | None = Field(None, alias="languageId", description="the editor's language id of the document "
                                                                          "(default: the one it was opened with)")
    quiet: StrictBool = Field(False, description="the client shows the result itself: no window/showMessage")


class ShowWakeArgs(Params):
    """Argument object of ``mnemon.server.showWakeSnapshot``: ``{uri}`` (a file or folder URI)."""

    uri: str | None = Field(None, description="a file or folder of the workspace (optional when exactly one "
                                              "folder is open)")


class CreateDocumentArgs(Params):
    """Argument object of ``mnemon.server.createDocumentFromFile``: ``{uri, title?}`` (a file URI)."""

    uri: str = Field(description="the workspace file (a file URI); it becomes the document's source path")
    title: str | None = Field(None, description="default: the file's first Markdown heading, else its name")


class UpdateDocumentArgs(Params):
    """Argument object of ``mnemon.server.updateDocumentFromFile``: ``{uri, id?, documentRevision?}`` (a file
    URI; ``id`` picks the document when several name the file; ``documentRevision`` fences the update)."""

    uri: str = Field(description="the workspace file (a file URI) the document was made from")
    id: str | None = Field(None, description="the document, when several name the file")
    document_revision: int | None = document_revision_field()
