"""Importing memory other assistants keep (issue 28), and the block written back into AGENTS.md/CLAUDE.md.

- ``imports.run`` (``mnemon-ls import SOURCE [--dry-run] [--from PATH] [--space ID]``): the plan of
  :mod:`mnemon_ls.imports.plan` (the dry run says per item where it would go and why, and keeps the files'
  digests), or the import itself, refused with nothing written when a file changed since the dry run;
- ``imports.propose`` (the MCP tool ``mnemon_import_propose``): an assistant files the plan's items as
  workspace record proposals (origin model-suggested, a ``file`` source reference, tags ``import``,
  ``import-<source>``, ``to-<destination>``) for a person to review; it writes no memory;
- ``imports.scan`` / ``imports.apply`` (the editors' "Import Memory from Other Assistants": ``mnemon/import/scan``,
  ``mnemon/import/apply``): :mod:`mnemon_ls.imports.scan`, every source at once, each item with an id, where it
  would go and why; then the items a person picked, refused with nothing written when a file changed since the
  scan (``imports.run`` imports one source whole, so it cannot take a person's picks);
- ``imports.export`` (``mnemon-ls export agents-md|claude-md [--remove]``): :mod:`mnemon_ls.imports.export`,
  opt-in only (it writes into the repository).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, StrictBool

from ..errors import EXIT_OK, EXIT_REJECTED, echo_path
from ..imports.places import places_help
from .base import Call, CliArg, CliCommand, LspMethod, McpTool, Operation, WorkspaceParams

Source = Literal["claude-code", "agents-md", "cursor", "copilot", "cline", "hermes"]  # imports.places.SOURCE_NAMES
_SOURCE_HELP = places_help()  # the places the formats read (imports.places.PLACES), as the docs show them
_OUTSIDE_HELP = ("read the files the source's files import (Claude Code's @path) outside the repository and your "
                 "Claude home (~/.claude) too; without it they are listed as needing approval and not read. "
                 "Credential locations (~/.ssh, ~/.aws, ~/.gnupg, /etc/shadow, ...) are never read")
#: Most proposals one call files (the rest are counted; call again after the review).
MAX_PROPOSALS = 50


class ImportParams(WorkspaceParams):
    """``{workspace?, source, from?, dryRun?, spaceId?, allowOutside?}``."""

    source: Source = Field(description=_SOURCE_HELP)
    from_path: str | None = Field(None, alias="from", description="a file or directory to read instead of the "
                                                                  "default places (read, never changed)")
    dry_run: StrictBool = Field(False, alias="dryRun", description="say per item where it would go and why; "
                                                                   "write only the plan's file digests")
    space_id: str | None = Field(None, alias="spaceId", description="the Memory Space taking what does not fit "
                                                                    "runtime memory (default: the one active space)")
    allow_outside: StrictBool = Field(False, alias="allowOutside", description=_OUTSIDE_HELP)


class ImportProposeParams(WorkspaceParams):
    """``{workspace?, source, from?, allowOutside?}``."""

    source: Source = Field(description=_SOURCE_HELP)
    from_path: str | None = Field(None, alias="from", description="a file or directory to read instead of the "
                                                                  "default places")
    allow_outside: StrictBool = Field(False, alias="allowOutside", description=_OUTSIDE_HELP)


class ImportScanParams(WorkspaceParams):
    """``{workspace?, spaceId?, allowOutside?}``."""

    space_id: str | None = Field(None, alias="spaceId", description="the Memory Space taking what does not fit "
                                                                    "runtime memory (default: the one active space)")
    allow_outside: StrictBool = Field(False, alias="allowOutside", description=_OUTSIDE_HELP)


#: Most items one apply takes (a scan of six sources rarely finds a few hundred).
MAX_PICKED = 10_000


class ImportApplyParams(WorkspaceParams):
    """``{workspace?, ids, fingerprint, spaceId?, allowOutside?}``."""

    ids: list[str] = Field(min_length=1, max_length=MAX_PICKED,
                           description="the ids of the items a person picked, from mnemon/import/scan")
    fingerprint: str = Field(pattern=r"^[0-9a-f]{64}$", description="the scan's fingerprint: the import is refused "
                                                                    "when a file changed since that scan")
    space_id: str | None = Field(None, alias="spaceId", description="the Memory Space taking what does not fit "
                                                                    "runtime memory (default: the one active space)")
    allow_outside: StrictBool = Field(False, alias="allowOutside", description=_OUTSIDE_HELP + "; pass what the "
                                      "scan was given")


class ExportParams(WorkspaceParams):
    """``{workspace?, target, remove?}``."""

    target: Literal["agents-md", "claude-md"] = Field(description="agents-md (AGENTS.md) or claude-md (CLAUDE.md)")
    remove: StrictBool = Field(False, description="take the block out instead of writing it")


def _run(call: Call, p: ImportParams) -> dict[str, Any]:
    from ..imports import plan

    if p.dry_run:
        data = plan.build_plan(call.host, p.source, p.from_path, space_id=p.space_id, allow_outside=p.allow_outside)
        plan.save_plan(call.host, data)
        return {**data, "dryRun": True, "status": "planned"}
    return {**plan.apply(call.host, p.source, p.from_path, space_id=p.space_id, allow_outside=p.allow_outside),
            "dryRun": False}


_PLACES = {"user": "USER.md", "memory": "MEMORY.md", "document": "a Document", "space": "the Memory Space"}


_SKIPPED = {"already-imported": "imported before", "rejected-in-review": "a person rejected its import proposal",
            "exact-duplicate": "an exact duplicate of {of}", "near-duplicate": "a near duplicate of {of}",
            "temporary-progress": "temporary progress ({of}); memory keeps durable facts"}


def _preview(text: str) -> str:
    """``text`` on one line, cut to 72 characters (an ellipsis ends a cut one)."""
    line = text.replace("\n", " ")
    return line if len(line) <= 72 else line[:71] + "…"


def import_text(data: dict[str, Any], _call: Call, _p: Any) -> str:
    """Per item where it goes (or went) and why, what was skipped and why, refused files, then the counts."""
    c = data["counts"]
    dry = data["dryRun"]
    lines = [f"{'Dry run: nothing was imported. ' if dry else ''}Import from {data['source']}: "
             f"{len(data['files'])} file(s) read, {len(data['refused'])} refused."]
    for f in data["refused"]:
        lines.append(f"  refused {echo_path(f['path'])}: {f['reason']}")
    lines += outside_lines(data, "  ")
    if not data["files"] and not data["refused"]:
        from ..imports import sources

        lines.append("  found no file to read: looked for " + ", ".join(sources.get(data["source"]).defaults))
    for i, item in enumerate(data["items"], 1):
        preview = _preview(item["text"])
        red = f" [redacted: {', '.join(item['redacted'])}]" if item["redacted"] else ""
        refusal = item.get("refusal")  # the dry run's prediction, or what the import's write met
        went = ("would be refused" if dry else "refused") if refusal else "would go" if dry else "went"
        lines.append(f"  {i}. {went} to {_PLACES[item['destination']]}: {preview!r}{red}")
        lines.append(f"     from {echo_path(item['path'])} ({item['title']}): {item['reason']}")
        if refusal:
            before = f" (refused before, {item['refusedBefore']})" if item.get("refusedBefore") else ""
            lines.append(f"     refused{before}: {refusal['field']}: {refusal['rule']}")
    for s in data["skipped"]:
        lines.append(f"  skipped: {_preview(s['text'])!r}")
        lines.append(f"     from {echo_path(s['path'])} ({s['title']}): {_SKIPPED[s['why']].format(of=s['of'])}")
    lines.append(f"{'Would write' if dry else 'Wrote'}: {c['user']} to USER.md, {c['memory']} to MEMORY.md, "
                 f"{c['document']} Document(s), {c['space']} to the Memory Space; skipped {c['alreadyImported']} "
                 f"already imported, {c['rejected']} rejected in review, {c['exactDuplicates']} exact and "
                 f"{c['nearDuplicates']} near duplicate(s)"
                 + (f", {c['temporaryProgress']} of temporary progress" if c.get("temporaryProgress") else "")
                 + (f"; {c['refusedItems']} item(s) {'would be ' if dry else ''}refused."
                    if c.get("refusedItems") else "."))
    if data.get("status") in ("partly-imported", "refused"):
        lines.append(f"{'Partly imported' if data['status'] == 'partly-imported' else 'Nothing imported'}: "
                     f"{c['refusedItems']} item(s) refused (named above, with the rule), recorded as refused; "
                     "the import tries them again when run again.")
    if c["space"] and data.get("spaceProblem"):
        lines.append(f"Cannot import yet: {data['spaceProblem']}.")
    if dry and data["items"]:
        lines.append("Run `mnemon-ls import "
                     f"{data['source']}{' --from ' + echo_path(data['from']) if data['from'] else ''}` to import; it "
                     "is refused if a file changes before then.")
    return "\n".join(lines)


def outside_lines(data: dict[str, Any], indent: str) -> list[str]:
    """The lines naming each file imported more than once (read once, every reference listed) and each file that
    needs approval (outside the repository and the Claude home: not read), with how to allow them."""
    lines = []
    for f in data.get("files", []):
        refs = f.get("importedBy") or []
        if len(refs) > 1:
            lines.append(f"{indent}read once: {echo_path(f['path'])}, imported {len(refs)} times: {'; '.join(refs)}")
    waiting = data.get("needsApproval") or []
    for f in waiting:
        lines.append(f"{indent}needs approval {echo_path(f['path'])} (imported by {'; '.join(f['importedBy'])}): "
                     f"{f['reason']}")
    if waiting:
        lines.append(f"{indent}{len(waiting)} file(s) outside the repository were not read: review them, then run "
                     "again with --allow-outside (allowOutside) to read them.")
    return lines


def _propose(call: Call, p: ImportProposeParams) -> dict[str, Any]:
    """File the plan's items as record proposals (module doc); an item already proposed (same content, any
    review state) is not proposed again."""
    from ..imports import plan
    from ..records.model import content_hash
    from .records import source

    data = plan.build_plan(call.host, p.source, p.from_path, allow_outside=p.allow_outside)
    records = source(call)
    known = {r.content_hash for r in records.read("project").values() if "import" in r.tags}
    proposed, already = [], 0
    kinds = {"user": "preference", "memory": "convention", "document": "fact", "space": "fact"}
    for item in data["items"]:
        if content_hash(item["text"]) in known:
            already += 1
            continue
        if len(proposed) >= MAX_PROPOSALS:
            continue
        title = item["name"][:200] or item["path"].rsplit("/", 1)[-1]
        receipt = records.propose("project", kinds[item["destination"]], title, item["text"][:64 * 1024],
                                  tags=["import", f"import-{p.source}", f"to-{item['destination']}"],
                                  source_refs=[{"kind": "file", "id": item["path"][:1024]}],
                                  note=(f"import {p.source}: to {_PLACES[item['destination']]} "
                                        f"({item['reason']})")[:1000])
        proposed.append({"id": receipt.record.id, "title": title, "destination": item["destination"],
                         "path": item["path"]})
    left = len(data["items"]) - len(proposed) - already
    return {"source": p.source, "proposed": proposed, "alreadyProposed": already, "notYetProposed": left,
            "skipped": data["counts"], "refused": data["refused"], "pending": records.pending_proposals(),
            "filesRead": len(data["files"]), "from": data["from"], "needsApproval": data["needsApproval"]}


def propose_text(data: dict[str, Any]) -> str:
    """What the assistant reads: how many proposals, what a person does next; when no file of the source was
    found, that and where it looked (no next step: there is nothing to review or import)."""
    if not data.get("filesRead") and not data["refused"]:
        from ..imports import sources

        where = (f"in {echo_path(data['from'])}" if data.get("from") else
                 "for " + ", ".join(sources.get(data["source"]).defaults))
        return f"Found no {data['source']} file to read (looked {where}): nothing to propose."
    lines = [f"Filed {len(data['proposed'])} import proposal(s) from {data['source']} for review "
             f"({data['alreadyProposed']} were proposed before; {data['notYetProposed']} left for another call)."]
    for row in data["proposed"][:20]:
        lines.append(f"- {row['id']}: {row['title']} -> {_PLACES[row['destination']]}")
    for f in data["refused"]:
        lines.append(f"refused {f['path']}: {f['reason']}")
    lines += outside_lines(data, "")
    if data["skipped"].get("temporaryProgress"):
        lines.append(f"Not proposed: {data['skipped']['temporaryProgress']} item(s) of temporary progress (a memory "
                     "bank's activeContext.md and progress.md, rewritten every session); memory keeps durable facts.")
    lines.append("Nothing was written to memory. A person reviews them (`mnemon-ls records list --proposals`) and "
                 f"imports with `mnemon-ls import {data['source']} --dry-run`, then `mnemon-ls import "
                 f"{data['source']}`.")
    return "\n".join(lines)


def _scan(call: Call, p: ImportScanParams) -> dict[str, Any]:
    from ..imports import scan

    return scan.scan(call.host, space_id=p.space_id, allow_outside=p.allow_outside)


def _apply(call: Call, p: ImportApplyParams) -> dict[str, Any]:
    from ..imports import scan

    return scan.apply(call.host, p.ids, p.fingerprint, space_id=p.space_id, allow_outside=p.allow_outside)


def _export(call: Call, p: ExportParams) -> dict[str, Any]:
    from ..imports.export import export_block

    return export_block(call.host, p.target, remove=p.remove)


def export_text(data: dict[str, Any], _call: Call, _p: Any) -> str:
    """One line: what happened to which file."""
    said = {"created": f"created {data['file']} with a block of {data['facts']} fact(s)",
            "updated": f"wrote a block of {data['facts']} fact(s) into {data['file']}",
            "unchanged": f"{data['file']}: the block is up to date ({data['facts']} fact(s))",
            "removed": f"removed the block from {data['file']}",
            "deleted": f"removed the block; {data['file']} held nothing else and was deleted",
            "absent": f"{data['file']} has no mnemon-ls block; nothing to remove"}
    return said[data["action"]]


OPERATIONS = (
    Operation(
        "imports.run", ImportParams, _run,
        "Import the memory another assistant keeps (instruction files, rules, memory banks) into USER.md, "
        "MEMORY.md, Documents and the active Memory Space; the dry run says where each item would go and why.",
        effect="write",
        cli=CliCommand(("import",), "import another assistant's memory (run with --dry-run first)",
                       (CliArg("source", metavar="SOURCE"),
                        CliArg("from_path", flag="--from", dest="from_path", metavar="PATH", path=True),
                        CliArg("dry_run", flag="--dry-run", kind="flag"),
                        CliArg("space_id", flag="--space", metavar="ID", names_errors=True),
                        CliArg("allow_outside", flag="--allow-outside", kind="flag")),
                       text=import_text,
                       exit_code=lambda data: EXIT_REJECTED if (data["counts"]["space"] and data.get("spaceProblem"))
                       or data.get("status") in ("partly-imported", "refused") else EXIT_OK)),
    Operation(
        "imports.propose", ImportProposeParams, _propose,
        "Propose another assistant's memory for import as workspace record proposals a person reviews; "
        "writes no memory.", effect="write", text=propose_text,
        mcp=McpTool(
            "mnemon_import_propose",
            "Propose importing memory another assistant keeps in this workspace (CLAUDE.md and Claude Code's auto "
            "memory, AGENTS.md, Cursor rules, Copilot instructions, a Cline/Roo memory bank, Hermes memories). "
            "Each item is filed as an unverified record proposal saying where it would go (USER.md, MEMORY.md, a "
            "Document, the Memory Space) and why; nothing is written to memory. A person reviews the proposals "
            "and runs the import. Secrets are redacted; duplicates and earlier imports are skipped.",
            fields=("source", "from_path", "allow_outside", "workspace"), rename={"from_path": "path"})),
    Operation(
        "imports.scan", ImportScanParams, _scan,
        "Find the memory other assistants keep for this workspace (every source, in the workspace and the home "
        "directory): per source its files and items, each with an id, where it would go and why, or why it would be "
        "skipped, and the scan's fingerprint.",
        lsp=LspMethod("mnemon/import/scan")),
    Operation(
        "imports.apply", ImportApplyParams, _apply,
        "Import the items of a scan a person picked (by id); refused with nothing written when a file changed "
        "since the scan (the fingerprint) or an id is not an item of it.", effect="write",
        lsp=LspMethod("mnemon/import/apply")),
    Operation(
        "imports.export", ExportParams, _export,
        "Write the wake's stable facts (MEMORY.md) as a marked block into the workspace's AGENTS.md or "
        "CLAUDE.md, regenerated in place; remove takes it out. Opt-in: it writes into the repository.",
        effect="write",
        cli=CliCommand(("export",), "write the workspace facts into AGENTS.md or CLAUDE.md as a marked block "
                                    "(opt-in; --remove takes it out)",
                       (CliArg("target", metavar="agents-md|claude-md"),
                        CliArg("remove", flag="--remove", kind="flag")), text=export_text)),
)
