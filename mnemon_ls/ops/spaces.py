"""Memory Spaces operations: the directory (list, create, update, activate, deactivate, delete, status,
merge, reindex, embed) and the items (remember, recall, related, link, forget).

Each runs one :class:`~mnemon_ls.spaces.service.SpacesService` (``host.spaces``) or Host call and returns
the result's wire shape. Space ids are ids or names wherever a command takes a space (the service resolves
them). Recall's branch scope comes from the workspace (``branchRecall``, ``detachedHeadPolicy``).
"""

from __future__ import annotations

import shlex
from typing import Annotated, Any, Literal

from pydantic import Field, StrictBool

from ..errors import InvalidInput
from ..runtime.model import normalize_text, validate_branches
from ..spaces.model import (DEFAULT_LIMIT, MAX_CONTENT_BYTES, MAX_DESCRIPTION_CHARS, MAX_ENTITIES, MAX_ENTITY_BYTES,
                            MAX_ITEM_ID_CHARS, MAX_LIMIT, MAX_NAME_CHARS, MAX_RESULTS, MAX_SPACE_ID_CHARS,
                            MAX_TAG_BYTES,
                            MAX_TAGS, MIN_LIMIT)
from ..text import MAX_QUERY_CHARS
from . import citing, command_ids, humantext, modeltext, staleness
from .audience import AUDIENCE_HELP, Audience, audience_of
from .base import Call, CliArg, CliCommand, LspCommand, LspMethod, McpTool, Operation, WorkspaceParams
from .command_args import RememberArgs
from .published import integer_range, limits

#: Most recall results a model is sent (seed 001: the Host caps results at 12), and how many when the call
#: does not say. The language server and the CLI take ``limit`` 1..50 and are sent at most 12 too.
TOOL_RECALL_MAX = 12
TOOL_RECALL_DEFAULT = 8

EdgeType = Literal["temporal", "semantic", "causal", "entity"]
Category = Literal["preference", "decision", "fact", "insight", "context", "general"]
SPACE_HELP = "the space's id or name (`mnemon-ls space list` shows both)"
#: The MCP tool of the spaces directory (one tool, its ``action`` picks the operation).
SPACES_TOOL = "mnemon_memory_spaces"
SPACES_TOOL_TEXT = ("List the Memory Spaces (id, name, description, active), or create, update, activate or deactivate "
                    "one. Create a space only for a recurring, distinct domain; most facts fit an existing one.")
#: The limits the Memory Spaces Source's validators enforce (after trimming), published in the schemas.
_SPACE_ID, _ITEM_ID = limits(maxLength=MAX_SPACE_ID_CHARS), limits(maxLength=MAX_ITEM_ID_CHARS)
#: What an item id field also takes (:func:`mnemon_ls.spaces.model.full_item_id`).
_SHORT_ID = " (or, in a native space, its unique start of 8 characters or more)"
_NAME, _DESCRIPTION = limits(maxLength=MAX_NAME_CHARS), limits(maxLength=MAX_DESCRIPTION_CHARS)


# ------------------------------------------------------------------ params


class SpacesListParams(WorkspaceParams):
    """``mnemon/spaces/list``: ``{workspace?, activeOnly?}``."""

    active_only: StrictBool = Field(False, alias="activeOnly")


class SpaceCreateParams(WorkspaceParams):
    """``mnemon/spaces/create``: ``{workspace?, name, description, active?, provider?}``."""

    name: str = Field(description="unique in the root, ignoring case; commands take it or the id",
                      json_schema_extra=_NAME)
    description: str = Field(description="routing boundary: what belongs here and when to recall it",
                             json_schema_extra=_DESCRIPTION)
    active: StrictBool = Field(False, description="make it active for reading")
    #: A third-party provider id (``mnemon/providers/enable`` first); ``None``: a native space.
    provider: str | None = Field(None, description="make the namespace in this enabled third-party provider")


class SpaceUpdateParams(WorkspaceParams):
    """``mnemon/spaces/update``: ``{workspace?, spaceId, name?, description?}``."""

    space_id: str = Field(alias="spaceId", json_schema_extra=_SPACE_ID)
    name: str | None = Field(None, description="the new name (unique in the root, ignoring case)",
                             json_schema_extra=_NAME)
    description: str | None = Field(None, json_schema_extra=_DESCRIPTION)


