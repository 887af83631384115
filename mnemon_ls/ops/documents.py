"""Documents operations: create (text or a workspace file), update (text, or from the workspace file it was
made from: the language server's "Update document from file" command), get, list, search, archive, restore and
recover, on the workspace's Documents Source (``host.documents``).

Create and update go through cold archival (:mod:`mnemon_ls.maintenance.documents`): when a document does
not fit, older ones are archived into a Memory Space first, reported as ``maintenance`` in the result (the
language server shows its ``$/progress``). A document id may be given as a unique prefix of at least 8
characters (as ``doc list`` prints them). Hits and list entries carry their absolute ``path`` (editors
open them directly; ``relativePath`` is relative to the storage root).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, StrictBool

from ..errors import InvalidInput, NotFound, echo_repr, echo_value
from . import citing, command_ids, humantext, modeltext, staleness
from .audience import AUDIENCE_HELP, Audience, audience_of
from .base import Call, CliArg, CliCommand, LspCommand, LspMethod, McpTool, Operation, WorkspaceParams
from ..documents.model import MAX_DESCRIPTION_CHARS, MAX_ID_CHARS, MAX_TITLE_CHARS
from ..documents.search import MAX_SEARCH_LIMIT
from ..text import MAX_QUERY_CHARS
from .command_args import CreateDocumentArgs, UpdateDocumentArgs, document_revision_field
from .published import integer_range, limits

#: The MCP tool that reads, updates or archives one document (its ``action`` picks the operation).
MANAGE_TOOL = "mnemon_document_manage"
INDEX_REVISION_HELP = "expected index revision (sha256 hex); the command is refused when the index changed"
#: The limits the Documents Source's validators enforce (after trimming), published in the schemas.
_TITLE, _DESCRIPTION = limits(maxLength=MAX_TITLE_CHARS), limits(maxLength=MAX_DESCRIPTION_CHARS)
_ID = limits(maxLength=MAX_ID_CHARS)


# ------------------------------------------------------------------ params


class DocumentCreateParams(WorkspaceParams):
    """``mnemon/documents/create``: ``{workspace?, title, content, description?, sourcePaths?, expectedRevision?,
    cites?}``,
    or ``{workspace?, file, title?, description?, expectedRevision?}`` to create from a workspace file (absolute
    path; it becomes the source path; the title defaults to its first Markdown heading, else its name)."""

    title: str | None = Field(None, description="a short title", json_schema_extra=_TITLE)
    content: str | None = Field(None, description="Markdown body")
    description: str | None = Field(None, description="one sentence on what the document is for",
                                    json_schema_extra=_DESCRIPTION)
    source_paths: list[str] | None = Field(None, alias="sourcePaths", description="workspace files the document "
                                                                                 "is about")
    expected_revision: str | None = Field(None, alias="expectedRevision", description=INDEX_REVISION_HELP)
    file: str | None = Field(None, description="create from this workspace file (it becomes the source path)")
    cites: citing.Cites = None


class DocumentUpdateParams(WorkspaceParams):
    """``mnemon/documents/update``: ``{workspace?, id, title?, content?, description?, sourcePaths?,
    documentRevision?, expectedRevision?}`` (active documents only)."""

    id: str = Field(description="document id", json_schema_extra=_ID)
    title: str | None = Field(None, description="the new title (kept when omitted)", json_schema_extra=_TITLE)
    content: str | None = Field(None, description="the new Markdown body")
    description: str | None = Field(None, description="the new one-sentence description (kept when omitted)",
                                    json_schema_extra=_DESCRIPTION)
    source_paths: list[str] | None = Field(None, alias="sourcePaths", description=(
        "the workspace files the document is about: the ones given replace its list (kept when omitted)"))
    document_revision: int | None = document_revision_field()
    expected_revision: str | None = Field(None, alias="expectedRevision", description=INDEX_REVISION_HELP)


class DocumentUpdateFromFileParams(WorkspaceParams):
    """``{workspace?, file, id?, documentRevision?}``: the active document that names the workspace file ``file``
    (absolute path) in its ``sourcePaths`` takes the file's text as its body; ``id`` picks it when several do."""

    file: str = Field(description="the workspace file (absolute path) the document was made from")
    id: str | None = Field(None, description="the document, when several name the file")
    document_revision: int | None = document_revision_field()


class DocumentIdParams(WorkspaceParams):
    """``mnemon/documents/get``: ``{workspace?, id}``."""

    id: str = Field(description="document id", json_schema_extra=_ID)


class DocumentListParams(WorkspaceParams):
    """``mnemon/documents/list``: ``{workspace?, status?: active|archived}``."""

    status: Literal["active", "archived"] | None = None


