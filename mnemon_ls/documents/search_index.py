"""The side search index ``documents/.search.sqlite3``: derived, rebuildable, never the truth.

Why SQLite and not an in-memory index (measured, 2,000 documents of 2-20 KiB, bench/results/documents.md):
tokenizing 22 MB of mixed English/Chinese text costs ~5 s of Python, so an in-memory index would pay
that at every start (or ~1.5 s to load a cache, and ~200 MB of dicts). SQLite's FTS5 was measured
too: with ``detail=full`` it stores positions we never use (~6x the text), and it cannot count how
many distinct query terms a document holds, which the coverage rule needs. So the index is a plain
SQLite table of postings, and BM25 (with coverage) is one SQL statement that runs in C.

Schema (``SCHEMA_VERSION``; the tokenizer version is stored too, a mismatch rebuilds)::

    meta(key TEXT PRIMARY KEY, value TEXT)              schema, tokenizer, generation
    docs(doc INTEGER PRIMARY KEY, id TEXT UNIQUE, body_hash TEXT, meta_hash TEXT,
         file_sig TEXT, dl REAL, terms BLOB)
    postings(term TEXT, doc INTEGER, tf REAL, PRIMARY KEY(term, doc)) WITHOUT ROWID

- ``tf`` is the field-weighted term frequency ``5*title + 2*description + body`` (BM25F-style) and
  ``dl`` the same weighting of the lengths; ``terms`` (zlib) lists the document's distinct terms so
  its postings can be deleted by primary key.
- ``body_hash`` is the sha256 of the body *as last read from the managed file* and ``file_sig`` that
  file's ``size:mtime_ns:inode:ctime_ns``; the store uses them as its freshness cache, so a start only
  re-reads files whose signature changed.
- Scoring: ``idf = ln(1 + (N - df + 0.5) / (df + 0.5))`` over all indexed documents, ``k1 = 1.2``,
  ``b = 0.75``; a one-character CJK query term is a prefix range over the terms.

Several processes may share the file (WAL mode, ``busy_timeout``); every process writes the rows of
the files it has read, so they converge on the files' actual content. Any ``sqlite3.DatabaseError``
other than "busy" drops and recreates the file (it is derived). File mode 0600 (the WAL and SHM files
inherit it).
"""

from __future__ import annotations

import hashlib
import math
import os
import sqlite3
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Sequence

from .. import fsio
from .tokens import TOKENIZER_VERSION, QueryTerm, term_counts

SCHEMA_VERSION = 1
TITLE_WEIGHT = 5.0
DESCRIPTION_WEIGHT = 2.0
K1 = 1.2
B = 0.75
_BUSY_MS = 5000


@dataclass(frozen=True, slots=True)
class IndexedDoc:
    """What the store wants indexed for one document: ``id``, ``title``, ``description`` (raw),
    ``body_hash`` (sha256 of the body on disk) and ``file_sig`` (the managed file's signature)."""

    id: str
    title: str
    description: str
    body_hash: str
    file_sig: str


def meta_hash(title: str, description: str) -> str:
    """A short hash of the indexed metadata (title + description)."""
    return hashlib.sha256(f"{title}\x00{description}".encode("utf-8", "surrogatepass")).hexdigest()[:32]


