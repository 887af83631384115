"""``mnemon-ls records ...``: the command line of the Records Source (registered by ``mnemon_ls/cli.py``).

Actions: ``list``, ``show``, ``create``, ``propose``, ``verify``, ``reject``, ``stale``, ``edit``,
``archive``, ``forget``, ``export``, ``import``, ``compact``. The record scope is ``--record-scope``
(``session|project|shared-project|user``; ``--scope`` is the storage scope of every command). The
session scope needs ``--session-id``. Writes to ``shared-project`` need ``--confirm``. Text output by
default, ``--json`` for scripts; errors and exit codes as every other command.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from ..errors import InvalidInput
from .model import SCOPES, STATUSES, TYPES, VERIFICATIONS, MemoryRecord

ACTIONS = ("list", "show", "create", "propose", "verify", "reject", "stale", "edit", "archive", "forget",
           "export", "import", "compact")


def add_parser(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add ``records`` and its actions to the ``commands`` subparsers (``common``: the shared flags)."""
    records = commands.add_parser("records", help="workspace memory records (decisions, conventions, preferences and facts with a review state): proposals, review, export/import")
    actions = records.add_subparsers(dest="action", metavar="ACTION", required=True)
    scope_help = "record scope: session, project, shared-project or user"

    def sub(name: str, help_text: str) -> argparse.ArgumentParser:
        parser = actions.add_parser(name, parents=[common], help=help_text)
        parser.add_argument("--session-id", metavar="ID", help="the session of the session scope")
        parser.add_argument("--user-id", metavar="ID", help="partition of the user scope (default: $DSH_USER_ID or the login name)")
        return parser

    listing = sub("list", "list records (every status but forgotten unless --status)")
    listing.add_argument("--record-scope", action="append", choices=SCOPES, dest="record_scopes", help=scope_help + " (repeatable)")
    listing.add_argument("--type", choices=TYPES)
    listing.add_argument("--status", choices=STATUSES)
    listing.add_argument("--verification", choices=VERIFICATIONS)
    listing.add_argument("--tag")
    listing.add_argument("--text", help="every word must occur in the title, content or tags (case-insensitive)")
    listing.add_argument("--proposals", action="store_true", help="only assistants' proposals waiting for review")
    listing.add_argument("--limit", type=int)
    show = sub("show", "print one record")
    show.add_argument("id")
    show.add_argument("--record-scope", choices=SCOPES, help=scope_help)
    for name, text in (("create", "create a record (yours: user-authored)"),
                       ("propose", "propose a record as an assistant (waits for verify/reject)")):
        p = sub(name, text)
        p.add_argument("--record-scope", choices=SCOPES, default="project", help=scope_help + " (default project)")
        p.add_argument("--type", choices=TYPES, default="fact")
        p.add_argument("--title", required=True)
        p.add_argument("--content", required=True, help="text ('-' reads standard input)")
        p.add_argument("--tag", action="append", dest="tags", default=[], metavar="TAG")
        p.add_argument("--source-ref", action="append", dest="source_refs", default=[], metavar="KIND:ID",
                       help="what it comes from, e.g. file:src/app.py (repeatable)")
        p.add_argument("--confirm", action="store_true", help="confirm a write to shared-project")
        if name == "propose":
            p.add_argument("--note")
    for name, text in (("verify", "a person confirms a record"), ("reject", "a person rejects a record"),
                       ("stale", "mark a record stale"), ("archive", "archive a record"),
                       ("forget", "forget a record (kept in the file, hidden everywhere)")):
        p = sub(name, text)
        p.add_argument("id")
        p.add_argument("--record-scope", choices=SCOPES, help=scope_help)
        p.add_argument("--confirm", action="store_true", help="confirm a write to shared-project")
    edit = sub("edit", "change a record (same id, revision + 1)")
    edit.add_argument("id")
    edit.add_argument("--record-scope", choices=SCOPES, help=scope_help)
    edit.add_argument("--title")
    edit.add_argument("--content", help="text ('-' reads standard input)")
    edit.add_argument("--type", choices=TYPES)
    edit.add_argument("--tag", action="append", dest="tags", metavar="TAG", help="replace the tags (repeatable)")
    edit.add_argument("--confirm", action="store_true", help="confirm a write to shared-project")
    export = sub("export", "print a bundle {schemaVersion: 1, exportedAt, records} (no forgotten records)")
    export.add_argument("--record-scope", action="append", choices=SCOPES, dest="record_scopes", help=scope_help + " (repeatable)")
    export.add_argument("--output", metavar="FILE", help="write the bundle to FILE instead of standard output")
    imp = sub("import", "restore a bundle as unverified review items")
    imp.add_argument("file", help="bundle file ('-' reads standard input)")
    imp.add_argument("--record-scope", choices=SCOPES, default="project", help=scope_help + " (default project)")
    imp.add_argument("--confirm", action="store_true", help="confirm a write to shared-project")
    compact = sub("compact", "rewrite a scope's file to one line per record (<file>.bak first)")
    compact.add_argument("--record-scope", choices=SCOPES, default="project", help=scope_help + " (default project)")
    compact.add_argument("--confirm", action="store_true", help="confirm a write to shared-project")