class DocumentSearchParams(WorkspaceParams):
    """``mnemon/documents/search``: ``{workspace?, query, includeArchived?, limit? (1..50), includeContent?,
    audience? person|assistant}`` (``audience``: :mod:`.audience`, taken from the language server's clients)."""

    query: str = Field(description="words, phrases or identifiers to find in titles, descriptions and bodies",
                       json_schema_extra=limits(maxLength=MAX_QUERY_CHARS))
    include_archived: StrictBool = Field(False, alias="includeArchived", description="also search archived documents")
    limit: int = Field(20, strict=True, description="1..50 hits",
                       json_schema_extra=integer_range(1, MAX_SEARCH_LIMIT))
    include_content: StrictBool = Field(False, alias="includeContent")
    audience: Audience | None = Field(None, description=AUDIENCE_HELP)


class DocumentArchiveParams(WorkspaceParams):
    """``mnemon/documents/archive``: ``{workspace?, id, documentRevision, summary?, expectedRevision?}``."""

    id: str = Field(description="document id", json_schema_extra=_ID)
    document_revision: int = document_revision_field(...)
    summary: str | None = None
    expected_revision: str | None = Field(None, alias="expectedRevision", description=INDEX_REVISION_HELP)


class DocumentRestoreParams(WorkspaceParams):
    """``mnemon/documents/restore``: ``{workspace?, id, documentRevision?, expectedRevision?}``."""

    id: str = Field(description="document id", json_schema_extra=_ID)
    document_revision: int | None = document_revision_field()
    expected_revision: str | None = Field(None, alias="expectedRevision", description=INDEX_REVISION_HELP)


class DocumentRecoverParams(WorkspaceParams):
    """``doc recover``: ``{workspace?}``."""


# ------------------------------------------------------------------ runs


#: The fewest characters of a document id that name it (``doc list`` prints 8; docs/memory.md).
MIN_ID_PREFIX = 8


def full_id(store: Any, given: Any) -> Any:
    """A document id from a unique prefix of at least :data:`MIN_ID_PREFIX` (8) characters (as ``doc list``
    prints them); anything else is returned as given (the Source checks it). Raises :class:`InvalidInput`
    (``id``) for a prefix of several ids, :class:`NotFound` (``id``) for a shorter value that is no document's
    id, whose message says the rule (``id: document "a3b9de5" does not exist (an id prefix needs at least 8
    characters)``)."""
    if isinstance(given, str) and 0 < len(given) < MIN_ID_PREFIX \
            and all(r.id != given for r in store.read().records):
        raise NotFound(f'id: document "{echo_value(given)}" does not exist (an id prefix needs at least '
                       f'{MIN_ID_PREFIX} characters)', id=given, field="id")
    if not isinstance(given, str) or len(given) < MIN_ID_PREFIX or len(given) >= 36:
        return given
    matches = [r.id for r in store.read().records if r.id.startswith(given)]
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        raise InvalidInput("id", f"{echo_repr(given)} is the start of {len(matches)} document ids; give more "
                                 "characters")
    return given


def _with_paths(call: Call, data: dict[str, Any]) -> dict[str, Any]:
    """``data`` (a list's ``documents`` or a search's ``results``) with each item's absolute ``path``, and its
    title and description as shown (:func:`_shown`)."""
    for key in ("results", "documents"):
        for item in data.get(key, []) or []:
            if isinstance(item, dict) and item.get("relativePath") and "path" not in item:
                item["path"] = str(call.host.root / item["relativePath"])
        if isinstance(data.get(key), list):
            _shown(call, data, data[key])
    return data


def _shown(call: Call, data: dict[str, Any], documents: list[Any]) -> dict[str, Any]:
    """``data`` with ``documents`` (``record_dict`` shapes, changed in place) as a read shows them: a credential
    another program wrote into a title or description of ``index.json`` redacted unless ``secrets: allow``, with a
    notice per document appended to ``data["notices"]`` (mnemon_ls/documents/shown.py; the index is unchanged)."""
    from ..documents.shown import redact_shown

    store = call.host.documents
    notices = redact_shown(documents, store.secrets, store.index_path)
    if notices:
        data["notices"] = [*(data.get("notices") or ()), *notices]
    return data


def _receipt(call: Call, data: dict[str, Any]) -> dict[str, Any]:
    """A mutation's receipt with its ``document`` as shown (:func:`_shown`): a title another program wrote into
    ``index.json`` is echoed by an archive, a restore or an update that leaves it."""
    if isinstance(data.get("document"), dict):
        _shown(call, data, [data["document"]])
    return data


