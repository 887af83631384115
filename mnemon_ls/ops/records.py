"""Workspace memory records operations (seed 002): list, get, create, propose, verify, reject, stale, edit,
archive, forget, export, import and compact, on the Records Source of the workspace
(:meth:`~mnemon_ls.host.WorkspaceHost.open_records`).

The Source is opened for the caller's session (:attr:`~mnemon_ls.ops.base.Call.session`: the language
server's per-folder session, the MCP server's lifetime, ``--session-id`` on the command line), which is
the ``session`` record scope and a proposal's default source. ``--user-id`` (command line) picks the
partition of the ``user`` scope (:attr:`~mnemon_ls.ops.base.Call.user`). Writes to ``shared-project`` need
``confirm``. The language server announces a proposal with ``mnemon/recordProposed`` (an observer of
``records.propose``, :mod:`mnemon_ls.lsp.records`).
"""

from __future__ import annotations

import json
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, StrictBool

from ..errors import InvalidInput, echo_repr, echo_value
from ..jsontext import JsonUnreadable, json_loads
from ..records.model import (MAX_CONTENT_CHARS, MAX_LIST_LIMIT, MAX_TAG_CHARS, MAX_TAGS, MAX_TITLE_CHARS, STATUSES,
                             TYPES, VERIFICATIONS)
from ..roots_checks import path_error
from ..text import MAX_QUERY_CHARS
from . import citing, humantext, modeltext, staleness
from .base import Call, CliArg, CliCommand, LspMethod, McpTool, Operation, WorkspaceParams
from .published import integer_range, limits

RecordScope = Literal["session", "project", "shared-project", "user"]
# type, status and verification are checked by the Source (its rule names the value given); the command line
# offers them as choices, the MCP tools as enums.
_TYPE = Literal[TYPES]  # type: ignore[valid-type]
_VERIFICATION = Literal[VERIFICATIONS]  # type: ignore[valid-type]


# ------------------------------------------------------------------ params


#: The limits the Records validators enforce, published in the schemas.
_TITLE, _CONTENT = limits(maxLength=MAX_TITLE_CHARS), limits(maxLength=MAX_CONTENT_CHARS)
_TAGS = limits(maxItems=MAX_TAGS, items={"maxLength": MAX_TAG_CHARS})


class RecordsListParams(WorkspaceParams):
    """``mnemon/records/list``: ``{workspace?, scopes?, type?, status?, verification?, tag?, text?, proposals?,
    limit? (1..10000)}``."""

    scopes: list[RecordScope] | None = Field(None, description="record scopes (default every scope of the "
                                                               "workspace)")
    type: str | None = Field(None, description="decision, preference, convention or fact")
    status: str | None = Field(None, description="active, archived or forgotten (default every status but "
                                                 "forgotten)")
    verification: str | None = Field(None, description="unverified, verified, rejected or stale")
    tag: str | None = None
    text: str | None = Field(None, description="words that must all occur in the title, content or tags "
                                               f"(case-insensitive; at most {MAX_QUERY_CHARS} characters); omit to "
                                               "list", json_schema_extra=limits(maxLength=MAX_QUERY_CHARS))
    proposals: StrictBool = Field(False, description="only assistants' proposals waiting for review")
    limit: int | None = Field(None, strict=True, json_schema_extra=integer_range(1, MAX_LIST_LIMIT, optional=True))


class RecordIdParams(WorkspaceParams):
    """``{workspace?, id, recordScope?}`` (get)."""

    id: str = Field(description="record id")
    record_scope: RecordScope | None = Field(None, alias="recordScope", description="the record's scope (default: "
                                                                                    "found by id)")


class RecordChangeParams(RecordIdParams):
    """``{workspace?, id, recordScope?, confirm?}`` (verify, reject, stale, archive, forget)."""

    confirm: StrictBool = Field(False, description="confirm a write to shared-project")


