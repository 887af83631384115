"""The embedded ``mnemon-native`` provider: one space's ``data/<space-id>/mnemon.db`` in the Mnemon CLI's schema.

Format source: shared/reference/mnemon-cli.md (sections 4-9, 14, 16). What this module guarantees:

- **Fresh stores** get the newest CLI schema exactly: tables ``insights`` (15 columns incl. ``stored_at``,
  ``last_accessed_at``, ``embedding``, ``effective_importance``), ``edges`` (5-type CHECK incl.
  ``supersedes``), ``oplog``; the CLI's indexes; the ``set_insight_stored_at`` trigger;
  ``PRAGMA user_version = 1`` (mandatory: otherwise the CLI "migrates" float32 blobs); WAL.
- **Existing stores** of every documented generation are read as they are (columns feature-detected
  with ``PRAGMA table_info``; inserts name their columns; nothing is migrated, no DDL beyond the
  ``CREATE ... IF NOT EXISTS`` the CLI itself runs on a missing table). ``supersedes`` edges are refused
  on a store whose ``edges`` CHECK predates them. ``user_version`` is never changed on an existing store.
- **Newer unknown schema** (``user_version`` > 1, extra ``edges`` columns, or a required ``insights``
  column we do not know): opened read-only with a notice (``notice``); writes raise
  :class:`~mnemon_ls.spaces.errors.SpaceReadOnly`. A file that is not SQLite, or SQLite without an
  ``insights`` table, raises :class:`~mnemon_ls.errors.UnreadableStore` and is never touched.
- **Rows**: ids are lowercase UUIDv4; timestamps ``YYYY-MM-DDTHH:MM:SSZ``; ``tags``/``entities`` compact
  JSON arrays (never NULL); edge ``metadata`` a JSON object of strings; oplog rows never NULL
  (``insight_id`` ``''`` when none), trimmed to the newest 5,000 like the CLI.
- **Writes** run in ``BEGIN IMMEDIATE`` with ``busy_timeout``; a store held by another writer is retried
  until ``lock_timeout`` seconds, then :class:`~mnemon_ls.errors.StoreBusy` (the raw "database is locked"
  never reaches the caller). ``synchronous=FULL``: a receipt is durable.
- **remember** skips byte-identical active content (receipt ``action: "skipped"``, ``replaced_id`` = the
  existing id, oplog ``diff-skip``) and never replaces or deletes anything; automatic edges as the CLI
  makes them without embeddings: temporal backbone (same source), entity (at most 5 per entity, 50 rows),
  causal (cue + token overlap >= 0.15 with the last 10 of the same source). The 24 h "proximity" temporal
  edges are not made: only an older fork documents them (mnemon-cli.md 16, risk 2), and at up to 20 rows
  per write they cost more than everything else together;
  ``effective_importance`` per mnemon-cli.md 8. No auto-prune (the CLI does it on its own next write).
- **Search** uses the side index (:mod:`mnemon_ls.spaces.index`), kept in sync on our writes and caught
  up when another connection committed. Score in 0..1: ``coverage * (0.73 + 0.14*exactness + 0.06*
  bm25/best + 0.04*(importance-1)/4 + 0.03*recency)`` with ``coverage`` the fraction of query term groups
  the item holds, ``exactness`` the fraction of those it holds by the whole identifier rather than only
  its parts (:func:`mnemon_ls.text.exactness`) and ``recency = 0.5 ** (age_days / 180)``. The exactness
  weight (0.14) exceeds all the other signals together (0.13), so at equal coverage an item naming the
  query's identifier exactly (``retry_backoff``) always outranks one naming only a longer identifier
  that contains it (``retry_backoff_ms``), whatever their importance, age or BM25. ``smart`` mode adds causal/semantic neighbours of
  strong hits (entities are already indexed terms) (score = 0.45 * hit score * edge weight); ``basic`` is the CLI's ``LIKE`` scan (no score).
- **Memory**: resident memory of an open space is bounded, not growing with the number of reads: SQLite's
  page caches are capped at :data:`CACHE_KIB` (8 MiB, ``mnemon.db``) plus
  :data:`~mnemon_ls.spaces.index.INDEX_CACHE_KIB` (16 MiB, the side index), ``mnemon.db`` is not
  memory-mapped (:data:`MMAP_BYTES`), and the pending access counters hold at most
  :data:`ACCESS_FLUSH_THRESHOLD` hits. Measured by ``bench/bench_spaces.py`` (results in
  ``bench/results/spaces.md``): before these caps, 1,000 recalls on 100,000 items grew a process from 27 to
  315 MiB (210 MiB mapped file pages, 89 MiB page caches; the Python heap did not grow), a bounded cache
  and not a leak. An import (:meth:`NativeProvider.import_items`) uses :data:`BULK_CACHE_KIB` while it runs.
- **Reads** bump ``access_count``/``last_accessed_at`` of returned items and log ``recall``/``search``
  like the CLI, batched: the counts are kept in memory and written in one short transaction by
  :meth:`NativeProvider.flush_access` (call it when idle), by ``close()``, or once 1,000 hits are pending
  (best effort: kept pending while the store is busy; dropped on a read-only store; ``track_access=False``
  turns it off).
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Callable, Sequence

from ... import fsio
from ...errors import InvalidInput, StorageError, StorageFull, StorageReadOnly, StoreBusy, UnreadableStore
from ...sqliteindex import open_snapshot
from .. import graph
from ..errors import SpaceReadOnly
from ..index import INDEX_FILE, TOKENIZER, IndexRow, SideIndex
from ..model import (
    EDGE_TYPES,
    WALK_EDGE_TYPES,
    Clock,
    Item,
    epoch_seconds,
    parse_time,
    rfc3339,
    utc_now,
)
from ...text import coverage, exactness
from .base import NATIVE_CAPABILITIES, ExportEdge, ExportItem, KeepFn, SearchOutcome, iter_chunks, sparse_hint

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
    if not isinstance(value, str) or not value:
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


class NativeProvider:
    """One native space's ``mnemon.db`` (see module doc).

    ``db_path`` is ``<root>/data/<space-id>/mnemon.db``; ``space_id`` only labels messages; ``clock``
    returns UTC now; ``lock_timeout`` seconds bound every wait for another writer; ``create`` allows
    creating a missing store (otherwise a missing file raises :class:`UnreadableStore`). Thread-safe
    (one lock per provider); one SQLite connection per provider, opened lazily.
    """

    provider_id = PROVIDER_ID
    capabilities = NATIVE_CAPABILITIES

    def __init__(self, db_path: Path, *, space_id: str = "", clock: Clock = utc_now,
                 lock_timeout: float = DEFAULT_LOCK_TIMEOUT, create: bool = True, track_access: bool = True) -> None:
        self.db_path = Path(db_path)
        self.space_id = space_id or self.db_path.parent.name
        self.clock = clock
        self.lock_timeout = lock_timeout
        self.create = create
        self.track_access = track_access
        self.index = SideIndex(self.db_path.parent / INDEX_FILE)
        self._lock = threading.RLock()
        self._db: sqlite3.Connection | None = None
        self._columns: set[str] = set()
        self._supersedes = True
        self._has_oplog = True
        self.read_only_reason: str | None = None
        self.user_version = 0
        self._verified: tuple[int, int, dict] | None = None  # (data_version, index opens, fingerprint)
        self._pending_fp: dict | None = None
        self._pending_access: dict[str, tuple[int, str]] = {}
        self._pending_oplog: list[tuple[str, str, str]] = []
        self._pending_touches = 0
        #: Set while the connection is a read-only snapshot because the disk is full or read-only.
        self._degraded: StorageError | None = None

    # ------------------------------------------------------------------ opening

    @property
    def notice(self) -> str | None:
        """Why the store is read-only, or ``None``."""
        if self.read_only_reason is None:
            return None
        return f"space {self.space_id}: {self.read_only_reason}; opened read-only (nothing is migrated)"

    def _conn(self) -> sqlite3.Connection:
        if self._db is not None and self._degraded is not None and fsio.writes_refused(self.db_path) is None:
            self._db.close()  # the disk takes writes again: reopen normally
            self._db, self._verified, self._degraded = None, None, None
        if self._db is None:
            self._db = self._open()
        return self._db

    def _open(self) -> sqlite3.Connection:
        path = self.db_path
        fsio.check_store_path(path)  # SQLite follows links: a linked mnemon.db or data/<id> is refused
        try:
            with open(path, "rb") as handle:
                header = handle.read(len(SQLITE_HEADER))
        except FileNotFoundError:
            if not self.create:
                raise UnreadableStore(f"{path} does not exist", file=str(path), reason="missing") from None
            header = b""
            fsio.ensure_dir(path.parent)
            fsio.create_file_nofollow(path)
        except IsADirectoryError:
            raise UnreadableStore(f"{path} is a directory, not a Mnemon store", file=str(path),
                                  reason="not a file") from None
        if header and header != SQLITE_HEADER:
            raise UnreadableStore(f"{path} is not a SQLite database; nothing was changed", file=str(path),
                                  reason="not a SQLite database")
        writable = os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)
        if writable:
            db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False,
                                 timeout=_BUSY_SLICE_MS / 1000)
        else:
            uri = "file:" + path.as_posix().replace("?", "%3f").replace("#", "%23") + "?mode=ro"
            db = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False,
                                 timeout=_BUSY_SLICE_MS / 1000)
        try:
            db.execute(f"PRAGMA busy_timeout={_BUSY_SLICE_MS}")
            db.execute("PRAGMA foreign_keys=ON")
            db.execute(f"PRAGMA cache_size={-CACHE_KIB}")
            db.execute(f"PRAGMA mmap_size={MMAP_BYTES}")
            self._retry(lambda: self._inspect(db, writable, fresh=not header))
        except sqlite3.DatabaseError as exc:
            db.close()
            if _is_busy(exc):
                raise
            snapshot = self._open_snapshot(exc) if header else None
            if snapshot is not None:
                return snapshot
            raise UnreadableStore(f"{path} cannot be read as a Mnemon store: {exc}", file=str(path),
                                  reason=str(exc)) from None
        except BaseException:
            db.close()
            raise
        return db

    def _open_snapshot(self, error: sqlite3.DatabaseError) -> sqlite3.Connection | None:
        """On a full or read-only file system, a read-only snapshot of the store (reads keep working;
        writes raise the storage error until the disk takes writes again); else ``None``."""
        mapped = fsio.sqlite_storage_error(error, self.db_path)
        if not isinstance(mapped, (StorageFull, StorageReadOnly)):
            return None
        db = open_snapshot(self.db_path)
        try:
            self._inspect(db, False, fresh=False)
        except (sqlite3.Error, UnreadableStore):
            db.close()
            return None
        self._degraded = mapped
        return db

    def _inspect(self, db: sqlite3.Connection, writable: bool, fresh: bool) -> None:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not tables:
            if not writable:
                raise UnreadableStore(f"{self.db_path} is empty and not writable", file=str(self.db_path),
                                      reason="empty")
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("BEGIN IMMEDIATE")
            try:
                if not db.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table'").fetchone()[0]:
                    for statement in FRESH_SCHEMA:
                        db.execute(statement)
                    db.execute(f"PRAGMA user_version = {KNOWN_USER_VERSION}")
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
            tables = {"insights", "edges", "oplog"}
        if "insights" not in tables:
            raise UnreadableStore(f"{self.db_path} is SQLite but not a Mnemon store (no insights table); "
                                  "nothing was changed", file=str(self.db_path), reason="no insights table")
        self.user_version = db.execute("PRAGMA user_version").fetchone()[0]
        info = db.execute("PRAGMA table_info(insights)").fetchall()
        self._columns = {row[1] for row in info}
        reason = None
        missing = {"id", "content", "created_at"} - self._columns
        if missing:
            raise UnreadableStore(f"{self.db_path}: insights table lacks {', '.join(sorted(missing))}",
                                  file=str(self.db_path), reason="not a Mnemon insights table")
        if self.user_version > KNOWN_USER_VERSION:
            reason = f"schema version {self.user_version} is newer than this mnemon-ls knows ({KNOWN_USER_VERSION})"
        unknown_required = [row[1] for row in info
                            if row[1] not in INSIGHT_COLUMNS and row[3] and row[4] is None]
        if unknown_required and reason is None:
            reason = f"insights has unknown required column(s) {', '.join(unknown_required)} (newer schema)"
        if "edges" in tables:
            edge_cols = [row[1] for row in db.execute("PRAGMA table_info(edges)")]
            if set(edge_cols) - set(EDGE_COLUMNS) and reason is None:
                reason = "edges has columns this mnemon-ls does not know (newer schema)"
            sql = db.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'edges'").fetchone()[0] or ""
            self._supersedes = "supersedes" in sql or "CHECK" not in sql.upper()
        if not writable and reason is None:
            reason = "the file is not writable"
        self.read_only_reason = reason
        if reason is not None:
            db.execute("PRAGMA query_only=1")
            self._has_oplog = "oplog" in tables
            return
        if "edges" not in tables or "oplog" not in tables:
            db.execute("BEGIN IMMEDIATE")
            try:
                for statement in FRESH_SCHEMA[1:3]:
                    db.execute(statement)
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        self._has_oplog = True
        if not fresh:
            mode = db.execute("PRAGMA journal_mode").fetchone()[0]
            if str(mode).lower() != "wal":
                db.execute("PRAGMA journal_mode=WAL")  # what every CLI writable open does
        db.execute("PRAGMA synchronous=FULL")

    def close(self) -> None:
        """Close the connections (reopened on next use)."""
        with self._lock:
            if self._db is not None:
                self.flush_access()
                try:
                    self._db.close()
                finally:
                    self._db = None
                    self._verified = None
                    self._degraded = None
            self.index.close()

    # ------------------------------------------------------------------ transactions

    def _retry(self, action: Callable[[], Any]) -> Any:
        deadline = time.monotonic() + self.lock_timeout
        delay = 0.002
        while True:
            try:
                return action()
            except sqlite3.OperationalError as exc:
                if not _is_busy(exc):
                    raise
                if time.monotonic() >= deadline:
                    raise StoreBusy(
                        f"{self.db_path}: another process kept the store busy for more than "
                        f"{self.lock_timeout:g} s; nothing was written. Retry when it has finished",
                        file=str(self.db_path), timeoutSeconds=self.lock_timeout) from None
                time.sleep(delay)
                delay = min(delay * 2, 0.05)

    def _write(self, body: Callable[[sqlite3.Connection], Any]) -> Any:
        """Run ``body(db)`` in ``BEGIN IMMEDIATE`` ... ``COMMIT`` (retried while busy, see :meth:`_retry`)."""
        self._conn()
        if self._degraded is not None:
            raise self._degraded  # storage-full / storage-readonly, naming mnemon.db
        if self.read_only_reason is not None:
            raise SpaceReadOnly(self.notice or "read-only", spaceId=self.space_id, file=str(self.db_path),
                                reason=self.read_only_reason)

        def attempt() -> Any:
            db = self._conn()
            db.execute("BEGIN IMMEDIATE")
            try:
                result = body(db)
                db.execute("COMMIT")
                return result
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
        return self._retry(attempt)

    def _read(self, body: Callable[[sqlite3.Connection], Any]) -> Any:
        """Run ``body(db)`` in one read transaction (a consistent snapshot), retried while busy."""
        def attempt() -> Any:
            db = self._conn()
            db.execute("BEGIN")
            try:
                return body(db)
            finally:
                if db.in_transaction:
                    db.execute("COMMIT")
        return self._retry(attempt)

    def _now(self) -> str:
        return rfc3339(self.clock())

    def _oplog(self, db: sqlite3.Connection, operation: str, insight_id: str, detail: str, now: str) -> None:
        if not self._has_oplog:
            return
        db.execute("INSERT INTO oplog(operation, insight_id, detail, created_at) VALUES(?, ?, ?, ?)",
                   (operation, insight_id or "", detail or "", now))
        db.execute("DELETE FROM oplog WHERE id <= (SELECT max(id) FROM oplog) - ?", (OPLOG_CAP,))

    # ------------------------------------------------------------------ side index sync

    def _fingerprint(self, db: sqlite3.Connection) -> dict:
        rowid = db.execute("SELECT coalesce(max(rowid), 0) FROM insights").fetchone()[0]
        oplog = db.execute("SELECT coalesce(max(id), 0) FROM oplog").fetchone()[0] if self._has_oplog else 0
        active = db.execute("SELECT count(*) FROM insights WHERE deleted_at IS NULL").fetchone()[0]
        total = db.execute("SELECT count(*) FROM insights").fetchone()[0]
        return {"rowid": rowid, "oplog": oplog, "active": active, "total": total}

    def _sync(self, db: sqlite3.Connection, *, force: bool = False) -> dict:
        """Bring the side index up to ``mnemon.db`` (call inside a transaction). Returns the fingerprint."""
        version = db.execute("PRAGMA data_version").fetchone()[0]
        verified = self._verified
        try:
            self.index.connect()
        except sqlite3.DatabaseError:
            if not self._index_to_memory():
                self.index.reset()
        except OSError:  # storage-full / -readonly creating the index file
            if not self._index_to_memory():
                raise
        if not force and verified is not None and verified[0] == version and verified[1] == self.index.opens:
            return verified[2]
        fp = self._fingerprint(db)
        try:
            self._catch_up(db, fp, force)
        except (sqlite3.DatabaseError, OSError) as exc:
            if isinstance(exc, sqlite3.OperationalError) and _is_busy(exc):
                raise
            if not self._index_to_memory():  # a full disk must not cost the index file
                if isinstance(exc, OSError):
                    raise
                self.index.reset()
            self._catch_up(db, fp, True)
        self.index.connect()
        self._verified = (version, self.index.opens, fp)
        return fp

    def _index_to_memory(self) -> bool:
        """On a full or read-only file system, serve this provider from an in-memory side index rebuilt
        from ``mnemon.db`` (derived data: nothing is lost, the file is kept for later); ``True`` when it
        switched, ``False`` when the file system takes writes (the caller handles the error)."""
        if self.index.path is None or fsio.writes_refused(self.index.path) is None:
            return False
        self.index.close()
        self.index = SideIndex(None)
        self._verified = None
        return True

    def _catch_up(self, db: sqlite3.Connection, fp: dict, full: bool) -> None:
        index = self.index
        stored = index.fingerprint()
        if not full and stored == fp:
            return
        if not full and stored is not None and fp["rowid"] >= stored["rowid"] and fp["oplog"] >= stored["oplog"]:
            gap = False
            if fp["oplog"] > stored["oplog"]:
                low = db.execute("SELECT min(id) FROM oplog").fetchone()[0]
                gap = low is None or low > stored["oplog"] + 1
            if not gap:
                rows = [self._index_row(r) for r in
                        db.execute(f"SELECT {_ROW_COLUMNS} FROM insights WHERE rowid > ?", (stored["rowid"],))]
                named: list[str] = []
                if fp["oplog"] > stored["oplog"]:
                    marks = ",".join("?" * len(_REFRESH_OPS))
                    named = [r[0] for r in db.execute(
                        f"SELECT DISTINCT insight_id FROM oplog WHERE id > ? AND insight_id != '' "
                        f"AND operation IN ({marks})", (stored["oplog"], *_REFRESH_OPS))]
                seen = {row.id for row in rows}
                wanted = [key for key in named if key not in seen]
                found: set[str] = set()
                for chunk in iter_chunks(wanted, 500):
                    marks = ",".join("?" * len(chunk))
                    for r in db.execute(f"SELECT {_ROW_COLUMNS} FROM insights WHERE id IN ({marks})", list(chunk)):
                        rows.append(self._index_row(r))
                        found.add(r[1])
                removed = [key for key in wanted if key not in found]
                index.apply(rows, removed=removed)
                if index.counts() == (fp["active"], fp["total"]):
                    index.apply([], fingerprint=fp)
                    return
        self._reconcile(db, fp)

    def _reconcile(self, db: sqlite3.Connection, fp: dict) -> None:
        """Full pass: re-index every row whose signature differs, drop ids ``mnemon.db`` no longer has."""
        known = self.index.signatures()
        rows = [self._index_row(r) for r in db.execute(f"SELECT {_ROW_COLUMNS} FROM insights")]
        if not known:
            self.index.apply(rows, fingerprint=fp, replace_all=True)
            return
        present = {row.id for row in rows}
        changed = [row for row in rows if known.get(row.id) != row.sig()]
        removed = [key for key in known if key not in present]
        self.index.apply(changed, removed=removed, fingerprint=fp, force=True)

    @staticmethod
    def _index_row(r: Sequence[Any]) -> IndexRow:
        importance = r[4] if isinstance(r[4], int) and not isinstance(r[4], bool) else None
        return IndexRow(id=str(r[1]), content=r[2] if isinstance(r[2], str) else "",
                        category=r[3] if isinstance(r[3], str) else None, importance=importance,
                        tags=_json_list(r[5]), entities=_json_list(r[6]),
                        source=r[7] if isinstance(r[7], str) else None,
                        created=epoch_seconds(r[8]) or 0.0, active=r[9] is None)

    def reindex(self) -> dict:
        """Rebuild the side index from ``mnemon.db`` (deletes the file first). Returns ``{"items", "seconds"}``."""
        with self._lock:
            started = time.perf_counter()
            self.index.reset()
            fp = self._read(lambda db: self._sync(db, force=True))
            return {"items": fp["active"], "seconds": round(time.perf_counter() - started, 3)}

    def sync(self) -> dict:
        """Catch the side index up with ``mnemon.db`` now (cheap when nothing changed); returns the fingerprint."""
        with self._lock:
            return self._read(lambda db: self._sync(db))

    # ------------------------------------------------------------------ remember

    def remember(self, content: str, *, category: str = "general", importance: int = 3,
                 tags: Sequence[str] = (), entities: Sequence[str] = (), source: str = "user",
                 entity_mode: str = "merge") -> dict[str, Any]:
        """Store one insight (validated values; see module doc). Returns the CLI's remember JSON shape:
        ``{"id", "content", "category", "importance", "tags", "entities", "action": "added", "diff_suggestion":
        "ADD", "created_at", "edges_created": {"temporal", "entity", "causal", "semantic"}, "embedded": false,
        "effective_importance", "auto_pruned": 0, "auto_pruned_ids": []}`` or, for an exact duplicate,
        ``{"id": <unstored uuid>, "content", "action": "skipped", "diff_suggestion": "DUPLICATE",
        "replaced_id": <existing id>}``."""
        return self.remember_many([{"content": content, "category": category, "importance": importance,
                                    "tags": tags, "entities": entities, "source": source}], entity_mode=entity_mode)[0]

    def remember_many(self, items: Sequence[dict[str, Any]], *, entity_mode: str = "merge") -> list[dict[str, Any]]:
        """Store several insights in one write transaction (one durable commit; all or nothing).

        ``items[i]`` holds :meth:`remember`'s keyword arguments (``content`` required, validated values);
        the results are :meth:`remember`'s, in order. An exact duplicate of a stored item or of an earlier
        item of the batch is ``skipped`` naming that item. Later items see the earlier ones (temporal and
        entity edges), as if remembered one by one."""
        prepared = [(item, graph.merge_entities(list(item.get("entities") or ()), item["content"], entity_mode))
                    for item in items]
        with self._lock:
            added: list[IndexRow] = []

            def body(db: sqlite3.Connection) -> list[dict[str, Any]]:
                added.clear()  # a busy retry runs the body again from the start
                fp = self._sync(db)
                now = self._now()
                results: list[dict[str, Any]] = []
                in_batch: dict[str, str] = {}
                pending: dict[str, list[str]] = {}
                rowid: int | None = None
                for item, final_entities in prepared:
                    content = item["content"]
                    category, importance = item.get("category") or "general", int(item.get("importance", 3))
                    tags, source = list(item.get("tags") or ()), item.get("source") or "user"
                    existing = in_batch.get(content) or self._duplicate_of(db, content)
                    if existing is not None:
                        unstored = str(uuid.uuid4())
                        self._oplog(db, "diff-skip", unstored, f"duplicate of {existing}", now)
                        results.append({"id": unstored, "content": content, "action": "skipped",
                                        "diff_suggestion": "DUPLICATE", "replaced_id": existing})
                        continue
                    new_id = str(uuid.uuid4())
                    rowid = self._insert(db, new_id, content, category, importance, tags, final_entities,
                                         source, now, now)
                    edges = self._auto_edges(db, new_id, content, source, final_entities, now, temporal=True,
                                             pending=pending)
                    for entity in final_entities:
                        pending.setdefault(entity, []).append(new_id)
                    ei = self._refresh_ei(db, new_id, importance)
                    self._oplog(db, "remember", new_id, content, now)
                    added.append(IndexRow(new_id, content, category, importance, tags, final_entities, source,
                                          epoch_seconds(now) or 0.0, True))
                    in_batch[content] = new_id
                    results.append({"id": new_id, "content": content, "category": category, "importance": importance,
                                    "tags": tags, "entities": final_entities, "action": "added",
                                    "diff_suggestion": "ADD", "created_at": now, "edges_created": edges,
                                    "semantic_candidates": [], "causal_candidates": [], "embedded": False,
                                    "effective_importance": ei, "auto_pruned": 0, "auto_pruned_ids": []})
                self._pending_fp = self._bump(fp, db, new_rows=len(added), rowid=rowid)
                return results

            self._pending_fp = None
            result = self._write(body)
            self._after_write(added, self._pending_fp)
            return result

    def _bump(self, fp: dict, db: sqlite3.Connection, *, new_rows: int, rowid: int | None = None,
              deleted: int = 0) -> dict:
        oplog = db.execute("SELECT coalesce(max(id), 0) FROM oplog").fetchone()[0] if self._has_oplog else 0
        return {"rowid": max(fp["rowid"], rowid or 0), "oplog": oplog,
                "active": fp["active"] + new_rows - deleted, "total": fp["total"] + new_rows}

    def _after_write(self, rows: list[IndexRow], fp: dict | None, removed: Sequence[str] = ()) -> None:
        """Index what we just committed (best effort: a failure is repaired by the next sync)."""
        if fp is None:
            return
        try:
            self.index.apply(rows, removed=removed, fingerprint=fp)
            if self._verified is not None:
                self._verified = (self._verified[0], self._verified[1], fp)
        except sqlite3.Error:
            self._verified = None
            try:
                self.index.reset()
            except OSError:
                pass

    def _duplicate_of(self, db: sqlite3.Connection, content: str) -> str | None:
        for candidate in self.index.duplicates(content):
            row = db.execute("SELECT content FROM insights WHERE id = ? AND +deleted_at IS NULL", (candidate,)).fetchone()
            if row is not None and row[0] == content:
                return candidate
        return None

    def _insert(self, db: sqlite3.Connection, new_id: str, content: str, category: str, importance: int,
                tags: list[str], entities: list[str], source: str, created_at: str, now: str) -> int:
        values: dict[str, Any] = {
            "id": new_id, "content": content, "category": category, "importance": importance,
            "tags": _json_dump(tags), "entities": _json_dump(entities), "source": source,
            "access_count": 0, "stored_at": now, "created_at": created_at, "updated_at": created_at,
            "deleted_at": None, "embedding": None, "effective_importance": 0.5,
        }
        names = [name for name in values if name in self._columns]
        cursor = db.execute(f"INSERT INTO insights({', '.join(names)}) VALUES({', '.join('?' * len(names))})",
                            [values[name] for name in names])
        return int(cursor.lastrowid or 0)

    def _edge(self, db: sqlite3.Connection, source: str, target: str, edge_type: str, weight: float,
              metadata: dict[str, str], now: str) -> int:
        if edge_type == "supersedes" and not self._supersedes:
            return 0
        try:
            db.execute("INSERT OR REPLACE INTO edges(source_id, target_id, edge_type, weight, metadata, created_at) "
                       "VALUES(?, ?, ?, ?, ?, ?)", (source, target, edge_type, float(weight), _json_dump(metadata), now))
        except sqlite3.IntegrityError:
            return 0
        return 1

    def _auto_edges(self, db: sqlite3.Connection, new_id: str, content: str, source: str, entities: list[str],
                    now: str, *, temporal: bool, pending: dict[str, list[str]] | None = None) -> dict[str, int]:
        counts = {"temporal": 0, "entity": 0, "causal": 0, "semantic": 0}
        has_source = "source" in self._columns
        order = "created_at DESC, rowid DESC"
        if temporal:
            prev = None
            if has_source:
                prev = db.execute(f"SELECT id FROM insights WHERE source = ? AND deleted_at IS NULL AND id != ? "
                                  f"ORDER BY {order} LIMIT 1", (source, new_id)).fetchone()
            if prev is not None:
                counts["temporal"] += self._edge(db, prev[0], new_id, "temporal", 1.0,
                                                 {"sub_type": "backbone", "direction": "precedes"}, now)
                counts["temporal"] += self._edge(db, new_id, prev[0], "temporal", 1.0,
                                                 {"sub_type": "backbone", "direction": "succeeds"}, now)
        rows = 0
        for entity in entities:
            if rows >= 50:
                break
            recent = list(reversed(pending.get(entity, [])))[:5] if pending else []
            if len(recent) < 5:
                recent += [o for o in self.index.entity_neighbours(entity, 5, exclude=new_id) if o not in recent]
            for other in recent[:5]:
                if rows >= 50:
                    break
                alive = db.execute("SELECT 1 FROM insights WHERE id = ? AND +deleted_at IS NULL", (other,)).fetchone()
                if alive is None:
                    continue
                made = self._edge(db, new_id, other, "entity", 1.0, {"entity": entity}, now)
                made += self._edge(db, other, new_id, "entity", 1.0, {"entity": entity}, now)
                rows += made
                counts["entity"] += made
        if has_source:
            recent = db.execute(f"SELECT id, content FROM insights WHERE source = ? AND deleted_at IS NULL AND id != ? "
                                f"ORDER BY {order} LIMIT 10", (source, new_id)).fetchall()
            new_cue = graph.causal_cue(content)
            new_terms = TOKENIZER.term_set(content)
            for other, other_content in recent:
                other_cue = graph.causal_cue(other_content or "")
                if not new_cue and not other_cue:
                    continue
                ratio = graph.overlap(new_terms, TOKENIZER.term_set(other_content or ""))
                if ratio < 0.15:
                    continue
                cause, effect, effect_text = (other, new_id, content) if new_cue else (new_id, other, other_content)
                counts["causal"] += self._edge(db, cause, effect, "causal", round(ratio, 4),
                                               {"overlap": f"{ratio:.4f}",
                                                "sub_type": graph.causal_sub_type(effect_text or "")}, now)
        return counts

    def _refresh_ei(self, db: sqlite3.Connection, item_id: str, importance: int) -> float:
        if "effective_importance" not in self._columns:
            return 0.5
        edges = db.execute("SELECT (SELECT count(*) FROM edges WHERE source_id = ?) + "
                           "(SELECT count(*) FROM edges WHERE target_id = ?)", (item_id, item_id)).fetchone()[0]
        base = {5: 1.0, 4: 0.8, 3: 0.5, 2: 0.3}.get(importance, 0.15)
        value = round(base * (1 + 0.1 * min(edges, 5)), 6)
        db.execute("UPDATE insights SET effective_importance = ? WHERE id = ?", (value, item_id))
        return value

    # ------------------------------------------------------------------ search

    def search(self, query: str, *, limit: int, mode: str = "smart", category: str | None = None,
               source: str | None = None, intent: str | None = None, keep: KeepFn | None = None) -> SearchOutcome:
        """Ranked items for ``query`` (see module doc), at most ``limit``; ``keep(tags)`` false drops an item
        before the cut. ``intent`` is accepted for CLI parity and does not change the embedded ranking."""
        with self._lock:
            if mode == "basic":
                outcome = self._read(lambda db: self._basic(db, query, limit, category, source, keep))
            else:
                outcome = self._read(lambda db: self._ranked(db, query, limit, mode, category, source, keep))
            if self.read_only_reason is not None:
                outcome.notices.append(self.notice or "")
            elif self.track_access and outcome.items:
                self._touch([item.id for item in outcome.items], "search" if mode == "keyword" else
                            ("recall:basic" if mode == "basic" else "recall"), query)
            return outcome

    def _ranked(self, db: sqlite3.Connection, query: str, limit: int, mode: str, category: str | None,
                source: str | None, keep: KeepFn | None) -> SearchOutcome:
        self._sync(db)
        terms = TOKENIZER.query_terms(query)
        if not terms:
            return SearchOutcome([], sparse_hint(0, limit))
        pool = max(64, limit * 6)
        total = (self._verified[2]["active"] if self._verified else 0) or self.index.counts()[0]
        candidates, _strategy = self.index.search(terms, pool, total, category=category, source=source)
        fetched = len(candidates)
        best = max((c[1] or 0.0 for c in candidates), default=0.0) or 1.0
        now = self.clock().timestamp()
        scored: list[tuple[float, int, float, str, list[str]]] = []
        dropped = 0
        for ident, bm25, text, importance, created, tags_json in candidates:
            tags = _json_list(tags_json)
            if keep is not None and not keep(tags):
                dropped += 1
                continue
            held = set(text.split())
            cover = coverage(terms, held)
            if cover <= 0:
                continue
            imp = importance if isinstance(importance, int) else 3
            age_days = max(0.0, (now - created) / 86400) if created else 3650.0
            relevance = max(0.0, bm25) / best if bm25 is not None else 0.5
            score = cover * (0.73 + 0.14 * exactness(terms, held) + 0.06 * relevance
                             + 0.04 * (min(max(imp, 1), 5) - 1) / 4 + 0.03 * 0.5 ** (age_days / 180))
            scored.append((min(1.0, score), imp, created, ident, tags))
        scored.sort(key=lambda s: (-s[0], -s[1], -s[2], s[3]))
        chosen = scored[:limit]
        scores = {s[3]: (round(s[0], 4), "keyword") for s in chosen}
        if mode == "smart" and chosen:
            self._expand(db, chosen, scores, limit, keep, category, source)
        items = self._load(db, scores)
        items.sort(key=lambda it: (-(it.score or 0.0), -(it.importance or 0), -(epoch_seconds(it.created_at) or 0),
                                   it.id))
        items = items[:limit]
        return SearchOutcome(items, sparse_hint(len(items), limit), fetched=fetched, dropped=dropped)

    def _expand(self, db: sqlite3.Connection, chosen: list, scores: dict[str, tuple[float, str]], limit: int,
                keep: KeepFn | None, category: str | None, source: str | None) -> None:
        """Smart mode: neighbours of strong hits over causal/semantic edges (module doc)."""
        extra: dict[str, tuple[float, str]] = {}
        for score, _imp, _created, ident, _tags in chosen[:5]:
            if score < 0.6:
                continue
            for other, edge_type, weight in db.execute(
                    "SELECT target_id, edge_type, weight FROM edges WHERE source_id = ? AND edge_type IN "
                    "('causal','semantic') UNION ALL SELECT source_id, edge_type, weight FROM edges "
                    "WHERE target_id = ? AND edge_type IN ('causal','semantic') LIMIT 40", (ident, ident)):
                if other in scores:
                    continue
                value = round(0.45 * score * max(0.0, min(1.0, float(weight or 0))), 4)
                if value > extra.get(other, (0.0, ""))[0]:
                    extra[other] = (value, edge_type)
        if not extra:
            return
        ranked = sorted(extra.items(), key=lambda kv: (-kv[1][0], kv[0]))[: max(1, limit // 2) * 3]
        marks = ",".join("?" * len(ranked))
        rows = db.execute(f"SELECT id, tags, category, source FROM insights WHERE +deleted_at IS NULL AND id IN ({marks})",
                          [key for key, _ in ranked]).fetchall()
        allowed = set()
        for ident, tags_json, cat, src in rows:
            if keep is not None and not keep(_json_list(tags_json)):
                continue
            if (category is not None and cat != category) or (source is not None and src != source):
                continue
            allowed.add(ident)
        added = 0
        for key, value in ranked:
            if key in allowed and added < max(1, limit // 2):
                scores[key] = value
                added += 1

    def _load(self, db: sqlite3.Connection, scores: dict[str, tuple[float | None, str]]) -> list[Item]:
        if not scores:
            return []
        items: list[Item] = []
        keys = list(scores)
        for chunk in iter_chunks(keys, 500):
            marks = ",".join("?" * len(chunk))
            for r in db.execute("SELECT id, content, category, importance, tags, entities, source, created_at "
                                f"FROM insights WHERE +deleted_at IS NULL AND id IN ({marks})", list(chunk)):
                score, via = scores[r[0]]
                items.append(self._item(r, score, via))
        return items

    @staticmethod
    def _item(r: Sequence[Any], score: float | None, via: str | None) -> Item:
        importance = r[3] if isinstance(r[3], int) and not isinstance(r[3], bool) else None
        return Item(id=r[0], content=r[1] or "", category=r[2] if isinstance(r[2], str) else "general",
                    importance=importance, tags=_json_list(r[4]), entities=_json_list(r[5]),
                    source=r[6] if isinstance(r[6], str) else None, created_at=r[7], score=score, matched_via=via)

    def _basic(self, db: sqlite3.Connection, query: str, limit: int, category: str | None, source: str | None,
               keep: KeepFn | None) -> SearchOutcome:
        pattern = "%" + query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        sql = ("SELECT id, content, category, importance, tags, entities, source, created_at FROM insights "
               "WHERE deleted_at IS NULL AND content LIKE ? ESCAPE '\\'")
        args: list[Any] = [pattern]
        if category is not None:
            sql += " AND category = ?"
            args.append(category)
        if source is not None:
            sql += " AND source = ?"
            args.append(source)
        sql += " ORDER BY importance DESC, created_at DESC, id ASC"
        items: list[Item] = []
        fetched = dropped = 0
        for r in db.execute(sql, args):
            fetched += 1
            item = self._item(r, None, "basic")
            if keep is not None and not keep(item.tags):
                dropped += 1
                continue
            items.append(item)
            if len(items) >= limit:
                break
        return SearchOutcome(items, sparse_hint(len(items), limit), fetched=fetched, dropped=dropped)

    def _touch(self, ids: list[str], operation: str, query: str) -> None:
        """Record the access bookkeeping of a read; written by :meth:`flush_access` (module doc)."""
        if "access_count" not in self._columns:
            return
        now = self._now()
        for ident in ids:
            self._pending_access[ident] = (self._pending_access.get(ident, (0, now))[0] + 1, now)
        self._pending_oplog.append((operation, f"q={query} hits={len(ids)}", now))
        self._pending_touches += len(ids)
        if self._pending_touches >= ACCESS_FLUSH_THRESHOLD:
            self.flush_access()

    def flush_access(self) -> bool:
        """Write the pending access counters (``access_count + n``, ``last_accessed_at``) and ``recall``/
        ``search`` oplog rows of past reads in one short transaction, as the CLI would have written them
        read by read. Best effort: returns False (and keeps them pending) when the store is busy for more
        than ~0.25 s; True when nothing is pending or they were written. Call it when idle; ``close()``
        calls it too."""
        with self._lock:
            if not self._pending_access and not self._pending_oplog:
                return True
            if self.read_only_reason is not None or self._db is None:
                self._pending_access, self._pending_oplog, self._pending_touches = {}, [], 0
                return True
            db = self._db
            try:
                db.execute("PRAGMA synchronous=NORMAL")  # access counters are soft state: no fsync for them
                db.execute("BEGIN IMMEDIATE")
            except sqlite3.Error:
                db.execute("PRAGMA synchronous=FULL")
                return False
            try:
                with_time = "last_accessed_at" in self._columns
                sql = ("UPDATE insights SET access_count = access_count + ?" +
                       (", last_accessed_at = ?" if with_time else "") + " WHERE id = ?")
                db.executemany(sql, [((n, when, ident) if with_time else (n, ident))
                                     for ident, (n, when) in self._pending_access.items()])
                for operation, detail, when in self._pending_oplog:
                    self._oplog(db, operation, "", detail, when)
                db.execute("COMMIT")
                self._pending_access, self._pending_oplog, self._pending_touches = {}, [], 0
                return True
            except sqlite3.Error:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                return False
            finally:
                db.execute("PRAGMA synchronous=FULL")

    # ------------------------------------------------------------------ graph, link, forget

    def related(self, item_id: str, *, depth: int = 2, edge_type: str | None = None, limit: int = 20) -> list[Item]:
        """Breadth-first walk from ``item_id`` over edges in both directions (only ``edge_type`` when given),
        active items only, start excluded, at most ``depth`` hops and ``limit`` items. Each item carries
        ``depth`` and ``edge_type`` (the edge that reached it). Raises :class:`InvalidInput` (``id``) when
        the start is missing or forgotten."""
        types = (edge_type,) if edge_type else WALK_EDGE_TYPES

        def walk(db: sqlite3.Connection) -> list[Item]:
            if db.execute("SELECT 1 FROM insights WHERE id = ? AND +deleted_at IS NULL", (item_id,)).fetchone() is None:
                raise InvalidInput("id", "no active item with this id in the space (missing or forgotten)",
                                   id=item_id, spaceId=self.space_id)
            marks = ",".join("?" * len(types))
            seen = {item_id}
            frontier = [item_id]
            found: list[tuple[str, int, str]] = []
            for level in range(1, depth + 1):
                nxt: list[str] = []
                for node in frontier:
                    for other, kind in db.execute(
                            f"SELECT target_id, edge_type FROM edges WHERE source_id = ? AND edge_type IN ({marks}) "
                            f"UNION ALL SELECT source_id, edge_type FROM edges WHERE target_id = ? "
                            f"AND edge_type IN ({marks})", (node, *types, node, *types)):
                        if other in seen:
                            continue
                        alive = db.execute("SELECT 1 FROM insights WHERE id = ? AND +deleted_at IS NULL",
                                           (other,)).fetchone()
                        if alive is None:
                            continue
                        seen.add(other)
                        found.append((other, level, kind))
                        nxt.append(other)
                        if len(found) >= limit:
                            break
                    if len(found) >= limit:
                        break
                frontier = nxt
                if len(found) >= limit or not frontier:
                    break
            loaded = {it.id: it for it in self._load(db, {key: (None, kind) for key, _, kind in found})}
            out = []
            for key, level, kind in found:
                item = loaded.get(key)
                if item is not None:
                    item.depth, item.edge_type, item.matched_via = level, kind, kind
                    out.append(item)
            return out

        with self._lock:
            return self._read(walk)

    def link(self, source_id: str, target_id: str, *, edge_type: str = "semantic", weight: float = 0.5,
             metadata: dict[str, str] | None = None) -> dict[str, Any]:
        """Link two active items (both directions; ``supersedes`` one row source -> target, the newer one
        first). ``metadata`` gets ``created_by: mnemon-ls``. Raises :class:`InvalidInput` naming
        ``sourceId``/``targetId`` when an end is missing or forgotten, ``edgeType`` when the store's schema
        predates ``supersedes``. Returns the CLI's link JSON."""
        if edge_type not in EDGE_TYPES:
            raise InvalidInput("edgeType", "must be one of " + ", ".join(EDGE_TYPES))
        meta = {**(metadata or {}), "created_by": "mnemon-ls"}
        with self._lock:
            def body(db: sqlite3.Connection) -> dict[str, Any]:
                for field_name, key in (("sourceId", source_id), ("targetId", target_id)):
                    if db.execute("SELECT 1 FROM insights WHERE id = ? AND +deleted_at IS NULL", (key,)).fetchone() is None:
                        raise InvalidInput(field_name, "no active item with this id in the space (missing or forgotten)",
                                           id=key, spaceId=self.space_id)
                if edge_type == "supersedes" and not self._supersedes:
                    raise InvalidInput("edgeType", "this store's schema predates supersedes edges; "
                                                   "open it once with the Mnemon CLI to migrate it")
                now = self._now()
                self._edge(db, source_id, target_id, edge_type, weight, meta, now)
                if edge_type != "supersedes":
                    self._edge(db, target_id, source_id, edge_type, weight, meta, now)
                self._oplog(db, "link", source_id,
                            f"{source_id[:8]}\u2192{target_id[:8]} type={edge_type} weight={weight:.2f}", now)
                self._pending_fp = self._bump(self._sync(db), db, new_rows=0)
                return {"status": "linked", "source_id": source_id, "target_id": target_id,
                        "edge_type": edge_type, "weight": weight, "metadata": meta}
            self._pending_fp = None
            result = self._write(body)
            self._after_write([], self._pending_fp)
            return result

    def forget(self, item_id: str) -> dict[str, Any]:
        """Soft-delete one active item by exact id (``deleted_at`` = ``updated_at`` = now) and delete its
        edges, in one transaction; oplog ``forget``. Raises :class:`InvalidInput` (``id``) when no active
        item has the id. Returns ``{"id", "status": "deleted", "message"}``."""
        with self._lock:
            def body(db: sqlite3.Connection) -> dict[str, Any]:
                fp = self._sync(db)
                now = self._now()
                sets = "deleted_at = ?" + (", updated_at = ?" if "updated_at" in self._columns else "")
                args = [now, now] if "updated_at" in self._columns else [now]
                changed = db.execute(f"UPDATE insights SET {sets} WHERE id = ? AND deleted_at IS NULL",
                                     (*args, item_id)).rowcount
                if not changed:
                    raise InvalidInput("id", "no active item with this id in the space (unknown or already forgotten)",
                                       id=item_id, spaceId=self.space_id)
                db.execute("DELETE FROM edges WHERE source_id = ? OR target_id = ?", (item_id, item_id))
                self._oplog(db, "forget", item_id, "", now)
                self._pending_fp = self._bump(fp, db, new_rows=0, deleted=1)
                return {"id": item_id, "status": "deleted", "message": "Insight soft-deleted successfully"}
            self._pending_fp = None
            result = self._write(body)
            row = self._read(lambda db: db.execute(f"SELECT {_ROW_COLUMNS} FROM insights WHERE id = ?",
                                                   (item_id,)).fetchone())
            self._after_write([self._index_row(row)] if row else [], self._pending_fp)
            return result

    # ------------------------------------------------------------------ status, counts, items

    def count(self) -> int:
        """Active items."""
        with self._lock:
            return self._read(lambda db: db.execute(
                "SELECT count(*) FROM insights WHERE deleted_at IS NULL").fetchone()[0])

    def status(self) -> dict[str, Any]:
        """The CLI's status object plus ``user_version``, ``read_only``, ``notice``, ``index`` (``{"path",
        "size_bytes", "items"}``) and ``supersedes_edges`` (whether the schema allows them)."""
        with self._lock:
            def run(db: sqlite3.Connection) -> dict[str, Any]:
                self._sync(db)
                active = db.execute("SELECT count(*) FROM insights WHERE deleted_at IS NULL").fetchone()[0]
                deleted = db.execute("SELECT count(*) FROM insights WHERE deleted_at IS NOT NULL").fetchone()[0]
                by_category = {}
                if "category" in self._columns:
                    by_category = {row[0] or "general": row[1] for row in db.execute(
                        "SELECT category, count(*) FROM insights WHERE deleted_at IS NULL GROUP BY category "
                        "ORDER BY category")}
                edges = db.execute("SELECT count(*) FROM edges").fetchone()[0]
                oplog = db.execute("SELECT count(*) FROM oplog").fetchone()[0] if self._has_oplog else 0
                return {"total_insights": active, "deleted_insights": deleted, "by_category": by_category,
                        "edge_count": edges, "top_entities": self.index.top_entities(20), "oplog_count": oplog,
                        "db_path": str(self.db_path), "db_size_bytes": self.db_path.stat().st_size,
                        "user_version": self.user_version, "read_only": self.read_only_reason is not None,
                        "notice": self.notice, "supersedes_edges": self._supersedes,
                        "index": {"path": str(self.index.path), "size_bytes": self.index.size_bytes(),
                                  "items": self.index.counts()[0]}}
            return self._read(run)

    def get(self, item_id: str) -> Item | None:
        """The active item ``item_id``, or ``None`` (no access bookkeeping)."""
        with self._lock:
            items = self._read(lambda db: self._load(db, {item_id: (None, None)}))
            return items[0] if items else None

    # ------------------------------------------------------------------ merge pair

    def export_items(self) -> tuple[list[ExportItem], list[ExportEdge]]:
        """Every active item (oldest first) and the edges among them."""
        def run(db: sqlite3.Connection):
            items = []
            order = "created_at ASC, rowid ASC"
            for r in db.execute("SELECT id, content, category, importance, tags, entities, source, created_at "
                                f"FROM insights WHERE deleted_at IS NULL ORDER BY {order}"):
                importance = r[3] if isinstance(r[3], int) and 1 <= r[3] <= 5 else 3
                created = parse_time(r[7])
                items.append(ExportItem(id=r[0], content=r[1] or "", category=r[2] if isinstance(r[2], str) else "general",
                                        importance=importance, tags=_json_list(r[4]), entities=_json_list(r[5]),
                                        source=r[6] if isinstance(r[6], str) and r[6] else "user",
                                        created_at=rfc3339(created) if created else self._now()))
            ids = {item.id for item in items}
            edges = []
            for src, tgt, kind, weight, meta in db.execute(
                    "SELECT source_id, target_id, edge_type, weight, metadata FROM edges ORDER BY rowid"):
                if src in ids and tgt in ids:
                    try:
                        parsed = json.loads(meta) if meta else {}
                    except ValueError:
                        parsed = {}
                    clean = {str(k): str(v) for k, v in parsed.items()} if isinstance(parsed, dict) else {}
                    edges.append(ExportEdge(src, tgt, kind, float(weight if weight is not None else 1.0), clean))
            return items, edges
        with self._lock:
            return self._read(run)

    def import_items(self, items: Sequence[ExportItem], edges: Sequence[ExportEdge] = (),
                     batch: int = 500) -> dict[str, Any]:
        """Import items; see :meth:`_import_items`. The ``mnemon.db`` page cache is :data:`BULK_CACHE_KIB`
        while it runs and :data:`CACHE_KIB` again afterwards (pages beyond it are freed)."""
        with self._lock:
            db = self._conn()
            db.execute(f"PRAGMA cache_size={-BULK_CACHE_KIB}")
            try:
                return self._import_items(items, edges, batch)
            finally:
                if self._db is not None:
                    self._db.execute(f"PRAGMA cache_size={-CACHE_KIB}")

    def _import_items(self, items: Sequence[ExportItem], edges: Sequence[ExportEdge] = (),
                      batch: int = 500) -> dict[str, Any]:
        """Import items (keeping content, category, importance, tags, entities, source, created_at) in
        batches of ``batch`` per transaction. Exact duplicates of active content (or of an earlier item of
        the same import) are ``skipped`` and name the existing id. Entity and causal edges as remember makes
        them; the temporal backbone is rebuilt per source in time order; ``edges`` (by source ids) are copied
        one row each when both ends landed (``temporal`` edges are not copied: the backbone replaces them).
        Returns the CLI's import shape ``{"imported", "updated": 0, "skipped", "errors", "edges_inserted",
        "results": [{"index", "id", "source_id", "content", "action": "added"|"skipped"|"", "error"?}]}``."""
        results: list[dict[str, Any]] = []
        mapping: dict[str, str] = {}
        totals = {"imported": 0, "updated": 0, "skipped": 0, "errors": 0, "edges_inserted": 0}
        with self._lock:
            for start in range(0, len(items), batch):
                chunk = list(items[start:start + batch])
                added_rows: list[IndexRow] = []

                def body(db: sqlite3.Connection) -> list[dict[str, Any]]:
                    fp = self._sync(db)
                    out: list[dict[str, Any]] = []
                    seen: dict[str, str] = {}
                    pending: dict[str, list[str]] = {}
                    new_ids: list[tuple[str, str, str]] = []
                    for offset, item in enumerate(chunk):
                        index = start + offset
                        now = self._now()
                        try:
                            existing = seen.get(item.content) or self._duplicate_of(db, item.content)
                            if existing is not None:
                                self._oplog(db, "import-skip", existing, f"duplicate of {existing}", now)
                                out.append({"index": index, "id": existing, "source_id": item.id,
                                            "content": item.content, "action": "skipped"})
                                mapping[item.id] = existing
                                continue
                            new_id = str(uuid.uuid4())
                            created = rfc3339(parse_time(item.created_at) or self.clock())
                            rowid = self._insert(db, new_id, item.content, item.category, item.importance,
                                                 list(item.tags), list(item.entities), item.source, created, now)
                            self._auto_edges(db, new_id, item.content, item.source, list(item.entities), now,
                                             temporal=False, pending=pending)
                            for entity in item.entities:
                                pending.setdefault(entity, []).append(new_id)
                            self._oplog(db, "import", new_id, item.content, now)
                            seen[item.content] = new_id
                            mapping[item.id] = new_id
                            new_ids.append((new_id, item.source, created))
                            added_rows.append(IndexRow(new_id, item.content, item.category, item.importance,
                                                       list(item.tags), list(item.entities), item.source,
                                                       epoch_seconds(created) or 0.0, True))
                            fp = {**fp, "rowid": max(fp["rowid"], rowid)}
                            out.append({"index": index, "id": new_id, "source_id": item.id, "content": item.content,
                                        "action": "added"})
                        except sqlite3.IntegrityError as exc:
                            out.append({"index": index, "id": "", "source_id": item.id, "content": item.content,
                                        "action": "", "error": f"insert insight: {exc}"})
                    now = self._now()
                    self._rebuild_backbone(db, new_ids, now)
                    importance_of = {r.id: r.importance or 3 for r in added_rows}
                    for new_id, _src, _created in new_ids:
                        self._refresh_ei(db, new_id, importance_of[new_id])
                    self._pending_fp = self._bump(fp, db, new_rows=len(new_ids))
                    return out

                self._pending_fp = None
                out = self._write(body)
                self._after_write(added_rows, self._pending_fp)
                results.extend(out)
            for row in results:
                key = "imported" if row["action"] == "added" else ("skipped" if row["action"] == "skipped" else "errors")
                totals[key] += 1
            copy = [e for e in edges if e.edge_type != "temporal" and e.source_id in mapping and e.target_id in mapping
                    and mapping[e.source_id] != mapping[e.target_id]]
            if copy:
                def link_all(db: sqlite3.Connection) -> int:
                    now = self._now()
                    made = 0
                    for e in copy:
                        made += self._edge(db, mapping[e.source_id], mapping[e.target_id], e.edge_type,
                                           max(0.0, min(1.0, e.weight)), e.metadata, now)
                    return made
                totals["edges_inserted"] = self._write(link_all)
            if len(items) >= batch:
                self._checkpoint()
        return {**totals, "auto_pruned": 0, "auto_pruned_ids": [], "results": results}

    def _checkpoint(self) -> None:
        """Fold the WAL back into ``mnemon.db`` and truncate it after a bulk write (best effort)."""
        try:
            self._conn().execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.Error:
            pass

    def _rebuild_backbone(self, db: sqlite3.Connection, new_ids: list[tuple[str, str, str]], now: str) -> None:
        """Place each imported item in its source's chronological backbone (mnemon-cli.md 7.2, import)."""
        if "source" not in self._columns:
            return
        for new_id, source, created in sorted(new_ids, key=lambda t: (t[2], t[0])):
            rowid = db.execute("SELECT rowid FROM insights WHERE id = ?", (new_id,)).fetchone()[0]
            # range scans on (source, created_at); ties on created_at are ordered by rowid, as the CLI does
            prev = next((r[:1] for r in db.execute(
                "SELECT id, created_at, rowid FROM insights WHERE source = ? AND deleted_at IS NULL AND id != ? "
                "AND created_at <= ? ORDER BY created_at DESC, rowid DESC LIMIT 64", (source, new_id, created))
                if r[1] < created or r[2] < rowid), None)
            nxt = next((r[:1] for r in db.execute(
                "SELECT id, created_at, rowid FROM insights WHERE source = ? AND deleted_at IS NULL AND id != ? "
                "AND created_at >= ? ORDER BY created_at ASC, rowid ASC LIMIT 64", (source, new_id, created))
                if r[1] > created or r[2] > rowid), None)
            if prev is not None and nxt is not None:
                for a, b in ((prev[0], nxt[0]), (nxt[0], prev[0])):
                    db.execute("DELETE FROM edges WHERE source_id = ? AND target_id = ? AND edge_type = 'temporal' "
                               "AND metadata LIKE '%\"sub_type\":\"backbone\"%'", (a, b))
            if prev is not None:
                self._edge(db, prev[0], new_id, "temporal", 1.0, {"sub_type": "backbone", "direction": "precedes"}, now)
                self._edge(db, new_id, prev[0], "temporal", 1.0, {"sub_type": "backbone", "direction": "succeeds"}, now)
            if nxt is not None:
                self._edge(db, new_id, nxt[0], "temporal", 1.0, {"sub_type": "backbone", "direction": "precedes"}, now)
                self._edge(db, nxt[0], new_id, "temporal", 1.0, {"sub_type": "backbone", "direction": "succeeds"}, now)


def store_path(root: Path, space_id: str) -> Path:
    """``<root>/data/<space-id>/mnemon.db``."""
    return Path(root) / "data" / space_id / DB_FILE


def is_sqlite_file(path: Path) -> bool:
    """True when ``path`` starts with the SQLite header or is empty."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(len(SQLITE_HEADER))
    except OSError:
        return False
    return head in (b"", SQLITE_HEADER)

