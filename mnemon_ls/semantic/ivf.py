"""The approximate index of a large space's vectors: an inverted file of int8 codes,
``data/<space-id>/.mnemon-ls-vectors.ivf``.

Derived from the vector file (:mod:`.vectors`, whose ``vectors`` table stays the truth) and ours alone: deleting it
costs one rebuild. :class:`~.vectors.VectorStore` uses it above :data:`~.vectors.QUANTIZE_ABOVE` vectors.

- **Cells.** Spherical k-means (:func:`~.ivf_build.kmeans`) splits the rows into at most
  :data:`~.ivf_build.BRANCH` groups, and again inside each group, until the groups hold about
  :data:`~.ivf_build.CELL_ROWS` rows: the cells (about 2,500 at 100,000 rows); then the
  :data:`~.ivf_build.OUTLIER_SHARE` of the rows least like their cell's centroid are split again into cells of their
  own (:func:`~.ivf_build._cells`). A search ranks every cell's centroid by its cosine to the query, and to the query
  minus the index's mean, takes cells from both rankings by turns, and reads the rows of those cells: about
  :data:`PROBE_SHARE` of the rows (4%, at least twice the rows the search returns) instead of every row
  (:meth:`IvfIndex.probe`; the choices are measured in bench/results/hybrid_100k.md).
- **Codes.** A row is kept as ``r = v - mean`` (``mean`` of the rows at build time; sentence embeddings share a
  large common direction) in int8 with one float32 scale: ``q . v ~ scale * (q . codes) + q . mean``, within
  about 0.01. The searcher re-ranks its best candidates by their exact float32 cosine from the vector file.
- **The file** (little-endian, every section at a multiple of 64 bytes): a header (:data:`HEADER`: magic,
  format :data:`VERSION`, ``dim``, ``cells``, the ``crc32`` of every section below in order (the codes last),
  ``rows``, ``seq_high``: the largest ``seq`` of the vector file the build read, and a random 16-byte ``token``),
  then the centroids as codes like the rows' (``(cells, dim)`` int8 and ``(cells,)`` float32 scales: a probe
  converts 0.9 MiB at 100,000 rows instead of reading 3.6 MiB of float32, and ranks the cells the same within
  about 0.001),
  ``mean`` ``(dim,)`` float32, the cell offsets ``(cells + 1,)`` int64 (cell ``c`` holds rows
  ``offsets[c]:offsets[c + 1]``), per row
  its ``seq`` (int64), the 64-bit hash of its id (:func:`~.vectors.id_hash`, uint64) and its scale (float32),
  the moments of the rows as the codes hold them (``sum v`` ``(dim,)`` and ``sum v v^T`` ``(dim, dim)``, float64:
  the query's mean and spread of cosines over the space in one small product), and the codes ``(rows, dim)``
  int8, row by row in cell order. Only the codes stay on disk: a search reads the rows of its cells with
  positioned reads into a buffer it keeps (the page cache holds them; nothing is mapped, so the process's
  resident set does not grow with the file, 37 MiB of codes at 100,000 rows of 384, and a file cut under a
  reader is a short read, never a fatal ``SIGBUS``). Everything else is read into memory on open (about 4 MiB
  at 100,000 rows), and the checksum of the whole file is verified there (:meth:`IvfIndex.open`).
- **Which file is current.** The vector file's ``meta`` row ``ivf:<model>:<dim>`` holds ``{"token", "rows",
  "seq"}`` of the file in place. A build reads the vector file in one read transaction (a snapshot), writes a
  temporary file (mode 0600), fsyncs it, and then, inside one write transaction of the vector file, renames it
  over the old one and updates the meta row: a crash leaves either the old pair or the new, and a file whose
  header does not match the meta row (copied, older, another model's, truncated) or whose bytes do not match its
  checksum (damaged inside) is rebuilt, never used. A file that cannot be written (a full disk) leaves the index
  in memory (below); the temporary file of a build that died is removed by a later build
  (:data:`~.ivf_build.STALE_TEMPORARY_S`). A file cut or replaced in place under a reader that holds it open is a
  short read:
  that search answers from the exact scan of the vector file, and the next one holds the file's state again
  (:meth:`~.vectors.VectorStore.search`).
- **Rows that changed since the build.** A row whose ``seq`` is no longer in the vector file (deleted, or
  rewritten: a rewrite gets a new ``seq``) or whose id hash differs is dead in the searcher's memory (never
  scored); rows with ``seq > seq_high`` are the store's exact *tail*. The store rebuilds the file when the tail
  grows past :func:`~.vectors.tail_limit`.
- **No file.** When the path holds something that is not a regular file (a link, a directory) it is left alone,
  or the file cannot be written, and the index is kept in memory instead (the codes in a numpy array: about
  ``rows * dim`` bytes more resident).

This module holds the format and the reading side (:class:`IvfIndex`: open, probe, score); the build (cells, codes,
writing and publishing the file) is :mod:`.ivf_build`, which imports this one.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import stat
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

#: ``os.preadv`` where the platform has it (Linux, the BSDs), else ``None`` (a seek and a read instead).
_PREADV = getattr(os, "preadv", None)

#: The index file's name, beside :data:`~mnemon_ls.roots_safety.VECTOR_FILE`.
IVF_FILE = ".mnemon-ls-vectors.ivf"
MAGIC = b"MNMIVF\x00\x00"
VERSION = 2
#: magic, version, dim, cells, crc32 of the sections (module doc), rows, seq_high, token
HEADER = struct.Struct("<8sIIII QQ16s")
ALIGN = 64
#: Share of the rows a search reads (:meth:`IvfIndex.probe`); chosen in bench/results/hybrid_100k.md.
PROBE_SHARE = 0.04
#: Rows of int8 codes converted to float32 at a time while scoring (a 192 KiB scratch at 384 dimensions).
SCORE_ROWS = 128
#: Rows of int8 codes a search reads into its buffer before scoring them (384 KiB at 384 dimensions).
READ_ROWS = 1024
#: Two cells a search reads that lie at most this many rows apart in the file are read with one system call, the
#: rows between them scored too (a read costs as much as scoring about this many rows).
GAP_ROWS = 16
#: Bytes of the file read at a time while its checksum is verified on open.
VERIFY_BYTES = 1 << 20


def meta_key(model: str, dim: int) -> str:
    """The vector file's ``meta`` key naming the current index file of ``model`` / ``dim`` (module doc)."""
    return f"ivf:{model}:{dim}"