def _create(call: Call, p: DocumentCreateParams) -> Any:
    from ..maintenance import documents as cold

    if p.file is not None:
        if p.content is not None:
            raise InvalidInput("content", "is not allowed together with a file to read (the file is the body)")
        if p.source_paths:  # the file is recorded as the source; others given with it were dropped silently
            raise InvalidInput("sourcePaths", "is not allowed together with a file to read (the file is the "
                                              "document's source path)")
    else:
        for name in ("title", "content"):
            if getattr(p, name) is None:
                raise InvalidInput(name, "is required")  # pydantic's words for a field left out
    citations = citing.resolve(call, p.cites)  # before the write: a bad citation writes nothing
    if p.file is not None:
        data = cold.create_document_from_file(call.host, p.file, title=p.title, description=p.description,
                                              expected_revision=p.expected_revision, progress=call.progress).to_dict()
    else:
        data = cold.create_document(call.host, p.title, p.content, description=p.description,
                                    source_paths=p.source_paths, expected_revision=p.expected_revision,
                                    progress=call.progress).to_dict()
    if citations:
        key = data["document"]["id"]
        data["cites"] = citing.store(call, "documents", key, citations)
        superseded = staleness.supersede(call, "documents", key, call.host.citations.of("documents", key))
        if superseded:
            data["possiblySuperseded"] = superseded
    return staleness.record_sources(call, data)


def _with_cites(call: Call, data: Any) -> Any:
    """A document as read (``documents.get``: its record's fields at the top) that has citations, with them as
    ``cites`` (each with freshness)."""
    document = data if isinstance(data, dict) else None
    if isinstance(document, dict) and document.get("id"):
        cites = citing.views_of(call, "documents")(document["id"])
        if cites:
            data["cites"] = cites
        staleness.with_sources(call, [document])
    return data


def _document(call: Call, data: dict[str, Any]) -> dict[str, Any]:
    """A document as read (``documents.get``: its record's fields at the top), its title and description as shown
    (:func:`_shown`)."""
    return _shown(call, data, [data])


def _search(call: Call, p: Any) -> Any:
    """``documents.search``; a hit of a document with citations carries its worst freshness as ``freshness``
    (fresh above changed/gone within a tier), recorded sourcePaths their ``sourcePathFreshness``."""
    data = _with_paths(call, call.host.documents.search.find(p.query, include_archived=p.include_archived,
                                                             limit=p.limit, include_content=p.include_content,
                                                             audience=audience_of(call, p)).to_dict())
    results = data.get("results")
    if results:
        views = citing.views_of(call, "documents")
        for hit in results:
            cites = views(hit.get("id"))
            if cites:
                hit["freshness"] = staleness.worst_of(cites)
        data["results"] = staleness.rank(call, "documents", results, lambda h: h.get("id"), annotate=False)
        staleness.with_sources(call, results)
    return data


def _reanchored(call: Call, data: Any) -> Any:
    """An update's result, the document's citations that moved re-anchored (it was written again)."""
    document = data.get("document") if isinstance(data, dict) else None
    if isinstance(document, dict) and document.get("id"):
        cites = call.host.citations.reanchor("documents", document["id"])
        if cites:
            data["cites"] = call.host.citations.views(cites)
    return data


def _update(call: Call, p: DocumentUpdateParams) -> Any:
    from ..maintenance import documents as cold

    return _receipt(call, staleness.record_sources(call, _reanchored(call, cold.update_document(
        call.host, full_id(call.host.documents, p.id), title=p.title, description=p.description, content=p.content,
        source_paths=p.source_paths, document_revision=p.document_revision, expected_revision=p.expected_revision,
        progress=call.progress).to_dict())))


def _update_from_file(call: Call, p: DocumentUpdateFromFileParams) -> Any:
    return _receipt(call, staleness.record_sources(call, call.host.documents.update_from_file(
        p.file, p.id, document_revision=p.document_revision).to_dict()))


def _archive(call: Call, p: DocumentArchiveParams) -> Any:
    store = call.host.documents
    return _receipt(call, store.moves.archive(full_id(store, p.id), p.document_revision, summary=p.summary,
                                              expected_revision=p.expected_revision).to_dict())


def _restore(call: Call, p: DocumentRestoreParams) -> Any:
    store = call.host.documents
    return _receipt(call, store.moves.restore(full_id(store, p.id), document_revision=p.document_revision,
                                              expected_revision=p.expected_revision).to_dict())


# ------------------------------------------------------------------ text for a person (CLI)


