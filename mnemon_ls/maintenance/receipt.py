"""The maintenance receipt: what a capacity maintenance archived where, how many bytes it freed, its kind.

Shared by every maintenance (Runtime MEMORY.md archival here, USER.md compaction and Documents cold
archival elsewhere in this package). JSON via ``to_dict()`` (camelCase)::

    {"kind": "mnemon-archive" | "local-archive" | "local-compaction" | "document-cold-archive",
     "runId": "<uuid4 hex>", "target": "memory" | "user" | "documents",
     "planRevision": "<sha256 hex the plan was read at>", "revision": "<sha256 hex after the commit>" | null,
     "archived": [{"sourceIndex": 3, "source": "runtime:<planRevision>:memory:3", "summary": "...",
                   "bytes": 120, "evidence": "committed" | "duplicate" | "local",
                   "destination": {"kind": "memory-space", "reference": "memory-space:<id>/item:<itemId>",
                                   "spaceId": "...", "itemId": "..."}
                                | {"kind": "local-archive", "reference": "runtime/archived/memories.jsonl",
                                   "path": "<absolute path>"}}],
     "destinations": [{"kind": "memory-space", "spaceId": "...", "spaceName": "...", "count": 3}
                      | {"kind": "local-archive", "path": "...", "count": 3}],
     "bytesFreed": 2400,                # UTF-8 bytes the target shrank by (projected - used after)
     "kept": 12,                        # entries of the target left in hot memory (pending excluded)
     "summary": "Archived 3 entries of MEMORY.md into Memory Space Project (2400 bytes freed)."}
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: ``kind`` values (reference 4.2 step 7 uses ``mnemon-archive`` and ``local-compaction``).
KIND_SPACE_ARCHIVE = "mnemon-archive"
KIND_LOCAL_ARCHIVE = "local-archive"
KIND_LOCAL_COMPACTION = "local-compaction"
KIND_DOCUMENT_COLD_ARCHIVE = "document-cold-archive"


@dataclass(frozen=True, slots=True)
class Destination:
    """Where one fact went: ``kind`` ``memory-space`` (``space_id``, ``item_id``) or ``local-archive``
    (``path``); ``reference`` is the lineage destination reference (:mod:`.lineage`)."""

    kind: str
    reference: str
    space_id: str | None = None
    item_id: str | None = None
    path: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """``{kind, reference, spaceId?, itemId?, path?}``."""
        data: dict[str, Any] = {"kind": self.kind, "reference": self.reference}
        if self.space_id is not None:
            data["spaceId"] = self.space_id
        if self.item_id is not None:
            data["itemId"] = self.item_id
        if self.path is not None:
            data["path"] = self.path
        return data


@dataclass(frozen=True, slots=True)
class ArchivedFact:
    """One fact that left hot memory: ``source_index`` (1-based in the plan's entries), ``source`` (the
    lineage source reference), ``summary`` (content cut to 200 characters), ``bytes`` (UTF-8 bytes of
    the content), ``evidence`` (``committed``: the provider's committed receipt named the item;
    ``duplicate``: the provider skipped it and recall found an item with exactly this content;
    ``local``: written to the local archive) and ``destination``."""

    source_index: int
    source: str
    summary: str
    bytes: int
    evidence: str
    destination: Destination

    def to_dict(self) -> dict[str, Any]:
        """See the module doc."""
        return {"sourceIndex": self.source_index, "source": self.source, "summary": self.summary,
                "bytes": self.bytes, "evidence": self.evidence, "destination": self.destination.to_dict()}


@dataclass(frozen=True, slots=True)
class MaintenanceReceipt:
    """What one maintenance run did (module doc for the JSON)."""

    kind: str
    run_id: str
    target: str
    plan_revision: str
    archived: tuple[ArchivedFact, ...] = ()
    bytes_freed: int = 0
    kept: int = 0
    revision: str | None = None
    destinations: tuple[dict[str, Any], ...] = ()
    summary: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """See the module doc; ``extra`` keys are merged in (a maintenance's own details)."""
        return {"kind": self.kind, "runId": self.run_id, "target": self.target,
                "planRevision": self.plan_revision, "revision": self.revision,
                "archived": [a.to_dict() for a in self.archived],
                "destinations": [dict(d) for d in self.destinations],
                "bytesFreed": self.bytes_freed, "kept": self.kept, "summary": self.summary, **self.extra}
