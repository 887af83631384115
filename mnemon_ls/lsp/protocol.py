"""The ``mnemon/*`` protocol: method names, pydantic params models, and JSON-RPC error mapping.

Custom request params arrive as plain dicts (:class:`MnemonProtocol` maps every ``mnemon/`` method to a
raw-dict message type; pygls would otherwise build namedtuples, ``shared/reference/lsp-anchors.md``
1.6b) and are validated here. Field names are camelCase on the wire.

Errors are JSON-RPC errors whose ``data.code`` is stable (:data:`ERROR_CODES`); ``data`` also carries the
error's details (``field`` and ``rule`` for ``invalid-input``; ``target``, ``used``, ``projected``, ``limit``
for ``runtime-capacity``; ...). No traceback is ever sent.
"""

from __future__ import annotations

from typing import Any, Literal

import attrs
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pygls.exceptions import JsonRpcException
from pygls.protocol import LanguageServerProtocol

from ..errors import InvalidInput, MnemonError

#: Version of the ``mnemon/*`` surface; editor plugins compare it with ``mnemon/status``.
PROTOCOL_VERSION = 1

RUNTIME_MUTATE = "mnemon/runtime/mutate"
RUNTIME_SNAPSHOT = "mnemon/runtime/snapshot"
WAKE = "mnemon/wake"
TURN_BEGIN = "mnemon/turn/begin"
TURN_END = "mnemon/turn/end"
STATUS = "mnemon/status"
DOCUMENTS_CREATE = "mnemon/documents/create"
DOCUMENTS_UPDATE = "mnemon/documents/update"
DOCUMENTS_GET = "mnemon/documents/get"
DOCUMENTS_LIST = "mnemon/documents/list"
DOCUMENTS_SEARCH = "mnemon/documents/search"
DOCUMENTS_ARCHIVE = "mnemon/documents/archive"
DOCUMENTS_RESTORE = "mnemon/documents/restore"
DOCUMENT_REQUESTS = (DOCUMENTS_CREATE, DOCUMENTS_UPDATE, DOCUMENTS_GET, DOCUMENTS_LIST, DOCUMENTS_SEARCH,
                     DOCUMENTS_ARCHIVE, DOCUMENTS_RESTORE)
SPACES_LIST = "mnemon/spaces/list"
SPACES_CREATE = "mnemon/spaces/create"
SPACES_UPDATE = "mnemon/spaces/update"
SPACES_ACTIVATE = "mnemon/spaces/activate"
SPACES_DEACTIVATE = "mnemon/spaces/deactivate"
SPACES_DELETE = "mnemon/spaces/delete"
SPACES_MERGE = "mnemon/spaces/merge"
SPACES_STATUS = "mnemon/spaces/status"
REMEMBER = "mnemon/remember"
RECALL = "mnemon/recall"
RELATED = "mnemon/related"
LINK = "mnemon/link"
FORGET = "mnemon/forget"
SPACE_REQUESTS = (SPACES_LIST, SPACES_CREATE, SPACES_UPDATE, SPACES_ACTIVATE, SPACES_DEACTIVATE, SPACES_DELETE,
                  SPACES_MERGE, SPACES_STATUS, REMEMBER, RECALL, RELATED, LINK, FORGET)
#: ``mnemon/records/<action>`` (handlers and params in :mod:`.records`).
RECORD_REQUESTS = tuple(f"mnemon/records/{action}" for action in (
    "list", "get", "create", "propose", "verify", "reject", "stale", "edit", "archive", "forget", "export",
    "import", "compact"))
REQUESTS = (RUNTIME_MUTATE, RUNTIME_SNAPSHOT, WAKE, TURN_BEGIN, TURN_END, STATUS, *DOCUMENT_REQUESTS,
            *SPACE_REQUESTS, *RECORD_REQUESTS)

# Server -> client notifications.
BRANCH_CHANGED = "mnemon/branchChanged"
PROJECTION_REPAIRED = "mnemon/projectionRepaired"
RECORD_PROPOSED = "mnemon/recordProposed"
RECORDS_AUTO_WRITTEN = "mnemon/records/autoWritten"
REVIEW_SUGGESTED = "mnemon/reviewSuggested"

# workspace/executeCommand ids (namespaced apart from editor-contributed command ids).
CMD_REMEMBER = "mnemon.server.rememberSelection"
CMD_SHOW_WAKE = "mnemon.server.showWakeSnapshot"
CMD_CREATE_DOCUMENT = "mnemon.server.createDocumentFromFile"
CODE_ACTION_KIND = "refactor.mnemon"

#: JSON-RPC numeric code for each stable ``data.code``.
ERROR_CODES: dict[str, int] = {
    "invalid-input": -32602,
    "runtime-capacity": -32010,
    "revision-conflict": -32011,
    "ambiguous-match": -32012,
    "no-match": -32013,
    "not-found": -32014,
    "unreadable-store": -32015,
    "not-in-workspace": -32016,
    "store-busy": -32017,
    "document-capacity": -32018,
    "document-status": -32019,
    "provider-unavailable": -32020,
    "provider-failed": -32021,
    "space-read-only": -32022,
    "space-refused": -32023,
    "store-too-large": -32024,
    "confirmation-required": -32025,
    "internal-error": -32603,
}


