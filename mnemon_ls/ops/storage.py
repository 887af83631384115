"""Operations on a whole storage root, across its Sources: ``storage.migrate`` (``mnemon-ls migrate``: copy
another root's memory into this one, verified, :mod:`mnemon_ls.migrate`) and ``storage.redact`` (``mnemon-ls
redact [--apply]``: the stored values that look like credentials, and their replacement,
:meth:`mnemon_ls.host.WorkspaceHost.stored_secrets`). ``storage.doctor`` is :mod:`.doctor`.

Only the command line exposes them. ``migrate`` writes unless ``--dry-run``; ``redact`` writes with
``--apply``; both name values by location and kind, never the value.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, StrictBool

from ..errors import EXIT_FAILURE, EXIT_OK
from .base import Call, CliArg, CliCommand, Operation, WorkspaceParams

# ------------------------------------------------------------------ migrate


class MigrateParams(WorkspaceParams):
    """``{workspace?, from, dryRun?}``."""

    source: str = Field(alias="from", description="global ($MNEMON_DATA_DIR or ~/.mnemon), workspace "
                                                  "(<workspace>/.mnemon) or a root's absolute path; it is read, "
                                                  "never changed")
    dry_run: StrictBool = Field(False, alias="dryRun", description="show what would be copied; write nothing")


def _migrate(call: Call, p: MigrateParams) -> dict[str, Any]:
    """The receipt of :func:`mnemon_ls.migrate.migrate` from the root ``p.source`` names
    (:func:`~mnemon_ls.migrate.resolve_source`: ``invalid-input`` naming ``from``, ``not-found``)."""
    from ..migrate import migrate, resolve_source

    return migrate(call.host, resolve_source(call.host, p.source), dry_run=p.dry_run)


def migrate_text(receipt: dict[str, Any], _call: Call, p: MigrateParams) -> str:
    """The receipt as a person reads it: what was (or would be) copied and skipped per file, documents and
    space, what was not copied and why, then whether it was verified."""
    from ..runtime.model import PROJECTION_FILES, TARGETS

    verb = "would copy" if p.dry_run else "copied"
    lines = [f"{'Dry run: nothing was written. ' if p.dry_run else ''}From {receipt['from']} into {receipt['to']}:"]
    for target in TARGETS:
        row = receipt["runtime"][target]
        line = f"  {PROJECTION_FILES[target]}: {verb} {row['added']}, skipped {row['skipped']} already here"
        lines.append(line + (f" ({row['note']})" if row.get("note") else ""))
    docs = receipt["documents"]
    lines.append(f"  documents: {verb} {docs['added']} ({docs['archived']} archived), skipped {docs['skipped']} "
                 "already here")
    for dropped in docs["sourcePathsNotCopied"]:
        lines.append(f"    source path {dropped['path']!r} of {dropped['title']!r} not carried over: {dropped['rule']}")
    for row in receipt["spaces"]:
        into = row["intoId"] or "a new space"
        if p.dry_run:
            lines.append(f"  space {row['name']} ({row['fromId']}): {row['items']} item(s) offered to {into}")
        else:
            lines.append(f"  space {row['name']} ({row['fromId']}) -> {into}{' (created)' if row['created'] else ''}: "
                         f"added {row['added']}, skipped {row['skipped']} already here, {row['edgesCopied']} edge(s)")
    for row in receipt["spacesNotCopied"]:
        lines.append(f"  space {row['name']} ({row['id']}) not copied: {row['reason']}")
    if receipt["status"] == "nothing-to-copy":
        lines.append("Nothing to copy: every entry, document and item is already here.")
    elif receipt["verified"]:
        lines.append("Verified: every copied value reads back as in the source. The source was not changed.")
    return "\n".join(lines)


# ------------------------------------------------------------------ redact


class RedactParams(WorkspaceParams):
    """``{workspace?, apply?}``."""

    apply: StrictBool = Field(False, description="rewrite them durably with [redacted:<kind>] placeholders "
                                                 "(default: dry run)")


def _redact(call: Call, p: RedactParams) -> dict[str, Any]:
    """``{root, findings: [{location, kind, position}], applied: null | {runtime, documents, spaces, records}}``
    (:meth:`~mnemon_ls.host.WorkspaceHost.stored_secrets`); with ``apply`` the findings are what is left."""
    return {"root": str(call.host.root), **call.host.stored_secrets(apply=p.apply)}


def redact_text(data: dict[str, Any], _call: Call, _p: Any) -> str:
    """One line per value found (location and kind, never the value), then what ``--apply`` replaced, or the
    count and the command that replaces them."""
    findings = data["findings"]
    lines = [f"{f['location']}: {f['kind']} at character {f['position']}" for f in findings]
    applied = data["applied"]
    if applied is not None:
        runtime = sum(r["entries"] for r in applied["runtime"])
        documents = (applied["documents"] or {}).get("documents", 0)
        spaces = applied["spaces"] or {}
        records = applied["records"]
        copies = [f for r in applied["runtime"] for f in r["files"]] + (applied["documents"] or {}).get("files", []) \
            + spaces.get("files", []) + records["files"]
        lines.append(f"redacted: {runtime} runtime entries, {documents} documents, {spaces.get('items', 0)} space "
                     f"rows, {spaces.get('spaces', 0)} space names/descriptions, {records['records']} workspace "
                     f"memory record lines, {len(copies)} saved copies")
        lines.extend(f"{s['file']}: not rewritten: {s['reason']}" for s in records["skipped"])
        lines.append("nothing left to redact" if not findings else f"{len(findings)} value(s) could not be replaced "
                     "(remove them by hand)")
    else:
        lines.append(f"{len(findings)} stored value(s) look like credentials" + ("; run `mnemon-ls redact --apply`"
                                                                               if findings else ""))
    return "\n".join(lines)


OPERATIONS = (
    Operation(
        "storage.redact", RedactParams, _redact,
        "List stored values that look like credentials (location and kind, never the value) under the root and "
        "in the workspace memory record files; apply replaces them with [redacted:<kind>] placeholders.",
        effect="write",
        cli=CliCommand(("redact",), "list stored values that look like credentials; --apply replaces them",
                       (CliArg("apply", flag="--apply", kind="flag"),), text=redact_text,
                       exit_code=lambda data: EXIT_FAILURE if data["findings"] else EXIT_OK)),  # values are left
    Operation(
        "storage.migrate", MigrateParams, _migrate,
        "Copy the memory of another root (e.g. the old global default) into this one, verified; the source is "
        "never changed.", effect="write",
        cli=CliCommand(("migrate",), "copy the memory of another root (e.g. the old global default) into this one",
                       (CliArg("source", flag="--from", dest="source", required=True, metavar="global|workspace|DIR"),
                        CliArg("dry_run", flag="--dry-run", kind="flag")), text=migrate_text)),
)