class SpaceIdParams(WorkspaceParams):
    """``mnemon/spaces/activate|deactivate|delete|status``: ``{workspace?, spaceId}``."""

    space_id: str = Field(alias="spaceId", description=SPACE_HELP, json_schema_extra=_SPACE_ID)


class SpaceDeleteParams(SpaceIdParams):
    """``mnemon/spaces/delete``: ``{workspace?, spaceId, confirm?}``; a space holding items needs ``confirm``
    (``confirmation-required`` otherwise, nothing changed)."""

    confirm: StrictBool = Field(False, description="confirm deleting a space that holds items (a native store is "
                                                   "moved to data/.deleted/, not erased)")


class PurgeDeletedParams(WorkspaceParams):
    """``mnemon/spaces/purgeDeleted``: ``{workspace?, confirm?}``; removing kept stores needs ``confirm``
    (``confirmation-required`` otherwise, nothing changed)."""

    confirm: StrictBool = Field(False, description="confirm removing the stores of deleted spaces kept in "
                                                   "data/.deleted/ for good (they cannot be restored afterwards)")


class SpaceMergeParams(WorkspaceParams):
    """``mnemon/spaces/merge``: ``{workspace?, sourceIds, targetId, deactivateSources?}``."""

    source_ids: list[str] = Field(alias="sourceIds", description="spaces to merge (ids or names)")
    target_id: str = Field(alias="targetId", description="the space they go into (id or name)")
    deactivate_sources: StrictBool = Field(True, alias="deactivateSources")


class RememberParams(WorkspaceParams):
    """``mnemon/remember``: ``{workspace?, content, spaceId?, category?, importance? (1..5), tags?, entities?,
    source?, scopeToBranch?, branch?, cites?}``; ``scopeToBranch`` tags the item with the workspace's current branch,
    ``branch`` with the one it names (the editor's "Remember selection" for a branch)."""

    content: str = Field(description=f"one durable fact or decision, self-contained (at most {MAX_CONTENT_BYTES} "
                                     "UTF-8 bytes)")
    space_id: str | None = Field(None, alias="spaceId", description="space id (required unless exactly one "
                                                                    "space is active)", json_schema_extra=_SPACE_ID)
    category: str | None = Field(None, description="preference, decision, fact, insight, context or general")
    importance: int | None = Field(None, strict=True, description="1..5 (default 3)",
                                    json_schema_extra=integer_range(1, 5, optional=True))
    tags: list[str] | None = Field(None, description=f"at most {MAX_TAGS} tags, each at most {MAX_TAG_BYTES} UTF-8 "
                                                      "bytes", json_schema_extra=limits(maxItems=MAX_TAGS))
    entities: list[str] | None = Field(None, description=f"names this fact is about, one per entry (at most "
                                                       f"{MAX_ENTITIES}, each at most {MAX_ENTITY_BYTES} bytes; a "
                                                       "comma is part of the name)",
                                     json_schema_extra=limits(maxItems=MAX_ENTITIES))
    source: str | None = None
    scope_to_branch: StrictBool = Field(False, alias="scopeToBranch", description="recall it only on the current git "
                                                                            "branch")
    branch: str | None = Field(None, description="recall it only on this git branch (a branch:<name> tag; not with "
                                                 "scopeToBranch)")
    cites: citing.Cites = None


class RecallParams(WorkspaceParams):
    """``mnemon/recall``: ``{workspace?, query, spaces?, limit? (1..50), mode? smart|keyword|basic, category?,
    source?, intent?, audience? person|assistant, includeLowConfidence?}``; the workspace's branch scope
    (``branchRecall``) is applied by the server; ``audience`` (:mod:`.audience`) is taken from the language
    server's clients only; ``includeLowConfidence`` (default false) sends an assistant the results with tier
    ``low`` too (:meth:`~mnemon_ls.spaces.service.SpacesService.recall`)."""

    query: str = Field(description="what you want to know, in natural language or identifiers",
                       json_schema_extra=limits(maxLength=MAX_QUERY_CHARS))
    spaces: list[str] | None = Field(None, description="restrict to these space ids (default: every active space)",
                                     json_schema_extra=limits(items={"maxLength": MAX_SPACE_ID_CHARS}))
    # the range is checked by SpacesService.recall (its error carries the value); the schema shows it
    limit: int | None = Field(None, strict=True, description="number of results",
                              json_schema_extra=integer_range(MIN_LIMIT, MAX_LIMIT, optional=True))
    mode: Literal["smart", "keyword", "basic"] = "smart"
    category: str | None = None
    source: str | None = None
    intent: str | None = None
    audience: Audience | None = Field(None, description=AUDIENCE_HELP)
    include_low_confidence: StrictBool = Field(
        False, alias="includeLowConfidence",
        description="also send the results with low confidence (tier low: found by meaning alone with a weak "
                    "similarity, or by a name or one common word alone), which an assistant is not sent by default "
                    "(it is told how many were withheld); set it when the results sent do not answer")