class RecordCreateParams(WorkspaceParams):
    """``mnemon/records/create``: ``{workspace?, recordScope? (project), type? (fact), title, content, tags?,
    sourceRefs? [{kind, id}], confirm?, cites?}``."""

    record_scope: RecordScope = Field("project", alias="recordScope", description="record scope: project (this "
                                      "workspace, default), shared-project, user (follows the person) or session")
    type: str = Field("fact", description="decision, preference, convention or fact (default fact)")
    title: str = Field(description=f"short title, at most {MAX_TITLE_CHARS} characters", json_schema_extra=_TITLE)
    content: str = Field(description="the fact, decision, preference or convention itself", json_schema_extra=_CONTENT)
    tags: list[str] = Field(default_factory=list, json_schema_extra=_TAGS)
    source_refs: list[dict[str, str]] = Field(default_factory=list, alias="sourceRefs",
                                              description="what it comes from: [{kind: file|url|issue|session, id}]")
    confirm: StrictBool = Field(False, description="confirm a write to shared-project")
    cites: citing.Cites = None


class RecordProposeParams(RecordCreateParams):
    """``mnemon/records/propose``: :class:`RecordCreateParams` plus ``note?`` (sourceRefs default to the
    session)."""

    note: str | None = Field(None, description="a note for the reviewer")


class RecordEditParams(RecordChangeParams):
    """``mnemon/records/edit``: ``{workspace?, id, recordScope?, title?, content?, tags?, type?, confirm?}``."""

    title: str | None = Field(None, json_schema_extra=_TITLE)
    content: str | None = Field(None, json_schema_extra=_CONTENT)
    tags: list[str] | None = Field(None, description="replace the tags", json_schema_extra=_TAGS)
    type: str | None = Field(None, description="decision, preference, convention or fact")


class RecordsExportParams(WorkspaceParams):
    """``mnemon/records/export``: ``{workspace?, scopes?}``."""

    scopes: list[RecordScope] | None = Field(None, description="record scopes (default every scope)")


class RecordsImportParams(WorkspaceParams):
    """``mnemon/records/import``: ``{workspace?, bundle, recordScope? (project), confirm?}``."""

    bundle: Any = Field(description="a bundle {schemaVersion: 1, exportedAt, records} (records export)")
    record_scope: RecordScope = Field("project", alias="recordScope", description="record scope (default project)")
    confirm: StrictBool = Field(False, description="confirm a write to shared-project")


class RecordsCompactParams(WorkspaceParams):
    """``mnemon/records/compact``: ``{workspace?, recordScope? (project), confirm?}``."""

    record_scope: RecordScope = Field("project", alias="recordScope", description="record scope (default project)")
    confirm: StrictBool = Field(False, description="confirm a write to shared-project")


# ------------------------------------------------------------------ runs


def source(call: Call) -> Any:
    """The Records Source of the call's workspace and session (``call.user`` picks the user partition)."""
    opened = call.host.open_records(call.session)
    if call.user:
        opened.user_id = call.user
    return opened


def _list(call: Call, p: RecordsListParams) -> dict[str, Any]:
    """``records.list``: each record as a read shows it (:func:`~mnemon_ls.records.service.shown_json`: a credential
    another program stored redacted unless ``secrets: allow``; the files unchanged), with its citations."""
    from ..records.service import shown_json

    records = source(call)
    found = records.list(scopes=p.scopes, type=p.type, status=p.status, verification=p.verification, tag=p.tag,
                         text=p.text, proposals=p.proposals, limit=p.limit)
    views = citing.views_of(call, "records")
    listed = []
    scrub = records.shown_scrubber()  # what another program stored, redacted unless secrets: allow
    for index, record in enumerate(found):
        data = shown_json(record.to_json(), scrub, f"records[{index}]") | {"proposal": record.is_proposal}
        cites = views(f"{record.scope}/{record.id}")
        if cites:
            data["cites"] = cites
        staleness.review_mark(call, data, record.updated_at, source="records", key=f"{record.scope}/{record.id}")
        listed.append(data)
    return {"records": listed, "count": len(found)}