@attrs.define
class RawRequest:
    """A ``mnemon/*`` request whose params stay a plain JSON value (dict, list or None)."""

    id: int | str
    method: str
    params: Any = None
    jsonrpc: str = "2.0"


class MnemonProtocol(LanguageServerProtocol):
    """LanguageServerProtocol that hands ``mnemon/*`` request params to handlers as plain dicts."""

    def get_message_type(self, method: str) -> type | None:  # noqa: D102 - pygls hook
        """:class:`RawRequest` for the ``mnemon/*`` requests we receive, pygls' own types otherwise."""
        # Only the requests we receive: our own outgoing notifications need pygls' notification type.
        if method in REQUESTS:
            return RawRequest
        return super().get_message_type(method)


def to_rpc_error(error: Exception) -> JsonRpcException:
    """Map a domain error (or anything else) to a JSON-RPC error with ``data.code``; never a traceback."""
    if isinstance(error, MnemonError):
        data = {k: v for k, v in error.to_dict().items() if k != "message"}
        return JsonRpcException(error.message, ERROR_CODES.get(error.code, -32603), data)
    if isinstance(error, ValidationError):
        return to_rpc_error(invalid_input_from(error))
    return JsonRpcException(f"internal error: {type(error).__name__}: {error}", -32603, {"code": "internal-error"})


def invalid_input_from(error: ValidationError, prefix: str = "") -> InvalidInput:
    """The first problem of a pydantic ``ValidationError`` as :class:`InvalidInput` (dotted camelCase field)."""
    first = error.errors()[0]
    field = prefix + ".".join(str(p) for p in first["loc"]) if first["loc"] else (prefix.rstrip(".") or "params")
    rule = "is not a known field" if first["type"] == "extra_forbidden" else first["msg"].removeprefix("Value error, ")
    return InvalidInput(field, rule)


def parse_params(model: type[BaseModel], params: Any) -> Any:
    """Validate raw ``params`` (a dict or None) with ``model``; raises :class:`InvalidInput` naming the field."""
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise InvalidInput("params", "must be an object")
    try:
        return model.model_validate(params)
    except ValidationError as exc:
        raise invalid_input_from(exc) from None


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)


class WorkspaceParams(_Params):
    """``{workspace?: folder URI, file URI or absolute path}``; optional when exactly one folder is open."""

    workspace: str | None = None


class RuntimeMutateParams(WorkspaceParams):
    """``mnemon/runtime/mutate``: ``{workspace?, action, target, content?, oldText?, importance?, branches?}``.

    Texts are checked by the Runtime Source (normalization, ``§``, 8192 bytes, matching).
    """

    action: Literal["add", "replace", "remove"]
    target: Literal["user", "memory"] = "memory"
    content: str | None = None
    old_text: str | None = Field(None, alias="oldText")
    importance: Literal["critical", "normal", "low"] | None = None
    branches: list[str] | None = None


class WakeParams(WorkspaceParams):
    """``mnemon/wake``: ``{workspace?, branch?, budgetChars?, viewId?}``; with ``viewId`` the View's pinned wake."""

    branch: str | None = None
    budget_chars: int | None = Field(None, alias="budgetChars", ge=1024, le=4_194_304, strict=True)
    view_id: str | None = Field(None, alias="viewId")


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
    """Argument object of ``mnemon.server.rememberSelection``: ``{uri, text, branches?, importance?, spaceId?}``.

    Without ``spaceId`` the text goes to MEMORY.md (``branches`` scopes it); with ``spaceId`` it is
    remembered in that Memory Space (``branches``, at most one name there, adds a ``branch:<name>`` tag).
    """

    uri: str
    text: str
    branches: list[str] | None = None
    importance: Literal["critical", "normal", "low"] | None = None
    space_id: str | None = Field(None, alias="spaceId")


class ShowWakeArgs(_Params):
    """Argument object of ``mnemon.server.showWakeSnapshot``: ``{uri}`` (a file or folder URI)."""

    uri: str | None = None


class DocumentCreateParams(WorkspaceParams):
    """``mnemon/documents/create``: ``{workspace?, title, content, description?, sourcePaths?, expectedRevision?}``."""

    title: str
    content: str
    description: str | None = None
    source_paths: list[str] | None = Field(None, alias="sourcePaths")
    expected_revision: str | None = Field(None, alias="expectedRevision")


class DocumentUpdateParams(WorkspaceParams):
    """``mnemon/documents/update``: ``{workspace?, id, title?, content?, description?, sourcePaths?,
    documentRevision?, expectedRevision?}`` (active documents only)."""

    id: str
    title: str | None = None
    content: str | None = None
    description: str | None = None
    source_paths: list[str] | None = Field(None, alias="sourcePaths")
    document_revision: int | None = Field(None, alias="documentRevision", strict=True)
    expected_revision: str | None = Field(None, alias="expectedRevision")