class RelatedParams(WorkspaceParams):
    """``mnemon/related``: ``{workspace?, spaceId, id, depth?, edgeType?, limit?}``."""

    space_id: str = Field(alias="spaceId", description="the space id a recall result gave", json_schema_extra=_SPACE_ID)
    id: str = Field(description="the item id a recall result gave", json_schema_extra=_ITEM_ID)
    depth: int = Field(2, strict=True, description="1..5 hops", json_schema_extra=integer_range(1, 5))
    edge_type: str | None = Field(None, alias="edgeType", description="only this kind of edge")
    limit: int = Field(20, strict=True, json_schema_extra=integer_range(MIN_LIMIT, MAX_LIMIT))


class LinkParams(WorkspaceParams):
    """``mnemon/link``: ``{workspace?, spaceId, sourceId, targetId, edgeType?, weight?}``."""

    space_id: str = Field(alias="spaceId", description="the space both items are in", json_schema_extra=_SPACE_ID)
    source_id: str = Field(alias="sourceId", description=("the item id the edge starts from" + _SHORT_ID),
                           json_schema_extra=_ITEM_ID)
    target_id: str = Field(alias="targetId", description=("the item id the edge points to" + _SHORT_ID),
                           json_schema_extra=_ITEM_ID)
    edge_type: str = Field("semantic", alias="edgeType", description="temporal, semantic, causal or entity")
    weight: float = Field(0.5, ge=0, le=1, description="0..1", strict=True)


class ForgetParams(WorkspaceParams):
    """``mnemon/forget``: ``{workspace?, spaceId, id}`` (soft delete by item id)."""

    space_id: str = Field(alias="spaceId", description="the space the item is in", json_schema_extra=_SPACE_ID)
    id: str = Field(description="the item id" + _SHORT_ID, json_schema_extra=_ITEM_ID)


# ------------------------------------------------------------------ runs


def _data(value: Any) -> Any:
    """A Source result as JSON data (``to_dict()`` of a view or receipt; lists element-wise)."""
    if isinstance(value, list):
        return [_data(item) for item in value]
    return value.to_dict() if hasattr(value, "to_dict") else value


def _remember(call: Call, p: RememberParams) -> Any:
    host = call.host
    if p.scope_to_branch and p.branch is not None:
        raise InvalidInput("branch", "cannot be combined with scopeToBranch (which takes the current branch)")
    branch = host.current_branch("scopeToBranch") if p.scope_to_branch else p.branch
    citations = citing.resolve(call, p.cites)  # before the write: a bad citation writes nothing
    data = _data(host.spaces.remember(p.content, space_id=p.space_id, category=p.category, importance=p.importance,
                                      tags=p.tags, entities=p.entities, source=p.source, branch=branch))
    if citations and data.get("id") and data.get("spaceId"):
        key = f"{data['spaceId']}/{data['id']}"
        data["cites"] = citing.store(call, "spaces", key, citations)
        superseded = staleness.supersede(call, "spaces", key, call.host.citations.of("spaces", key))
        if superseded:
            data["possiblySuperseded"] = superseded
    return data


def _forget(call: Call, p: ForgetParams) -> Any:
    """``spaces.forget``; a forgotten item's citations leave the side file with it."""
    data = _data(call.host.spaces.forget(p.space_id, p.id))
    if isinstance(data, dict) and data.get("spaceId") and data.get("id"):
        key = f"{data['spaceId']}/{data['id']}"
        if call.host.citations.of("spaces", key):
            call.host.citations.put("spaces", {key: None})
    return data