def _new(propose: bool):  # noqa: ANN202 - a run function
    def run(call: Call, p: Any) -> dict[str, Any]:
        records = source(call)
        citations = citing.resolve(call, p.cites)  # before the write: a bad citation writes nothing
        if propose:
            receipt = records.propose(p.record_scope, p.type, p.title, p.content, tags=p.tags,
                                      source_refs=p.source_refs, note=p.note, confirm=p.confirm)
        else:
            receipt = records.create(p.record_scope, p.type, p.title, p.content, tags=p.tags,
                                     source_refs=p.source_refs, confirm=p.confirm)
        data = receipt.to_dict()
        if citations:
            key = f"{data['scope']}/{data['id']}"
            data["cites"] = citing.store(call, "records", key, citations)
            superseded = staleness.supersede(call, "records", key, call.host.citations.of("records", key))
            if superseded:
                data["possiblySuperseded"] = superseded
        if propose:
            data["pending"] = records.pending_proposals()
        return data
    return run


def _change(method: str):  # noqa: ANN202 - a run function
    def run(call: Call, p: RecordChangeParams) -> dict[str, Any]:
        return getattr(source(call), method)(p.id, scope=p.record_scope, confirm=p.confirm).to_dict()
    return run


def _edit(call: Call, p: RecordEditParams) -> dict[str, Any]:
    data = source(call).edit(p.id, scope=p.record_scope, title=p.title, content=p.content, tags=p.tags, type=p.type,
                             confirm=p.confirm).to_dict()
    citations = call.host.citations.reanchor("records", f"{data['scope']}/{data['id']}")  # written: moved re-anchor
    if citations:
        data["cites"] = call.host.citations.views(citations)
    return data


def _get(call: Call, p: RecordIdParams) -> dict[str, Any]:
    """``records.get``: the record as a read shows it (:func:`~mnemon_ls.records.service.shown_json`)."""
    from ..records.service import shown_json

    records = source(call)
    record = records.get(p.id, p.record_scope)
    data: dict[str, Any] = {"record": shown_json(record.to_json(), records.shown_scrubber())}
    cites = citing.views_of(call, "records")(f"{record.scope}/{record.id}")
    if cites:
        data["cites"] = cites
    staleness.review_mark(call, data, record.updated_at, source="records", key=f"{record.scope}/{record.id}")
    return data


# ------------------------------------------------------------------ text


def _when(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).strftime("%Y-%m-%d %H:%M")


def _state(record: dict[str, Any]) -> str:
    return "proposal" if record.get("proposal") else record["governance"]["verification"]


def _line(record: dict[str, Any]) -> str:
    state = _state(record)
    if record["status"] != "active":
        state += f", {record['status']}"
    return f"{record['id']}  [{record['scope']} {record['type']}; {state}]  {record['title']}"


def _list_text(data: dict[str, Any], _call: Call, _p: Any) -> str:
    return "\n".join(_line(r) for r in data["records"]) or "no records"


def _details(data: dict[str, Any], _call: Call, _p: Any) -> str:
    record = data["record"]
    gov = record["governance"]
    refs = ", ".join(f"{r['kind']}:{r['id']}" for r in gov.get("sourceRefs", [])) or "none"
    verified = f" at {_when(gov['verifiedAt'])}" if gov.get("verifiedAt") else ""
    return "\n".join([
        record["id"], f"  title: {record['title']}", f"  scope: {record['scope']} ({record['scopeKey']})",
        f"  type: {record['type']}   status: {record['status']}   tags: {', '.join(record.get('tags', [])) or '-'}",
        f"  origin: {gov['origin']} ({record['provenance']['kind']})   verification: {gov['verification']}{verified}"
        f"   revision: {gov['revision']}   retention: {gov['retention']}",
        f"  sources: {refs}", f"  created {_when(record['createdAt'])}, updated {_when(record['updatedAt'])}",
        *(f"  cites {humantext.citation_text(c)}" for c in data.get("cites") or ()),
        *(["  review due (not updated, recalled or confirmed for reviewAfterDays)"] if data.get("review") == "due"
          else []),
        "", record["content"]])


def _receipt_text(data: dict[str, Any], _call: Call, _p: Any) -> str:
    return "\n".join([data["message"], *(f"cites {humantext.citation_text(c)}" for c in data.get("cites") or ()),
                      *humantext.superseding_lines(data)])


def _edit_text(data: dict[str, Any], _call: Call, _p: Any) -> str:
    return f"{data['message']} (revision {data['record']['governance']['revision']})"


