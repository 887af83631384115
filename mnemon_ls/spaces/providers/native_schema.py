"""Schema and constants of the ``mnemon-native`` provider (:mod:`.native`): the newest Mnemon CLI schema for
fresh stores (:data:`FRESH_SCHEMA`, mnemon-cli.md 4.1-4.4), the column sets the provider knows
(:data:`INSIGHT_COLUMNS`, :data:`EDGE_COLUMNS`), the store's file names and limits (oplog cap, lock timeout
in seconds, page caches in KiB, mmap in bytes) and the small JSON/SQLite helpers the provider's modules share.

Everything here is re-exported by :mod:`mnemon_ls.spaces.providers.native`; import it from there.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from ...errors import InvalidInput

PROVIDER_ID = "mnemon-native"
DB_FILE = "mnemon.db"
SQLITE_HEADER = b"SQLite format 3\x00"
KNOWN_USER_VERSION = 1
OPLOG_CAP = 5000
DEFAULT_LOCK_TIMEOUT = 10.0
_BUSY_SLICE_MS = 250
#: Pending read hits that trigger a write of the access counters (see ``flush_access``).
ACCESS_FLUSH_THRESHOLD = 1000
#: SQLite page cache of the ``mnemon.db`` connection, KiB (``PRAGMA cache_size``). Part of the resident
#: memory bound of an open space (module doc, "Memory").
CACHE_KIB = 8 * 1024
#: Page cache of the ``mnemon.db`` connection during :meth:`NativeProvider.import_items` (KiB): bulk inserts
#: into the edge indexes are random B-tree writes; the cache returns to :data:`CACHE_KIB` afterwards.
BULK_CACHE_KIB = 64 * 1024
#: Memory-mapped I/O of ``mnemon.db`` (bytes, ``PRAGMA mmap_size``). 0: reads go through the OS page cache,
#: so pages of a 650 MiB store never accumulate in the process's resident set (with 256 MiB mapped, 1,000
#: recalls on 100,000 items left 210 MiB of mapped file pages resident).
MMAP_BYTES = 0

INSIGHT_COLUMNS = ("id", "content", "category", "importance", "tags", "entities", "source", "access_count",
                   "stored_at", "created_at", "updated_at", "deleted_at", "last_accessed_at", "embedding",
                   "effective_importance")
EDGE_COLUMNS = ("source_id", "target_id", "edge_type", "weight", "metadata", "created_at")

#: The newest CLI schema (mnemon-cli.md 4.1-4.4), used only for fresh stores.
FRESH_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS insights (
    id TEXT PRIMARY KEY,
    content TEXT NOT NULL,
    category TEXT DEFAULT 'general',
    importance INTEGER DEFAULT 3,
    tags TEXT DEFAULT '[]',
    entities TEXT DEFAULT '[]',
    source TEXT DEFAULT 'user',
    access_count INTEGER DEFAULT 0,
    stored_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    deleted_at TEXT,
    last_accessed_at TEXT,
    embedding BLOB,
    effective_importance REAL DEFAULT 0.5
)""",
    """CREATE TABLE IF NOT EXISTS edges (
    source_id TEXT NOT NULL,
    target_id TEXT NOT NULL,
    edge_type TEXT NOT NULL CHECK(edge_type IN ('temporal','semantic','causal','entity','supersedes')),
    weight REAL DEFAULT 1.0,
    metadata TEXT DEFAULT '{}',
    created_at TEXT NOT NULL,
    PRIMARY KEY (source_id, target_id, edge_type),
    FOREIGN KEY (source_id) REFERENCES insights(id) ON DELETE CASCADE,
    FOREIGN KEY (target_id) REFERENCES insights(id) ON DELETE CASCADE
)""",
    """CREATE TABLE IF NOT EXISTS oplog (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    operation TEXT NOT NULL,
    insight_id TEXT,
    detail TEXT DEFAULT '',
    created_at TEXT NOT NULL
)""",
    "CREATE INDEX IF NOT EXISTS idx_insights_category ON insights(category)",
    "CREATE INDEX IF NOT EXISTS idx_insights_deleted ON insights(deleted_at)",
    "CREATE INDEX IF NOT EXISTS idx_insights_effective_imp ON insights(effective_importance)",
    "CREATE INDEX IF NOT EXISTS idx_prune_candidates ON insights(deleted_at, importance, access_count, "
    "effective_importance)",
    "CREATE INDEX IF NOT EXISTS idx_insights_active_created ON insights(deleted_at, created_at DESC) "
    "WHERE deleted_at IS NULL",
    "CREATE INDEX IF NOT EXISTS idx_insights_active_source_created ON insights(source, created_at) "
    "WHERE deleted_at IS NULL",
    "CREATE INDEX IF NOT EXISTS idx_insights_active_ranked ON insights(deleted_at, importance DESC, created_at DESC) "
    "WHERE deleted_at IS NULL",
    "CREATE INDEX IF NOT EXISTS idx_insights_stored ON insights(stored_at)",
    "CREATE INDEX IF NOT EXISTS idx_prune_age_candidates ON insights(deleted_at, importance, access_count, "
    "stored_at, effective_importance)",
    "CREATE INDEX IF NOT EXISTS idx_edges_source ON edges(source_id)",
    "CREATE INDEX IF NOT EXISTS idx_edges_target ON edges(target_id)",
    "CREATE INDEX IF NOT EXISTS idx_edges_type ON edges(edge_type)",
    "CREATE INDEX IF NOT EXISTS idx_edges_source_type ON edges(source_id, edge_type)",
    "CREATE INDEX IF NOT EXISTS idx_edges_target_type ON edges(target_id, edge_type)",
    "CREATE INDEX IF NOT EXISTS idx_oplog_created ON oplog(created_at)",
    """CREATE TRIGGER IF NOT EXISTS set_insight_stored_at AFTER INSERT ON insights
WHEN NEW.stored_at IS NULL OR NEW.stored_at = ''
BEGIN
    UPDATE insights SET stored_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now') WHERE id = NEW.id;
END""",
)

