"""The vector file of one native space, ``data/<space-id>/.mnemon-ls-vectors.db``: its schema, how it is opened, and
the reads of it that do not touch the in-memory vectors.

The format is the one :mod:`.vectors` describes (schema :data:`SCHEMA_VERSION`: ``meta(key, value)`` and
``vectors(seq, model, dim, id, chash, vec)``, ``vec`` little-endian float32 of ``4 * dim`` bytes, L2-normalised;
``seq`` above every row held and every row ever deleted: :data:`NEXT_SEQ`). This module holds
:func:`open_vector_file` (mode 0600, WAL, a page cache of :data:`CACHE_KIB` KiB, the schema created), the 64-bit id
hash the store finds rows by (:func:`id_hash`), the high-water mark kept before deletes (:func:`_keep_high_water`),
and :class:`VectorFileReads`, the part of :class:`~.vectors.VectorStore` that reads the file by SQL: the exact scan
of the float32 blobs, rows read back by ``seq``, the chashes and models held, and the worker's scans against the
full-text side index. Everything here is importable from :mod:`.vectors` as before.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from pathlib import Path
from typing import Any, Sequence

from .. import fsio

SCHEMA_VERSION = 1
#: Page cache of the vector file's connection, KiB (``PRAGMA cache_size``): loads are one sequential scan.
CACHE_KIB = 1024


#: The ``seq`` of a row written now: above every row held and every row ever deleted (``meta`` key ``seq``, the
#: high-water mark :func:`_keep_high_water` records before a delete). Without it SQLite gives a new row
#: ``max(seq) + 1``, the seq of a just-deleted last row, and every reader that had loaded that row (``seq >
#: last seen``) would never load the new one.
NEXT_SEQ = ("(SELECT max(coalesce((SELECT max(seq) FROM vectors), 0), "
            "coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'seq'), 0)) + 1)")


def _keep_high_water(db: sqlite3.Connection) -> None:
    """Record the largest ``seq`` in ``meta`` (key ``seq``) before rows are deleted (:data:`NEXT_SEQ`)."""
    db.execute("INSERT INTO meta(key, value) SELECT 'seq', max(seq) FROM vectors WHERE true "
               "ON CONFLICT(key) DO UPDATE SET value = max(CAST(value AS INTEGER), CAST(excluded.value AS INTEGER)) "
               "WHERE excluded.value IS NOT NULL")


def id_hash(key: str) -> int:
    """The 64-bit hash (``blake2b``, 8 bytes, little-endian, as an unsigned int) an id is found by in memory."""
    return int.from_bytes(hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little")


def open_vector_file(path: Path) -> sqlite3.Connection:
    """A connection to the vector file at ``path`` (created with mode 0600 when missing; an older one narrowed to
    0600), in WAL mode, with its schema (:data:`SCHEMA_VERSION`). Raises ``sqlite3.Error`` and ``OSError``."""
    try:  # 0600 like every file we write (invariant 6); SQLite gives -wal/-shm the same mode
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        fsio.narrow_database(path)  # one an older version left 0644
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=10.0)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute(f"PRAGMA cache_size={-CACHE_KIB}")
    db.execute("CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT)")
    db.execute("CREATE TABLE IF NOT EXISTS vectors(seq INTEGER PRIMARY KEY, model TEXT NOT NULL, "
               "dim INTEGER NOT NULL, id TEXT NOT NULL, chash TEXT NOT NULL, vec BLOB NOT NULL, "
               "UNIQUE(model, dim, id))")
    db.execute("INSERT OR IGNORE INTO meta(key, value) VALUES('schema', ?)", (str(SCHEMA_VERSION),))
    return db


class VectorFileReads:
    """The reads of the vector file by SQL that :class:`~.vectors.VectorStore` holds (a mixin: it needs the store's
    ``path``, ``model``, ``dim``, ``_np``, ``_lock``, ``_seqs``, :meth:`connect` and ``_forget``)."""

    path: Path
    model: str
    dim: int
    _np: Any
    _lock: Any
    _seqs: Any

    # ------------------------------------------------------------------ reads of the file

    def drop_other_models(self) -> int:
        """Delete every vector not of this model and dimension; returns how many."""
        with self._lock:
            _keep_high_water(self.connect())
            return self.connect().execute("DELETE FROM vectors WHERE model != ? OR dim != ?",
                                          (self.model, self.dim)).rowcount

    def _exact_from_file(self, q: Any, limit: int) -> list[tuple[str, float]]:
        np = self._np
        best: list[tuple[float, str]] = []
        cursor = self.connect().execute("SELECT id, vec FROM vectors WHERE +model = ? AND +dim = ?",
                                        (self.model, self.dim))
        while True:
            chunk = cursor.fetchmany(4096)
            if not chunk:
                break
            chunk = [r for r in chunk if isinstance(r[1], bytes) and len(r[1]) == 4 * self.dim]
            matrix = np.frombuffer(b"".join(r[1] for r in chunk), dtype="<f4").reshape(len(chunk), self.dim)
            finite = np.isfinite(matrix).all(axis=1)
            chunk = [r for r, ok in zip(chunk, finite.tolist()) if ok]
            scores = matrix[finite] @ q
            best.extend((float(c), r[0]) for c, r in zip(scores, chunk))
            best = sorted(best, key=lambda b: -b[0])[:limit]
        return [(key, score) for score, key in best]

    def _read_rows(self, rows: list[int]) -> tuple[list[int], list[str], Any]:
        """``(seqs, ids, (len(ids), dim) float32 vectors)`` of ``rows`` read from SQLite by ``seq``, in the file's order
        (a row another connection deleted or rewrote since the last sync is left out, and so is a row whose blob
        in the file is malformed now: it is forgotten and deleted)."""
        np = self._np
        seqs = self._seqs[np.asarray(rows, dtype=np.int64)].tolist()
        db = self.connect()
        fetched: list[tuple] = []
        for start in range(0, len(seqs), 500):
            chunk = seqs[start:start + 500]
            fetched += db.execute(f"SELECT seq, id, vec FROM vectors WHERE seq IN ({','.join('?' * len(chunk))})",
                                  chunk).fetchall()
        width = 4 * self.dim
        sized = [r for r in fetched if isinstance(r[2], bytes) and len(r[2]) == width]
        matrix = np.frombuffer(b"".join(r[2] for r in sized), dtype="<f4").reshape(len(sized), self.dim)
        finite = np.isfinite(matrix).all(axis=1)
        if len(sized) < len(fetched) or not finite.all():  # edited in place (same seq) since it was loaded
            good = {r[0] for r, ok in zip(sized, finite.tolist()) if ok}
            broken = [(r[0], r[1]) for r in fetched if r[0] not in good]
            self._forget([key for _seq, key in broken if isinstance(key, str)])
            _keep_high_water(db)
            db.executemany("DELETE FROM vectors WHERE seq = ?", [(seq,) for seq, _key in broken])
            sized = [r for r, ok in zip(sized, finite.tolist()) if ok]
            matrix = matrix[finite]
        return [r[0] for r in sized], [r[1] for r in sized], matrix

    def _named(self, rows: list[int], scores: Any) -> list[tuple[str, float]]:
        """``(id, scores[row])`` of ``rows``, in their order (:meth:`_read_rows`: a row gone or malformed in the
        file is left out)."""
        seqs, keys, _matrix = self._read_rows(rows)
        key_of = dict(zip(seqs, keys))
        out = []
        for row in rows:
            key = key_of.get(int(self._seqs[row]))
            if key is not None:
                out.append((key, float(scores[row])))
        return out

    def hashes(self, ids: Sequence[str]) -> dict[str, str]:
        """``{id: chash}`` of those of ``ids`` that hold a vector of this model (read from the file)."""
        out: dict[str, str] = {}
        keys = list(ids)
        with self._lock:
            db = self.connect()
            for start in range(0, len(keys), 500):
                chunk = keys[start:start + 500]
                marks = ",".join("?" * len(chunk))
                out.update(db.execute(f"SELECT id, chash FROM vectors WHERE model = ? AND dim = ? AND id IN ({marks})",
                                      (self.model, self.dim, *chunk)))
        return out

    def models(self) -> list[dict[str, Any]]:
        """``[{"model", "dim", "vectors"}]`` of every model in the file."""
        with self._lock:
            return [{"model": m, "dim": d, "vectors": c} for m, d, c in self.connect().execute(
                "SELECT model, dim, count(*) FROM vectors GROUP BY model, dim ORDER BY model, dim")]

    def _scan(self, index_path: Path, sql: str, params: tuple) -> list[str]:
        """Run ``sql`` (first column: an id) on a connection of its own with the side index at
        ``index_path`` attached as ``idx``: the worker's scans of every row never hold the lock a search
        waits for."""
        self.connect()  # the file and its schema exist
        db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=10.0)
        try:
            db.execute("ATTACH DATABASE ? AS idx", (f"file:{index_path}?mode=ro",))
            return [r[0] for r in db.execute(sql, params)]
        finally:
            db.close()

    def missing(self, index_path: Path, limit: int) -> list[str]:
        """Up to ``limit`` ids of active items in the full-text side index at ``index_path`` that have no
        usable vector of this model for their current content (the resume after a restart or a model
        change; a blob of the wrong length counts as missing, non-finite ones are deleted on load)."""
        return self._scan(index_path,
                          "SELECT d.id FROM idx.docs d LEFT JOIN vectors v ON v.model = ? AND v.dim = ? AND v.id = "
                          "d.id WHERE d.active = 1 AND (v.id IS NULL OR v.chash != d.chash OR typeof(v.vec) != 'blob' "
                          "OR length(v.vec) != 4 * v.dim) LIMIT ?",
                          (self.model, self.dim, limit))

    def stale(self, index_path: Path) -> list[str]:
        """Ids holding a vector of this model that are no longer active in the side index."""
        return self._scan(index_path,
                          "SELECT v.id FROM vectors v WHERE v.model = ? AND v.dim = ? AND NOT EXISTS "
                          "(SELECT 1 FROM idx.docs d WHERE d.id = v.id AND d.active = 1)", (self.model, self.dim))