class SearchIndex:
    """The postings database at ``path`` (``None``: in memory, for read-only roots and tests)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._db: sqlite3.Connection | None = None
        self._inode: int | None = None
        self.generation_seen: int = -1
        self.resets = 0

    # ------------------------------------------------------------------ connection

    def _connect(self) -> sqlite3.Connection:
        if self._db is not None and self.path is not None:
            try:
                if os.stat(self.path).st_ino != self._inode:
                    self.close()
            except FileNotFoundError:
                self.close()
        if self._db is not None:
            return self._db
        if self.path is None:
            db = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        else:
            fsio.ensure_dir(self.path.parent)
            if not self.path.exists():
                fd = os.open(self.path, os.O_WRONLY | os.O_CREAT, fsio.FILE_MODE)
                os.close(fd)
            db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None,
                                 timeout=_BUSY_MS / 1000)
            self._inode = os.stat(self.path).st_ino
        try:
            db.execute(f"PRAGMA busy_timeout={_BUSY_MS}")
            if self.path is not None:
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
            self._ensure_schema(db)
        except sqlite3.DatabaseError:
            db.close()
            raise
        self._db = db
        return db

    def _ensure_schema(self, db: sqlite3.Connection) -> None:
        db.execute("CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT)")
        found = dict(db.execute("SELECT key, value FROM meta").fetchall())
        wanted = {"schema": str(SCHEMA_VERSION), "tokenizer": str(TOKENIZER_VERSION)}
        if all(found.get(k) == v for k, v in wanted.items()):
            return
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute("DROP TABLE IF EXISTS docs")
            db.execute("DROP TABLE IF EXISTS postings")
            db.execute("CREATE TABLE docs(doc INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, body_hash TEXT,"
                       " meta_hash TEXT, file_sig TEXT, dl REAL NOT NULL, terms BLOB)")
            db.execute("CREATE TABLE postings(term TEXT NOT NULL, doc INTEGER NOT NULL, tf REAL NOT NULL,"
                       " PRIMARY KEY(term, doc)) WITHOUT ROWID")
            db.execute("DELETE FROM meta")
            db.executemany("INSERT INTO meta VALUES(?, ?)", [*wanted.items(), ("generation", "0")])
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def close(self) -> None:
        """Close the connection (reopened on the next use)."""
        if self._db is not None:
            try:
                self._db.close()
            finally:
                self._db = None
                self._inode = None

    def reset(self) -> None:
        """Delete the database files and start empty (after corruption)."""
        self.close()
        self.resets += 1
        self.generation_seen = -1
        if self.path is not None:
            for suffix in ("", "-wal", "-shm", "-journal"):
                try:
                    os.unlink(f"{self.path}{suffix}")
                except FileNotFoundError:
                    pass

    def _guard(self, action: Callable[[sqlite3.Connection], object]):
        """Run ``action(db)``; on corruption reset the file and run it once more."""
        try:
            return action(self._connect())
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise
            self.reset()
        except sqlite3.DatabaseError:
            self.reset()
        return action(self._connect())

    # ------------------------------------------------------------------ reads

    def generation(self) -> int:
        """A counter every sync that changed rows increments (another process's writes show here)."""
        def run(db: sqlite3.Connection) -> int:
            row = db.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
            return int(row[0]) if row else 0
        return self._guard(run)  # type: ignore[return-value]

    def signatures(self) -> dict[str, tuple[str, str]]:
        """``id -> (file_sig, body_hash)`` of every indexed document (the persisted freshness cache)."""
        def run(db: sqlite3.Connection) -> dict[str, tuple[str, str]]:
            return {row[0]: (row[1], row[2]) for row in db.execute("SELECT id, file_sig, body_hash FROM docs")}
        return self._guard(run)  # type: ignore[return-value]

    # ------------------------------------------------------------------ writes

    def sync(self, wanted: Sequence[IndexedDoc], load_body: Callable[[str], str | None]) -> int:
        """Make the rows of ``wanted`` match: (re)index a document whose body hash or metadata changed
        (``load_body(id)`` returns its body, or ``None`` to skip it this time), refresh changed file
        signatures. Rows of other ids are left alone (another process may know them already). Returns
        how many documents were (re)indexed."""
        def run(db: sqlite3.Connection) -> int:
            rows = {row[0]: row[1:] for row in db.execute("SELECT id, doc, body_hash, meta_hash, file_sig FROM docs")}
            stale: list[IndexedDoc] = []
            sigs: list[tuple[str, str]] = []
            for doc in wanted:
                row = rows.get(doc.id)
                if row is None or row[1] != doc.body_hash or row[2] != meta_hash(doc.title, doc.description):
                    stale.append(doc)
                elif row[3] != doc.file_sig:
                    sigs.append((doc.file_sig, doc.id))
            if not stale and not sigs:
                return 0
            prepared = []
            for doc in stale:
                body = load_body(doc.id)
                if body is not None:
                    prepared.append((doc, _weighted_terms(doc.title, doc.description, body)))
            db.execute("BEGIN IMMEDIATE")
            try:
                done = 0
                current = {row[0]: row[1:] for row in db.execute("SELECT id, doc, terms FROM docs")}
                for doc, (tf, dl) in prepared:
                    old = current.get(doc.id)
                    if old is not None:
                        docno = old[0]
                        old_terms = _unpack(old[1])
                        db.executemany("DELETE FROM postings WHERE term = ? AND doc = ?", ((t, docno) for t in old_terms))
                        db.execute("UPDATE docs SET body_hash = ?, meta_hash = ?, file_sig = ?, dl = ?, terms = ? "
                                   "WHERE doc = ?", (doc.body_hash, meta_hash(doc.title, doc.description),
                                                     doc.file_sig, dl, _pack(tf), docno))
                    else:
                        cursor = db.execute("INSERT INTO docs(id, body_hash, meta_hash, file_sig, dl, terms) "
                                            "VALUES(?, ?, ?, ?, ?, ?)",
                                            (doc.id, doc.body_hash, meta_hash(doc.title, doc.description),
                                             doc.file_sig, dl, _pack(tf)))
                        docno = cursor.lastrowid
                    db.executemany("INSERT OR REPLACE INTO postings(term, doc, tf) VALUES(?, ?, ?)",
                                   ((term, docno, weight) for term, weight in tf.items()))
                    done += 1
                db.executemany("UPDATE docs SET file_sig = ? WHERE id = ?", sigs)
                db.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'")
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
            return done
        return self._guard(run)  # type: ignore[return-value]

    def forget(self, ids: Iterable[str]) -> None:
        """Remove the rows of ``ids`` (used by ``recover`` when documents leave the index)."""
        ids = list(ids)
        if not ids:
            return

        def run(db: sqlite3.Connection) -> None:
            db.execute("BEGIN IMMEDIATE")
            try:
                for key in ids:
                    row = db.execute("SELECT doc, terms FROM docs WHERE id = ?", (key,)).fetchone()
                    if row is None:
                        continue
                    db.executemany("DELETE FROM postings WHERE term = ? AND doc = ?", ((t, row[0]) for t in _unpack(row[1])))
                    db.execute("DELETE FROM docs WHERE doc = ?", (row[0],))
                db.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'")
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        self._guard(run)

    # ------------------------------------------------------------------ query

    def query(self, terms: Sequence[QueryTerm], required: int) -> list[tuple[str, float, int]]:
        """``[(id, bm25 score, groups matched)]`` of every indexed document holding at least ``required``
        distinct query groups, best first. ``terms`` come from :func:`~.tokens.query_terms`."""
        if not terms:
            return []

        def run(db: sqlite3.Connection) -> list[tuple[str, float, int]]:
            total, avgdl = db.execute("SELECT count(*), avg(dl) FROM docs").fetchone()
            if not total:
                return []
            avgdl = avgdl or 1.0
            values: list[str] = []
            hits: list[str] = []
            params: list[object] = []
            hit_params: list[object] = []
            for index, term in enumerate(terms):
                if term.prefix:
                    upper = chr(ord(term.text[-1]) + 1) if ord(term.text[-1]) < 0x10FFFF else term.text + "\uffff"
                    upper = term.text[:-1] + upper
                    df = db.execute("SELECT count(DISTINCT doc) FROM postings WHERE term >= ? AND term < ?",
                                    (term.text, upper)).fetchone()[0]
                    hits.append(f"SELECT doc, sum(tf), {index} FROM postings WHERE term >= ? AND term < ? GROUP BY doc")
                    hit_params.extend((term.text, upper))
                else:
                    df = db.execute("SELECT count(*) FROM postings WHERE term = ?", (term.text,)).fetchone()[0]
                    hits.append(f"SELECT doc, tf, {index} FROM postings WHERE term = ?")
                    hit_params.append(term.text)
                if not df:
                    continue
                values.append("(?, ?, ?)")
                params.extend((index, math.log(1 + (total - df + 0.5) / (df + 0.5)), term.group))
            if not values:
                return []
            sql = (
                f"WITH q(j, idf, g) AS (VALUES {', '.join(values)}), "
                f"hits(doc, tf, j) AS ({' UNION ALL '.join(hits)}) "
                "SELECT d.id, sum(q.idf * h.tf * ? / (h.tf + ? * (1 - ? + ? * d.dl / ?))) AS score, "
                "count(DISTINCT q.g) AS n "
                "FROM hits h JOIN q ON q.j = h.j JOIN docs d ON d.doc = h.doc "
                "GROUP BY h.doc HAVING n >= ? ORDER BY score DESC"
            )
            args = [*params, *hit_params, K1 + 1, K1, B, B, avgdl, required]
            return [(row[0], float(row[1]), int(row[2])) for row in db.execute(sql, args)]
        return self._guard(run)  # type: ignore[return-value]


def _weighted_terms(title: str, description: str, body: str) -> tuple[dict[str, float], float]:
    title_counts, title_len = term_counts(title)
    desc_counts, desc_len = term_counts(description)
    body_counts, body_len = term_counts(body)
    weights: dict[str, float] = {}
    for counts, weight in ((body_counts, 1.0), (desc_counts, DESCRIPTION_WEIGHT), (title_counts, TITLE_WEIGHT)):
        for term, count in counts.items():
            weights[term] = weights.get(term, 0.0) + weight * count
    dl = TITLE_WEIGHT * title_len + DESCRIPTION_WEIGHT * desc_len + body_len
    return weights, float(max(dl, 1))


def _pack(terms: dict[str, float]) -> bytes:
    return zlib.compress("\n".join(terms).encode("utf-8"), 1)


def _unpack(blob: bytes | None) -> list[str]:
    if not blob:
        return []
    text = zlib.decompress(blob).decode("utf-8")
    return text.split("\n") if text else []
