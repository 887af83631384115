"""The side search index ``documents/.search.sqlite3``: derived, rebuildable, never the truth.

Why SQLite postings and not an in-memory index or FTS5 (measured on 2,000 documents of 2-20 KiB, 22.8 MB
of English/Chinese text; bench/results/documents.md):

- in memory: tokenizing the corpus costs seconds of Python at every start (or ~0.5-1.5 s to load a
  cache) and the term -> document dicts take hundreds of MB;
- FTS5 (compiled into this Python's SQLite) with our pre-tokenized text: ``detail=full`` stored 146 MB
  of positions we never use and its ``bm25()`` took 3-17 ms on common terms; ``detail=column`` made
  ``bm25()`` re-tokenize (150-500 ms); and FTS5 cannot count how many distinct query terms a
  document holds, which the coverage rule needs (one extra query per term, up to 10 ms more);
- this table: ~45 MB, one SQL statement computes BM25 and coverage in C: 0.1-5 ms per query.

Schema (``SCHEMA_VERSION``; the tokenizer version is stored too, a mismatch rebuilds)::

    meta(key TEXT PRIMARY KEY, value TEXT)       schema, tokenizer, generation, avgdl (reference)
    docs(doc INTEGER PRIMARY KEY, id TEXT UNIQUE, status TEXT, body_hash TEXT, meta_hash TEXT,
         file_sig TEXT, dl INTEGER, terms BLOB)
    postings(term TEXT, doc INTEGER, tf INTEGER, w INTEGER, PRIMARY KEY(term, doc)) WITHOUT ROWID

- ``tf`` is the field-weighted term frequency ``5*title + 2*description + body`` (BM25F-style) and
  ``dl`` the same weighting of the lengths; ``terms`` (zlib) lists the document's distinct terms so
  its postings can be deleted by primary key.
- ``w`` is the BM25 term weight ``tf*(k1+1) / (tf + k1*(1-b+b*dl/avgdl))`` times 10,000, precomputed
  with the reference ``avgdl`` in ``meta``, so a query only sums ``idf * w`` (a third of the SQL time
  of computing it per row). When the corpus's mean length drifts more than 25 % from the reference,
  every ``w`` is recomputed in the same transaction.
- ``body_hash`` is the sha256 of the body *as last read from the managed file* and ``file_sig`` that
  file's ``size:mtime_ns:inode:ctime_ns``; the store uses them as its freshness cache, so a start only
  re-reads files whose signature changed.
- Scoring: ``idf = ln(1 + (N - df + 0.5) / (df + 0.5))`` over all indexed documents, ``k1 = 1.2``,
  ``b = 0.75``; a one-character CJK query term is a prefix range over the terms (its weights summed,
  capped at ``k1 + 1``).

Several processes may share the file (WAL mode, ``busy_timeout``); every process writes the rows of
the files it has read, so they converge on the files' actual content. Any ``sqlite3.DatabaseError``
other than "busy" drops and recreates the file (it is derived). File mode 0600 (the WAL and SHM files
inherit it).
"""

from __future__ import annotations

import hashlib
import math
import sqlite3
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Sequence

from ..sqliteindex import DerivedIndex
from ..text import QueryTerm, Tokenizer

#: Version 3: a body not adopted (a hand edit a refresh left as it is) is indexed with its credentials replaced
#: by placeholders (:func:`~.files.searchable`); an index of version 2 may hold such a credential, so it is rebuilt
#: (no byte of its old rows left in the file: :meth:`mnemon_ls.sqliteindex.DerivedIndex._ensure_schema`).
SCHEMA_VERSION = 3
#: The Documents tokenizer (:mod:`mnemon_ls.text`): no camelCase splitting, no stopwords, at most 64 query
#: terms. Version 2: an identifier's parts are indexed once each (``a-a`` -> ``a-a a``) and a single-part
#: identifier also as its part (``_private`` -> ``_private private``), the Memory Spaces rule.
TOKENIZER = Tokenizer(version=2, max_query_terms=64)
term_counts = TOKENIZER.term_counts
query_terms = TOKENIZER.query_terms
TITLE_WEIGHT = 5
DESCRIPTION_WEIGHT = 2
K1 = 1.2
B = 0.75
#: Fixed-point scale of the stored weights.
W_SCALE = 10_000
#: Relative drift of the mean document length that triggers recomputing every weight.
AVGDL_DRIFT = 0.25
#: SQLite page cache (KiB) while indexing many documents at once (the default 2 MiB halves the speed).
BULK_CACHE_KIB = 65536


@dataclass(frozen=True, slots=True)
class IndexedDoc:
    """What the store wants indexed for one document: ``id``, ``title``, ``description`` (raw),
    ``body_hash`` (sha256 of the body on disk), ``file_sig`` (the managed file's signature), ``status`` and
    ``redacted`` (the body is indexed with placeholders for its credentials:
    :func:`~mnemon_ls.documents.files.redacted_for_search`)."""

    id: str
    title: str
    description: str
    body_hash: str
    file_sig: str
    status: str = "active"
    redacted: bool = False

    @property
    def meta(self) -> str:
        """:func:`meta_hash` of this document (its title, description and ``redacted``)."""
        return meta_hash(self.title, self.description, self.redacted)


