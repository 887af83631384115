"""The in-memory vectors of a :class:`~.vectors.VectorStore` (its module doc: "Memory"): float32 blocks of
:data:`BLOCK_ROWS` rows (every row of the exact form, the tail of the indexed form), the row's ``seq`` per row, the
sorted 64-bit hashes of the live ids with their rows, and the moments ``sum v`` / ``sum v v^T`` of the live rows.

:class:`HeldVectors` is the part of the store that keeps them: finding rows by id hash, taking a free row,
reading vectors back (the index's decoded codes for an indexed row), keeping the moments, loading rows read from
the vector file (:meth:`HeldVectors._load`, which skips, forgets and deletes malformed rows) and forgetting ids.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from .vectorfile import _keep_high_water, id_hash

#: Rows per block of the in-memory vectors (4096 x 384 float32 = 6 MiB).
BLOCK_ROWS = 4096
#: Rows read from SQLite per ``fetchmany`` while loading.
READ_CHUNK = 256


class HeldVectors:
    """The in-memory vectors :class:`~.vectors.VectorStore` holds (a mixin: it needs the store's ``dim``, ``_np``,
    ``_lock``, ``_ivf`` and ``_base`` (the indexed form), and the arrays its constructor makes: ``_blocks``,
    ``_seqs``, ``_rows``, ``_free``, ``_keys``, ``_krow``, ``_s1``, ``_s2``). Callers hold ``_lock``."""

    dim: int
    _np: Any
    _lock: Any
    _ivf: Any
    _base: int
    _blocks: list[Any]
    _seqs: Any
    _rows: int
    _free: list[int]
    _keys: Any
    _krow: Any
    _s1: Any
    _s2: Any

    def _find(self, hashes: Any) -> tuple[Any, Any]:
        """``(positions in the sorted hash array, found mask)`` of ``hashes`` (uint64 array)."""
        np = self._np
        pos = np.searchsorted(self._keys, hashes)
        inside = pos < len(self._keys)
        found = np.zeros(len(hashes), dtype=bool)
        found[inside] = self._keys[pos[inside]] == hashes[inside]
        return pos, found

    def _block_of(self, row: int) -> tuple[int, int]:
        """``(block, row within it)`` of a block row (``row >= _base``)."""
        return divmod(row - self._base, BLOCK_ROWS)

    def _new_row(self) -> int:
        """A free block row (a reused one first), growing the store by one block when full (and the per-row
        array by doubling)."""
        np = self._np
        if self._free:
            return self._free.pop()
        row = self._rows
        if row - self._base >= len(self._blocks) * BLOCK_ROWS:
            self._blocks.append(np.zeros((BLOCK_ROWS, self.dim), dtype=np.float32))
        if row >= len(self._seqs):
            grown = np.full(max(BLOCK_ROWS, 2 * len(self._seqs)), -1, dtype=np.int64)
            grown[: len(self._seqs)] = self._seqs
            self._seqs = grown
        self._rows += 1
        return row

    def _vectors_of(self, rows: Any) -> Any:
        """``(len(rows), dim)`` float32 of live ``rows``: the blocks' vectors, the index's decoded codes."""
        np = self._np
        out = np.empty((len(rows), self.dim), dtype=np.float32)
        indexed = rows < self._base
        if indexed.any():
            out[indexed] = self._ivf.decode(rows[indexed])
        at = (~indexed).nonzero()[0]
        blocks, inner = np.divmod(rows[at] - self._base, BLOCK_ROWS)
        for number in np.unique(blocks).tolist():
            pick = blocks == number
            out[at[pick]] = self._blocks[number][inner[pick]]
        return out

    def _moments(self, rows: Any, sign: int) -> None:
        """Add (``sign`` 1) or take away (-1) the vectors of live ``rows`` from the moments (:meth:`spread`)."""
        if not len(rows):
            return
        np = self._np
        matrix = self._vectors_of(np.asarray(rows, dtype=np.int64)).astype(np.float64)
        self._s1 += sign * matrix.sum(axis=0)
        self._s2 += sign * (matrix.T @ matrix)

    def _load(self, db: sqlite3.Connection, sql: str, params: tuple) -> int:
        """Load the rows ``(seq, id, vec)`` of ``sql`` (in ``seq`` order), streamed in chunks of
        :data:`READ_CHUNK` rows, into block rows: an id held already in a block row is overwritten in place
        (an indexed row of it dies), a new one takes a free row. Malformed rows are skipped, forgotten and
        deleted (module doc). Returns the largest ``seq`` read (0: none)."""
        np = self._np
        cursor = db.execute(sql, params)
        width = 4 * self.dim
        largest = 0
        new_keys: list[int] = []
        new_rows: list[int] = []
        bad: list[tuple[int, str]] = []  # (seq, id) of malformed rows (module doc)
        while True:
            chunk = cursor.fetchmany(READ_CHUNK)
            if not chunk:
                break
            largest = max(largest, chunk[-1][0])
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
            held = self._krow[pos[found]]
            self._moments(held, -1)  # the vectors they replace
            held_rows = iter(held.tolist())
            rows = []
            for index, (seq, _key, _blob) in enumerate(chunk):
                if found[index]:
                    row = next(held_rows)
                    if row < self._base:  # an indexed row: it dies, its id moves to a block row
                        self._seqs[row] = -1
                        row = self._new_row()
                        self._krow[pos[index]] = row
                else:
                    row = self._new_row()
                    new_keys.append(int(hashes[index]))
                    new_rows.append(row)
                self._seqs[row] = seq
                rows.append(row)
            for index, row in enumerate(rows):
                block, at = self._block_of(row)
                self._blocks[block][at] = matrix[index]
            wide = matrix.astype(np.float64)
            self._s1 += wide.sum(axis=0)
            self._s2 += wide.T @ wide
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
        return largest

    def _forget(self, keys: list[str]) -> None:
        """Drop the in-memory vectors of ``keys`` (the file is not touched): a block row is reused, an indexed
        row stays dead until the next build."""
        np = self._np
        with self._lock:
            hashes = np.fromiter((id_hash(k) for k in keys), dtype=np.uint64, count=len(keys))
            pos, found = self._find(hashes)
            pos = np.unique(pos[found])
            if not len(pos):
                return
            rows = self._krow[pos]
            self._moments(rows, -1)
            for row in rows.tolist():
                self._seqs[row] = -1
                if row >= self._base:
                    block, at = self._block_of(row)
                    self._blocks[block][at] = 0.0
                    self._free.append(row)
            self._keys = np.delete(self._keys, pos)
            self._krow = np.delete(self._krow, pos)