class DocumentIdParams(WorkspaceParams):
    """``mnemon/documents/get``: ``{workspace?, id}``."""

    id: str


class DocumentListParams(WorkspaceParams):
    """``mnemon/documents/list``: ``{workspace?, status?: active|archived}``."""

    status: Literal["active", "archived"] | None = None


class DocumentSearchParams(WorkspaceParams):
    """``mnemon/documents/search``: ``{workspace?, query, includeArchived?, limit? (1..50), includeContent?}``."""

    query: str
    include_archived: bool = Field(False, alias="includeArchived")
    limit: int = Field(20, strict=True)
    include_content: bool = Field(False, alias="includeContent")


class DocumentArchiveParams(WorkspaceParams):
    """``mnemon/documents/archive``: ``{workspace?, id, documentRevision, summary?, expectedRevision?}``."""

    id: str
    document_revision: int = Field(alias="documentRevision", strict=True)
    summary: str | None = None
    expected_revision: str | None = Field(None, alias="expectedRevision")


class DocumentRestoreParams(WorkspaceParams):
    """``mnemon/documents/restore``: ``{workspace?, id, documentRevision?, expectedRevision?}``."""

    id: str
    document_revision: int | None = Field(None, alias="documentRevision", strict=True)
    expected_revision: str | None = Field(None, alias="expectedRevision")


class CreateDocumentArgs(_Params):
    """Argument object of ``mnemon.server.createDocumentFromFile``: ``{uri, title?}`` (a file URI)."""

    uri: str
    title: str | None = None


class SpacesListParams(WorkspaceParams):
    """``mnemon/spaces/list``: ``{workspace?, activeOnly?}``."""

    active_only: bool = Field(False, alias="activeOnly")


class SpaceCreateParams(WorkspaceParams):
    """``mnemon/spaces/create``: ``{workspace?, name, description, active?}``."""

    name: str
    description: str
    active: bool = False


class SpaceUpdateParams(WorkspaceParams):
    """``mnemon/spaces/update``: ``{workspace?, spaceId, name?, description?}``."""

    space_id: str = Field(alias="spaceId")
    name: str | None = None
    description: str | None = None


class SpaceIdParams(WorkspaceParams):
    """``mnemon/spaces/activate|deactivate|delete|status``: ``{workspace?, spaceId}``."""

    space_id: str = Field(alias="spaceId")


class SpaceMergeParams(WorkspaceParams):
    """``mnemon/spaces/merge``: ``{workspace?, sourceIds, targetId, deactivateSources?}``."""

    source_ids: list[str] = Field(alias="sourceIds")
    target_id: str = Field(alias="targetId")
    deactivate_sources: bool = Field(True, alias="deactivateSources")


class RememberParams(WorkspaceParams):
    """``mnemon/remember``: ``{workspace?, content, spaceId?, category?, importance? (1..5), tags?, entities?,
    source?, scopeToBranch?}``; ``scopeToBranch`` tags the item with the workspace's current branch."""

    content: str
    space_id: str | None = Field(None, alias="spaceId")
    category: str | None = None
    importance: int | None = Field(None, strict=True)
    tags: list[str] | None = None
    entities: list[str] | None = None
    source: str | None = None
    scope_to_branch: bool = Field(False, alias="scopeToBranch")


class RecallParams(WorkspaceParams):
    """``mnemon/recall``: ``{workspace?, query, spaces?, limit? (1..50), mode? smart|keyword|basic, category?,
    source?, intent?}``; the workspace's branch scope (``branchRecall``) is applied by the server."""

    query: str
    spaces: list[str] | None = None
    limit: int | None = Field(None, strict=True)
    mode: Literal["smart", "keyword", "basic"] = "smart"
    category: str | None = None
    source: str | None = None
    intent: str | None = None


class RelatedParams(WorkspaceParams):
    """``mnemon/related``: ``{workspace?, spaceId, id, depth?, edgeType?, limit?}``."""

    space_id: str = Field(alias="spaceId")
    id: str
    depth: int = Field(2, strict=True)
    edge_type: str | None = Field(None, alias="edgeType")
    limit: int = Field(20, strict=True)


class LinkParams(WorkspaceParams):
    """``mnemon/link``: ``{workspace?, spaceId, sourceId, targetId, edgeType?, weight?}``."""

    space_id: str = Field(alias="spaceId")
    source_id: str = Field(alias="sourceId")
    target_id: str = Field(alias="targetId")
    edge_type: str = Field("semantic", alias="edgeType")
    weight: float = 0.5


class ForgetParams(WorkspaceParams):
    """``mnemon/forget``: ``{workspace?, spaceId, id}`` (soft delete by exact id)."""

    space_id: str = Field(alias="spaceId")
    id: str
