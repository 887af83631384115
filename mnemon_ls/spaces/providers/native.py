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
- **A replaced file** (``pack import --replace`` in another process renames another store into place, or
  the store is removed) is noticed before each operation by the ``(st_dev, st_ino)`` of ``mnemon.db``
  against the file the connection opened (one ``stat``): the connection is reopened on the new file (or the
  operation fails when it is gone), so no write lands in the deleted file.
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
  that contains it (``retry_backoff_ms``), whatever their importance, age or BM25. What the query says beyond its
  words (:mod:`mnemon_ls.spaces.querysense`, issue 27 item 8): a time range it names is one more query group,
  held by the items created in it (those the words did not find are candidates too), and an item outside it
  scores at most 0.55 (medium); words that only ask are not query terms; a match on only a name or on one
  word more than ten items hold scores ``min(0.4 * score, 0.24)`` (low), whatever the vectors add. ``smart``
  mode adds causal/semantic neighbours of strong hits (entities are already indexed terms) (score = 0.45 * hit score *
  edge weight); ``basic`` is the CLI's ``LIKE`` scan (no score).
- **Memory**: resident memory of an open space is bounded, not growing with the number of reads: SQLite's
  page caches are capped at :data:`CACHE_KIB` (8 MiB, ``mnemon.db``) plus
  :data:`~mnemon_ls.spaces.index.INDEX_CACHE_KIB` (16 MiB, the side index), ``mnemon.db`` is not
  memory-mapped (:data:`MMAP_BYTES`), and the pending access counters hold at most
  :data:`ACCESS_FLUSH_THRESHOLD` hits (:data:`~mnemon_ls.spaces.accessflush.PENDING_CAP` with a background
  writer). Measured by ``bench/bench_spaces.py`` (results in
  ``bench/results/spaces.md``): before these caps, 1,000 recalls on 100,000 items grew a process from 27 to
  315 MiB (210 MiB mapped file pages, 89 MiB page caches; the Python heap did not grow), a bounded cache
  and not a leak. An import (:meth:`NativeProvider.import_items`) uses :data:`BULK_CACHE_KIB` while it runs.
- **Reads** bump ``access_count``/``last_accessed_at`` of returned items and log ``recall``/``search``
  like the CLI, batched: the counts are kept in memory and written in one short transaction by
  :meth:`NativeProvider.flush_access` (call it when idle), by ``close()``, or once 1,000 hits are pending
  (best effort: kept pending while the store is busy; dropped on a read-only store; ``track_access=False``
  turns it off). In a long-lived server (``access_flusher``) the read that makes them due does not write them:
  a thread of the server does, on a connection of its own (:mod:`mnemon_ls.spaces.accessflush`).

