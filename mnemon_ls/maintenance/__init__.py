"""Capacity maintenance across the tiers (issue 9; DESIGN.md section 2 "maintenance"): cross-tier work that
uses only the Sources' public operations, so Sources never import each other.

Modules:

- :mod:`.receipt` the receipt every maintenance returns (:class:`MaintenanceReceipt`: what was archived
  where, bytes freed, kind);
- :mod:`.lineage` ``runtime/archived/lineage.jsonl`` (one line per archived fact), reading, appending and
  the doctor check that every destination still exists;
- :mod:`.runtime` MEMORY.md overflow: archive what greedy packing does not keep into the eligible
  Memory Spaces (else the local archive ``runtime/archived/``), then commit compaction + mutation under
  the plan's revision fence (reference/dsh-mnemon.md sections 4.1-4.3);
- :mod:`.leftovers` entries a killed archival left both in MEMORY.md and at their destination: the doctor
  finding and ``mnemon-ls runtime archived --finish``.

Public entry points (the Host calls them; every surface goes through the Host)::

    mutate_runtime(runtime, spaces_factory, request, *, routes=None, policy="archive", clock=None) -> Receipt
        # the Runtime receipt; after an archival ``detail["maintenance"]`` = MaintenanceReceipt.to_dict()
    parse_routes(raw) / validate_routes(raw, entry_count, eligible_ids, field="routes") -> list[Route]
    archived_listing(runtime) -> {"path", "records": [...], "damaged": [...], "count"}  # `runtime archived`
    verify_lineage(root, spaces) -> list[Finding]                        # `mnemon-ls doctor`
"""

from typing import Any

#: Public name -> submodule, imported on first use: the wake reads the archive count from :mod:`.lineage` alone.
_EXPORTS = {
    "LineageEnd": "lineage", "LineageLog": "lineage", "LineageRecord": "lineage", "append_lineage": "lineage",
    "entry_digest": "lineage", "lineage_path": "lineage", "read_lineage": "lineage", "space_reference": "lineage",
    "verify_lineage": "lineage", "KIND_DOCUMENT_COLD_ARCHIVE": "receipt", "KIND_LOCAL_ARCHIVE": "receipt",
    "KIND_LOCAL_COMPACTION": "receipt", "KIND_SPACE_ARCHIVE": "receipt", "ArchivedFact": "receipt",
    "Destination": "receipt", "MaintenanceReceipt": "receipt", "Route": "runtime", "archive_and_mutate": "runtime",
    "archived_listing": "runtime", "mutate_runtime": "runtime", "parse_routes": "runtime",
    "validate_routes": "runtime"
}
__all__ = [
    "KIND_DOCUMENT_COLD_ARCHIVE", "KIND_LOCAL_ARCHIVE", "KIND_LOCAL_COMPACTION", "KIND_SPACE_ARCHIVE",
    "ArchivedFact", "Destination", "LineageEnd", "LineageLog", "LineageRecord", "MaintenanceReceipt", "Route",
    "append_lineage", "archive_and_mutate", "archived_listing", "parse_routes", "entry_digest", "lineage_path",
    "mutate_runtime", "read_lineage",
    "space_reference", "validate_routes", "verify_lineage",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
