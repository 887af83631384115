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
- A row whose blob is not ``4 * dim`` bytes or holds a NaN or infinity (damaged or written by hand) is never
  scored: loading skips it, forgets any vector held for its id and deletes the row, and :meth:`VectorStore.missing`
  counts a row of the wrong length as missing, so the next embedding pass embeds the item again.
- ``seq`` grows with each write; a reader keeps the matrix of one model in memory and loads rows with a
  larger ``seq`` when another connection committed (``PRAGMA data_version``).

Memory (the resident set of a process holding 100,000 vectors of 384 dimensions: bench/results/hybrid_100k.md).
Per row the store holds 16 bytes in memory: the row's ``seq`` and a 64-bit hash of its id (:func:`id_hash`) in
a sorted array. No Python object per row: the ids of the best rows are read back from SQLite by ``seq`` (one
query of a few dozen primary-key lookups per search). Two ids with the same 64-bit hash (odds about 3e-10
among 100,000 ids) would share one row: the vector search would find only one of them (derived data; keyword
recall still finds both).

- **Exact form**, up to :data:`QUANTIZE_ABOVE` vectors: ``float32`` blocks of :data:`~.heldvectors.BLOCK_ROWS`
  rows in memory (``4 * dim`` bytes per row; growing never copies them; deleted rows are reused by the next new
  id), and a search scans every row.
- **Indexed form**, above it (:attr:`VectorStore.quantized`): the rows are in the inverted file of
  :mod:`.ivf` (``data/<space-id>/.mnemon-ls-vectors.ivf``, derived from this file and rebuilt from it whenever
  it is missing, damaged, another model's or not the one this file's ``meta`` names: an old vector file simply
  gets one on first open; the first open of a 100,000-vector file builds it in about 3 s of CPU). A search
  reads the int8 codes of the rows of the cells nearest the query (about 4% of the rows at 100,000; none of
  them stays in memory), ranks them and the *tail* (rows written since the index was built, held as float32
  blocks like the exact form and scanned exactly), and re-ranks the best ``limit`` plus :data:`EXACT_MARGIN` by
  their exact cosine from the float32 blobs read from this file with their ids. When the tail grows past
  :func:`tail_limit` rows, the writer that loaded it (the embedding worker) rebuilds the index without holding
  the store's lock, and the store adopts it; a reader rebuilds only past :data:`READER_TAIL_FACTOR` times that.
  Quality against the exact scan: bench/results/hybrid_100k.md and tests/semantic/test_ann.py.

The query's spread of cosines (:meth:`VectorStore.spread`) comes, in both forms, from the moments of every live
row (``sum v``, ``sum v v^T``, float64), kept up to date through writes and deletes: one ``dim x dim`` product.

The schema, the opening of the file, :func:`id_hash` and the store's reads of the file by SQL live in
:mod:`.vectorfile` (importable from here as before); the in-memory vectors (blocks, sorted id hashes, moments,
loading rows into them) in :mod:`.heldvectors`; the inverted file in :mod:`.ivf` and :mod:`.ivf_build`.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from pathlib import Path
from typing import Any, Iterable, Sequence

from ..roots_safety import VECTOR_FILE
from . import heldvectors, ivf as ivf_mod, ivf_build
from .heldvectors import HeldVectors
from .vectorfile import (CACHE_KIB, NEXT_SEQ, SCHEMA_VERSION, VectorFileReads, _keep_high_water, id_hash,
                         open_vector_file)

log = logging.getLogger(__name__)

__all__ = ["CACHE_KIB", "NEXT_SEQ", "SCHEMA_VERSION", "VECTOR_FILE", "VectorStore", "id_hash",
           "tail_limit"]

#: Above this many rows the store keeps its vectors in the indexed form (module doc); at or below, exact search.
QUANTIZE_ABOVE = 20000
#: Rows beyond ``limit`` (at least; ``limit // 8`` when larger) whose exact cosine is computed from the file.
EXACT_MARGIN = 8
#: Rows of the tail (module doc) that make the writer rebuild the index: ``max(TAIL_MIN, rows // TAIL_SHARE)``.
TAIL_MIN = 1024
TAIL_SHARE = 32
#: A reader (a search's sync) rebuilds the index only when the tail is this many times :func:`tail_limit`.
READER_TAIL_FACTOR = 4