def _recall(call: Call, p: RecallParams) -> Any:
    """``spaces.recall``; a result item with citations also carries them as ``cites`` (each with freshness) and
    their worst as ``freshness``, ranked by :func:`.staleness.rank` (fresh above changed/gone within a tier, a
    superseded item below its successor); an item neither updated nor accessed for ``reviewAfterDays`` before
    this recall carries ``review: "due"`` (a native space's item: its provider gives both times). An answer with
    no result says when Runtime memory holds entries with most of the query's words (``runtimeMatches`` and a
    notice: :func:`.recall_elsewhere.note_runtime_matches`)."""
    found = call.host.recall(p.query, spaces=p.spaces, limit=p.limit, mode=p.mode, category=p.category,
                             source=p.source, intent=p.intent, audience=audience_of(call, p),
                             include_low=p.include_low_confidence)
    times = getattr(found, "times", None) or {}
    data = _data(found)
    results = data.get("results") if isinstance(data, dict) else None
    if isinstance(data, dict) and not results:
        from .recall_elsewhere import note_runtime_matches  # on use: only an answer with no result reads it

        note_runtime_matches(call, p.query, data)
    if results:
        views = citing.views_of(call, "spaces")
        review = staleness.review_marker(call, "spaces") if times else None
        for item in results:
            key = f"{item.get('spaceId')}/{item.get('id')}"
            cites = views(key)
            if cites:
                item["cites"] = cites
            if review is not None and key in times:  # the later of updated and last accessed before this recall
                review(item, *times[key], key)
        data["results"] = staleness.rank(call, "spaces", results, lambda i: f"{i.get('spaceId')}/{i.get('id')}")
    return data


def _importance_of_selection(importance: str | None) -> int:
    """The importance of "Remember selection" (``critical``/``normal``/``low``, default normal) as a Memory
    Space item's 5/3/1."""
    return {"critical": 5, "normal": 3, "low": 1}[importance or "normal"]


def _one_branch(branches: list[str] | None) -> str | None:
    """The branch a "Remember selection" into a Memory Space is scoped to: the one name ``branches`` may hold
    (checked by MEMORY.md's rules, errors naming ``branches``), or ``None``."""
    names = validate_branches(branches, "memory", "branches")
    if len(names) > 1:
        raise InvalidInput("branches", "a Memory Space item is scoped to one branch (got several)")
    return names[0] if names else None


def _embed(call: Call, p: SpaceIdParams) -> Any:
    from ..semantic.spaces import embed_space

    return embed_space(call.host.spaces, p.space_id)  # an id or a name


# ------------------------------------------------------------------ text for a person (CLI)


def _remember_text(data: dict[str, Any], call: Call, _p: Any) -> str:
    text = humantext.remember_line(data)
    name = shlex.quote(str(data.get("spaceName") or data.get("spaceId")))
    note = humantext.activation_note(data, plain_write="`mnemon-ls remember` without --space",
                                     name_it=f"--space {name}", deactivate=f"`mnemon-ls space deactivate {name}`")
    if note:
        text += f"\n{note}"
    text += "".join(f"\ncites {humantext.citation_text(c)}" for c in data.get("cites") or ())
    text += "".join(f"\n{line}" for line in humantext.superseding_lines(data))
    engine = call.host.semantic
    notice = engine.keyword_notice() if engine is not None and engine.state == "failed" else None
    return text + (f"\nnote: {notice}" if notice else "")


#: Where a person finds an item id (the CLI help of ITEM_ID arguments).
_ITEM_ID_HELP = ("the item id as `recall` prints it (in a native space the unique start of an id, at least 8 "
                 "characters, in either case, names the item); `remember` prints it in full, `recall --json` gives it "
                 "as `id`")