def _import_text(data: dict[str, Any], _call: Call, _p: Any) -> str:
    return (f"imported {data['imported']} of {data['total']} into {data['scope']} ({data['skipped']} skipped as "
            f"already present, {data['renamed']} given new ids)")


def _compact_text(data: dict[str, Any], _call: Call, _p: Any) -> str:
    return (f"compacted {data['file']}: {data['linesBefore']} -> {data['linesAfter']} lines "
            f"(backup {data['file']}.bak)")


def _export(call: Call, p: RecordsExportParams) -> dict[str, Any]:
    """``records.export``: ``{bundle, redactedCount}`` (``redactedCount``: values that looked like credentials,
    replaced by their placeholders in the bundle; 0 under ``secrets: allow``,
    :meth:`~mnemon_ls.records.service.RecordsSource.export_counted`). Not ``redacted``: the command line prints the
    bundle on stdout, and a line a write's ``redacted`` adds there would break it; stderr says it instead."""
    bundle, redacted = source(call).export_counted(p.scopes)
    return {"bundle": bundle, "redactedCount": redacted}


def _export_warnings(data: dict[str, Any], _call: Call) -> list[str]:
    """The line on stderr saying how many values the export redacted (none when it redacted none)."""
    count = data["redactedCount"]
    return [f"{count} value{'s' if count != 1 else ''} that looked like credentials redacted in the bundle (the "
            "record files are unchanged; `--secrets allow` exports them as stored)"] if count else []


def _export_text(data: dict[str, Any], _call: Call, _p: Any) -> str:
    return json.dumps(data["bundle"], ensure_ascii=False, indent=2)


def _search_model_text(data: dict[str, Any]) -> str:
    """``mnemon_records_search``'s answer: one line per record with its state and a 300-character excerpt."""
    if not data["records"]:
        return "No records found."
    lines = []
    for r in data["records"]:
        excerpt = " ".join(r["content"].split())
        excerpt = excerpt if len(excerpt) <= 300 else excerpt[:299] + "…"
        lines.append(f"- [{r['scope']} {r['type']}; {_state(r)}] {r['title']} (id: {r['id']})\n  {excerpt}")
    return "\n".join(lines) + f"\n{len(data['records'])} record(s)"


def _propose_model_text(data: dict[str, Any]) -> str:
    return "\n".join([f"Proposal recorded: {data['record']['title']} (id: {data['id']}, scope {data['scope']}); it "
                      "waits for a person to verify or reject it.", *modeltext.cites_lines(data)])


def _source_ref(value: str) -> dict[str, str]:
    """``KIND:ID`` (``file:src/app.py``) as ``{kind, id}``; raises :class:`InvalidInput` (``sourceRefs``)."""
    kind, sep, ident = value.partition(":")
    if not sep or not kind.strip() or not ident.strip():
        raise InvalidInput("sourceRefs", f"must be KIND:ID, e.g. file:src/app.py (got {echo_repr(value)})")
    return {"kind": kind.strip(), "id": ident.strip()}


def _bundle(name: str) -> Any:
    """The JSON bundle in file ``name`` (``-``: standard input); raises :class:`InvalidInput` (``bundle``, which the
    command line names ``FILE``: missing, a directory, a name too long for the file system, not UTF-8, not JSON), the
    name repeated escaped and clipped (:func:`~mnemon_ls.errors.echo_value`)."""
    if name == "-":
        raw = sys.stdin.read()
    else:
        shown = echo_value(name)
        try:
            raw = Path(name).read_text(encoding="utf-8")
        except FileNotFoundError:
            raise InvalidInput("bundle", f"{shown} does not exist") from None
        except IsADirectoryError:
            raise InvalidInput("bundle", f"{shown} is a directory") from None
        except UnicodeDecodeError:
            raise InvalidInput("bundle", f"{shown} is not UTF-8") from None
        except OSError as exc:
            raise path_error(exc, name, "bundle") from None
    try:
        return json_loads(raw)
    except JsonUnreadable as exc:
        raise InvalidInput("bundle", f"is not JSON ({exc})") from None


