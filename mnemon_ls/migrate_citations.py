"""``mnemon-ls migrate`` carries the citations of what it copies (issue 24): the side files of the source root's
``state/citations/`` are read (never written) and the citations of each copied memory stored under its key in
the destination root:

- a MEMORY.md entry: the same key (``memory:<sha256 of the content>``: the content is copied as is), for every
  source entry the destination now holds (one copied now, or one it already held: its citations are joined);
- a Document: the source ``<documentId>`` becomes the new document's id; its recorded source-file hashes
  (``document-sources.json``) go with it for the source paths copied, so freshness still compares with the
  file as it was when the document was written, not as it is at the copy;
- a Memory Space item: ``<fromSpaceId>/<sourceItemId>`` becomes ``<intoSpaceId>/<destinationItemId>`` (the
  receipt's ``ids``).

Citations already at a destination key are kept and the source's joined after them (no repeats, at most
:data:`~mnemon_ls.citations.model.MAX_CITES`). An unreadable source side file reads as empty; a destination
side file that cannot be written leaves that Source's citations uncopied (side data: the copy of the memory
stands, and the source still holds them). Returns how many memories' citations were carried, by Source.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from .citations.model import MAX_CITES, Citation
from .citations.sources import SourceHashes
from .citations.store import CitationFile, runtime_key
from .errors import StorageError

if TYPE_CHECKING:
    from .host import WorkspaceHost


def _join(have: list[Citation], more: list[Citation]) -> list[Citation]:
    return list(dict.fromkeys([*have, *more]))[:MAX_CITES]


def carry(host: "WorkspaceHost", source: Path, documents: list[dict[str, Any]],
          spaces: list[dict[str, Any]]) -> dict[str, int]:
    """Copy the citations of the copied memory from ``source`` into ``host``'s root (module doc).
    ``documents``: the migration plan's documents (``record`` the source record, ``id`` the new id,
    ``sourcePaths`` the paths copied); ``spaces``: the receipt's rows (``fromId``, ``intoId``, ``ids``).
    Returns ``{runtime, documents, spaces}`` counts of memories whose citations were carried."""
    def table(name: str) -> dict[str, list[Citation]]:
        return CitationFile(source / "state" / "citations" / f"{name}.json").read()

    citations = host.citations
    counts = {"runtime": 0, "documents": 0, "spaces": 0}
    changes: dict[str, dict[str, list[Citation]]] = {"runtime": {}, "documents": {}, "spaces": {}}
    runtime = table("runtime")
    if runtime:
        held = {runtime_key(e.content) for e in host.runtime.store_for("memory").read().of("memory")}
        changes["runtime"] = {k: v for k, v in runtime.items() if k in held}
    documents_table = table("documents")
    for doc in documents:
        cites = documents_table.get(doc["record"].id)
        if cites and doc.get("id"):
            changes["documents"][doc["id"]] = cites
    spaces_table = table("spaces")
    for row in spaces:
        for from_item, into_item in (row.get("ids") or {}).items():
            cites = spaces_table.get(f"{row['fromId']}/{from_item}")
            if cites and row.get("intoId"):
                changes["spaces"][f"{row['intoId']}/{into_item}"] = cites
    for name, moved in changes.items():
        if not moved:
            continue
        try:
            have = citations.table(name)
            citations.file(name).update({k: _join(have.get(k, []), v) for k, v in moved.items()})
            counts[name] = len(moved)
        except (OSError, StorageError):
            continue
    _carry_source_hashes(host, source, documents)
    return counts


def _carry_source_hashes(host: "WorkspaceHost", source: Path, documents: list[dict[str, Any]]) -> None:
    """The recorded source-file hashes of each copied document, for the paths copied (module doc)."""
    recorded = SourceHashes(source, None).read()
    wanted = {doc["id"]: {p: h for p, h in recorded[doc["record"].id].items() if p in doc["sourcePaths"]}
              for doc in documents if doc.get("id") and doc["record"].id in recorded}
    if not wanted:
        return
    try:
        SourceHashes(host.root, host.workspace).merge(wanted)
    except (OSError, StorageError):
        return