def _mutation_text(data: dict[str, Any], _call: Call, _p: Any) -> str:
    document = data["document"]
    maintenance = f"\n{data['maintenance']['summary']}" if data.get("maintenance") else ""
    maintenance = "".join(f"\n{line}" for line in humantext.preserved_lines(data)) + maintenance
    cites = "".join(f"\ncites {humantext.citation_text(c)}" for c in data.get("cites") or ())
    cites += "".join(f"\n{line}" for line in humantext.superseding_lines(data))
    if data["action"] == "unchanged":  # a no-op update: the notice says which revision was kept
        return f"Document unchanged: {document['title']} ({document['id']}): {'; '.join(data['notices'])}{cites}"
    said = f": {'; '.join(data['notices'])}" if data["action"] == "adopted" else ""  # the hand edit taken in
    return (f"Document {data['action']}: {document['title']} ({document['id']}), revision {document['revision']}, "
            f"{document['relativePath']}{said}{maintenance}{cites}")


def _list_text(catalog: dict[str, Any], _call: Call, _p: Any) -> str:
    lines = [f"{d['id'][:8]}  r{d['revision']}  {d['status']:8}  {d['title']}" for d in catalog["documents"]]
    lines.extend(f"note: {n}" for n in catalog.get("notices", []))  # a damaged index, a missing file
    lines.append(f"{catalog['activeCount']} active ({catalog['activeBytes']}/{catalog['limitBytes']} bytes), "
                 f"{catalog['archivedCount']} archived")
    return "\n".join(lines)


def _search_text(found: dict[str, Any], _call: Call, _p: Any) -> str:
    lines = []
    for hit in found["results"]:
        lines.append(f"{hit['score']:.3f}  {hit['id'][:8]}  {hit['title']}{humantext.document_match_label(hit)}"
                     f"{humantext.state_label(hit)}")
        if hit.get("excerpt"):
            lines.append(f"        {hit['excerpt']}")
    lines.extend(f"note: {n}" for n in found.get("notices", []))
    lines.append(f"{found['total']} result(s)")
    return "\n".join(lines)


_INDEX_REVISION = CliArg("expected_revision", flag="--index-revision")
_REVISION = CliArg("document_revision", flag="--revision")
_ID = CliArg("id")