#: Oplog operations whose ``insight_id`` row may have changed (index catch-up re-reads it).
_REFRESH_OPS = ("forget", "prune", "diff-replace", "import-replace", "gc_keep", "remember", "import")

_ROW_COLUMNS = "rowid, id, content, category, importance, tags, entities, source, created_at, deleted_at"


def _json_list(value: Any) -> list[str]:
    if not isinstance(value, str) or not value or value == "[]":  # most items have no tags: no json.loads
        return []
    try:
        parsed = json.loads(value)
    except ValueError:
        return []
    return [v for v in parsed if isinstance(v, str)] if isinstance(parsed, list) else []


def _json_dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=isinstance(value, dict))


def _is_busy(exc: BaseException) -> bool:
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return (code & 0xFF) in (5, 6)  # SQLITE_BUSY, SQLITE_LOCKED
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def missing_item(db: sqlite3.Connection, field_name: str, item_id: str, rule: str, **data: Any) -> InvalidInput:
    """The :class:`InvalidInput` for an ``item_id`` no active item of ``db`` has: ``rule`` naming ``field_name``,
    and, when ``item_id`` is the start of active ids (a short id under the 8 characters
    :func:`~mnemon_ls.spaces.model.full_item_id` takes), that a short id needs at least 8 characters, naming the
    one it starts when there is one. ``data`` goes into the error's data."""
    rows = db.execute("SELECT id FROM insights WHERE deleted_at IS NULL AND substr(id, 1, ?) = ? LIMIT 2",
                      (len(item_id), item_id)).fetchall() if item_id else []
    if len(rows) == 1:
        rule += f"; a short item id needs at least 8 characters: {rows[0][0]} starts with it"
    elif rows:
        rule += "; a short item id needs at least 8 characters (several items start with this)"
    return InvalidInput(field_name, rule, **data)