# ------------------------------------------------------------------ the command line's arguments

_SCOPE_HELP = "record scope: session, project, shared-project or user"
_EXTRA = {"--session-id": {"metavar": "ID", "dest": "session_id", "help": "the session of the session scope"},
          "--user-id": {"metavar": "ID", "dest": "user_id",
                        "help": "partition of the user scope (default: $DSH_USER_ID or the login name)"}}
_ID = CliArg("id")
_ONE_SCOPE = CliArg("record_scope", flag="--record-scope", help=_SCOPE_HELP)
_SCOPES = CliArg("scopes", flag="--record-scope", repeat=True, help=_SCOPE_HELP + " (repeatable)")
_CONFIRM = CliArg("confirm", flag="--confirm", kind="flag", help="confirm a write to shared-project")
_NEW_ARGS = (CliArg("record_scope", flag="--record-scope", help=_SCOPE_HELP + " (default project)"),
             CliArg("type", flag="--type", choices=TYPES), CliArg("title", flag="--title", required=True),
             CliArg("content", flag="--content", required=True, stdin=True, help="text ('-' reads standard input)"),
             CliArg("tags", flag="--tag", repeat=True, metavar="TAG", help="a tag (repeatable)"),
             CliArg("source_refs", flag="--source-ref", repeat=True, metavar="KIND:ID", convert=_source_ref,
                    help="what it comes from, e.g. file:src/app.py (repeatable)"),
             citing.CITE_ARG, _CONFIRM)


def _command(action: str, help_text: str, args: tuple[CliArg, ...], text: Any, **options: Any) -> CliCommand:
    return CliCommand(("records", action), help_text, args, text=text, extra={**_EXTRA, **options.pop("extra", {})},
                      **options)


def _changing(action: str, method: str, summary: str, help_text: str) -> Operation:
    return Operation(
        f"records.{action}", RecordChangeParams, _change(method), summary, effect="write",
        lsp=LspMethod(f"mnemon/records/{action}"),
        cli=_command(action, help_text, (_ID, _ONE_SCOPE, _CONFIRM), _receipt_text))


