"""Building the approximate index of :mod:`.ivf`: the cells (spherical k-means), the int8 codes, the file written and
named in the vector file's ``meta`` row.

What the index is, its file's format (little-endian, sections at multiples of 64 bytes) and which file is current:
:mod:`.ivf`, which holds the reading side (:class:`~.ivf.IvfIndex`: open, probe, score). This module holds
:func:`build` (two passes over one read transaction of the vector file: the mean, then the codes and the moments;
about 3 s of CPU at 100,000 rows of 384), the split into cells (:func:`kmeans`, :func:`_cells`), the writing of the
temporary file (mode 0600, fsynced) and its publication (:func:`_publish`: renamed over the old file and named in
the ``meta`` row in one write transaction), the removal of temporary files of builds that died
(:data:`STALE_TEMPORARY_S`, seconds) and :func:`release_freed_memory`.
"""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
import stat
import tempfile
import zlib
from pathlib import Path
from typing import Any, Callable, Iterator

from .ivf import HEADER, IVF_FILE, MAGIC, VERSION, IvfIndex, _layout, encode, meta_key, read_meta, usable_path

#: Rows of a cell (a list of the inverted file), about: k-means splits the rows until their groups are this small.
#: 48 rather than 32: a search at the same share of rows reads fewer, longer runs of the file and ranks a third fewer
#: centroids (0.3 ms less per search at 100,000 rows), for the same paraphrase hit@5 on the ``mix`` copies and one
#: balanced-v1 hit less on the ``noise`` copies (bench/results/hybrid_100k.md).
CELL_ROWS = 48
#: Groups of one k-means split at most.
BRANCH = 64
#: Share of the rows, the least like their cell's centroid, split again into cells of their own (:func:`_cells`).
OUTLIER_SHARE = 0.1
#: Rows of a k-means training sample per group (an even stride over the rows to split).
TRAIN_PER_LIST = 48
#: k-means iterations of the first split, and of every split below it.
KMEANS_ITERATIONS = 10
SPLIT_ITERATIONS = 6
#: Rows read from the vector file per chunk while building.
CHUNK = 4096


def kmeans(np: Any, sample: Any, lists: int, iterations: int = KMEANS_ITERATIONS, seed: int = 0) -> Any:
    """Spherical k-means: ``(lists, dim)`` float32 unit centroids of ``sample`` (``(n, dim)`` float32 unit rows,
    ``n >= lists``), started from ``lists`` rows drawn with ``seed``; a list left empty restarts at the row
    farthest from its centroid. Deterministic for the same inputs."""
    rng = np.random.default_rng(seed)
    centroids = sample[np.sort(rng.choice(len(sample), lists, replace=False))].copy()
    for _ in range(iterations):
        assign, best = _nearest(np, sample, centroids)
        sizes = np.bincount(assign, minlength=lists)
        filled = sizes > 0
        starts = (np.cumsum(sizes) - sizes)[filled]
        sums = np.zeros((lists, sample.shape[1]), dtype=np.float32)
        sums[filled] = np.add.reduceat(sample[np.argsort(assign, kind="stable")], starts, axis=0)
        empty = (~filled).nonzero()[0]
        if len(empty):
            far = np.argsort(best)[: len(empty)]
            sums[empty] = sample[far]
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        centroids = (sums / np.where(norms == 0, 1, norms)).astype(np.float32)
    return centroids


def _nearest(np: Any, rows: Any, centroids: Any) -> tuple[Any, Any]:
    """``(index of the nearest centroid, its cosine)`` of each row, :data:`CHUNK` rows at a time."""
    assign = np.empty(len(rows), dtype=np.int64)
    best = np.empty(len(rows), dtype=np.float32)
    for start in range(0, len(rows), CHUNK):
        sims = rows[start:start + CHUNK] @ centroids.T
        assign[start:start + CHUNK] = sims.argmax(axis=1)
        best[start:start + CHUNK] = sims[np.arange(len(sims)), assign[start:start + CHUNK]]
    return assign, best


