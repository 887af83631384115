"""Workspace memory records (seed 002): JSONL scopes, governance, the auto-writer and bundles.

Public surface: :class:`RecordsSource` (operations), :class:`MemoryRecord` / :func:`validate_record`
(the record and its rules), :class:`JsonlStore` (one file), :mod:`.paths` (scopes), :mod:`.autowriter`,
:mod:`.activity` (the review activity score).
"""

from typing import Any

#: Public name -> submodule, imported on first use: the wake looks for records files (:mod:`.paths`) without
#: the service and its pydantic model.
_EXPORTS = {
    "MemoryRecord": "model", "content_hash": "model", "validate_record": "model", "RecordReceipt": "service",
    "RecordsSource": "service", "MAX_FILE_BYTES": "store", "JsonlStore": "store"
}
__all__ = ["MemoryRecord", "content_hash", "validate_record", "RecordReceipt", "RecordsSource", "JsonlStore",
           "MAX_FILE_BYTES"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