def meta_hash(title: str, description: str, redacted: bool = False) -> str:
    """A short hash of the indexed metadata (title + description, and whether the body was taken with
    placeholders: a row indexed under another ``secrets`` setting is stale)."""
    mark = "\x00redacted" if redacted else ""  # absent when not redacted: the rows of before stay valid
    return hashlib.sha256(f"{title}\x00{description}{mark}".encode("utf-8", "surrogatepass")).hexdigest()[:32]


class SearchIndex(DerivedIndex):
    """The postings database at ``path`` (``None``: in memory, for read-only roots and tests)."""

    TABLES = ("docs", "postings")
    INITIAL_META = {"generation": "0"}

    def __init__(self, path: Path | None) -> None:
        super().__init__(path, schema=SCHEMA_VERSION, tokenizer=TOKENIZER.version)
        self.generation_seen: int = -1

    _connect = DerivedIndex.connect

    def create_tables(self, db: sqlite3.Connection) -> None:
        """The docs and postings tables."""
        db.execute("CREATE TABLE docs(doc INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, status TEXT,"
                   " body_hash TEXT, meta_hash TEXT, file_sig TEXT, dl INTEGER NOT NULL, terms BLOB)")
        db.execute("CREATE TABLE postings(term TEXT NOT NULL, doc INTEGER NOT NULL, tf INTEGER NOT NULL,"
                   " w INTEGER NOT NULL, PRIMARY KEY(term, doc)) WITHOUT ROWID")

    def reset(self) -> None:
        """Delete the database files and start empty (after corruption)."""
        super().reset()
        self.generation_seen = -1

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
        signatures and statuses. Rows of other ids are left alone (another process may know them
        already). Returns how many documents were (re)indexed."""
        def run(db: sqlite3.Connection) -> int:
            rows = {row[0]: row[1:] for row in
                    db.execute("SELECT id, doc, body_hash, meta_hash, file_sig, status FROM docs")}
            stale: list[IndexedDoc] = []
            small: list[tuple[str, str, str]] = []
            for doc in wanted:
                row = rows.get(doc.id)
                if row is None or row[1] != doc.body_hash or row[2] != doc.meta:
                    stale.append(doc)
                elif row[3] != doc.file_sig or row[4] != doc.status:
                    small.append((doc.file_sig, doc.status, doc.id))
            if not stale and not small:
                return 0
            prepared = []
            for doc in stale:
                body = load_body(doc.id)
                if body is not None:
                    prepared.append((doc, _weighted_terms(doc.title, doc.description, body)))
            if len(prepared) > 32:
                db.execute(f"PRAGMA cache_size={-BULK_CACHE_KIB}")  # a bulk (re)build: random B-tree inserts
            db.execute("BEGIN IMMEDIATE")
            try:
                reference = _reference_avgdl(db)
                if reference is None and prepared:
                    reference = sum(dl for _, (_, dl) in prepared) / len(prepared)
                    db.execute("INSERT OR REPLACE INTO meta VALUES('avgdl', ?)", (repr(reference),))
                current = {row[0]: row[1:] for row in db.execute("SELECT id, doc, terms FROM docs")}
                done = 0
                for doc, (tf, dl) in prepared:
                    old = current.get(doc.id)
                    packed = _pack(tf)
                    if old is not None:
                        docno = old[0]
                        db.executemany("DELETE FROM postings WHERE term = ? AND doc = ?",
                                       ((t, docno) for t in _unpack(old[1])))
                        db.execute("UPDATE docs SET status = ?, body_hash = ?, meta_hash = ?, file_sig = ?, dl = ?,"
                                   " terms = ? WHERE doc = ?",
                                   (doc.status, doc.body_hash, doc.meta, doc.file_sig, dl, packed, docno))
                    else:
                        cursor = db.execute("INSERT INTO docs(id, status, body_hash, meta_hash, file_sig, dl, terms) "
                                            "VALUES(?, ?, ?, ?, ?, ?, ?)",
                                            (doc.id, doc.status, doc.body_hash, doc.meta, doc.file_sig, dl, packed))
                        docno = cursor.lastrowid
                    norm = K1 * (1 - B + B * dl / reference)
                    db.executemany("INSERT OR REPLACE INTO postings(term, doc, tf, w) VALUES(?, ?, ?, ?)",
                                   ((term, docno, count, round(W_SCALE * count * (K1 + 1) / (count + norm)))
                                    for term, count in tf.items()))
                    done += 1
                db.executemany("UPDATE docs SET file_sig = ?, status = ? WHERE id = ?", small)
                if prepared:
                    mean = db.execute("SELECT avg(dl) FROM docs").fetchone()[0]
                    if mean and reference and abs(mean / reference - 1) > AVGDL_DRIFT:
                        _reweight(db, mean)
                db.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'")
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
            finally:
                if len(prepared) > 32:
                    db.execute("PRAGMA cache_size=-2000")
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
                    db.executemany("DELETE FROM postings WHERE term = ? AND doc = ?",
                                   ((t, row[0]) for t in _unpack(row[1])))
                    db.execute("DELETE FROM docs WHERE doc = ?", (row[0],))
                db.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'")
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        self._guard(run)

    # ------------------------------------------------------------------ query

    def query(self, terms: Sequence[QueryTerm], required: int, *, statuses: Sequence[str] = ("active",),
              limit: int = 50, only: Sequence[str] | None = None) -> tuple[list[tuple[str, float, int]], int]:
        """``([(id, bm25 score, groups matched)], total)``: the best ``limit`` indexed documents of the
        given ``statuses`` holding at least ``required`` distinct query groups, best first, and how many
        match in all. ``only`` restricts the query to those ids. ``terms`` come from
        :meth:`mnemon_ls.text.Tokenizer.query_terms`."""
        if not terms:
            return [], 0

        def run(db: sqlite3.Connection) -> tuple[list[tuple[str, float, int]], int]:
            total = db.execute("SELECT count(*) FROM docs").fetchone()[0]
            if not total:
                return [], 0
            hits: list[str] = []
            args: list[object] = []
            cap = round(W_SCALE * (K1 + 1))
            for term in terms:
                if term.prefix:
                    upper = term.text[:-1] + chr(min(ord(term.text[-1]) + 1, 0x10FFFF))
                    df = db.execute("SELECT count(DISTINCT doc) FROM postings WHERE term >= ? AND term < ?",
                                    (term.text, upper)).fetchone()[0]
                    if df:
                        hits.append("SELECT doc, min(sum(w), ?) * ?, ? FROM postings WHERE term >= ? AND term < ? "
                                    "GROUP BY doc")
                        args.extend((cap, _idf(total, df), term.group, term.text, upper))
                else:
                    df = db.execute("SELECT count(*) FROM postings WHERE term = ?", (term.text,)).fetchone()[0]
                    if df:
                        hits.append("SELECT doc, w * ?, ? FROM postings WHERE term = ?")
                        args.extend((_idf(total, df), term.group, term.text))
            if not hits:
                return [], 0
            distinct = len({t.group for t in terms}) < len(terms)
            count = "count(DISTINCT h.g)" if distinct else "count(*)"
            marks = ", ".join("?" for _ in statuses)
            where = f"d.status IN ({marks})"
            extra: list[object] = list(statuses)
            if only is not None:
                where += f" AND d.id IN ({', '.join('?' for _ in only)})"
                extra.extend(only)
            sql = (f"WITH hits(doc, s, g) AS ({' UNION ALL '.join(hits)}) "
                   f"SELECT d.id, a.s, a.n, count(*) OVER () FROM "
                   f"(SELECT h.doc AS doc, sum(h.s) AS s, {count} AS n FROM hits h GROUP BY h.doc HAVING n >= ?) a "
                   f"JOIN docs d ON d.doc = a.doc WHERE {where} ORDER BY a.s DESC LIMIT ?")
            rows = db.execute(sql, [*args, required, *extra, limit]).fetchall()
            matched = rows[0][3] if rows else 0
            return [(row[0], row[1] / W_SCALE, row[2]) for row in rows], matched
        return self._guard(run)  # type: ignore[return-value]


def _idf(total: int, df: int) -> float:
    return math.log(1 + (total - df + 0.5) / (df + 0.5))


def _reference_avgdl(db: sqlite3.Connection) -> float | None:
    row = db.execute("SELECT value FROM meta WHERE key = 'avgdl'").fetchone()
    try:
        return float(row[0]) if row else None
    except ValueError:
        return None


def _reweight(db: sqlite3.Connection, mean: float) -> None:
    """Recompute every stored weight for the mean length ``mean`` (inside the caller's transaction)."""
    db.execute(
        "UPDATE postings SET w = CAST(round(? * tf * ? / (tf + ? * (1 - ? + ? * "
        "(SELECT dl FROM docs WHERE docs.doc = postings.doc) / ?))) AS INTEGER)",
        (W_SCALE, K1 + 1, K1, B, B, mean))
    db.execute("INSERT OR REPLACE INTO meta VALUES('avgdl', ?)", (repr(mean),))


def _weighted_terms(title: str, description: str, body: str) -> tuple[dict[str, int], int]:
    title_counts, title_len = term_counts(title)
    desc_counts, desc_len = term_counts(description)
    body_counts, body_len = term_counts(body)
    weights: dict[str, int] = dict(body_counts)
    for counts, weight in ((desc_counts, DESCRIPTION_WEIGHT), (title_counts, TITLE_WEIGHT)):
        for term, count in counts.items():
            weights[term] = weights.get(term, 0) + weight * count
    dl = TITLE_WEIGHT * title_len + DESCRIPTION_WEIGHT * desc_len + body_len
    return weights, max(dl, 1)


def _pack(terms: dict[str, int]) -> bytes:
    return zlib.compress("\n".join(terms).encode("utf-8"), 1)


def _unpack(blob: bytes | None) -> list[str]:
    if not blob:
        return []
    text = zlib.decompress(blob).decode("utf-8")
    return text.split("\n") if text else []