def build(np: Any, vector_path: Path, model: str, dim: int, id_hash: Callable[[str], int],
          to_file: bool = True, seed: int = 0) -> IvfIndex | None:
    """Build the index of the ``model`` / ``dim`` vectors of the vector file at ``vector_path`` (module doc), or
    ``None`` when the file holds no usable vector of them (a blob that is not ``4 * dim`` bytes of finite floats
    is skipped: the store loads such rows as it loads any row the index lacks, and deletes them). Written beside
    the vector file and named in its meta row when ``to_file`` and the path is usable (:func:`usable_path`),
    else held in memory. Reads the vector file in one read transaction of its own connection; writes it only to
    name the new file. Raises ``sqlite3.Error`` and ``OSError``."""
    reader = sqlite3.connect(f"file:{vector_path}?mode=ro", uri=True, timeout=10.0)
    path = Path(vector_path).parent / IVF_FILE
    tmp_name: str | None = None
    try:
        reader.execute("BEGIN")
        seq_high = reader.execute("SELECT coalesce(max(seq), 0) FROM vectors").fetchone()[0]

        def chunks() -> Iterator[tuple[list[int], list[str], Any]]:
            cursor = reader.execute("SELECT seq, id, vec FROM vectors WHERE +model = ? AND +dim = ? ORDER BY seq",
                                    (model, dim))
            width = 4 * dim
            while True:
                chunk = cursor.fetchmany(CHUNK)
                if not chunk:
                    return
                sized = [r for r in chunk if isinstance(r[2], bytes) and len(r[2]) == width]
                matrix = np.frombuffer(b"".join(r[2] for r in sized), dtype="<f4").reshape(len(sized), dim)
                finite = np.isfinite(matrix).all(axis=1)
                if not finite.all():
                    sized = [r for r, ok in zip(sized, finite.tolist()) if ok]
                    matrix = matrix[finite]
                if sized:
                    yield [r[0] for r in sized], [r[1] for r in sized], matrix

        index, tmp_name = _write(np, chunks, path, dim, seq_high, id_hash, to_file and usable_path(path), seed)
    except BaseException:
        if tmp_name is not None and os.path.exists(tmp_name):
            os.unlink(tmp_name)
        raise
    finally:
        if reader.in_transaction:
            reader.execute("ROLLBACK")  # a read transaction: nothing to undo
        reader.close()
    if index is None or tmp_name is None:
        return index
    return _publish(np, vector_path, model, dim, index, tmp_name, path)