OPERATIONS = (
    Operation(
        "records.list", RecordsListParams, _list, "List records, newest first (every status but forgotten unless "
        "status is given).", text=_search_model_text,
        lsp=LspMethod("mnemon/records/list"),
        mcp=McpTool(
            "mnemon_records_search",
            "Search this workspace's memory records (decisions, conventions, preferences and facts with their review "
            "state): verified ones are confirmed by a person, proposals are not yet. Use it before proposing a "
            "record (to avoid duplicates) or when a past decision matters to the task.",
            fields=("text", "scopes", "type", "verification", "proposals", "limit", "workspace"),
            rename={"text": "query", "scopes": "record_scope", "proposals": "proposals_only"},
            narrow={"limit": Annotated[int, Field(ge=1, le=50)], "scopes": Annotated[RecordScope | None, Field(
                description="one scope; default every scope of this workspace")],
                "type": _TYPE | None, "verification": _VERIFICATION | None},
            defaults={"limit": 10}, single=("scopes",)),
        cli=_command("list", "list records (every status but forgotten unless --status)", (
            _SCOPES, CliArg("type", flag="--type", choices=TYPES), CliArg("status", flag="--status", choices=STATUSES),
            CliArg("verification", flag="--verification", choices=VERIFICATIONS), CliArg("tag", flag="--tag"),
            CliArg("text", flag="--text", help="every word must occur in the title, content or tags "
                                               "(case-insensitive)"),
            CliArg("proposals", flag="--proposals", kind="flag"), CliArg("limit", flag="--limit")), _list_text)),
    Operation(
        "records.get", RecordIdParams, _get,
        "Read one record (forgotten ones too).",
        lsp=LspMethod("mnemon/records/get"),
        cli=_command("show", "print one record", (_ID, _ONE_SCOPE), _details)),
    Operation(
        "records.create", RecordCreateParams, _new(False), "Create a record (a person's: user-authored, unverified).",
        effect="write",
        lsp=LspMethod("mnemon/records/create"),
        cli=_command("create", "create a record (yours: user-authored)", _NEW_ARGS, _receipt_text)),
    Operation(
        "records.propose", RecordProposeParams, _new(True), "Propose a record as an assistant (it waits for a "
        "person to verify or reject it).", effect="write", text=_propose_model_text,
        lsp=LspMethod("mnemon/records/propose"),
        mcp=McpTool(
            "mnemon_records_propose",
            "Propose a workspace memory record: it is stored as an unverified proposal that a person verifies or "
            "rejects in the editor or with `mnemon-ls records`; it is never shown as fact before that. Use it for a "
            "durable decision, convention or preference you inferred; never for secrets or one-off task state. "
            "Shared-project records cannot be proposed.",
            fields=("title", "content", "type", "record_scope", "tags", "source_refs", "note", "cites", "workspace"),
            narrow={"type": _TYPE, "record_scope": Annotated[Literal["session", "project", "user"], Field(
                description="project (this workspace, default), user (follows the person) or session")],
                "source_refs": Annotated[list[dict[str, str]], Field(
                    description="what it comes from: [{kind: file|url|issue|session, id}]; default this session")]}),
        cli=_command("propose", "propose a record as an assistant (waits for verify/reject)",
                     _NEW_ARGS + (CliArg("note", flag="--note"),), _receipt_text)),
    _changing("verify", "verify", "A person confirms a record.", "a person confirms a record"),
    _changing("reject", "reject", "A person rejects a record.", "a person rejects a record"),
    _changing("stale", "mark_stale", "Mark a record stale.", "mark a record stale"),
    _changing("archive", "archive", "Archive a record.", "archive a record"),
    _changing("forget", "forget", "Forget a record (kept in the file, hidden everywhere).",
              "forget a record (kept in the file, hidden everywhere)"),
    Operation(
        "records.edit", RecordEditParams, _edit, "Change a record (same id, revision + 1; a changed content is "
        "unverified again).", effect="write",
        lsp=LspMethod("mnemon/records/edit"),
        cli=_command("edit", "change a record (same id, revision + 1)", (
            _ID, _ONE_SCOPE, CliArg("title", flag="--title"),
            CliArg("content", flag="--content", stdin=True, help="text ('-' reads standard input)"),
            CliArg("type", flag="--type", choices=TYPES),
            CliArg("tags", flag="--tag", repeat=True, metavar="TAG", help="replace the tags (repeatable)"),
            _CONFIRM), _edit_text)),
    Operation(
        "records.export", RecordsExportParams, _export,
        "A bundle {schemaVersion: 1, exportedAt, records} of every record but forgotten ones; values that look like "
        "credentials are redacted (redactedCount: how many) unless secrets is allow.",
        lsp=LspMethod("mnemon/records/export"),
        cli=_command("export", "print a bundle {schemaVersion: 1, exportedAt, records} (no forgotten records)",
                     (_SCOPES,), _export_text, warnings=_export_warnings,
                     to_file=lambda d, file: f"exported {len(d['bundle']['records'])} records to {file}")),
    Operation(
        "records.import", RecordsImportParams,
        lambda c, p: source(c).import_bundle(p.bundle, scope=p.record_scope, confirm=p.confirm),
        "Restore a bundle as unverified review items.", effect="write",
        lsp=LspMethod("mnemon/records/import"),
        cli=_command("import", "restore a bundle as unverified review items", (
            CliArg("bundle", dest="file", metavar="FILE", convert=_bundle,
                   help="bundle file ('-' reads standard input)"),
            CliArg("record_scope", flag="--record-scope", help=_SCOPE_HELP + " (default project)"), _CONFIRM),
            _import_text)),
    Operation(
        "records.compact", RecordsCompactParams, lambda c, p: source(c).compact(p.record_scope, confirm=p.confirm),
        "Rewrite a scope's file to one line per record (<file>.bak first).", effect="write",
        lsp=LspMethod("mnemon/records/compact"),
        cli=_command("compact", "rewrite a scope's file to one line per record (<file>.bak first)", (
            CliArg("record_scope", flag="--record-scope", help=_SCOPE_HELP + " (default project)"), _CONFIRM),
            _compact_text)),
)
