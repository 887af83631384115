"""The vector side index of one native space: ``data/<space-id>/.mnemon-ls-vectors.db`` (derived, ours alone).

Beside ``mnemon.db`` and the full-text side index (:mod:`mnemon_ls.spaces.index`); the Mnemon CLI never
opens it and deleting it only costs re-embedding. Schema (:data:`SCHEMA_VERSION`)::

    meta(key TEXT PRIMARY KEY, value TEXT)
    vectors(seq INTEGER PRIMARY KEY, model TEXT NOT NULL, dim INTEGER NOT NULL, id TEXT NOT NULL,
            chash TEXT NOT NULL, vec BLOB NOT NULL, UNIQUE(model, dim, id))

- ``vec`` is little-endian float32, ``4 * dim`` bytes, L2-normalised (the Mnemon CLI's blob format,
  mnemon-cli.md 6.3); ``chash`` the content hash of the embedded text (:func:`content_hash`), so an edited
  item is embedded again.
- Vectors are keyed by ``(model, dim, id)``: another model's vectors are never mixed in; they stay until
  :meth:`VectorStore.drop_other_models` and are reported by :meth:`VectorStore.models`.
- Writes are ``INSERT ... ON CONFLICT(model, dim, id) DO UPDATE`` in one transaction per batch: a process
  killed mid-batch leaves either the whole batch or none, never a duplicate (the unique key).
- ``seq`` grows with each write; a reader keeps the matrix of one model in memory and loads rows with a
  larger ``seq`` when another connection committed (``PRAGMA data_version``).

Memory: the matrix is ``float32``, ``4 * dim`` bytes per item (100,000 items x 384 = 147 MiB), plus the ids;
rows are streamed from SQLite into it (no transient list of every blob).
"""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path
from typing import Any, Iterable, Sequence

SCHEMA_VERSION = 1
VECTOR_FILE = ".mnemon-ls-vectors.db"
_GROW = 1024