def _write(np: Any, chunks: Callable[[], Iterator[tuple[list[int], list[str], Any]]], path: Path, dim: int,
           seq_high: int, id_hash: Callable[[str], int], to_file: bool,
           seed: int) -> tuple[IvfIndex | None, str | None]:
    """The passes of :func:`build` over ``chunks()`` (``(seqs, ids, float32 matrix)`` of the snapshot, the same
    every time): ``(index, temporary file written and fsynced, or None when held in memory)``. Holds the codes of
    every row in memory while it runs (``rows x dim`` bytes: 37 MiB at 100,000 x 384), never their float32."""
    # pass 1: the count and the mean
    total = 0
    mean = np.zeros(dim, dtype=np.float64)
    for seqs, _ids, matrix in chunks():
        total += len(seqs)
        mean += matrix.sum(axis=0, dtype=np.float64)
    if total == 0:
        return None, None
    mean = (mean / total).astype(np.float32)
    # pass 2: codes, scales, seqs, id hashes and moments, in seq order
    codes = np.empty((total, dim), dtype=np.int8)
    row_scales = np.empty(total, dtype=np.float32)
    row_seqs = np.empty(total, dtype=np.int64)
    row_idh = np.empty(total, dtype=np.uint64)
    s1 = np.zeros(dim, dtype=np.float64)
    s2 = np.zeros((dim, dim), dtype=np.float64)
    at = 0
    for seqs, ids, matrix in chunks():
        n = len(seqs)
        if at + n > total:
            break
        chunk_codes, scales = encode(np, matrix, mean)
        decoded = chunk_codes.astype(np.float32) * scales[:, None] + mean
        s1 += decoded.sum(axis=0, dtype=np.float64)  # of the rows as the codes hold them: what a delete takes
        s2 += decoded.T @ decoded  # away again (their rounding moves a spread by less than 0.1%)
        codes[at:at + n], row_scales[at:at + n] = chunk_codes, scales
        row_seqs[at:at + n] = seqs
        row_idh[at:at + n] = [id_hash(k) for k in ids]
        at += n
    if at != total:  # one read transaction: the snapshot cannot change
        raise sqlite3.DatabaseError("the vector file changed during the index build")
    order, offsets, centroids = _cells(np, codes, row_scales, mean, seed)
    cells = len(centroids)
    ccodes, cscales = encode(np, centroids, mean)
    del centroids
    token = secrets.token_bytes(16)
    layout = _layout(dim, cells, total)
    if not to_file:
        return IvfIndex(np, dim, cells, total, seq_high, token.hex(), ccodes, cscales, mean, offsets,
                        row_seqs[order], row_idh[order], row_scales[order], s1, s2, codes=codes[order]), None
    handle = None
    _remove_stale_temporaries(path)
    fd, tmp_name = tempfile.mkstemp(prefix=IVF_FILE + ".", suffix=".tmp", dir=path.parent)
    try:
        handle = os.fdopen(fd, "r+b", buffering=0)
        handle.truncate(layout["end"][0])
        check = 0  # crc32 of the sections in layout order, the codes last (IvfIndex.open verifies it)
        for name, value in (("ccodes", ccodes), ("cscales", cscales), ("mean", mean), ("offsets", offsets),
                            ("seqs", row_seqs[order]), ("idh", row_idh[order]), ("scales", row_scales[order]),
                            ("s1", s1), ("s2", s2)):
            offset, dtype, _shape = layout[name]
            data = np.ascontiguousarray(value, dtype=dtype)
            _write_at(handle, offset, data)
            check = zlib.crc32(memoryview(data.reshape(-1)).cast("B"), check)
        codes_at = layout["codes"][0]
        for start in range(0, total, CHUNK):  # the codes in cell order, a chunk at a time
            part = np.ascontiguousarray(codes[order[start:start + CHUNK]])
            _write_at(handle, codes_at + start * dim, part)
            check = zlib.crc32(memoryview(part.reshape(-1)).cast("B"), check)
        _write_at(handle, 0, HEADER.pack(MAGIC, VERSION, dim, cells, check, total, seq_high, token))
        os.fsync(handle.fileno())
    except BaseException:
        if handle is not None:
            handle.close()
            handle = None
        if os.path.exists(tmp_name):
            os.unlink(tmp_name)
        raise
    finally:
        if handle is not None:
            handle.close()
    return IvfIndex(np, dim, cells, total, seq_high, token.hex(), ccodes, cscales, mean, offsets, row_seqs[order],
                    row_idh[order], row_scales[order], s1, s2), tmp_name


