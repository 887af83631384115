"""Citations follow a MEMORY.md entry that leaves hot memory (issue 24): a write's capacity maintenance or a
``runtime compact`` names what left in its receipt's ``maintenance`` (``archived``: ``{sourceIndex, summary,
destination}``; a compaction also ``entries``: ``{content, sourceIndexes}``), and :func:`follow` moves the
runtime side-file citations of each entry that left:

- into a Memory Space (``destination.kind`` ``memory-space``): to the item's key ``<spaceId>/<itemId>`` of
  ``state/citations/spaces.json`` (so recall answers them);
- merged by a compaction (its ``sourceIndex`` in an entry's ``sourceIndexes``): to that entry's key
  ``memory:<sha256 of its content>`` (the union, in order, without repeats, at most
  :data:`~mnemon_ls.citations.model.MAX_CITES`);
- into the local archive ``runtime/archived/`` (or dropped by a compaction): to the same key in
  ``state/citations/archived.json`` (:meth:`~mnemon_ls.citations.store.Citations.archived`), which
  ``runtime archived`` reads beside the archived entry.

``runtime archived --finish`` (an interrupted archival completed) moves them the same way
(:func:`leftovers_moved`). An entry that left is found by its content: the entries of MEMORY.md read before the write
(``before``), and each archived fact's ``summary`` (the content whole when it is short). A cited entry that left and
matches no fact, or more than one, goes to the archive side file: citations are never dropped silently. The moves are
side data: a side file that cannot be written never fails the write that already happened (the citations stay where they
were). ``state/citations/lineage.json`` calls a memory that moved by its new key.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ..citations.model import MAX_CITES, Citation
from ..citations.store import runtime_key
from ..errors import StorageError
from .base import Call

SUMMARY_CHARS = 200  # mnemon_ls.maintenance.lineage.SUMMARY_CHARS, the cut of a fact's summary


def cited_hot(call: Call) -> dict[str, str]:
    """``key -> content`` of the MEMORY.md entries now that have citations (``{}`` when none has: the common
    case costs one side-file read). Reads only."""
    table = call.host.citations.table("runtime")
    if not table:
        return {}
    return {k: e.content for e in call.host.runtime.read().of("memory") if (k := runtime_key(e.content)) in table}


def _summaries(content: str) -> tuple[str, str]:
    cut = content if len(content) <= SUMMARY_CHARS else content[:SUMMARY_CHARS - 1] + "\u2026"
    return cut, content[:SUMMARY_CHARS]


def _union(*groups: list[Citation]) -> list[Citation]:
    return list(dict.fromkeys(c for group in groups for c in group))[:MAX_CITES]


def leftovers_moved(removed: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """What ``runtime archived --finish`` removed (``[{content, destination: {reference}}]``, its receipt's
    ``removed``) in the shape :func:`follow` reads (``{"maintenance": {"archived": [{summary, destination}]}}``)."""
    from ..maintenance.lineage import parse_space_reference

    facts = []
    for item in removed:
        target = parse_space_reference((item.get("destination") or {}).get("reference") or "")
        destination = ({"kind": "memory-space", "spaceId": target[0], "itemId": target[1]} if target is not None
                       else {"kind": "local-archive"})
        facts.append({"summary": _summaries(item["content"])[0], "destination": destination})
    return {"maintenance": {"archived": facts}}


def follow(call: Call, before: Mapping[str, str], receipt: Mapping[str, Any], *,
           carry_replaced: bool = False) -> dict[str, str]:
    """Move the citations of the cited entries of ``before`` (:func:`cited_hot` read before the write) that
    left MEMORY.md, as ``receipt["maintenance"]`` says (module doc). The entry the write itself replaced or
    removed (``receipt["replaced"]["from"]``, ``receipt["removed"]``) is the write's: left alone, except that
    with ``carry_replaced`` (a compaction's pending replace) the replaced entry's citations go to the new text.
    Returns ``old key -> where`` (``spaces <spaceId>/<itemId>``, ``runtime memory:<sha>``, ``archived
    memory:<sha>``); ``lineage.json`` renames the moved ones. Never raises for a side file it cannot write
    (nothing moves then)."""
    maintenance = receipt.get("maintenance")
    replaced = receipt.get("replaced") if isinstance(receipt.get("replaced"), dict) else {}
    own = {runtime_key(t) for t in (replaced.get("from"), receipt.get("removed")) if isinstance(t, str)}
    if not before or not maintenance:
        return {}
    citations = call.host.citations
    live = {runtime_key(e.content) for e in call.host.runtime.read().of("memory")}
    left = {k: c for k, c in before.items() if k not in live and k not in own}
    carried = None
    if carry_replaced and isinstance(replaced.get("from"), str) and isinstance(replaced.get("to"), str):
        carried = (runtime_key(replaced["from"]), runtime_key(replaced["to"]))
    if not left and carried is None:
        return {}
    facts = list((maintenance or {}).get("archived") or ())
    merged_into = {}
    for entry in (maintenance or {}).get("entries") or ():
        for index in entry.get("sourceIndexes") or ():
            merged_into[index] = runtime_key(entry["content"])
    table = citations.table("runtime")
    to_spaces: dict[str, list[Citation]] = {}
    to_runtime: dict[str, list[Citation]] = {}
    to_archive: dict[str, list[Citation]] = {}
    where: dict[str, str] = {}
    if carried is not None and carried[0] != carried[1] and table.get(carried[0]) and carried[1] in live:
        to_runtime[carried[1]] = list(table[carried[0]])
        where[carried[0]] = f"runtime {carried[1]}"
    for key, content in left.items():
        cites = table.get(key)
        if not cites:
            continue
        shapes = _summaries(content)
        matches = [f for f in facts if f.get("summary") in shapes]
        fact = matches[0] if len(matches) == 1 else None
        destination = (fact or {}).get("destination") or {}
        target = merged_into.get((fact or {}).get("sourceIndex"))
        if destination.get("kind") == "memory-space" and destination.get("spaceId") and destination.get("itemId"):
            new = f"{destination['spaceId']}/{destination['itemId']}"
            to_spaces[new] = _union(to_spaces.get(new, []), cites)
            where[key] = f"spaces {new}"
        elif target is not None and target in live and target != key:
            to_runtime[target] = _union(to_runtime.get(target, []), cites)
            where[key] = f"runtime {target}"
        else:
            to_archive[key] = cites
            where[key] = f"archived {key}"
    try:
        if to_spaces:
            spaces = citations.table("spaces")
            citations.file("spaces").update({k: _union(spaces.get(k, []), v) for k, v in to_spaces.items()})
        if to_archive:
            kept = citations.archived().read()
            citations.archived().update({k: _union(kept.get(k, []), v) for k, v in to_archive.items()})
        changes: dict[str, list[Citation] | None] = {k: None for k in where}
        changes.update({k: _union(table.get(k, []), v) for k, v in to_runtime.items()})
        citations.file("runtime").update(changes)
    except (OSError, StorageError):
        return {}
    _rename_lineage(call, where)
    return where


def _rename_lineage(call: Call, where: Mapping[str, str]) -> None:
    """``state/citations/lineage.json`` names a moved memory by its new key (what it supersedes and what
    supersedes it go with it); one archived stays named as it was. Side data: a write error is ignored."""
    from ..citations.lineage import Lineage

    names = {("runtime", old): (source, key) for old, moved in where.items()
             for source, _, key in [moved.partition(" ")] if source != "archived"}
    try:
        Lineage(call.host.root).rename(names)
    except (OSError, StorageError):
        return