def tail_limit(indexed: int) -> int:
    """Tail rows past which the writer rebuilds an index of ``indexed`` rows (3,125 at 100,000: 4.6 MiB of
    float32 at 384 dimensions, and an exact scan of at most that many rows per search)."""
    return max(TAIL_MIN, indexed // TAIL_SHARE)


class VectorStore(HeldVectors, VectorFileReads):
    """The vector file at ``path`` (module doc) and the in-memory vectors of model ``model`` / ``dim``.

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
        self._blocks: list[Any] = []  # (BLOCK_ROWS, dim) float32 each: every row (exact form), the tail (indexed)
        #: The indexed form's index (module doc); its rows are rows ``0 .. _base - 1``, the blocks hold the others.
        self._ivf: ivf_mod.IvfIndex | None = None
        self._base = 0
        #: ``sum v`` (dim,) and ``sum v v^T`` (dim, dim), float64, over the live rows (:meth:`spread`).
        self._s1 = numpy.zeros(dim, dtype=numpy.float64)
        self._s2 = numpy.zeros((dim, dim), dtype=numpy.float64)
        self._buffers: dict[str, Any] = {}  # the index's read and scoring buffers, kept between searches
        self._building = threading.Lock()  # one index build at a time per store
        self._broken: str | None = None  # the index could not be read: reload at the next sync
        self._seqs = numpy.zeros(0, dtype=numpy.int64)  # row -> seq; -1 for a free (or dead indexed) row
        self._rows = 0  # rows in use or freed (the high-water mark)
        self._free: list[int] = []  # freed block rows, reused first
        self._keys = numpy.zeros(0, dtype=numpy.uint64)  # sorted id hashes of the live rows
        self._krow = numpy.zeros(0, dtype=numpy.int64)  # their rows
        self._seq = 0
        self._data_version: int | None = None

    @property
    def quantized(self) -> bool:
        """Whether the store holds the indexed form (module doc: more than :data:`QUANTIZE_ABOVE` vectors)."""
        return self._ivf is not None

    # ------------------------------------------------------------------ file

    def connect(self) -> sqlite3.Connection:
        """The open connection (created, with its schema, on first use)."""
        with self._lock:
            if self._db is None:
                db = open_vector_file(self.path)
                self._db = db
            return self._db

    def close(self) -> None:
        """Close the connection and the index file (the vectors stay until the object goes: a later search
        opens them again)."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
            if self._ivf is not None:
                self._ivf.close()

    # ------------------------------------------------------------------ writes

    def put(self, rows: Sequence[tuple[str, str, Any]], refresh: bool = True) -> None:
        """Store ``(id, chash, vector)`` rows of this model in one transaction (upsert by id) and add them
        to the matrix (``refresh`` false: only write them; the next :meth:`sync` loads the file). With
        ``refresh``, rebuilds the index when the rows loaded make it due (module doc)."""
        if not rows:
            return
        np = self._np
        with self._lock:
            db = self.connect()
            db.execute("BEGIN IMMEDIATE")
            try:
                db.executemany(
                    f"INSERT INTO vectors(seq, model, dim, id, chash, vec) VALUES({NEXT_SEQ}, ?, ?, ?, ?, ?) "
                    "ON CONFLICT(model, dim, id) DO UPDATE SET chash = excluded.chash, vec = excluded.vec, "
                    f"seq = {NEXT_SEQ}",
                    [(self.model, self.dim, key, chash, np.asarray(vec, dtype="<f4").tobytes())
                     for key, chash, vec in rows])
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
            if refresh:
                self._refresh(db)
        if refresh:
            self._rebuild_if_due(1)

    def remove(self, ids: Iterable[str]) -> None:
        """Forget the vectors of ``ids`` (every model); their rows are reused by later ids."""
        keys = list(ids)
        if not keys:
            return
        with self._lock:
            db = self.connect()
            _keep_high_water(db)
            db.executemany("DELETE FROM vectors WHERE id = ?", [(k,) for k in keys])
            self._forget(keys)

    # ------------------------------------------------------------------ loading

    def _refresh(self, db: sqlite3.Connection) -> None:
        """Load rows with a larger ``seq`` (:meth:`_load`); on the first load of a file holding more than
        :data:`QUANTIZE_ABOVE` vectors of this model, take the indexed form (:meth:`_open_index`) instead of
        reading every vector."""
        self._data_version = db.execute("PRAGMA data_version").fetchone()[0]
        if self._seq == 0 and not len(self._keys) and self._ivf is None:
            held = db.execute("SELECT count(*) FROM vectors WHERE model = ? AND dim = ?",
                              (self.model, self.dim)).fetchone()[0]
            if held > QUANTIZE_ABOVE and self._open_index(db):
                return
        # a range of the rowid in its order: "+" keeps SQLite off the (model, dim, id) index, which would
        # sort every matched row, blobs included, in a temporary B-tree
        self._seq = max(self._seq, self._load(
            db, "SELECT seq, id, vec FROM vectors WHERE seq > ? AND +model = ? AND +dim = ? ORDER BY seq",
            (self._seq, self.model, self.dim)))

    # ------------------------------------------------------------------ the index (indexed form)

    def _open_index(self, db: sqlite3.Connection, build: bool = True) -> bool:
        """Take the indexed form from the index file this file's meta row names, building it first when there is
        none or it is not that one (``build`` false: only open it). Returns whether the store holds the indexed
        form now. Holds the lock (the caller's)."""
        np = self._np
        meta = ivf_mod.read_meta(db, self.model, self.dim)
        index = None
        if meta is not None:
            try:
                index = ivf_mod.IvfIndex.open(np, self.path.parent / ivf_mod.IVF_FILE, meta, self.dim)
            except (OSError, ValueError) as exc:
                log.info("vector index %s: %s; rebuilding it", self.path.parent / ivf_mod.IVF_FILE, exc)
        if index is None:
            if not build:
                return False
            try:
                index = ivf_build.build(np, self.path, self.model, self.dim, id_hash)
            except OSError as exc:  # the index file cannot be written (a full or read-only disk): held in memory
                log.warning("vector index %s not written (%s): held in memory", self.path.parent / ivf_mod.IVF_FILE,
                            exc)
                index = ivf_build.build(np, self.path, self.model, self.dim, id_hash, to_file=False)
            ivf_build.release_freed_memory()
            if index is None:
                return False
        self._adopt(db, index)
        return True

    def _adopt(self, db: sqlite3.Connection, index: "ivf_mod.IvfIndex") -> None:
        """Hold ``index`` as the indexed form: its rows whose ``seq`` is still in this file are live (the rest
        dead), every other row of this model (written since its build, or one it skipped) is loaded into the
        tail. Replaces every in-memory vector. Holds the lock (the caller's)."""
        np = self._np
        if self._ivf is not None and self._ivf is not index:
            self._ivf.close()
        self._ivf, self._base = index, index.rows
        self._blocks, self._free, self._rows = [], [], index.rows
        self._seqs = np.full(index.rows + heldvectors.BLOCK_ROWS, -1, dtype=np.int64)
        self._buffers, self._broken = {}, None
        by_seq = np.argsort(index.seqs, kind="stable")
        ordered = index.seqs[by_seq]
        alive = np.zeros(index.rows, dtype=bool)
        cursor = db.execute("SELECT seq FROM vectors WHERE seq <= ? AND +model = ? AND +dim = ?",
                            (index.seq_high, self.model, self.dim))
        missing: list[int] = []  # live rows of the file that the index does not hold (it skipped them)
        while True:
            chunk = cursor.fetchmany(8192)
            if not chunk:
                break
            seqs = np.fromiter((r[0] for r in chunk), dtype=np.int64, count=len(chunk))
            pos = np.minimum(np.searchsorted(ordered, seqs), max(0, len(ordered) - 1))
            hit = ordered[pos] == seqs if len(ordered) else np.zeros(len(seqs), dtype=bool)
            alive[by_seq[pos[hit]]] = True
            missing.extend(seqs[~hit].tolist())
        self._seqs[: index.rows][alive] = index.seqs[alive]
        keys, rows = index.idh[alive], alive.nonzero()[0]
        order = np.argsort(keys, kind="stable")
        self._keys, self._krow = keys[order].astype(np.uint64), rows[order].astype(np.int64)
        index.seqs = index.idh = None  # held as _seqs and _keys now (1.6 MB at 100,000 rows)
        self._s1, self._s2 = index.s1.astype(np.float64), index.s2.astype(np.float64)
        index.s1 = index.s2 = None  # copied: the store's change as rows change
        dead = (~alive).nonzero()[0]
        if len(dead):
            matrix = index.decode(dead).astype(np.float64)
            self._s1 -= matrix.sum(axis=0)
            self._s2 -= matrix.T @ matrix
        self._seq = index.seq_high
        for start in range(0, len(missing), 500):
            chunk = missing[start:start + 500]
            self._load(db, f"SELECT seq, id, vec FROM vectors WHERE seq IN ({','.join('?' * len(chunk))}) "
                           "AND +model = ? AND +dim = ? ORDER BY seq", (*chunk, self.model, self.dim))
        self._seq = max(self._seq, self._load(
            db, "SELECT seq, id, vec FROM vectors WHERE seq > ? AND +model = ? AND +dim = ? ORDER BY seq",
            (self._seq, self.model, self.dim)))

    def _rebuild_due(self, factor: int) -> bool:
        """Whether the store should (re)build its index: the exact form holds more than :data:`QUANTIZE_ABOVE`
        live rows, or the tail is more than ``factor`` times :func:`tail_limit`."""
        live = len(self._keys)
        if self._ivf is None:
            return live > QUANTIZE_ABOVE
        return self._rows - self._base - len(self._free) > factor * tail_limit(self._base)

    def _rebuild_if_due(self, factor: int) -> None:
        """Build the index when :meth:`_rebuild_due` (outside the store's lock: searches go on meanwhile with
        what is held), then adopt it, or the one another process published meanwhile. A failure is logged and
        leaves the store as it was."""
        with self._lock:
            if not self._rebuild_due(factor):
                return
        if not self._building.acquire(blocking=False):
            return  # another thread of this process is building it
        try:
            index = ivf_build.build(self._np, self.path, self.model, self.dim, id_hash)
            ivf_build.release_freed_memory()
            with self._lock:
                if index is not None:
                    self._adopt(self.connect(), index)
        except (sqlite3.Error, OSError) as exc:
            log.warning("vector index of %s not rebuilt: %s", self.path, exc)
        finally:
            self._building.release()

    # ------------------------------------------------------------------ reads

    def sync(self) -> None:
        """Load rows another connection committed since the last look (cheap when none did); rebuild the
        index when the tail is :data:`READER_TAIL_FACTOR` times past :func:`tail_limit` (module doc)."""
        with self._lock:
            db = self.connect()
            if self._ivf is not None and self._ivf.handle is None and self._ivf.codes is None:
                try:  # closed (close()): the same index file again, or the file's state again if it was replaced
                    self._ivf.reopen()
                except (OSError, ValueError):
                    self._reset()
            if self._broken is not None:  # the index could not be read: hold the file's state again
                self._reset()
            version = db.execute("PRAGMA data_version").fetchone()[0]
            if version != self._data_version or self._data_version is None:
                self._refresh(db)
        self._rebuild_if_due(READER_TAIL_FACTOR)

    def _reset(self) -> None:
        """Forget every in-memory vector (the next refresh loads the file again)."""
        np = self._np
        if self._ivf is not None:
            self._ivf.close()
        self._ivf, self._base, self._broken = None, 0, None
        self._s1, self._s2 = np.zeros(self.dim, dtype=np.float64), np.zeros((self.dim, self.dim), dtype=np.float64)
        self._blocks, self._free, self._rows, self._seq = [], [], 0, 0
        self._seqs = np.zeros(0, dtype=np.int64)
        self._keys = np.zeros(0, dtype=np.uint64)
        self._krow = np.zeros(0, dtype=np.int64)
        self._buffers, self._data_version = {}, None

    def _index_failed(self, exc: Exception) -> ValueError:
        """Mark the index unreadable (the next :meth:`sync` reloads) and return the error a search raises."""
        self._broken = str(exc)
        return ValueError(f"vector index of {self.path} could not be read ({exc})")

    def count(self) -> int:
        """Vectors of this model held in memory."""
        with self._lock:
            return len(self._keys)

    def has(self, key: str) -> bool:
        """Whether ``key`` has a vector of this model."""
        np = self._np
        with self._lock:
            return bool(self._find(np.asarray([id_hash(key)], dtype=np.uint64))[1][0])

    def matrix(self) -> Any:
        """The held vectors, ``(count, dim)`` float32 in row order, as the search sees them (the index's rows
        decoded); for benchmarks and tests."""
        np = self._np
        with self._lock:
            return self._vectors_of(np.sort(self._krow))

    def search(self, query: Any, limit: int, *, exact: bool = False) -> list[tuple[str, float]]:
        """The ``limit`` ids with the largest cosine to ``query`` (``(dim,)`` float32, normalised), best
        first, as ``(id, cosine)``. Exact below :data:`QUANTIZE_ABOVE` rows; above, the indexed search of the
        module doc (``exact`` scans the float32 blobs of the file instead: the reference of the bench).
        When the index file cannot be read (cut or replaced in place under this reader) the search answers from the
        exact scan of the vector file instead, and the next one holds the file's state again (a rebuilt index).
        Raises ``sqlite3.Error`` when the vector file itself cannot be read."""
        np = self._np
        self.sync()
        with self._lock:
            n = self._rows
            if not len(self._keys) or limit <= 0:
                return []
            q = np.asarray(query, dtype=np.float32)
            if exact and self.quantized:
                return self._exact_from_file(q, limit)
            scores = np.full(n - self._base, -np.inf, dtype=np.float32)
            for number, block in enumerate(self._blocks):
                start = number * heldvectors.BLOCK_ROWS
                if start >= n - self._base:
                    break
                stop = min(n - self._base, start + heldvectors.BLOCK_ROWS)
                np.matmul(block[: stop - start], q, out=scores[start:stop])
            if self._free:
                scores[self._seqs[self._base:n] < 0] = -np.inf
            if not self.quantized:
                k = min(limit, len(self._keys))
                top = np.argpartition(-scores, k - 1)[:k] if k < n else np.arange(n)
                top = top[np.argsort(-scores[top], kind="stable")]
                top = top[self._seqs[top] >= 0]
                return self._named(top.tolist(), scores)
            k = limit + max(EXACT_MARGIN, limit // 8)  # the int8 order may swap near ties
            try:
                lists = self._ivf.probe(q, 2 * k, buffers=self._buffers)
                rows, approx = self._ivf.score(q, lists, self._buffers)
            except OSError as exc:  # the file was cut or replaced under this reader: this search scans the vector
                self._index_failed(exc)  # file exactly; the next sync holds the file's state again
                log.warning("vector index of %s unreadable (%s): exact search", self.path, exc)
                return self._exact_from_file(q, limit)
            approx[self._seqs[rows] < 0] = -np.inf
            rows = np.concatenate([rows, np.arange(self._base, n)])
            approx = np.concatenate([approx, scores])
            live = int(np.isfinite(approx).sum())
            k = min(k, live)
            if k <= 0:
                return []
            best = np.argpartition(-approx, k - 1)[:k] if k < len(approx) else np.arange(len(approx))
            best = best[np.isfinite(approx[best])]
            _seqs, keys, matrix = self._read_rows(rows[best].tolist())
            if not keys:
                return []
            ranked = sorted(zip(keys, (matrix @ q).tolist()), key=lambda f: -f[1])
            return ranked[:limit]

    def cosines(self, query: Any, ids: Sequence[str]) -> dict[str, float]:
        """``{id: cosine to query}`` (``(dim,)`` float32, normalised) of those ``ids`` that have a live row,
        without reading the vector file: exact below :data:`QUANTIZE_ABOVE` rows, the int8 codes' approximate
        cosine above (within about 0.01; read from the index file) for an indexed row. Ids without a vector
        are left out."""
        np = self._np
        keys = list(dict.fromkeys(ids))
        if not keys:
            return {}
        self.sync()
        with self._lock:
            if not len(self._keys):
                return {}
            hashes = np.array([id_hash(k) for k in keys], dtype=np.uint64)
            pos, found = self._find(hashes)
            if not found.any():
                return {}
            rows = self._krow[pos[found]]
            named = [k for k, ok in zip(keys, found.tolist()) if ok]
            try:
                out = self._vectors_of(rows) @ np.asarray(query, dtype=np.float32)
            except OSError as exc:
                raise self._index_failed(exc) from None
            return {k: float(v) for k, v in zip(named, out.tolist())}

    def spread(self, query: Any) -> tuple[int, float, float]:
        """``(rows, mean, standard deviation)`` of the cosines of ``query`` (``(dim,)`` float32, normalised)
        over every live row; ``(0, 0.0, 0.0)`` when the store is empty. The query's own null distribution: what a
        vector-only hit's cosine is judged against (:func:`~.fusion.fuse`). From the moments the store keeps up to
        date through every write and delete (``mean = q . sum v / n``, ``var = q^T (sum v v^T) q / n - mean^2``;
        float64): one ``dim x dim`` product (0.03 ms at 384) whatever the size, where a scan of a 4,096-row sample
        cost 0.6 ms at 100,000 rows, held 6 MiB, and, taken at an even stride of the rows, could be a biased
        sample (bench/results/hybrid_100k.md)."""
        np = self._np
        self.sync()
        with self._lock:
            n = len(self._keys)
            if not n:
                return 0, 0.0, 0.0
            wide = np.asarray(query, dtype=np.float64)
            mean = float(wide @ self._s1) / n
            var = float(wide @ (self._s2 @ wide)) / n - mean * mean
            return n, mean, max(0.0, var) ** 0.5

    def prepare(self) -> None:
        """Load rows another connection committed (and rebuild the index when due): the work of a search that does
        not need the query vector, for a caller to do while the query is being embedded
        (:meth:`~.spaces.SpaceSemantic.candidates`)."""
        self.sync()