def _aligned(size: int) -> int:
    return -(-size // ALIGN) * ALIGN


def _layout(dim: int, lists: int, rows: int) -> dict[str, tuple[int, str, tuple]]:
    """``{section: (offset, dtype, shape)}`` of a file of these sizes, plus ``"end"`` (the file's size)."""
    sections = [("ccodes", "i1", (lists, dim)), ("cscales", "<f4", (lists,)), ("mean", "<f4", (dim,)),
                ("offsets", "<i8", (lists + 1,)),
                ("seqs", "<i8", (rows,)), ("idh", "<u8", (rows,)), ("scales", "<f4", (rows,)),
                ("s1", "<f8", (dim,)), ("s2", "<f8", (dim, dim)), ("codes", "i1", (rows, dim))]
    out: dict[str, tuple[int, str, tuple]] = {}
    at = _aligned(HEADER.size)
    for name, dtype, shape in sections:
        out[name] = (at, dtype, shape)
        count = 1
        for n in shape:
            count *= n
        at = _aligned(at + count * int(dtype[-1]))
    out["end"] = (at, "", ())
    return out


def encode(np: Any, matrix: Any, mean: Any) -> tuple[Any, Any]:
    """``(int8 codes (n, dim), float32 scales (n,))`` of ``matrix - mean`` (module doc)."""
    centred = matrix - mean
    scales = np.abs(centred).max(axis=1) / 127.0
    scales[scales == 0] = 1.0
    codes = np.rint(centred / scales[:, None]).astype(np.int8)
    return codes, scales.astype(np.float32)


@dataclass
class IvfIndex:
    """One index (module doc), read from its file (``handle`` set) or held in memory (``codes`` set).

    ``lists`` is the number of cells; ``ccodes`` / ``cscales`` their centroids as int8 codes like the rows'
    (:func:`encode`: ``centroid ~ cscale * ccode + mean``); ``seqs``, ``idh``, ``scales`` are per row (``seqs``
    and ``idh`` let go once the store holds them); ``offsets`` per cell; ``s1`` / ``s2`` the moments of all its
    rows as built. Reads of codes are not thread-safe (the store's lock serialises them)."""

    np: Any
    dim: int
    lists: int
    rows: int
    seq_high: int
    token: str
    ccodes: Any
    cscales: Any
    mean: Any
    offsets: Any
    seqs: Any
    idh: Any
    scales: Any
    s1: Any
    s2: Any
    codes: Any = None
    handle: Any = None
    codes_at: int = 0
    path: Path | None = None
    #: The median rows of a cell.
    cell_rows: int = 1

    #: ``centroids @ mean`` (the second ranking of :meth:`probe` without a second product per search).
    centred: Any = None

    def __post_init__(self) -> None:
        np = self.np
        self.cell_rows = max(1, int(np.median(np.diff(self.offsets)))) if self.lists else 1
        self.centred = self._centroid_products(self.mean, {}) if self.lists else np.zeros(0, dtype=np.float32)

    def close(self) -> None:
        """Close the file (an in-memory index has nothing to close; a later read opens it again)."""
        if self.handle is not None:
            self.handle.close()
            self.handle = None

    def reopen(self) -> None:
        """Open the file again after :meth:`close`; raises ``OSError`` when the file at :attr:`path` is no longer
        this index (replaced by a rebuild, removed)."""
        if self.path is None:
            raise OSError("vector index is closed")
        fresh = IvfIndex.open(self.np, self.path, {"token": self.token, "rows": self.rows, "seq": self.seq_high},
                              self.dim) if _same_header(self.path, self.token) else None
        if fresh is None:
            raise OSError(f"vector index {self.path} was replaced or removed")
        self.handle, fresh.handle = fresh.handle, None

    # ------------------------------------------------------------------ reads

    def _read(self, start: int, stop: int, out: Any) -> None:
        """Codes of rows ``start:stop`` into ``out`` (``(stop - start, dim)`` int8, C-contiguous). Raises
        ``OSError`` when the file is shorter than its header says (it was cut under this reader)."""
        if self.codes is not None:
            out[...] = self.codes[start:stop]
            return
        if self.handle is None:
            self.reopen()
        view = memoryview(out.reshape(-1)).cast("B")
        offset = self.codes_at + start * self.dim
        fd = self.handle.fileno()
        while len(view):
            if _PREADV is not None:  # one system call, no seek
                got = _PREADV(fd, [view], offset)
            else:
                self.handle.seek(offset)
                got = self.handle.readinto(view)
            if not got:
                raise OSError(f"vector index {self.path} is shorter than its header says")
            view, offset = view[got:], offset + got

    def rows_codes(self, rows: Any) -> Any:
        """``(len(rows), dim)`` int8 codes of ``rows`` (any order; one read per run of adjacent rows)."""
        np = self.np
        out = np.empty((len(rows), self.dim), dtype=np.int8)
        if not len(rows):
            return out
        order = np.argsort(rows, kind="stable")
        ordered = rows[order]
        breaks = (np.diff(ordered) != 1).nonzero()[0] + 1
        buffer = np.empty((len(rows), self.dim), dtype=np.int8)
        at = 0
        for run in np.split(ordered, breaks):
            self._read(int(run[0]), int(run[-1]) + 1, buffer[at:at + len(run)])
            at += len(run)
        out[order] = buffer
        return out

    def decode(self, rows: Any) -> Any:
        """``(len(rows), dim)`` float32: the vectors of ``rows`` as the codes hold them."""
        codes = self.rows_codes(rows)
        return codes.astype(self.np.float32) * self.scales[rows][:, None] + self.mean

    @staticmethod
    def _scratch(np: Any, buffers: dict, name: str, rows: int, dim: int, dtype: Any) -> Any:
        """``buffers[name]``, a ``(rows, dim)`` array of ``dtype`` kept between searches (made on first use)."""
        held = buffers.get(name)
        if held is None or held.shape != (rows, dim) or held.dtype != dtype:
            held = buffers[name] = np.empty((rows, dim), dtype=dtype)
        return held

    def _products(self, codes: Any, vector: Any, out: Any, buffers: dict) -> None:
        """``out[i] = codes[i] . vector`` (``codes`` int8 ``(n, dim)``, ``vector`` float32 ``(dim,)``), converting
        :data:`SCORE_ROWS` rows at a time into the float32 scratch ``buffers["f32"]`` (BLAS has no int8 product,
        and numpy's own integer product is several times slower than a conversion and a float32 one)."""
        np = self.np
        scratch = self._scratch(np, buffers, "f32", SCORE_ROWS, self.dim, np.float32)
        for start in range(0, len(codes), SCORE_ROWS):
            stop = min(len(codes), start + SCORE_ROWS)
            part = scratch[: stop - start]
            part[...] = codes[start:stop]
            np.matmul(part, vector, out=out[start:stop])

    def _centroid_products(self, vector: Any, buffers: dict) -> Any:
        """``(lists,)`` float32: the cosine-like product of every cell's centroid with ``vector``, from the
        centroids' int8 codes (within about 0.001 of the float32 centroids' at 384 dimensions)."""
        out = self.np.empty(self.lists, dtype=self.np.float32)
        self._products(self.ccodes, vector, out, buffers)
        out *= self.cscales
        out += float(vector @ self.mean)
        return out

    def probe(self, query: Any, need: int, share: float | None = None, buffers: dict | None = None) -> Any:
        """The cells (sorted, int64) a search for ``query`` reads, about ``share`` (default :data:`PROBE_SHARE`) of
        the rows and at least ``need`` rows: taken by turns from two rankings of the cells, by the cosine of
        their centroid to the query and to the query minus the index's mean. The first finds the dense regions
        nearest the query; the second, rows unlike the bulk of the space (a space's few Korean notes among
        thousands of English ones), whose cells the common direction of sentence embeddings otherwise ranks low
        (bench/results/hybrid_100k.md: either alone lost hits the exact search finds)."""
        np = self.np
        budget = max(need, int((PROBE_SHARE if share is None else share) * self.rows))
        near = self._centroid_products(query, {} if buffers is None else buffers)
        want = max(8, 2 * budget // self.cell_rows + 8)
        return np.sort(_by_turns(np, near, near - self.centred, np.diff(self.offsets), budget, want))

    def score(self, query: Any, lists: Any, buffers: dict) -> tuple[Any, Any]:
        """``(rows, approximate cosines)`` of every row of ``lists`` (sorted cells, module doc), and of the rows
        between two of them at most :data:`GAP_ROWS` apart (read in the same system call). The codes are read
        into ``buffers["codes"]`` (:data:`READ_ROWS` rows, kept by the caller like the float32 scratch of
        :meth:`_products`: a search allocates nothing large), a batch of runs at a time."""
        np = self.np
        starts, stops = self.offsets[lists], self.offsets[lists + 1]
        if len(starts) > 1:  # adjacent or nearly adjacent cells are one read
            cut = (starts[1:] - stops[:-1] > GAP_ROWS).nonzero()[0] + 1
            starts, stops = starts[np.concatenate([[0], cut])], stops[np.concatenate([cut - 1, [len(stops) - 1]])]
        lengths = stops - starts
        total = int(lengths.sum())
        rows = np.arange(total, dtype=np.int64) + np.repeat(starts - (np.cumsum(lengths) - lengths), lengths)
        codes = self._scratch(np, buffers, "codes", READ_ROWS, self.dim, np.int8)
        out = np.empty(total, dtype=np.float32)
        done = held = 0  # rows scored; rows read into the buffer and not scored yet
        for a, b in zip(starts.tolist(), stops.tolist()):
            while a < b:
                if held == READ_ROWS:
                    self._products(codes, query, out[done:done + held], buffers)
                    done, held = done + held, 0
                take = min(b - a, READ_ROWS - held)
                self._read(a, a + take, codes[held:held + take])
                a, held = a + take, held + take
        if held:
            self._products(codes[:held], query, out[done:done + held], buffers)
        out *= self.scales[rows]
        out += float(query @ self.mean)
        return rows, out

    # ------------------------------------------------------------------ files

    @classmethod
    def open(cls, np: Any, path: Path, meta: dict, dim: int) -> "IvfIndex":
        """The index file at ``path`` if it is the one ``meta`` (the vector file's meta row) names, for ``dim``.
        Raises ``OSError`` (missing, not a regular file, unreadable) or ``ValueError`` (another file: magic,
        version, dimension, token, rows or size differ; or a damaged one: its bytes do not match the checksum in
        its header, read whole here: about 10 ms of CPU at 100,000 rows of 384, once per process)."""
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
        handle = os.fdopen(fd, "rb", buffering=0)
        try:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise ValueError("not a regular file")
            head = handle.read(HEADER.size)
            if len(head) != HEADER.size:
                raise ValueError("shorter than its header")
            magic, version, fdim, lists, crc, rows, seq_high, token = HEADER.unpack(head)
            if magic != MAGIC or version != VERSION:
                raise ValueError(f"not an index of format {VERSION}")
            if fdim != dim or token.hex() != meta.get("token") or rows != meta.get("rows") \
                    or seq_high != meta.get("seq"):
                raise ValueError("not the index the vector file names")
            layout = _layout(dim, lists, rows)
            if info.st_size != layout["end"][0]:
                raise ValueError(f"{info.st_size} bytes, its header says {layout['end'][0]}")
            arrays = {}
            check = 0
            for name, (offset, dtype, shape) in layout.items():
                if name in ("codes", "end"):
                    continue
                size = int(np.prod(shape)) * int(dtype[-1])
                handle.seek(offset)
                data = handle.read(size)
                if len(data) != size:
                    raise ValueError("shorter than its header says")
                check = zlib.crc32(data, check)
                arrays[name] = np.frombuffer(data, dtype=dtype).reshape(shape)
            if _codes_crc(handle, layout["codes"][0], rows * dim, check) != crc:
                raise ValueError("damaged: its checksum does not match")
            offsets = arrays["offsets"]
            if offsets[0] != 0 or offsets[-1] != rows or (np.diff(offsets) < 0).any():
                raise ValueError("its cell offsets are damaged")
            return cls(np, dim, lists, rows, seq_high, token.hex(), arrays["ccodes"], arrays["cscales"],
                       arrays["mean"], offsets,
                       arrays["seqs"], arrays["idh"], arrays["scales"].astype(np.float32), arrays["s1"], arrays["s2"],
                       handle=handle, codes_at=layout["codes"][0], path=Path(path))
        except BaseException:
            handle.close()
            raise


def _codes_crc(handle: Any, at: int, size: int, check: int) -> int:
    """``zlib.crc32`` of ``size`` bytes of ``handle`` from offset ``at`` on, continuing ``check``, read
    :data:`VERIFY_BYTES` at a time into one buffer (none of it stays in memory)."""
    buffer = bytearray(min(size, VERIFY_BYTES))
    view = memoryview(buffer)
    handle.seek(at)
    while size > 0:
        got = handle.readinto(view[: min(size, len(buffer))])
        if not got:
            raise ValueError("shorter than its header says")
        check = zlib.crc32(view[:got], check)
        size -= got
    return check


def _by_turns(np: Any, first: Any, second: Any, sizes: Any, budget: int, want: int) -> Any:
    """Indices into ``first`` / ``second`` (two scores of the same items, ``sizes`` rows each), taken by turns from
    the best of each until they hold at least ``budget`` rows (looking at the ``want`` best of each at most)."""
    want = max(1, min(want, len(first)))
    picks = []
    for scores in (first, second):
        top = np.argpartition(-scores, want - 1)[:want] if want < len(scores) else np.arange(len(scores))
        picks.append(top[np.argsort(-scores[top], kind="stable")])
    turns = np.empty(2 * want, dtype=np.int64)
    turns[0::2], turns[1::2] = picks
    _unique, first_seen = np.unique(turns, return_index=True)
    ordered = turns[np.sort(first_seen)]
    take = int(np.searchsorted(np.cumsum(sizes[ordered]), budget)) + 1
    return ordered[:take]


def _same_header(path: Path, token: str) -> bool:
    """Whether the file at ``path`` (not followed if a link) is an index whose token is ``token``."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return False
    try:
        head = os.read(fd, HEADER.size)
    finally:
        os.close(fd)
    return len(head) == HEADER.size and HEADER.unpack(head)[0] == MAGIC and HEADER.unpack(head)[7].hex() == token


def read_meta(db: sqlite3.Connection, model: str, dim: int) -> dict | None:
    """The meta row naming the current index of ``model`` / ``dim`` (``None``: none, or unreadable JSON)."""
    row = db.execute("SELECT value FROM meta WHERE key = ?", (meta_key(model, dim),)).fetchone()
    if row is None:
        return None
    try:
        meta = json.loads(row[0])
    except (TypeError, ValueError):
        return None
    return meta if isinstance(meta, dict) else None


def usable_path(path: Path) -> bool:
    """Whether an index file may be written at ``path``: nothing there, or a regular file (a link, a directory
    or anything else is left alone: module doc)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode)