def _cells(np: Any, codes: Any, scales: Any, mean: Any, seed: int) -> tuple[Any, Any, Any]:
    """Split the rows (``codes``, ``scales`` as :func:`encode` made them) into cells of about :data:`CELL_ROWS`
    rows (:func:`_split`); then the :data:`OUTLIER_SHARE` of the rows least like their cell's centroid leave their
    cells and are split the same way into cells of their own. Returns ``(row order: the rows cell by cell, cell
    offsets into it (cells + 1,), (cells, dim) float32 unit centroids)``.

    The second split is what finds a space's few odd items: a row unlike the rest of its cell (a Korean note
    among English ones) is missed by any search that does not read that cell, and its centroid speaks for the
    others. Measured at 100,000 (bench/results/hybrid_100k.md): the exact best row of 5% of the queries sat in a
    cell that only a search reading more than 6% of the rows reached; with the outliers in cells of their own,
    2%."""

    def decoded(idx: Any) -> Any:
        out = codes[idx].astype(np.float32) * scales[idx][:, None] + mean
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)

    cells = _split(np, decoded, np.arange(len(codes)), seed)
    if OUTLIER_SHARE > 0 and len(codes) > 4 * CELL_ROWS:
        order, offsets, centroids = _gather(np, decoded, cells, codes.shape[1])
        fit = np.empty(len(order), dtype=np.float32)
        cell_of = np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))
        for start in range(0, len(order), CHUNK):
            rows = decoded(order[start:start + CHUNK])
            fit[start:start + CHUNK] = np.einsum("ij,ij->i", rows, centroids[cell_of[start:start + CHUNK]])
        odd = fit < np.quantile(fit, OUTLIER_SHARE)
        if odd.any():
            is_odd = np.zeros(len(codes), dtype=bool)
            is_odd[order[odd]] = True
            cells = [c for c in (cell[~is_odd[cell]] for cell in cells) if len(c)]
            cells += _split(np, decoded, np.sort(order[odd]), seed)
    return _gather(np, decoded, cells, codes.shape[1])


