"""Derived SQLite side indexes: one connection, reopened when the file is replaced, rebuilt when stale.

Both the Documents search index (``documents/.search.sqlite3``) and a Memory Space's index
(``data/<id>/.mnemon-ls-index.db``) are *derived* state: never the truth, safe to delete, rebuilt
from the truth files. This base class owns what they share: opening (WAL, busy timeout, file 0600),
noticing a replaced or deleted file by its inode, a ``meta`` table whose ``schema``/``tokenizer``
versions decide when the tables are dropped and recreated (leaving no byte of the old rows in the file or its
WAL: :meth:`DerivedIndex._ensure_schema`), and ``reset()`` after corruption.
Subclasses name their tables (:attr:`TABLES`), create them (:meth:`create_tables`) and may add
per-connection setup (:meth:`after_open`).
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from pathlib import Path

from . import fsio, nowait

#: Milliseconds a statement waits for another connection's write lock.
BUSY_MS = 5000


def content_hash(content: str) -> str:
    """First 32 hex characters of the sha256 of ``content``'s exact UTF-8 bytes (lone surrogates kept): how a
    derived index (the spaces' side index, the vector indexes) knows a row's text changed."""
    return hashlib.sha256(content.encode("utf-8", "surrogatepass")).hexdigest()[:32]


class DerivedIndex:
    """A derived SQLite index at ``path`` (``None``: in memory). Not thread-safe: callers serialize.

    ``resets`` counts corruption resets, ``opens`` connection opens (a reopen means the file may be new).
    """

    #: Tables dropped and recreated when the wanted meta (schema/tokenizer versions) changes.
    TABLES: tuple[str, ...] = ()
    #: Extra ``meta`` rows written when the tables are recreated.
    INITIAL_META: dict[str, str] = {}

    def __init__(self, path: Path | None, *, schema: int, tokenizer: int) -> None:
        self.path = Path(path) if path is not None else None
        self._wanted = {"schema": str(schema), "tokenizer": str(tokenizer)}
        self._db: sqlite3.Connection | None = None
        self._inode: int | None = None
        self.resets = 0
        self.opens = 0
        #: True while the connection is a read-only snapshot (the file system is full or read-only).
        self.degraded = False

    def connect(self) -> sqlite3.Connection:
        """The open connection (reopened when the file was replaced or deleted; schema ensured).

        On a full or read-only file system an existing, current index is opened as a read-only
        snapshot (:func:`open_snapshot`; :attr:`degraded` set) so searches keep working; writes through
        it fail with ``sqlite3.OperationalError`` (callers fall back as for a busy index), and the
        normal connection comes back once the file system takes writes again."""
        if self._db is not None and self.degraded and fsio.writes_refused(self.path) is None:
            self.close()
        if self._db is not None and self.path is not None:
            try:
                if os.stat(self.path).st_ino != self._inode:
                    self.close()
            except FileNotFoundError:
                self.close()
        if self._db is not None:
            return self._db
        nowait.check(self.path or "an index")  # opening ensures the schema (writes): not on an event loop
        try:
            return self._open_writable()
        except (sqlite3.Error, OSError) as exc:
            if self.path is None or fsio.writes_refused(self.path) is None:
                raise
            # Full or read-only: a current index still serves reads; else a storage error (an OSError,
            # which callers treat like an unwritable directory: e.g. Documents index in memory).
            mapped = fsio.sqlite_storage_error(exc, self.path) if isinstance(exc, sqlite3.Error) else None
            usable, db = False, None
            if os.path.isfile(self.path) and os.path.getsize(self.path):
                db = open_snapshot(self.path)
                try:
                    usable = self._meta_current(db)
                    if usable:
                        self.after_open(db)
                except sqlite3.Error:
                    usable = False
            if not usable:
                if db is not None:
                    db.close()
                if mapped is not None:
                    raise mapped from exc
                raise
            self._db, self._inode, self.degraded = db, os.stat(self.path).st_ino, True
            self.opens += 1
            return db

    def _open_writable(self) -> sqlite3.Connection:
        if self.path is None:
            db = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        else:
            fsio.ensure_dir(self.path.parent)
            fsio.private_database(self.path)  # 0600, and refuses a linked index file (SQLite follows links)
            db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None,
                                 timeout=BUSY_MS / 1000)
        try:
            if self.path is not None:
                self._inode = os.stat(self.path).st_ino
            db.execute(f"PRAGMA busy_timeout={BUSY_MS}")
            if self.path is not None:
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
            self._ensure_schema(db)
            self.after_open(db)
        except BaseException:
            db.close()
            raise
        self._db = db
        self.degraded = False
        self.opens += 1
        return db

    def create_tables(self, db: sqlite3.Connection) -> None:
        """Create :attr:`TABLES` (inside the schema transaction). Subclasses implement it."""
        raise NotImplementedError

    def after_open(self, db: sqlite3.Connection) -> None:
        """Per-connection setup after the schema is ensured (pragmas, temp tables). Default: none."""

    def _ensure_schema(self, db: sqlite3.Connection) -> None:
        """Create the tables, or drop and recreate :attr:`TABLES` when the stored versions are not the wanted ones.

        A rebuild leaves no byte of the old rows in the file: the dropped pages are zeroed (``secure_delete``, so
        a term an old version indexed, e.g. a credential, is not left in the free list), then the file is
        rewritten without its free pages (``VACUUM``) and the WAL emptied (:meth:`_compact`). Raises the
        :class:`sqlite3.Error` of the rebuild (nothing of it committed)."""
        db.execute("CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT)")
        if self._meta_current(db):
            return
        secure = db.execute("PRAGMA secure_delete").fetchone()[0]
        db.execute("PRAGMA secure_delete=ON")
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                if self._meta_current(db):  # another connection rebuilt it while we waited
                    db.execute("COMMIT")
                    return
                marks = ", ".join("?" for _ in self.TABLES)
                old = db.execute(f"SELECT count(*) FROM sqlite_master WHERE name IN ({marks})",
                                 self.TABLES).fetchone()[0]
                for table in self.TABLES:
                    db.execute(f"DROP TABLE IF EXISTS {table}")
                self.create_tables(db)
                db.execute("DELETE FROM meta")
                db.executemany("INSERT INTO meta(key, value) VALUES(?, ?)",
                               [*self._wanted.items(), *self.INITIAL_META.items()])
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
            if old:  # a rebuild, not the first creation: rewrite the file without the dropped pages
                self._compact(db)
        finally:
            db.execute(f"PRAGMA secure_delete={'FAST' if secure == 2 else int(secure)}")  # as it was

    def _compact(self, db: sqlite3.Connection) -> None:
        """After a rebuild: write the WAL back, rewrite the file without its free pages (``VACUUM``) and empty
        the WAL (``wal_checkpoint(TRUNCATE)``), so neither file keeps a page of the old rows. Another process
        still reading the old rows can hold a checkpoint back (a busy or locked answer): the zeroed pages then
        reach the file at the next checkpoint, and the WAL is removed when the last connection closes."""
        if self.path is None:
            return
        try:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            db.execute("VACUUM")
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise

    def _meta_current(self, db: sqlite3.Connection) -> bool:
        found = dict(db.execute("SELECT key, value FROM meta").fetchall())
        return all(found.get(k) == v for k, v in self._wanted.items())

    def close(self) -> None:
        """Close the connection (reopened on the next use)."""
        if self._db is not None:
            try:
                self._db.close()
            finally:
                self._db = None
                self._inode = None
                self.degraded = False

    def reset(self) -> None:
        """Delete the index files (after corruption); the next use starts empty and is rebuilt."""
        self.close()
        self.resets += 1
        if self.path is not None:
            for suffix in ("", "-wal", "-shm", "-journal"):
                try:
                    os.unlink(f"{self.path}{suffix}")
                except FileNotFoundError:
                    pass


def open_snapshot(path: Path) -> sqlite3.Connection:
    """A read-only connection to the SQLite file ``path`` that needs no write at all (URI
    ``mode=ro&immutable=1``: no ``-shm``/``-wal`` is created or grown, no lock is taken). For reads on
    a full or read-only file system only: it does not see later writes by others, so callers drop it
    as soon as :func:`mnemon_ls.fsio.writes_refused` says writes work again."""
    from urllib.parse import quote

    uri = f"file:{quote(Path(path).as_posix())}?mode=ro&immutable=1"
    return sqlite3.connect(uri, uri=True, check_same_thread=False, isolation_level=None)


def open_existing(path: Path, *, timeout: float = 10.0) -> sqlite3.Connection:
    """A read-write connection (autocommit: ``isolation_level=None``) to the *existing* SQLite file
    ``path`` (URI ``mode=rw``): a missing file is an error (:class:`sqlite3.OperationalError`), never
    created, so SQLite never makes a database of its own mode (0644 under umask 022) where one of ours
    vanished; the journal, ``-wal`` and ``-shm`` files it creates take the database file's mode.
    ``timeout`` is seconds to wait for a lock."""
    from urllib.parse import quote

    return sqlite3.connect(f"file:{quote(Path(path).as_posix())}?mode=rw", uri=True, timeout=timeout,
                           isolation_level=None)


def open_reader(path: Path, *, timeout: float = 5.0) -> sqlite3.Connection:
    """A connection that only reads the existing SQLite file ``path`` and leaves its directory as it found it.

    SQLite creates ``<file>-wal`` and ``<file>-shm`` beside a WAL-mode database for every reader, and only a
    read-write connection that closes last checkpoints and removes them; a ``mode=ro`` connection leaves
    both behind (a Mnemon CLI then finds an un-checkpointed WAL and ``pack export`` refuses the store). So
    when the file and its directory are writable this is a read-write connection (URI ``mode=rw``: a missing
    file is an error, never created) with ``PRAGMA query_only=1``, which can write nothing but the checkpoint
    its close does; otherwise ``mode=ro``. ``timeout`` is seconds to wait for a lock. Raises
    :class:`sqlite3.Error` as :func:`sqlite3.connect` does."""
    from urllib.parse import quote

    target = Path(path)
    writable = os.access(target, os.W_OK) and os.access(target.parent, os.W_OK)
    uri = f"file:{quote(target.as_posix())}?mode={'rw' if writable else 'ro'}"
    db = sqlite3.connect(uri, uri=True, timeout=timeout)
    if writable:
        try:
            db.execute("PRAGMA query_only=1")
        except BaseException:
            db.close()
            raise
    return db
