"""What capacity maintenance moved out of MEMORY.md (``runtime.archived``): the lineage
(``runtime/archived/lineage.jsonl``, :func:`mnemon_ls.maintenance.archived_listing`) with each destination
named (a Memory Space by its name and id), and, with ``finish``, the archivals a killed process left half done
completed (:func:`mnemon_ls.maintenance.leftovers.finish_interrupted`: an entry already written to its
destination leaves MEMORY.md once its copy is verified). Command line only: ``mnemon-ls runtime archived
[--finish]``.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, StrictBool

from .base import Call, CliArg, CliCommand, Operation, WorkspaceParams
from .humantext import citation_text


class RuntimeArchivedParams(WorkspaceParams):
    """``runtime archived``: ``{workspace?, finish?}``."""

    finish: StrictBool = Field(False, description="remove from MEMORY.md the entries an interrupted archival "
                                                  "already wrote to their destination (each copy checked first)")


def space_names(host: Any) -> dict[str, str] | None:
    """Space id -> name of every registered Memory Space of ``host`` (``None`` when the registry cannot be read:
    the listing then names ids only; ``{}`` when the root has no spaces)."""
    if not (host.root / "data").is_dir():
        return {}
    try:
        return {record.id: record.name for record in host.spaces.state().all}
    except Exception:  # noqa: BLE001 - a listing never fails on a broken registry (doctor reports it)
        return None


def describe_destination(record: dict[str, Any]) -> str:
    """``Memory Space <name> (id <id>), item <id>`` (``Memory Space with id <id> (no longer registered)`` when
    the record's ``spaceName`` is ``None``, ``Memory Space <id>`` when it has none) or ``local archive
    <reference>`` for one lineage record of :func:`mnemon_ls.maintenance.archived_listing`."""
    from ..maintenance.lineage import parse_space_reference

    reference = record["destination"]["reference"]
    target = parse_space_reference(reference)
    if target is None:
        return f"local archive {reference}"
    space_id, item_id = target
    if "spaceName" not in record:
        space = f"Memory Space {space_id}"
    elif record["spaceName"] is None:
        space = f"Memory Space with id {space_id} (no longer registered)"
    else:
        space = f"Memory Space {record['spaceName']} (id {space_id})"
    return f"{space}, item {item_id}"


def _run(call: Call, p: RuntimeArchivedParams) -> dict[str, Any]:
    host = call.host
    if p.finish:
        from ..maintenance.leftovers import finish_interrupted
        from .citemoves import cited_hot, follow, leftovers_moved

        before = cited_hot(call)
        done = finish_interrupted(host.runtime, host.spaces if (host.root / "data").is_dir() else None)
        if before and done["removed"]:
            follow(call, before, leftovers_moved(done["removed"]))  # the citations go with them
        return done
    from ..maintenance import archived_listing

    return _with_cites(host, archived_listing(host.runtime, space_names(host)))


def _with_cites(host: Any, listing: dict[str, Any]) -> dict[str, Any]:
    """Each record whose fact kept citations with ``cites`` (each with its freshness now): a fact in the local
    archive from ``state/citations/archived.json`` (key ``memory:<destination digest>``, the content's
    SHA-256), one in a Memory Space from the item's key in ``spaces.json``. Reads only."""
    from ..maintenance.lineage import parse_space_reference

    citations = host.citations
    archived, spaces = citations.archived().read(), None
    for record in listing["records"]:
        target = parse_space_reference(record["destination"]["reference"])
        if target is None:
            cites = archived.get("memory:" + record["destination"]["digest"])
        else:
            spaces = citations.table("spaces") if spaces is None else spaces
            cites = spaces.get(f"{target[0]}/{target[1]}")
        if cites:
            record["cites"] = citations.views(cites)
    return listing


def _listing_text(listing: dict[str, Any]) -> str:
    records = listing["records"]
    if not records:
        lines = [f"Nothing has been archived out of MEMORY.md ({listing['path']} does not list any fact)."]
    else:
        noun = "fact" if len(records) == 1 else "facts"
        lines = [f"{len(records)} {noun} left MEMORY.md (lineage: {listing['path']}):"]
        for record in records:
            note = "  (also still in MEMORY.md)" if record["stillInHotMemory"] else ""
            lines.append(f"- {record['archivedAt']}  -> {describe_destination(record)}{note}")
            lines.append(f"    {record['summary']}")
            lines += [f"    cites {citation_text(c)}" for c in record.get("cites") or ()]
    if listing["damaged"]:
        lines.append(f"{len(listing['damaged'])} lineage lines do not parse and are skipped "
                     f"(lines {', '.join(map(str, listing['damaged'][:5]))}).")
    return "\n".join(lines)


def _finish_text(result: dict[str, Any]) -> str:
    removed, kept = result["removed"], result["kept"]
    if not removed and not kept:
        return "No interrupted archival left an entry in MEMORY.md; nothing changed."
    lines = []
    if removed:
        lines.append(f"Removed {len(removed)} entr{'y' if len(removed) == 1 else 'ies'} from MEMORY.md that an "
                     f"interrupted archival had already written (each copy checked; revision "
                     f"{result['revision'][:12]}):")
        lines.extend(f"- {item['content']}\n    -> {item['where']}" for item in removed)
    if kept:
        lines.append(f"Kept {len(kept)} entr{'y' if len(kept) == 1 else 'ies'} in MEMORY.md: the copy could not "
                     "be verified:")
        lines.extend(f"- {item['content']}\n    -> {item['where']}: {item['reason']}" for item in kept)
    return "\n".join(lines)


OPERATIONS = (
    Operation(
        "runtime.archived", RuntimeArchivedParams, _run,
        "What capacity maintenance moved out of MEMORY.md and where each fact went, oldest first (from "
        "runtime/archived/lineage.jsonl); with finish, complete the archivals a killed process left half done.",
        effect="write",
        cli=CliCommand(("runtime", "archived"), "what capacity maintenance moved out of MEMORY.md, and where",
                       (CliArg("finish", flag="--finish", kind="flag"),),
                       text=lambda d, _c, p: _finish_text(d) if p.finish else _listing_text(d))),
)