def _divide(np: Any, decoded: Callable[[Any], Any], idx: Any, seed: int,
            iterations: int = KMEANS_ITERATIONS) -> list[Any]:
    """``idx`` in at most ``min(BRANCH, ceil(len(idx) / CELL_ROWS))`` groups by spherical k-means of their
    ``decoded`` vectors (trained on an even-stride sample of :data:`TRAIN_PER_LIST` rows per group); ``[idx]``
    when it holds at most ``2 * CELL_ROWS`` rows. Rows k-means cannot tell apart (copies) come back in runs of
    ``CELL_ROWS`` in their order."""
    n = len(idx)
    if n <= 2 * CELL_ROWS:
        return [idx]
    k = min(BRANCH, -(-n // CELL_ROWS))
    train = idx[:: max(1, n // (k * TRAIN_PER_LIST))]
    centroids = kmeans(np, decoded(train), min(k, len(train)), iterations=iterations, seed=seed)
    assign = np.concatenate([_nearest(np, decoded(idx[start:start + CHUNK]), centroids)[0]
                             for start in range(0, n, CHUNK)])
    order = np.argsort(assign, kind="stable")
    sizes = np.bincount(assign, minlength=len(centroids))
    groups = [g for g in np.split(idx[order], np.cumsum(sizes)[:-1]) if len(g)]
    if len(groups) == 1:
        return np.split(idx, range(CELL_ROWS, n, CELL_ROWS))
    return groups


def _split(np: Any, decoded: Callable[[Any], Any], rows: Any, seed: int) -> list[Any]:
    """``rows`` in cells of about :data:`CELL_ROWS`: :func:`_divide` again inside every group larger than
    ``2 * CELL_ROWS`` (a division that aims at cells keeps its groups of up to ``4 * CELL_ROWS``)."""
    cells: list[Any] = []
    stack = [rows]
    while stack:
        idx = stack.pop()
        n = len(idx)
        if n <= 2 * CELL_ROWS:
            cells.append(idx)
            continue
        leaf = min(BRANCH, -(-n // CELL_ROWS)) == -(-n // CELL_ROWS)
        for group in _divide(np, decoded, idx, seed, KMEANS_ITERATIONS if n == len(rows) else SPLIT_ITERATIONS):
            if len(group) <= 2 * CELL_ROWS or (leaf and len(group) <= 4 * CELL_ROWS):
                cells.append(group)
            else:
                stack.append(group)
    return cells


def _gather(np: Any, decoded: Callable[[Any], Any], cells: list[Any], dim: int) -> tuple[Any, Any, Any]:
    """``(row order, cell offsets, cell unit centroids)`` of ``cells`` (lists of rows): each centroid the
    normalised sum of its cell's ``decoded`` rows."""
    order = np.concatenate(cells)
    offsets = np.zeros(len(cells) + 1, dtype=np.int64)
    np.cumsum([len(c) for c in cells], out=offsets[1:])
    cell_of = np.repeat(np.arange(len(cells)), np.diff(offsets))
    sums = np.zeros((len(cells), dim), dtype=np.float32)
    for start in range(0, len(order), CHUNK):  # per cell the sum of its rows, a chunk of rows at a time
        ids, first = np.unique(cell_of[start:start + CHUNK], return_index=True)
        np.add.at(sums, ids, np.add.reduceat(decoded(order[start:start + CHUNK]), first, axis=0))
    norms = np.linalg.norm(sums, axis=1, keepdims=True)
    return order, offsets, (sums / np.where(norms == 0, 1, norms)).astype(np.float32)


def release_freed_memory() -> None:
    """Hand the memory a build freed back to the system where the C library can (glibc's ``malloc_trim``; nothing
    elsewhere). A build's chunks of a few MiB come from the heap once glibc has raised its mmap threshold, and
    the heap keeps them: measured after a build at 100,000 rows, 19 MiB of the process's resident set."""
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return
    trim(0)


#: A temporary index file (``.mnemon-ls-vectors.ivf.*.tmp``) older than this many seconds is a build that died
#: (a build of 100,000 rows writes its file within seconds of creating it): the next build removes it.
STALE_TEMPORARY_S = 3600


def _remove_stale_temporaries(path: Path) -> None:
    """Remove the temporary files of builds that died beside the index ``path`` (a process killed between creating
    its temporary file and renaming it: :data:`STALE_TEMPORARY_S`); a running build's file is left alone."""
    import time

    now = time.time()
    for entry in path.parent.glob(IVF_FILE + ".*.tmp"):
        try:
            info = os.lstat(entry)
            if stat.S_ISREG(info.st_mode) and now - info.st_mtime > STALE_TEMPORARY_S:
                os.unlink(entry)
        except OSError:
            continue


def _write_at(handle: Any, offset: int, data: Any) -> None:
    """Write all of ``data`` (bytes or a contiguous array) at ``offset`` of the raw file ``handle``."""
    view = memoryview(data if isinstance(data, bytes) else data.reshape(-1)).cast("B")
    handle.seek(offset)
    while len(view):
        view = view[handle.write(view):]


def _publish(np: Any, vector_path: Path, model: str, dim: int, index: IvfIndex, tmp_name: str,
             path: Path) -> IvfIndex:
    """Rename ``tmp_name`` over ``path`` and name it in the vector file's meta row, in one write transaction of
    the vector file (module doc); when another builder published an index of a later snapshot meanwhile,
    ``tmp_name`` is dropped and that one is opened instead."""
    db = sqlite3.connect(vector_path, isolation_level=None, timeout=10.0)
    try:
        db.execute("BEGIN IMMEDIATE")
        try:
            held = read_meta(db, model, dim)
            if held is not None and isinstance(held.get("seq"), int) and held["seq"] > index.seq_high:
                try:
                    newer = IvfIndex.open(np, path, held, dim)
                except (OSError, ValueError):
                    newer = None
                if newer is not None:
                    db.execute("ROLLBACK")
                    os.unlink(tmp_name)
                    return newer
            os.replace(tmp_name, path)
            db.execute("INSERT INTO meta(key, value) VALUES(?, ?) "
                       "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                       (meta_key(model, dim), json.dumps({"token": index.token, "rows": index.rows,
                                                          "seq": index.seq_high})))
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            if os.path.exists(tmp_name):
                os.unlink(tmp_name)
            raise
    finally:
        db.close()
    return IvfIndex.open(np, path, {"token": index.token, "rows": index.rows, "seq": index.seq_high}, dim)