def run(args: argparse.Namespace, host_factory: Callable[[argparse.Namespace], Any],
        emit: Callable[[argparse.Namespace, Any, str], None], read_content: Callable[[str], str]) -> int:
    """Run one ``records`` action; the helpers are the CLI's own (host, output, '-' for stdin)."""
    host = host_factory(args)
    source = host.open_records(args.session_id)
    if args.user_id:
        source.user_id = args.user_id
    action = args.action
    if action == "list":
        records = source.list(scopes=args.record_scopes, type=args.type, status=args.status,
                              verification=args.verification, tag=args.tag, text=args.text,
                              proposals=args.proposals, limit=args.limit)
        lines = [_line(r) for r in records] or ["no records"]
        emit(args, {"records": [r.to_json() for r in records], "count": len(records)}, "\n".join(lines))
        return 0
    if action == "show":
        record = source.get(args.id, args.record_scope)
        emit(args, record.to_json(), _details(record))
        return 0
    if action in ("create", "propose"):
        refs = [_source_ref(value, i) for i, value in enumerate(args.source_refs)]
        content = read_content(args.content)
        if action == "create":
            receipt = source.create(args.record_scope, args.type, args.title, content, tags=args.tags,
                                    source_refs=refs, confirm=args.confirm)
        else:
            receipt = source.propose(args.record_scope, args.type, args.title, content, tags=args.tags,
                                     source_refs=refs, note=args.note, confirm=args.confirm)
        emit(args, receipt.to_dict(), f"{receipt.message}")
        return 0
    if action in ("verify", "reject", "stale", "archive", "forget"):
        method = {"verify": source.verify, "reject": source.reject, "stale": source.mark_stale,
                  "archive": source.archive, "forget": source.forget}[action]
        receipt = method(args.id, scope=args.record_scope, confirm=args.confirm)
        emit(args, receipt.to_dict(), receipt.message)
        return 0
    if action == "edit":
        receipt = source.edit(args.id, scope=args.record_scope, title=args.title,
                              content=read_content(args.content) if args.content is not None else None,
                              tags=args.tags, type=args.type, confirm=args.confirm)
        emit(args, receipt.to_dict(), f"{receipt.message} (revision {receipt.record.governance.revision})")
        return 0
    if action == "export":
        bundle = source.export(args.record_scopes)
        text = json.dumps(bundle, ensure_ascii=False, indent=2) + "\n"
        if args.output:
            Path(args.output).write_text(text, encoding="utf-8")
            emit(args, {"file": args.output, "count": len(bundle["records"])},
                 f"exported {len(bundle['records'])} records to {args.output}")
        else:
            sys.stdout.write(text)
        return 0
    if action == "import":
        raw = sys.stdin.read() if args.file == "-" else _read_file(args.file)
        try:
            bundle = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise InvalidInput("file", f"is not JSON ({exc.msg} at line {exc.lineno})") from None
        receipt = source.import_bundle(bundle, scope=args.record_scope, confirm=args.confirm)
        emit(args, receipt, f"imported {receipt['imported']} of {receipt['total']} into {receipt['scope']} "
                            f"({receipt['skipped']} skipped as already present, {receipt['renamed']} given new ids)")
        return 0
    if action == "compact":
        result = source.compact(args.record_scope, confirm=args.confirm)
        emit(args, result, f"compacted {result['file']}: {result['linesBefore']} -> {result['linesAfter']} lines "
                           f"(backup {result['file']}.bak)")
        return 0
    raise InvalidInput("action", f"must be one of {', '.join(ACTIONS)}")  # pragma: no cover - argparse checks


def _read_file(name: str) -> str:
    try:
        return Path(name).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InvalidInput("file", f"{name} does not exist") from None
    except UnicodeDecodeError:
        raise InvalidInput("file", f"{name} is not UTF-8") from None


def _source_ref(value: str, index: int) -> dict[str, str]:
    kind, sep, ident = value.partition(":")
    if not sep or not kind.strip() or not ident.strip():
        raise InvalidInput(f"sourceRefs[{index}]", f"must be KIND:ID, e.g. file:src/app.py (got {value!r})")
    return {"kind": kind.strip(), "id": ident.strip()}


def _when(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).strftime("%Y-%m-%d %H:%M")


def _line(record: MemoryRecord) -> str:
    state = "proposal" if record.is_proposal else record.governance.verification
    if record.status != "active":
        state += f", {record.status}"
    return f"{record.id}  [{record.scope} {record.type}; {state}]  {record.title}"


def _details(record: MemoryRecord) -> str:
    gov = record.governance
    refs = ", ".join(f"{r.kind}:{r.id}" for r in gov.source_refs) or "none"
    lines = [record.id, f"  title: {record.title}", f"  scope: {record.scope} ({record.scope_key})",
             f"  type: {record.type}   status: {record.status}   tags: {', '.join(record.tags) or '-'}",
             f"  origin: {gov.origin} ({record.provenance.kind})   verification: {gov.verification}"
             + (f" at {_when(gov.verified_at)}" if gov.verified_at else "")
             + f"   revision: {gov.revision}   retention: {gov.retention}",
             f"  sources: {refs}", f"  created {_when(record.created_at)}, updated {_when(record.updated_at)}",
             "", record.content]
    return "\n".join(lines)
