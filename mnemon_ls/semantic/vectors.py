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

Memory (the resident set of a process holding 100,000 vectors of 384 dimensions is bench/results/semantic.md's
measure). The store holds the vectors of its model in blocks of :data:`BLOCK_ROWS` rows (growing never
copies them) and per row 16 more bytes: the row's ``seq`` and a 64-bit hash of its id (:func:`id_hash`) in a
sorted array. No Python object per row: the ids of the best rows are read back from SQLite by ``seq`` (one
query of a few dozen primary-key lookups per search). Two ids with the same 64-bit hash (odds about 3e-10
among 100,000 ids) would share one row: the vector search would find only one of them (derived data;
keyword recall still finds both). Deleted rows are reused by the next new id.

- Up to :data:`QUANTIZE_ABOVE` vectors: ``float32`` blocks (``4 * dim`` bytes per row) and an exact scan.
- Above it (:attr:`VectorStore.quantized`; 100,000 x 384: 46 MiB instead of 147): each row is kept as
  ``r = v - mean`` (``mean`` of the vectors held when the store switched), as sign bits of ``r``
  (``dim / 8`` bytes) and as int8 codes of ``r`` with one float32 scale (``dim + 4`` bytes). A search ranks
  every row by the Hamming distance of its bits to the sign bits of ``q - mean`` (sentence embeddings share
  a large common direction: uncentred signs would mostly agree everywhere), re-scores the
  :data:`CANDIDATES` nearest (at least ``CANDIDATE_FACTOR * limit``) with the int8 codes
  (``q.v = scale * (q . codes) + q.mean``), computes the exact cosine of the best ``limit`` plus
  :data:`EXACT_MARGIN` of those from the float32 blobs read from the file with their ids, and returns the
  best ``limit``. Quality retention against the exact scan is measured in bench/results/semantic.md.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
from pathlib import Path
from typing import Any, Iterable, Sequence

from .. import fsio
from ..roots import VECTOR_FILE

__all__ = ["BLOCK_ROWS", "SCHEMA_VERSION", "VECTOR_FILE", "VectorStore"]

SCHEMA_VERSION = 1
#: Rows per block of the in-memory vectors (4096 x 384 float32 = 6 MiB).
BLOCK_ROWS = 4096
#: Rows read from SQLite per ``fetchmany`` while loading.
READ_CHUNK = 256
#: Page cache of the vector file's connection, KiB (``PRAGMA cache_size``): loads are one sequential scan.
CACHE_KIB = 1024
#: Above this many rows the store switches to the quantized form (module doc); at or below, exact search.
QUANTIZE_ABOVE = 20000
#: Rows re-scored with the int8 codes after the Hamming prefilter (at least ``CANDIDATE_FACTOR * limit``).
CANDIDATES = 8192
CANDIDATE_FACTOR = 16
#: Rows beyond ``limit`` (at least; ``limit // 8`` when larger) whose exact cosine is computed from the file.
EXACT_MARGIN = 8
#: Rows of int8 codes turned into float32 at a time while re-scoring (512 x 384 x 4 bytes = 768 KiB).
APPROXIMATE_ROWS = 512


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
#: Live rows :meth:`VectorStore.spread` reads at most (an even stride over the rows).
SPREAD_SAMPLE = 4096