def _recall_text(data: dict[str, Any], call: Call, _p: Any) -> str:
    lines = []
    ids = humantext.recall_ids(data["results"], call.host.spaces.takes_short_ids)
    for n, item in enumerate(data["results"]):
        label = f" [{item['branchLabel']}]" if item.get("branchLabel") else ""
        label += humantext.recall_match_label(item)
        score = item.get("score")  # none in --mode basic (unranked, newest first)
        score_text = f"{score:.2f}" if isinstance(score, (int, float)) else "   -"
        lines.append(f"{score_text} {item.get('tier') or '-':<7} {ids[n]} {item['spaceName']}: "
                     f"{humantext.continued(item['content'], '      ')}"
                     f"{label}"
                     f"{humantext.state_label(item)}")
        lines.extend(f"      cites {humantext.citation_text(c)}" for c in item.get("cites") or ())
    lines.extend(humantext.recall_hidden_lines(data.get("hidden") or {}))
    lines.extend(f"note: {n}" for n in data.get("notices", []))
    hint = data.get("hint")
    if hint == "no active space":  # say how to get one (a person; the JSON and the other surfaces keep the hint)
        hint += " (`mnemon-ls space create --name NAME --active` makes one; `mnemon-ls space activate SPACE` reads one)"
    lines.append(f"{len(data['results'])} result(s)" + (f"; {hint}" if hint else ""))
    return "\n".join(lines)


def _space_text(action: str) -> Any:
    def text(data: Any, _call: Call, p: Any) -> str:
        return humantext.space_text(action, data, getattr(p, "space_id", None) or getattr(p, "id", "ID"))
    return text


def _space_cmd(action: str, help_text: str) -> CliCommand:
    return CliCommand(("space", action), help_text, (CliArg("space_id", dest="id", metavar="SPACE", help=SPACE_HELP),),
                      text=_space_text(action))


_SPACE_ARG = CliArg("space_id", flag="--space", required=True, help=SPACE_HELP, names_errors=True)


def registry_notes(_data: Any, call: Call) -> list[str]:
    """What the space registry says of itself (:meth:`~mnemon_ls.spaces.registry.SpaceRegistry.notice_lines`: a
    damaged file rebuilt, the damaged copy a repair kept until it is deleted, a file of a newer version): the
    notes of ``spaces.list`` and ``workspace.status`` on every surface (:attr:`~.surfaces.Operation.notes`).
    ``[]`` when the registry cannot be looked at (a storage error: the status reports it as a problem, and a
    listing has failed with it already): a note never turns an answer into an error."""
    from ..errors import MnemonError

    try:
        return call.host.spaces.registry.notice_lines()
    except (MnemonError, OSError):
        return []


def list_notes(data: Any, call: Call) -> list[str]:
    """The notes of ``spaces.list`` on every surface: :func:`registry_notes`, then the stores of deleted spaces
    kept in ``data/.deleted/`` (:func:`~mnemon_ls.spaces.deleted.kept_line`: count, size, where, how to remove
    them). Never an error."""
    from ..spaces.deleted import kept_line, kept_summary

    lines = registry_notes(data, call)
    try:
        summary = kept_summary(call.host.root / "data")
    except OSError:
        summary = None
    return lines + ([kept_line(summary)] if summary is not None else [])


def catalog_too_new(call: Call) -> bool:
    """Whether the native catalog was written by a newer version (read-only here: its spaces are not shown and
    none can be created, :attr:`~mnemon_ls.spaces.registry_model.RegistryState.native_refused`); ``False`` when the
    registry cannot be looked at. An empty list then says so instead of inviting ``space create``."""
    from ..errors import MnemonError

    try:
        return call.host.spaces.state().native_refused is not None
    except (MnemonError, OSError):
        return False