class VectorStore:
    """The vector file at ``path`` (module doc) and the in-memory matrix of model ``model`` / ``dim``.

    Thread-safe (one lock; one connection shared by the embedding worker and readers). Raises
    ``sqlite3.Error`` on a broken file (the engine then deletes and rebuilds it)."""

    def __init__(self, path: Path, model: str, dim: int) -> None:
        import numpy

        self._np = numpy
        self.path = Path(path)
        self.model = model
        self.dim = dim
        self._lock = threading.RLock()
        self._db: sqlite3.Connection | None = None
        self._matrix = numpy.zeros((0, dim), dtype=numpy.float32)
        self._ids: list[str | None] = []
        self._row: dict[str, int] = {}
        self._seq = 0
        self._data_version: int | None = None

    # ------------------------------------------------------------------ file

    def connect(self) -> sqlite3.Connection:
        """The open connection (created, with its schema, on first use)."""
        with self._lock:
            if self._db is None:
                try:  # 0600 like every file we write (invariant 6); SQLite gives -wal/-shm the same mode
                    os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
                except FileExistsError:
                    pass
                db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=10.0)
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
                db.execute("CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT)")
                db.execute("CREATE TABLE IF NOT EXISTS vectors(seq INTEGER PRIMARY KEY, model TEXT NOT NULL, "
                           "dim INTEGER NOT NULL, id TEXT NOT NULL, chash TEXT NOT NULL, vec BLOB NOT NULL, "
                           "UNIQUE(model, dim, id))")
                db.execute("INSERT OR IGNORE INTO meta(key, value) VALUES('schema', ?)", (str(SCHEMA_VERSION),))
                self._db = db
            return self._db

    def close(self) -> None:
        """Close the connection (the matrix stays until the object goes)."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    # ------------------------------------------------------------------ writes

    def put(self, rows: Sequence[tuple[str, str, Any]], refresh: bool = True) -> None:
        """Store ``(id, chash, vector)`` rows of this model in one transaction (upsert by id) and add them
        to the matrix (``refresh`` false: only write them; the next :meth:`sync` loads the file)."""
        if not rows:
            return
        np = self._np
        with self._lock:
            db = self.connect()
            db.execute("BEGIN IMMEDIATE")
            try:
                db.executemany(
                    "INSERT INTO vectors(model, dim, id, chash, vec) VALUES(?, ?, ?, ?, ?) "
                    "ON CONFLICT(model, dim, id) DO UPDATE SET chash = excluded.chash, vec = excluded.vec, "
                    "seq = (SELECT coalesce(max(seq), 0) + 1 FROM vectors)",
                    [(self.model, self.dim, key, chash, np.asarray(vec, dtype="<f4").tobytes())
                     for key, chash, vec in rows])
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
            if refresh:
                self._refresh(db)

    def remove(self, ids: Iterable[str]) -> None:
        """Forget the vectors of ``ids`` (every model)."""
        keys = list(ids)
        if not keys:
            return
        with self._lock:
            db = self.connect()
            db.executemany("DELETE FROM vectors WHERE id = ?", [(k,) for k in keys])
            for key in keys:
                row = self._row.pop(key, None)
                if row is not None:
                    self._ids[row] = None
                    self._matrix[row] = 0.0

    def drop_other_models(self) -> int:
        """Delete every vector not of this model and dimension; returns how many."""
        with self._lock:
            return self.connect().execute("DELETE FROM vectors WHERE model != ? OR dim != ?",
                                          (self.model, self.dim)).rowcount

    # ------------------------------------------------------------------ reads

    def _refresh(self, db: sqlite3.Connection) -> None:
        """Load rows with a larger ``seq`` into the matrix, streamed (no list of every blob), growing the
        matrix once to the number of rows found rather than by doubling."""
        np = self._np
        self._data_version = db.execute("PRAGMA data_version").fetchone()[0]
        newer = db.execute("SELECT count(*) FROM vectors WHERE model = ? AND dim = ? AND seq > ?",
                           (self.model, self.dim, self._seq)).fetchone()[0]
        if not newer:
            return
        need = len(self._ids) + newer
        if need > self._matrix.shape[0]:
            grown = np.zeros((max(need, _GROW) if not self._ids else max(need, len(self._ids) + _GROW), self.dim),
                             dtype=np.float32)
            grown[: len(self._ids)] = self._matrix[: len(self._ids)]
            self._matrix = grown
        cursor = db.execute("SELECT seq, id, vec FROM vectors WHERE model = ? AND dim = ? AND seq > ? ORDER BY seq",
                            (self.model, self.dim, self._seq))
        for seq, key, blob in cursor:
            if len(blob) != 4 * self.dim:
                continue
            row = self._row.get(key)
            if row is None:
                row = len(self._ids)
                if row >= self._matrix.shape[0]:  # rows committed between the count and this read
                    grown = np.zeros((row + _GROW, self.dim), dtype=np.float32)
                    grown[:row] = self._matrix[:row]
                    self._matrix = grown
                self._ids.append(key)
                self._row[key] = row
            self._matrix[row] = np.frombuffer(blob, dtype="<f4")
            self._seq = max(self._seq, seq)

    def sync(self) -> None:
        """Load rows another connection committed since the last look (cheap when none did)."""
        with self._lock:
            db = self.connect()
            version = db.execute("PRAGMA data_version").fetchone()[0]
            if version != self._data_version or self._data_version is None:
                self._refresh(db)

    def count(self) -> int:
        """Vectors of this model held in memory."""
        with self._lock:
            return len(self._row)

    def has(self, key: str) -> bool:
        """Whether ``key`` has a vector of this model."""
        with self._lock:
            return key in self._row

    def search(self, query: Any, limit: int) -> list[tuple[str, float]]:
        """The ``limit`` ids with the largest cosine to ``query`` (``(dim,)`` float32, normalised), best
        first, as ``(id, cosine)``."""
        np = self._np
        self.sync()
        with self._lock:
            n = len(self._ids)
            if n == 0 or limit <= 0:
                return []
            scores = self._matrix[:n] @ np.asarray(query, dtype=np.float32)
            k = min(limit, n)
            top = np.argpartition(-scores, k - 1)[:k] if k < n else np.arange(n)
            top = top[np.argsort(-scores[top], kind="stable")]
            return [(self._ids[i], float(scores[i])) for i in top if self._ids[i] is not None]

    def models(self) -> list[dict[str, Any]]:
        """``[{"model", "dim", "vectors"}]`` of every model in the file."""
        with self._lock:
            return [{"model": m, "dim": d, "vectors": c} for m, d, c in self.connect().execute(
                "SELECT model, dim, count(*) FROM vectors GROUP BY model, dim ORDER BY model, dim")]

    def missing(self, index_path: Path, limit: int) -> list[str]:
        """Up to ``limit`` ids of active items in the full-text side index at ``index_path`` that have no
        vector of this model for their current content (the resume after a restart or a model change)."""
        with self._lock:
            db = self.connect()
            db.execute("ATTACH DATABASE ? AS idx", (str(index_path),))
            try:
                rows = db.execute(
                    "SELECT d.id FROM idx.docs d LEFT JOIN vectors v ON v.model = ? AND v.dim = ? AND v.id = d.id "
                    "WHERE d.active = 1 AND (v.id IS NULL OR v.chash != d.chash) LIMIT ?",
                    (self.model, self.dim, limit)).fetchall()
            finally:
                db.execute("DETACH DATABASE idx")
            return [r[0] for r in rows]

    def stale(self, index_path: Path) -> list[str]:
        """Ids holding a vector of this model that are no longer active in the side index."""
        with self._lock:
            db = self.connect()
            db.execute("ATTACH DATABASE ? AS idx", (str(index_path),))
            try:
                rows = db.execute("SELECT v.id FROM vectors v WHERE v.model = ? AND v.dim = ? AND NOT EXISTS "
                                  "(SELECT 1 FROM idx.docs d WHERE d.id = v.id AND d.active = 1)",
                                  (self.model, self.dim)).fetchall()
            finally:
                db.execute("DETACH DATABASE idx")
            return [r[0] for r in rows]