OPERATIONS = (
    Operation(
        "documents.create", DocumentCreateParams, _create,
        "Create a Document (cold archival first when it does not fit).", effect="write",
        text=modeltext.document_result, progress="Archiving documents",
        lsp=LspMethod("mnemon/documents/create"),
        lsp_command=LspCommand(
            command_ids.CREATE_DOCUMENT_FROM_FILE, CreateDocumentArgs,
            "A managed document from a workspace file (cold archival first when the Documents are full, with its "
            "$/progress), then opened (window/showDocument when the client supports it; else the answer's "
            "path/uri). No message on success: the opened document is the feedback.",
            fields={"title": "title"}, file="file", path="document.path", show=True,
            failure="no document created: "),
        mcp=McpTool(
            "mnemon_document_create",
            "Create a Document: a design, an investigation or a handoff someone will read again (anything longer "
            "than a few lines). Short facts belong in Runtime memory or a Memory Space instead.",
            fields=("title", "content", "description", "source_paths", "cites", "workspace"),
            required=("title", "content")),
        cli=CliCommand(("doc", "create"), "create a document", (
            CliArg("title", flag="--title",
                   help="title (default with --file: the first Markdown heading, else the file name)"),
            CliArg("content", flag="--content", stdin=True, help="body text ('-' reads standard input)"),
            CliArg("file", flag="--file", metavar="PATH", path=True, also=("source_paths", "path")),
            CliArg("description", flag="--description"),
            CliArg("source_paths", flag="--source", repeat=True, metavar="PATH", help="source path (repeatable)"),
            citing.CITE_ARG, _INDEX_REVISION), text=_mutation_text)),
    Operation(
        "documents.update", DocumentUpdateParams, _update,
        "Update an active Document (cold archival first when it does not fit).", effect="write",
        text=modeltext.document_result, progress="Archiving documents",
        lsp=LspMethod("mnemon/documents/update"),
        mcp=McpTool(MANAGE_TOOL, fields=("id", "title", "description", "content", "source_paths", "document_revision",
                                         "workspace"), action="update", rename={"document_revision": "revision"}),
        cli=CliCommand(("doc", "update"), "update an active document", (
            _ID, CliArg("title", flag="--title"),
            CliArg("content", flag="--content", stdin=True, help="new body ('-' reads standard input)"),
            CliArg("description", flag="--description"),
            CliArg("source_paths", flag="--source", repeat=True, metavar="PATH",
                   help="a workspace file the document is about (repeatable): the ones given replace its list (kept "
                        "when omitted)"),
            _REVISION, _INDEX_REVISION), text=_mutation_text)),
    Operation(
        "documents.updateFromFile", DocumentUpdateFromFileParams, _update_from_file,
        "Update the active Document made from a workspace file with the file's text (title, description and "
        "source paths kept).", effect="write", text=modeltext.document_result,
        lsp=LspMethod("mnemon/documents/updateFromFile"),
        lsp_command=LspCommand(
            command_ids.UPDATE_DOCUMENT_FROM_FILE, UpdateDocumentArgs,
            "The body of the active document made from the workspace file becomes the file's text (a stale "
            "documentRevision is revision-conflict); the answer's path is the document's file.",
            fields={"id": "id", "document_revision": "document_revision"}, file="file", path="document.path",
            message=humantext.document_updated, failure="document not updated: ")),
    Operation(
        "documents.get", DocumentIdParams,
        lambda c, p: _with_cites(c, _document(c, c.host.documents.get(full_id(c.host.documents, p.id)).to_dict())),
        "Read one Document (record, body, absolute path).",
        text=modeltext.document, notes=lambda d, _c: list(d.get("notices") or ()),  # a credential kept in the file
        lsp=LspMethod("mnemon/documents/get"),
        mcp=McpTool(MANAGE_TOOL,
                    "Read (get), update, archive or restore one Document by id. Follow a cold reference's document id "
                    "with get. Archive only what is finished; archived documents stay searchable, and restore brings "
                    "one back as a new revision.",
                    fields=("id", "workspace"), action="get"),
        cli=CliCommand(("doc", "get"), "print a document's body (and metadata with --json)", (_ID,),
                       text=lambda d, _c, _p: d.get("content", ""))),
    Operation(
        "documents.list", DocumentListParams,
        lambda c, p: _with_paths(c, c.host.documents.list(p.status).to_dict()),
        "List the Documents (index order, with health and usage).",
        lsp=LspMethod("mnemon/documents/list"),
        cli=CliCommand(("doc", "list"), "list documents", (CliArg("status", flag="--status"),), text=_list_text)),
    Operation(
        "documents.search", DocumentSearchParams,
        _search,
        "Search the Documents' titles, descriptions and bodies.",
        text=modeltext.document_hits,
        lsp=LspMethod("mnemon/documents/search"),
        mcp=McpTool(
            "mnemon_document_search",
            "Search this workspace's Documents (designs, investigations, handoffs) by title, description and body; "
            "handles Chinese, Japanese, Korean and identifiers. Use it when the task touches a past decision or "
            "investigation; then read a hit with mnemon_document_manage action=get.",
            fields=("query", "include_archived", "limit", "workspace"),
            narrow={"limit": Annotated[int, Field(ge=1, le=50)]}),
        cli=CliCommand(("doc", "search"), "search titles, descriptions and bodies", (
            CliArg("query"), CliArg("include_archived", flag="--include-archived", kind="flag", help=""),
            CliArg("limit", flag="--limit", default=20, help="1..50 (default 20)")), text=_search_text)),
    Operation(
        "documents.archive", DocumentArchiveParams, _archive,
        "Archive an active Document (it stays searchable).", effect="write",
        text=modeltext.document_result,
        lsp=LspMethod("mnemon/documents/archive"),
        mcp=McpTool(MANAGE_TOOL, fields=("id", "document_revision", "workspace"), action="archive",
                    rename={"document_revision": "revision"}),
        cli=CliCommand(("doc", "archive"), "archive an active document", (
            _ID, CliArg("document_revision", flag="--revision", required=True), CliArg("summary", flag="--summary"),
            _INDEX_REVISION), text=_mutation_text)),
    Operation(
        "documents.restore", DocumentRestoreParams, _restore,
        "Restore an archived Document as a new revision.", effect="write",
        text=modeltext.document_result,
        lsp=LspMethod("mnemon/documents/restore"),
        mcp=McpTool(MANAGE_TOOL, fields=("id", "document_revision", "workspace"), action="restore",
                    rename={"document_revision": "revision"}),
        cli=CliCommand(("doc", "restore"), "restore an archived document as a new revision", (
            _ID, _REVISION, _INDEX_REVISION), text=_mutation_text)),
    Operation(
        "documents.recover", DocumentRecoverParams, lambda c, p: c.host.documents.recovery.recover(),
        "Rebuild a damaged documents/index.json from the managed files.", effect="write",
        cli=CliCommand(("doc", "recover"), "rebuild a damaged documents/index.json from the managed files",
                       text=lambda d, _c, _p: str(d.get("message", d)))),
)