OPERATIONS = (
    Operation(
        "spaces.list", SpacesListParams, lambda c, p: _data(c.host.spaces.list_spaces(active_only=p.active_only)),
        "List the Memory Spaces.",
        text=lambda d, c: modeltext.spaces(d, creatable=bool(d) or not catalog_too_new(c)), text_takes_call=True,
        notes=list_notes,
        lsp=LspMethod("mnemon/spaces/list", list_key="spaces"),
        mcp=McpTool(SPACES_TOOL, SPACES_TOOL_TEXT, fields=("workspace",), action="list", default_action=True),
        cli=CliCommand(("space", "list"), "list spaces",
                       text=lambda d, c, _p: humantext.space_list_text(
                           d, creatable=bool(d) or not catalog_too_new(c)))),
    Operation(
        "spaces.create", SpaceCreateParams,
        lambda c, p: _data(c.host.spaces.create_space(p.name, p.description, active=p.active, provider=p.provider)),
        "Create a Memory Space (the first native space gets id default).", effect="write",
        text=lambda d: modeltext.spaces([d]),
        lsp=LspMethod("mnemon/spaces/create"),
        mcp=McpTool(SPACES_TOOL, fields=("name", "description", "active", "workspace"), action="create",
                    defaults={"active": True}),
        cli=CliCommand(("space", "create"),
                       "create a space: native (the first one gets id 'default'), or in a provider with --provider", (
            CliArg("name", flag="--name", required=True),
            CliArg("description", flag="--description", required=True),
            CliArg("active", flag="--active", kind="flag"), CliArg("provider", flag="--provider", metavar="NAME")),
            text=_space_text("create"))),
    Operation(
        "spaces.update", SpaceUpdateParams,
        lambda c, p: _data(c.host.spaces.update_space(p.space_id, name=p.name, description=p.description)),
        "Rename or re-describe a Memory Space.", effect="write",
        text=lambda d: modeltext.spaces([d]),
        lsp=LspMethod("mnemon/spaces/update"),
        mcp=McpTool(SPACES_TOOL, fields=("space_id", "name", "description", "workspace"), action="update"),
        cli=CliCommand(("space", "update"), "rename or re-describe a space", (
            CliArg("space_id", dest="id", metavar="SPACE", help=SPACE_HELP), CliArg("name", flag="--name"),
            CliArg("description", flag="--description")), text=_space_text("update"))),
    Operation(
        "spaces.activate", SpaceIdParams, lambda c, p: _data(c.host.spaces.activate(p.space_id)),
        "Make a Memory Space active (recall reads the active spaces).", effect="write",
        text=lambda d: modeltext.spaces([d]),
        lsp=LspMethod("mnemon/spaces/activate"),
        mcp=McpTool(SPACES_TOOL, fields=("space_id", "workspace"), action="activate"),
        cli=_space_cmd("activate", "read from this space")),
    Operation(
        "spaces.deactivate", SpaceIdParams, lambda c, p: _data(c.host.spaces.deactivate(p.space_id)),
        "Stop reading from a Memory Space.", effect="write",
        text=lambda d: modeltext.spaces([d]),
        lsp=LspMethod("mnemon/spaces/deactivate"),
        mcp=McpTool(SPACES_TOOL, fields=("space_id", "workspace"), action="deactivate"),
        cli=_space_cmd("deactivate", "stop reading from this space")),
    Operation(
        "spaces.delete", SpaceDeleteParams, lambda c, p: c.host.spaces.delete_space(p.space_id, confirm=p.confirm),
        "Unregister and remove a Memory Space (never the last native store; one holding items only with confirm; "
        "a native store is moved to data/.deleted/, not erased).", effect="destroy",
        lsp=LspMethod("mnemon/spaces/delete"),
        cli=CliCommand(("space", "delete"), "unregister and remove a space (never the last native store; one "
                       "holding items only with --confirm; a native store is moved to data/.deleted/)", (
            CliArg("space_id", dest="id", metavar="SPACE", help=SPACE_HELP),
            CliArg("confirm", flag="--confirm", aliases=("--yes",), kind="flag",
                   help="delete it even though it holds items")), text=_space_text("delete"))),
    Operation(
        "spaces.purgeDeleted", PurgeDeletedParams, lambda c, p: c.host.spaces.purge_deleted(confirm=p.confirm),
        "Remove for good the stores of deleted spaces kept in data/.deleted/ (only with confirm).",
        effect="destroy", text=lambda d: d["message"],
        lsp=LspMethod("mnemon/spaces/purgeDeleted"),
        cli=CliCommand(("space", "purge-deleted"), "remove for good the stores of deleted spaces kept in "
                       "data/.deleted/ (only with --confirm)", (
            CliArg("confirm", flag="--confirm", aliases=("--yes",), kind="flag",
                   help="remove them: they cannot be restored afterwards"),),
            text=lambda d, _c, _p: d["message"])),
    Operation(
        "spaces.status", SpaceIdParams, lambda c, p: c.host.spaces.space_status(p.space_id),
        "Counts, edges, schema and index of a Memory Space.",
        lsp=LspMethod("mnemon/spaces/status"), cli=_space_cmd("status", "counts, edges, schema and index of a space")),
    Operation(
        "spaces.reindex", SpaceIdParams, lambda c, p: c.host.spaces.reindex(p.space_id),
        "Rebuild a Memory Space's search index.", effect="write",
        cli=_space_cmd("reindex", "rebuild the space's search index")),
    Operation(
        "spaces.embed", SpaceIdParams, _embed,
        "Embed a Memory Space's items now for semantic recall.", effect="write",
        cli=_space_cmd("embed", "embed the space's items now for semantic recall (needs mnemon-ls[semantic])")),
    Operation(
        "spaces.merge", SpaceMergeParams,
        lambda c, p: c.host.spaces.merge(p.source_ids, p.target_id, deactivate_sources=p.deactivate_sources),
        "Import spaces into another (non-destructive; sources deactivated only when fully accounted for).",
        effect="write",
        lsp=LspMethod("mnemon/spaces/merge"),
        cli=CliCommand(("space", "merge"), "import spaces into another (non-destructive)", (
            CliArg("source_ids", dest="sources", repeat=True, metavar="SOURCE", help="spaces to merge (ids or names)"),
            CliArg("target_id", flag="--into", required=True, metavar="TARGET",
                   help="the space they go into (id or name)"),
            CliArg("deactivate_sources", flag="--keep-active", kind="flag", default=True,
                   help="do not deactivate fully merged sources")), text=_space_text("merge"))),
    Operation(
        "spaces.remember", RememberParams, _remember,
        "Remember a long-term fact in a Memory Space.", effect="write",
        text=modeltext.receipt,
        lsp=LspMethod("mnemon/remember"),
        lsp_command=LspCommand(
            command_ids.REMEMBER_SELECTION, RememberArgs,
            "The selected text (a comment without its markers, whitespace collapsed) remembered in the Memory "
            "Space spaceId names, by the user; importance critical, normal, low is 5, 3, 1; the one name branches may "
            "hold tags it branch:<name>.",
            fields={"content": "text", "space_id": "space_id", "importance": "importance", "branch": "branches"},
            convert={"content": normalize_text, "importance": _importance_of_selection, "branch": _one_branch},
            fixed={"source": "user"}, comment="text", cite="range", when="space_id", quiet="quiet",
            message=humantext.remembered_in_space, failure="not remembered: "),
        mcp=McpTool(
            "mnemon_remember",
            "Remember a long-term fact in a Memory Space: decisions and facts worth recalling months later. Pick "
            "the space whose description fits (mnemon_memory_spaces list). Not for the working reference of the "
            "current task (mnemon_runtime_memory) or for long texts (mnemon_document_create); never for secrets, "
            "temporary progress or raw logs. An exact duplicate is skipped.",
            fields=("content", "space_id", "category", "importance", "tags", "entities", "scope_to_branch", "cites",
                    "workspace"),
            narrow={"category": Category | None, "importance": Annotated[int | None, Field(ge=1, le=5)]},
            fixed={"source": "agent"}),
        cli=CliCommand(("remember",), "remember a fact in a Memory Space", (
            CliArg("content", stdin=True, help="the fact ('-' reads standard input)"),
            CliArg("space_id", flag="--space", help="space id or name (required unless exactly one space is active)",
                   names_errors=True),
            CliArg("category", flag="--category", help="preference, decision, fact, insight, context or general"),
            CliArg("importance", flag="--importance", help="1..5"),
            CliArg("tags", flag="--tag", repeat=True, metavar="TAG", names_errors=True),
            CliArg("entities", flag="--entity", repeat=True, metavar="NAME", names_errors=True),
            CliArg("scope_to_branch", flag="--for-branch", kind="flag", help="scope it to the current git branch",
                   names_errors=True),
            citing.CITE_ARG),
            text=_remember_text)),
    Operation(
        "spaces.recall", RecallParams, _recall,
        "Recall from the active Memory Spaces with the workspace's branch scope.",
        text=lambda d: modeltext.recall(d, TOOL_RECALL_MAX),
        inline=True,  # a read: on the MCP server's event loop unless it would wait (mnemon_ls.nowait)
        lsp=LspMethod("mnemon/recall"),
        mcp=McpTool(
            "mnemon_recall",
            "Recall long-term memory from the active Memory Spaces, scoped to the current git branch. Use it when "
            "the request, the repository, the wake snapshot and the Documents do not answer, or when older "
            "decisions may matter. Do not recall merely to show memory exists. Each result gives the space id and "
            "item id for mnemon_related and mnemon_forget. At most 12 results (default 8). Results with low "
            "confidence are withheld and counted; set include_low_confidence when the results sent do not answer.",
            fields=("query", "limit", "spaces", "include_low_confidence", "workspace"),
            narrow={"limit": Annotated[int | None, Field(ge=1, le=TOOL_RECALL_MAX)]},
            defaults={"limit": TOOL_RECALL_DEFAULT}),
        cli=CliCommand(("recall",), "recall from the active Memory Spaces", (
            CliArg("query"),
            CliArg("spaces", flag="--space", repeat=True, metavar="SPACE",
                   help="restrict to these spaces (ids or names; repeatable)", names_errors=True),
            CliArg("limit", flag="--limit", help=f"results wanted, {MIN_LIMIT}..{MAX_LIMIT} (default {DEFAULT_LIMIT}); "
                   f"at most {MAX_RESULTS} are returned whatever the limit (the recall cap): a larger limit "
                   "only has more candidates searched and ranked"),
            CliArg("mode", flag="--mode", default="smart",
                   help="smart (default: ranked by words, and by meaning when semantic recall is on), keyword (ranked "
                        "by words only) or basic (items holding the query text as written, most important and newest "
                        "first)")),
            text=_recall_text,
            extra={"--embed-seconds": {"type": float, "default": 3.0, "metavar": "S", "help": (
                "semantic recall: embed missing vectors of each space for at most S seconds first "
                "(default 3; 0 skips; `space embed` embeds them all)")}})),
    Operation(
        "spaces.related", RelatedParams,
        lambda c, p: c.host.spaces.related(p.space_id, p.id, depth=p.depth, edge_type=p.edge_type, limit=p.limit),
        "Walk the relations of one Memory Space item.",
        text=modeltext.related,
        lsp=LspMethod("mnemon/related"),
        mcp=McpTool(
            "mnemon_related",
            "Walk the relations of one Memory Space item (temporal, semantic, causal, entity edges) to explain how "
            "facts connect. Use the exact space id and item id from mnemon_recall.",
            fields=("space_id", "id", "depth", "edge_type", "workspace"),
            narrow={"depth": Annotated[int, Field(ge=1, le=5)], "edge_type": EdgeType | None},
            fixed={"limit": TOOL_RECALL_MAX}),
        cli=CliCommand(("space", "related"), "walk the graph from an item", (
            CliArg("id", metavar="ITEM_ID", help=_ITEM_ID_HELP), _SPACE_ARG,
            CliArg("depth", flag="--depth", default=2)),
            text=_space_text("related"))),
    Operation(
        "spaces.link", LinkParams,
        lambda c, p: _data(c.host.spaces.link(p.space_id, p.source_id, p.target_id, edge_type=p.edge_type,
                                              weight=p.weight)),
        "Link two items of one Memory Space.", effect="write",
        text=modeltext.receipt,
        lsp=LspMethod("mnemon/link"),
        mcp=McpTool(
            "mnemon_link",
            "Link two items of one Memory Space (for example a decision and the fact that caused it), so "
            "mnemon_related can explain the connection later. Both ids must exist and not be forgotten; use the "
            "exact ids mnemon_recall returned.",
            narrow={"edge_type": EdgeType, "weight": Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]}),
        cli=CliCommand(("space", "link"), "link two items", (
            CliArg("source_id", metavar="SOURCE_ID", help=f"the item the edge starts from; {_ITEM_ID_HELP}"),
            CliArg("target_id", metavar="TARGET_ID", help=f"the item the edge points to; {_ITEM_ID_HELP}"), _SPACE_ARG,
            CliArg("edge_type", flag="--type", default="semantic",
                   choices=("temporal", "semantic", "causal", "entity"))),
            text=_space_text("link"))),
    Operation(
        "spaces.forget", ForgetParams, _forget,
        "Forget one Memory Space item by its id (a soft delete).", effect="destroy",
        text=modeltext.receipt,
        lsp=LspMethod("mnemon/forget"),
        mcp=McpTool(
            "mnemon_forget",
            "Forget one Memory Space item by its id (a soft delete: it is no longer recalled). Use it only when "
            "the user asks, or when an item is proven wrong."),
        cli=CliCommand(("space", "forget"),
                       "forget an item by id (a native space soft-deletes it; a provider deletes it its own "
                       "way)", (
            CliArg("id", metavar="ITEM_ID", help=_ITEM_ID_HELP), _SPACE_ARG), text=_space_text("forget"))),
)