def id_hash(key: str) -> int:
    """The 64-bit hash (``blake2b``, 8 bytes, little-endian, as an unsigned int) an id is found by in memory."""
    return int.from_bytes(hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little")


class VectorStore:
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
        self._blocks: list[Any] = []  # exact form: (BLOCK_ROWS, dim) float32 each
        self._mean: Any = None  # quantized form (module doc): set when the store switched
        # (words, rows) signs of v - mean: one word of every row contiguous (a search's popcount reads it in order)
        self._bits = numpy.zeros((self._words_for(dim), 0), dtype=numpy.uint64)
        self._codes: list[Any] = []  # (BLOCK_ROWS, dim) int8
        self._scales = numpy.zeros(0, dtype=numpy.float32)
        self._words = self._words_for(dim)
        self._seqs = numpy.zeros(0, dtype=numpy.int64)  # row -> seq; -1 for a free row
        self._rows = 0  # rows in use or freed (the high-water mark)
        self._free: list[int] = []  # freed rows, reused first
        self._keys = numpy.zeros(0, dtype=numpy.uint64)  # sorted id hashes of the live rows
        self._krow = numpy.zeros(0, dtype=numpy.int64)  # their rows
        self._seq = 0
        self._data_version: int | None = None
        #: Bumped whenever a held vector is written, forgotten or re-encoded (the spread sample's cache key).
        self._changes = 0
        #: ``(changes, sample, rows, float32 matrix, scales or None)``: :meth:`spread`'s rows, decoded.
        self._sample: tuple | None = None

    @staticmethod
    def _words_for(dim: int) -> int:
        return (dim + 63) // 64

    @property
    def quantized(self) -> bool:
        """Whether the store holds the quantized form (more than :data:`QUANTIZE_ABOVE` rows were held)."""
        return self._mean is not None

    # ------------------------------------------------------------------ file

    def connect(self) -> sqlite3.Connection:
        """The open connection (created, with its schema, on first use)."""
        with self._lock:
            if self._db is None:
                try:  # 0600 like every file we write (invariant 6); SQLite gives -wal/-shm the same mode
                    os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
                except FileExistsError:
                    fsio.narrow_database(self.path)  # one an older version left 0644
                db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=10.0)
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
                db.execute(f"PRAGMA cache_size={-CACHE_KIB}")
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

    def _forget(self, keys: list[str]) -> None:
        """Drop the in-memory vectors of ``keys`` (the file is not touched); their rows are reused."""
        np = self._np
        with self._lock:
            self._changes += 1
            hashes = np.fromiter((id_hash(k) for k in keys), dtype=np.uint64, count=len(keys))
            pos, found = self._find(hashes)
            pos = np.unique(pos[found])
            if not len(pos):
                return
            for row in self._krow[pos].tolist():
                self._seqs[row] = -1
                block, at = divmod(row, BLOCK_ROWS)
                if self.quantized:
                    self._bits[:, row] = 0
                    self._codes[block][at] = 0
                else:
                    self._blocks[block][at] = 0.0
                self._free.append(row)
            self._keys = np.delete(self._keys, pos)
            self._krow = np.delete(self._krow, pos)

    def drop_other_models(self) -> int:
        """Delete every vector not of this model and dimension; returns how many."""
        with self._lock:
            _keep_high_water(self.connect())
            return self.connect().execute("DELETE FROM vectors WHERE model != ? OR dim != ?",
                                          (self.model, self.dim)).rowcount

    # ------------------------------------------------------------------ memory

    def _find(self, hashes: Any) -> tuple[Any, Any]:
        """``(positions in the sorted hash array, found mask)`` of ``hashes`` (uint64 array)."""
        np = self._np
        pos = np.searchsorted(self._keys, hashes)
        inside = pos < len(self._keys)
        found = np.zeros(len(hashes), dtype=bool)
        found[inside] = self._keys[pos[inside]] == hashes[inside]
        return pos, found

    def _add_block(self) -> None:
        np = self._np
        if self.quantized:
            self._codes.append(np.zeros((BLOCK_ROWS, self.dim), dtype=np.int8))
            need = len(self._codes) * BLOCK_ROWS
            held = self._bits.shape[1]
            if need > held:  # one array (a popcount per word per search), grown by doubling
                grown = np.zeros((self._words, max(need, 2 * held)), dtype=np.uint64)
                grown[:, :held] = self._bits
                self._bits = grown
            return
        self._blocks.append(np.zeros((BLOCK_ROWS, self.dim), dtype=np.float32))

    def _new_row(self) -> int:
        """A free row (a reused one first), growing the store by one block when full (and the per-row
        arrays by doubling)."""
        np = self._np
        if self._free:
            return self._free.pop()
        row = self._rows
        if row >= self._blocks_held() * BLOCK_ROWS:
            self._add_block()
        if row >= len(self._seqs):
            size = max(BLOCK_ROWS, 2 * len(self._seqs))
            grown = np.full(size, -1, dtype=np.int64)
            grown[: len(self._seqs)] = self._seqs
            self._seqs = grown
            scales = np.zeros(size, dtype=np.float32)
            scales[: len(self._scales)] = self._scales
            self._scales = scales
        self._rows += 1
        return row

    def _blocks_held(self) -> int:
        return len(self._codes) if self.quantized else len(self._blocks)

    def _encode(self, matrix: Any) -> tuple[Any, Any, Any]:
        """``(sign bits (n, words) uint64, int8 codes (n, dim), scales (n,))`` of ``matrix - mean``."""
        np = self._np
        centred = matrix - self._mean
        scales = np.abs(centred).max(axis=1) / 127.0
        scales[scales == 0] = 1.0
        codes = np.rint(centred / scales[:, None]).astype(np.int8)
        packed = np.packbits(centred > 0, axis=1)
        padded = np.zeros((len(matrix), self._words * 8), dtype=np.uint8)
        padded[:, : packed.shape[1]] = packed
        return padded.view(np.uint64), codes, scales.astype(np.float32)

    def _write(self, rows: list[int], matrix: Any) -> None:
        """Put the vectors ``matrix`` (``(len(rows), dim)`` float32) into ``rows``."""
        self._changes += 1
        if self.quantized:
            bits, codes, scales = self._encode(matrix)
            self._bits[:, rows] = bits.T
            self._scales[rows] = scales
            for index, row in enumerate(rows):
                block, at = divmod(row, BLOCK_ROWS)
                self._codes[block][at] = codes[index]
        else:
            for index, row in enumerate(rows):
                self._blocks[row // BLOCK_ROWS][row % BLOCK_ROWS] = matrix[index]

    def _quantize(self) -> None:
        """Switch to the quantized form (module doc), block by block (one float32 block extra at most)."""
        np = self._np
        self._changes += 1
        live = self._seqs[: self._rows] >= 0
        total = np.zeros(self.dim, dtype=np.float64)
        for number, block in enumerate(self._blocks):
            start = number * BLOCK_ROWS
            total += block[live[start:start + BLOCK_ROWS].nonzero()[0]].sum(axis=0, dtype=np.float64)
        self._mean = (total / max(1, int(live.sum()))).astype(np.float32)
        blocks, self._blocks = self._blocks, []
        for number in range(len(blocks)):
            self._add_block()
            block = blocks[number]
            blocks[number] = None
            bits, codes, scales = self._encode(block)
            start = number * BLOCK_ROWS
            keep = live[start:start + BLOCK_ROWS]
            self._bits[:, start:start + len(keep)][:, keep] = bits[: len(keep)][keep].T
            self._codes[number][: len(keep)][keep] = codes[: len(keep)][keep]
            self._scales[start:start + len(keep)][keep] = scales[: len(keep)][keep]
            del block

    def _refresh(self, db: sqlite3.Connection) -> None:
        """Load rows with a larger ``seq``, streamed in chunks of :data:`READ_CHUNK` rows: an id already
        held is overwritten in place, a new one takes a free row; past :data:`QUANTIZE_ABOVE` rows the store
        switches to the quantized form."""
        np = self._np
        self._data_version = db.execute("PRAGMA data_version").fetchone()[0]
        # a range of the rowid in its order: "+" keeps SQLite off the (model, dim, id) index, which would
        # sort every matched row, blobs included, in a temporary B-tree
        cursor = db.execute("SELECT seq, id, vec FROM vectors WHERE seq > ? AND +model = ? AND +dim = ? ORDER BY seq",
                            (self._seq, self.model, self.dim))
        width = 4 * self.dim
        new_keys: list[int] = []
        new_rows: list[int] = []
        bad: list[tuple[int, str]] = []  # (seq, id) of malformed rows (module doc)
        while True:
            chunk = cursor.fetchmany(READ_CHUNK)
            if not chunk:
                break
            self._seq = max(self._seq, chunk[-1][0])
            sized = [r for r in chunk if isinstance(r[2], bytes) and len(r[2]) == width]
            matrix = np.frombuffer(b"".join(r[2] for r in sized), dtype="<f4").reshape(len(sized), self.dim)
            finite = np.isfinite(matrix).all(axis=1)
            if len(sized) < len(chunk) or not finite.all():
                good = {id(r) for r, ok in zip(sized, finite.tolist()) if ok}
                bad.extend((r[0], r[1]) for r in chunk if id(r) not in good)
                sized = [r for r, ok in zip(sized, finite.tolist()) if ok]
                matrix = matrix[finite]
            chunk = sized
            if not chunk:
                continue
            hashes = np.fromiter((id_hash(r[1]) for r in chunk), dtype=np.uint64, count=len(chunk))
            pos, found = self._find(hashes)
            held = iter(self._krow[pos[found]].tolist())
            rows = []
            for index, (seq, _key, _blob) in enumerate(chunk):
                if found[index]:
                    row = next(held)
                else:
                    row = self._new_row()
                    new_keys.append(int(hashes[index]))
                    new_rows.append(row)
                self._seqs[row] = seq
                rows.append(row)
            self._write(rows, matrix)
            if not self.quantized and self._rows - len(self._free) > QUANTIZE_ABOVE:
                self._quantize()
        if new_keys:  # merge into the sorted hash array (no sort of the whole array)
            keys = np.asarray(new_keys, dtype=np.uint64)
            order = np.argsort(keys, kind="stable")
            keys, rows_sorted = keys[order], np.asarray(new_rows, dtype=np.int64)[order]
            at = np.searchsorted(self._keys, keys)
            self._keys = np.insert(self._keys, at, keys)
            self._krow = np.insert(self._krow, at, rows_sorted)
        if bad:  # never scored; deleted so the next embedding pass embeds these items again
            self._forget([key for _seq, key in bad if isinstance(key, str)])
            _keep_high_water(db)
            db.executemany("DELETE FROM vectors WHERE seq = ?", [(seq,) for seq, _key in bad])

    # ------------------------------------------------------------------ reads

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
            return len(self._keys)

    def has(self, key: str) -> bool:
        """Whether ``key`` has a vector of this model."""
        np = self._np
        with self._lock:
            return bool(self._find(np.asarray([id_hash(key)], dtype=np.uint64))[1][0])

    def matrix(self) -> Any:
        """The held vectors, ``(count, dim)`` float32 in row order, as the search sees them (the quantized
        form decoded); for benchmarks and tests."""
        np = self._np
        with self._lock:
            rows = np.sort(self._krow)
            out = np.empty((len(rows), self.dim), dtype=np.float32)
            for index, row in enumerate(rows.tolist()):
                block, at = divmod(row, BLOCK_ROWS)
                out[index] = (self._codes[block][at] * self._scales[row] + self._mean if self.quantized
                              else self._blocks[block][at])
            return out

    def search(self, query: Any, limit: int, *, exact: bool = False) -> list[tuple[str, float]]:
        """The ``limit`` ids with the largest cosine to ``query`` (``(dim,)`` float32, normalised), best
        first, as ``(id, cosine)``. Exact below :data:`QUANTIZE_ABOVE` rows; above, the quantized search of
        the module doc (``exact`` scans the float32 blobs of the file instead: the reference of the bench)."""
        np = self._np
        self.sync()
        with self._lock:
            n = self._rows
            if not len(self._keys) or limit <= 0:
                return []
            q = np.asarray(query, dtype=np.float32)
            if exact and self.quantized:
                return self._exact_from_file(q, limit)
            if self.quantized:
                rows = self._prefilter(q, max(CANDIDATES, CANDIDATE_FACTOR * limit))
                rows, scores = self._approximate(q, rows)
                k = min(limit + max(EXACT_MARGIN, limit // 8), len(rows))  # the int8 order may swap near ties
                best = np.argpartition(-scores, k - 1)[:k] if k < len(rows) else np.arange(len(rows))
                found = self._named(rows[best].tolist(), None, with_vectors=True)
                if not found:
                    return []
                cosines = (np.stack([vec for _key, vec in found]) @ q).tolist()
                ranked = sorted(zip((key for key, _vec in found), cosines), key=lambda f: -f[1])
                return ranked[:limit]
            scores = np.empty(n, dtype=np.float32)
            for number, block in enumerate(self._blocks):
                start = number * BLOCK_ROWS
                if start >= n:
                    break
                stop = min(n, start + BLOCK_ROWS)
                np.matmul(block[: stop - start], q, out=scores[start:stop])
            if self._free:
                scores[self._seqs[:n] < 0] = -np.inf
            k = min(limit, len(self._keys))
            top = np.argpartition(-scores, k - 1)[:k] if k < n else np.arange(n)
            top = top[np.argsort(-scores[top], kind="stable")]
            top = top[self._seqs[top] >= 0]
            return self._named(top.tolist(), scores)

    def cosines(self, query: Any, ids: Sequence[str]) -> dict[str, float]:
        """``{id: cosine to query}`` (``(dim,)`` float32, normalised) of those ``ids`` that have a live row,
        from memory only (no file read): exact below :data:`QUANTIZE_ABOVE` rows, the int8 codes' approximate
        cosine above (within about 0.01). Ids without a vector are left out."""
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
            q = np.asarray(query, dtype=np.float32)
            if self.quantized:
                order = np.argsort(rows, kind="stable")
                sorted_rows, values = self._approximate(q, rows[order])
                out = np.empty(len(rows), dtype=np.float32)
                out[order] = values
            else:
                out = np.array([float(self._blocks[r // BLOCK_ROWS][r % BLOCK_ROWS] @ q) for r in rows.tolist()],
                               dtype=np.float32)
            return {k: float(v) for k, v in zip(named, out.tolist())}

    def spread(self, query: Any, sample: int = SPREAD_SAMPLE) -> tuple[int, float, float]:
        """``(rows read, mean, standard deviation)`` of the cosines of ``query`` (``(dim,)`` float32,
        normalised) over the live rows, at most ``sample`` of them taken at an even stride (the quantized
        form uses the int8 codes' approximate cosines); ``(0, 0.0, 0.0)`` when the store is empty. The
        query's own null distribution: what a vector-only hit's cosine is judged against
        (:func:`~.fusion.fuse`). The sample's rows are kept decoded as float32 (``sample x dim x 4`` bytes,
        6 MiB at 4,096 x 384) until a held vector changes (:meth:`prepare`), so a search reads them with one
        matrix-vector product instead of gathering and converting them again."""
        np = self._np
        self.sync()
        with self._lock:
            held = self._spread_sample(sample)
            if held is None:
                return 0, 0.0, 0.0
            rows, matrix, scales = held
            q = np.asarray(query, dtype=np.float32)
            values = matrix @ q
            if scales is not None:  # the int8 codes' approximate cosines, as _approximate computes them
                values = values * scales + float(q @ self._mean)
        return len(rows), float(values.mean()), float(values.std())

    def prepare(self, sample: int = SPREAD_SAMPLE) -> None:
        """Load rows another connection committed and decode :meth:`spread`'s sample if a held vector
        changed since: the work of a search that does not need the query vector, for a caller to do while
        the query is being embedded (:meth:`~.spaces.SpaceSemantic.candidates`)."""
        self.sync()
        with self._lock:
            self._spread_sample(sample)

    def _spread_sample(self, sample: int) -> tuple[Any, Any, Any] | None:
        """``(rows, (len(rows), dim) float32, scales of the rows or None)`` of :meth:`spread`'s sample: every
        ``ceil(live / sample)``-th live row, the int8 codes as float32 with their scales in the quantized form,
        else the float32 vectors; cached until :attr:`_changes` moves. ``None`` when no row is live. Holds
        the lock (the caller's)."""
        np = self._np
        cached = self._sample
        if cached is not None and cached[0] == self._changes and cached[1] == sample:
            return cached[2:]
        n = self._rows
        live = (self._seqs[:n] >= 0).nonzero()[0]
        if not len(live):
            self._sample = None
            return None
        rows = live[:: max(1, -(-len(live) // max(1, sample)))]
        matrix = np.empty((len(rows), self.dim), dtype=np.float32)
        blocks = rows // BLOCK_ROWS
        source = self._codes if self.quantized else self._blocks
        for number in np.unique(blocks).tolist():
            pick = (blocks == number).nonzero()[0]
            matrix[pick] = source[number][rows[pick] % BLOCK_ROWS]
        scales = self._scales[rows].copy() if self.quantized else None
        self._sample = (self._changes, sample, rows, matrix, scales)
        return rows, matrix, scales

    def _prefilter(self, q: Any, count: int) -> Any:
        """The rows (int64 array) of the ``count`` live rows nearest to ``q`` by the Hamming distance of
        sign bits."""
        np = self._np
        n = self._rows
        packed = np.packbits(q > self._mean)  # the query's bits centred like the rows'

        padded = np.zeros(self._words * 8, dtype=np.uint8)
        padded[: len(packed)] = packed
        qbits = padded.view(np.uint64)
        distance = np.bitwise_count(self._bits[0, :n] ^ qbits[0]).astype(np.int16)
        scratch = np.empty(n, dtype=np.uint64)
        for word in range(1, self._words):  # word by word: contiguous, no (n, words) temporaries
            np.bitwise_xor(self._bits[word, :n], qbits[word], out=scratch)
            distance += np.bitwise_count(scratch)
        if self._free:
            distance[self._seqs[:n] < 0] = 64 * self._words + 1
        count = min(count, len(self._keys))
        # the distances are small integers: the count-th smallest from their histogram (no partition sort)
        histogram = np.bincount(distance, minlength=64 * self._words + 2)
        limit = int(np.searchsorted(np.cumsum(histogram), count))
        rows = (distance < limit).nonzero()[0]
        tied = (distance == limit).nonzero()[0][: count - len(rows)]
        rows = np.concatenate([rows, tied])
        return rows[self._seqs[rows] >= 0]

    def _approximate(self, q: Any, rows: Any) -> Any:
        """``(rows sorted, q . v of each from the int8 codes as a float32 array)``: the int8 codes are turned
        into float32 :data:`APPROXIMATE_ROWS` rows at a time (a buffer that stays in the CPU cache)."""
        np = self._np
        rows = np.sort(rows)  # block by block, and in memory order within a block
        out = np.empty(len(rows), dtype=np.float32)
        bounds = np.searchsorted(rows, np.arange(len(self._codes) + 1) * BLOCK_ROWS).tolist()
        buffer = np.empty((APPROXIMATE_ROWS, self.dim), dtype=np.float32)  # small enough to stay in cache
        for number, codes in enumerate(self._codes):
            for start in range(bounds[number], bounds[number + 1], APPROXIMATE_ROWS):
                stop = min(start + APPROXIMATE_ROWS, bounds[number + 1])
                part = buffer[: stop - start]
                part[...] = codes[rows[start:stop] - number * BLOCK_ROWS]
                np.matmul(part, q, out=out[start:stop])
        return rows, out * self._scales[rows] + float(q @ self._mean)

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

    def _named(self, rows: list[int], scores: Any, with_vectors: bool = False) -> list[tuple[str, Any]]:
        """``(id, score)`` of ``rows``, in their order, ids read from SQLite by ``seq`` (a row another
        connection deleted or rewrote since the last sync is left out, and so is a row whose blob in the
        file is malformed now: it is forgotten and deleted); ``with_vectors``: ``(id, float32 vector from
        the file)`` instead."""
        np = self._np
        seqs = [int(self._seqs[r]) for r in rows]
        names: dict[int, Any] = {}
        db = self.connect()
        for start in range(0, len(seqs), 500):
            chunk = seqs[start:start + 500]
            marks = ",".join("?" * len(chunk))
            for seq, key, blob in db.execute(f"SELECT seq, id, vec FROM vectors WHERE seq IN ({marks})", chunk):
                names[seq] = (key, blob)
        # a row edited in place (same seq) since it was loaded: malformed now, so never named (module doc)
        width = 4 * self.dim
        sized = [seq for seq, (_key, blob) in names.items() if isinstance(blob, bytes) and len(blob) == width]
        matrix = np.frombuffer(b"".join(names[seq][1] for seq in sized), dtype="<f4").reshape(len(sized), self.dim)
        finite = np.isfinite(matrix).all(axis=1).tolist()
        vecs = {seq: matrix[index] for index, seq in enumerate(sized) if finite[index]}
        broken = [(seq, key) for seq, (key, _blob) in names.items() if seq not in vecs]
        if broken:
            self._forget([key for _seq, key in broken if isinstance(key, str)])
            _keep_high_water(db)
            db.executemany("DELETE FROM vectors WHERE seq = ?", [(seq,) for seq, _key in broken])
        if with_vectors:
            return [(names[s][0], vecs[s]) for s in seqs if s in vecs]
        return [(names[s][0], float(scores[r])) for r, s in zip(rows, seqs) if s in vecs]

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
                          "SELECT d.id FROM idx.docs d LEFT JOIN vectors v ON v.model = ? AND v.dim = ? AND v.id = d.id "
                          "WHERE d.active = 1 AND (v.id IS NULL OR v.chash != d.chash OR typeof(v.vec) != 'blob' "
                          "OR length(v.vec) != 4 * v.dim) LIMIT ?",
                          (self.model, self.dim, limit))

    def stale(self, index_path: Path) -> list[str]:
        """Ids holding a vector of this model that are no longer active in the side index."""
        return self._scan(index_path,
                          "SELECT v.id FROM vectors v WHERE v.model = ? AND v.dim = ? AND NOT EXISTS "
                          "(SELECT 1 FROM idx.docs d WHERE d.id = v.id AND d.active = 1)", (self.model, self.dim))
