"""``mnemon-ls runtime archived [--finish] [--json]``: what left MEMORY.md through capacity maintenance and
where it went (issue 9), read from ``runtime/archived/lineage.jsonl`` (:mod:`mnemon_ls.maintenance.lineage`);
``--finish`` completes archivals a killed process left half done (:mod:`mnemon_ls.maintenance.leftovers`).

Also the parsing of ``--routes JSON`` for ``runtime add|replace|remove``. The handlers take the CLI's
``host`` factory and ``emit`` function so that this module adds commands without reorganising cli.py.
"""

from __future__ import annotations

import argparse
from typing import Any, Callable

from .errors import EXIT_OK


def describe_destination(record: dict[str, Any]) -> str:
    """``Memory Space <name> (id <id>), item <id>`` (``Memory Space with id <id> (no longer registered)``
    when the record's ``spaceName`` is ``None``, ``Memory Space <id>`` when it has none) or ``local archive
    <reference>`` for one lineage record dict of :func:`mnemon_ls.maintenance.archived_listing`."""
    from .maintenance.lineage import parse_space_reference

    reference = record["destination"]["reference"]
    target = parse_space_reference(reference)
    if target is not None:
        space_id, item_id = target
        if "spaceName" not in record:
            space = f"Memory Space {space_id}"
        elif record["spaceName"] is None:
            space = f"Memory Space with id {space_id} (no longer registered)"
        else:
            space = f"Memory Space {record['spaceName']} (id {space_id})"
        return f"{space}, item {item_id}"
    return f"local archive {reference}"


def space_names(host: Any) -> dict[str, str] | None:
    """Space id -> name of every registered Memory Space of ``host`` (``None`` when the root has no spaces
    or the registry cannot be read: the listing then names ids only)."""
    if not (host.root / "data").is_dir():
        return {}
    try:
        return {record.id: record.name for record in host.spaces.state().all}
    except Exception:  # noqa: BLE001 - a listing never fails on a broken registry (doctor reports it)
        return None


def cmd_runtime_archived(args: argparse.Namespace, host_of: Callable[[argparse.Namespace], Any],
                         emit: Callable[[argparse.Namespace, Any, str], None]) -> int:
    """Print every archived fact, oldest first: time, destination, summary (``--json``: the listing of
    :func:`mnemon_ls.maintenance.archived_listing`); with ``--finish``, finish interrupted archivals
    (:func:`cmd_finish`)."""
    from .maintenance import archived_listing

    host = host_of(args)
    if getattr(args, "finish", False):
        return cmd_finish(args, host, emit)
    listing = archived_listing(host.runtime, space_names(host))
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
    if listing["damaged"]:
        lines.append(f"{len(listing['damaged'])} lineage lines do not parse and are skipped "
                     f"(lines {', '.join(map(str, listing['damaged'][:5]))}).")
    emit(args, listing, "\n".join(lines))
    return EXIT_OK


def cmd_finish(args: argparse.Namespace, host: Any, emit: Callable[[argparse.Namespace, Any, str], None]) -> int:
    """``mnemon-ls runtime archived --finish``: remove from MEMORY.md the entries an interrupted archival
    already wrote to their destination, each after its copy is verified
    (:func:`mnemon_ls.maintenance.leftovers.finish_interrupted`); prints what left and what stayed.
    ``--json``: ``{"removed", "kept", "revision"}``. A conflict or a copy that changed meanwhile is an error
    (exit code of :class:`~mnemon_ls.errors.MaintenanceFailed` / ``RevisionConflict``) and changes nothing."""
    from .maintenance.leftovers import finish_interrupted

    result = finish_interrupted(host.runtime, host.spaces if (host.root / "data").is_dir() else None)
    removed, kept = result["removed"], result["kept"]
    if not removed and not kept:
        lines = ["No interrupted archival left an entry in MEMORY.md; nothing changed."]
    else:
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
    emit(args, result, "\n".join(lines))
    return EXIT_OK