Layout: this module holds :class:`NativeProvider`'s opening, schema inspection and transactions; its other
methods come from mixins in sibling modules: :mod:`.native_sync` (the side index kept in step with
``mnemon.db``), :mod:`.native_writes` (remember, link, forget, import), :mod:`.native_recall` (search, access
bookkeeping, related; rows loaded by :mod:`.native_load`, a recall's only for the items sent),
:mod:`.native_status` (count, status, get, export). Constants, fresh schema: :mod:`.native_schema`.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Callable

from ... import fsio, nowait
from ...errors import StorageError, StorageFull, StorageReadOnly, StoreBusy, UnreadableStore
from ...sqliteindex import open_snapshot
from ..errors import SpaceReadOnly
from ..index import INDEX_FILE, SideIndex
from ..model import Clock, rfc3339, utc_now
from .base import NATIVE_CAPABILITIES
from ..accessflush import AccessFlusher
from .hybrid import SemanticEngine, semantic_side
from .native_recall import NativeRecall
from .native_schema import (
    _BUSY_SLICE_MS,
    ACCESS_FLUSH_THRESHOLD,
    BULK_CACHE_KIB,
    CACHE_KIB,
    DB_FILE,
    DEFAULT_LOCK_TIMEOUT,
    EDGE_COLUMNS,
    FRESH_SCHEMA,
    INSIGHT_COLUMNS,
    KNOWN_USER_VERSION,
    MMAP_BYTES,
    OPLOG_CAP,
    PROVIDER_ID,
    SQLITE_HEADER,
    _is_busy,
)
from .native_status import NativeStatus
from .native_sync import NativeSync
from .native_writes import NativeWrites

#: Public names; the constants are defined in :mod:`.native_schema` and re-exported here.
__all__ = ["ACCESS_FLUSH_THRESHOLD", "BULK_CACHE_KIB", "CACHE_KIB", "DB_FILE", "DEFAULT_LOCK_TIMEOUT", "EDGE_COLUMNS",
           "FRESH_SCHEMA", "INSIGHT_COLUMNS", "KNOWN_USER_VERSION", "MMAP_BYTES", "OPLOG_CAP", "PROVIDER_ID",
           "SQLITE_HEADER", "NativeProvider", "is_sqlite_file", "store_path"]

class NativeProvider(NativeWrites, NativeRecall, NativeStatus, NativeSync):
    """One native space's ``mnemon.db`` (see module doc).

    ``db_path`` is ``<root>/data/<space-id>/mnemon.db``; ``space_id`` only labels messages; ``clock``
    returns UTC now; ``lock_timeout`` seconds bound every wait for another writer; ``create`` allows
    creating a missing store (otherwise a missing file raises :class:`UnreadableStore`); ``semantic`` the
    process's :class:`~mnemon_ls.semantic.engine.SemanticEngine` for hybrid recall (``None``: keyword only);
    ``access_flusher`` writes the access counters of reads beside them (:mod:`mnemon_ls.spaces.accessflush`;
    ``None``: the read that makes them due writes them). Thread-safe
    (one lock per provider); one SQLite connection per provider, opened lazily.
    """

    provider_id = PROVIDER_ID
    capabilities = NATIVE_CAPABILITIES

    def __init__(self, db_path: Path, *, space_id: str = "", clock: Clock = utc_now,
                 lock_timeout: float = DEFAULT_LOCK_TIMEOUT, create: bool = True, track_access: bool = True,
                 semantic: "SemanticEngine | None" = None, access_flusher: "AccessFlusher | None" = None) -> None:
        self.db_path = Path(db_path)
        self.space_id = space_id or self.db_path.parent.name
        self.clock = clock
        self.lock_timeout = lock_timeout
        self.create = create
        self.track_access = track_access
        self.index = SideIndex(self.db_path.parent / INDEX_FILE)
        #: Hybrid recall (``None``: keyword only); see :mod:`mnemon_ls.semantic.spaces`.
        self.semantic = (semantic_side(semantic, self.space_id, self.db_path, self.db_path.parent / INDEX_FILE)
                         if semantic is not None else None)
        self._lock = nowait.Lock(f"space {self.space_id}")
        self._db: sqlite3.Connection | None = None
        #: ``(st_dev, st_ino)`` of the file ``_db`` opened: a replaced ``mnemon.db`` is reopened (:meth:`_replaced`).
        self._identity: tuple[int, int] | None = None
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
        #: Where the pending access counters go once due (:mod:`mnemon_ls.spaces.accessflush`, the long-lived
        #: servers); ``None``: written inline by the read that made them due.
        self.access_flusher = access_flusher
        self._aside = threading.Lock()  # one background write of the counters at a time; close() waits for it
        #: Set while the connection is a read-only snapshot because the disk is full or read-only.
        self._degraded: StorageError | None = None
        #: Connections opened, and transactions this provider committed: with ``PRAGMA data_version`` (what other
        #: connections committed), the key of the last :meth:`count` (:mod:`.native_status`).
        self._opened = 0
        self._committed = 0
        self._counted: tuple[tuple[int, int, int], int] | None = None

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
        if self._db is not None and not self._db.in_transaction and self._replaced():
            self._reopen_replaced()
        if self._db is None:
            nowait.check(self.db_path)  # opening may migrate or build: not on an event loop (mnemon_ls.nowait)
            self._db = self._open()
            self._identity = self._file_identity()
            self._opened += 1
        return self._db

    def _file_identity(self) -> tuple[int, int] | None:
        """``(st_dev, st_ino)`` of ``mnemon.db`` now, ``None`` when it is gone."""
        try:
            info = os.stat(self.db_path)
        except (FileNotFoundError, NotADirectoryError):
            return None
        return info.st_dev, info.st_ino

    def _replaced(self) -> bool:
        """True when ``mnemon.db`` is no longer the file the connection opened: a ``pack import --replace``
        (or a restore) renamed another store into place, or removed it. One ``stat`` per operation (about a
        microsecond), checked only between transactions."""
        return self._identity is not None and self._file_identity() != self._identity

    def _reopen_replaced(self) -> None:
        """Drop the connection to the replaced file (its pending access counters belonged to that store and
        go with it), forget the side-index and vector caches, and let the next use open the new file."""
        try:
            self._db.close()
        finally:
            self._db, self._identity, self._verified, self._degraded = None, None, None, None
            self._pending_access, self._pending_oplog, self._pending_touches = {}, [], 0
            self.read_only_reason = None
            self.index.close()
            if self.semantic is not None:
                self.semantic.close()

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
            refused = fsio.sqlite_storage_error(exc, path)
            if isinstance(refused, (StorageFull, StorageReadOnly)):  # the disk's problem, not the store's
                raise refused from None
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
            sql = db.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'edges'"
                             ).fetchone()[0] or ""
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
        """Close the connections (reopened on next use); the access counters of a background write under way
        are written first, then the pending ones (:meth:`flush_access`)."""
        with self._aside, self._lock:
            if self._db is not None:
                self.flush_access()
                try:
                    self._db.close()
                finally:
                    self._db = None
                    self._identity = None
                    self._verified = None
                    self._degraded = None
            self.index.close()
            if self.semantic is not None:
                self.semantic.close()

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
                nowait.check(self.db_path)  # busy: an operation run on an event loop goes to a thread
                if time.monotonic() >= deadline:
                    raise StoreBusy(
                        f"{self.db_path}: another process kept the store busy for more than "
                        f"{self.lock_timeout:g} s; nothing was written. Retry when it has finished",
                        file=str(self.db_path), timeoutSeconds=self.lock_timeout) from None
                time.sleep(delay)
                delay = min(delay * 2, 0.05)

    def _write(self, body: Callable[[sqlite3.Connection], Any]) -> Any:
        """Run ``body(db)`` in ``BEGIN IMMEDIATE`` ... ``COMMIT`` (retried while busy, see :meth:`_retry`)."""
        nowait.check(self.db_path)
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
                self._committed += 1
                return result
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
        return self._refusing(attempt)

    def _refusing(self, attempt: Callable[[], Any]) -> Any:
        """``self._retry(attempt)``, with a SQLite error that is not the store being busy raised as a stable
        error naming ``mnemon.db``: a damaged file (``SQLITE_CORRUPT``, ``SQLITE_NOTADB``: a page that no
        longer reads, found by the query that reads it) as :class:`UnreadableStore` (``reason``: SQLite's
        words), a full or read-only disk or an I/O error as the :class:`StorageError` of
        :func:`~mnemon_ls.fsio.sqlite_storage_error`. Any other error is raised as it is."""
        try:
            return self._retry(attempt)
        except sqlite3.DatabaseError as exc:
            if _is_busy(exc):
                raise
            if (getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF in (11, 26):  # SQLITE_CORRUPT, SQLITE_NOTADB
                raise UnreadableStore(
                    f"{self.db_path} is damaged ({exc}); nothing was changed. Restore it from a pack or a "
                    "backup, or move it aside and recreate the space (`mnemon-ls doctor` explains)",
                    file=str(self.db_path), reason=str(exc)) from None
            refused = fsio.sqlite_storage_error(exc, self.db_path)
            if refused is None:
                raise
            raise refused from None

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
        return self._refusing(attempt)

    def _now(self) -> str:
        return rfc3339(self.clock())

    def _oplog(self, db: sqlite3.Connection, operation: str, insight_id: str, detail: str, now: str) -> None:
        if not self._has_oplog:
            return
        db.execute("INSERT INTO oplog(operation, insight_id, detail, created_at) VALUES(?, ?, ?, ?)",
                   (operation, insight_id or "", detail or "", now))
        db.execute("DELETE FROM oplog WHERE id <= (SELECT max(id) FROM oplog) - ?", (OPLOG_CAP,))


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
