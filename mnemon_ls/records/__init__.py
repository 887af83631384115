"""Workspace memory records (seed 002): JSONL scopes, governance, the auto-writer and bundles.

Public surface: :class:`RecordsSource` (operations), :class:`MemoryRecord` / :func:`validate_record`
(the record and its rules), :class:`JsonlStore` (one file), :mod:`.paths` (scopes), :mod:`.autowriter`,
:mod:`.activity` (the review activity score).
"""

from .model import MemoryRecord, content_hash, validate_record
from .service import RecordReceipt, RecordsSource
from .store import MAX_FILE_BYTES, JsonlStore

__all__ = ["MemoryRecord", "content_hash", "validate_record", "RecordReceipt", "RecordsSource", "JsonlStore",
           "MAX_FILE_BYTES"]
