"""The side search index of one native space: ``data/<space-id>/.mnemon-ls-index.db`` (derived, never the truth).

The Mnemon CLI's schema has no full-text index (its search scans every row), so each native space keeps
this SQLite file beside ``mnemon.db``. It is ours alone: the CLI never opens it, ``mnemon.db`` gets no
table, trigger or column from it, and deleting it only costs a rebuild.

Schema (:data:`SCHEMA_VERSION`; the tokenizer version is stored too, and a mismatch rebuilds)::

    meta(key TEXT PRIMARY KEY, value TEXT)     schema, tokenizer, fingerprint (JSON, see below)
    docs(doc INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, active INTEGER NOT NULL, importance INTEGER,
         created REAL, source TEXT, category TEXT, chash TEXT, tags TEXT, sig TEXT, branches TEXT, terms TEXT)
    fts USING fts5(terms, content=docs, content_rowid=doc, detail=full, tokenize="ascii tokenchars '-._'")
        an external-content index of docs.terms: rowid = docs.doc, active items only
    ents(entity TEXT, created REAL, doc INTEGER, PRIMARY KEY(entity, created, doc)) WITHOUT ROWID

- ``terms`` holds the item's indexed terms (content, tags other than ``branch:*``, entities; see
  :data:`TOKENIZER`) joined by spaces (``''`` for a forgotten item); FTS5 indexes it for the active items and
  ranks them with BM25, and the stored text gives each candidate's coverage of the query without touching
  ``mnemon.db``. The text is stored once, in ``docs`` (``SELECT terms FROM fts`` reads it there): an item
  leaves ``fts`` by FTS5's ``'delete'`` command with that same text, before its ``docs`` row goes. The
  column has no default, so an older mnemon-ls still holding the file open cannot add a row without its
  terms: its insert fails and it deletes the index (its rule for a failed index write), which is rebuilt.
- ``chash`` = first 32 hex of sha256(content): the exact-duplicate lookup of remember.
- ``ents`` lists the exact (case-kept) entities of active items, newest first per entity: the lookup the
  CLI's automatic entity edges need (it scans ``json_each`` of every row instead).
- ``sig`` = first 32 hex of sha256 over the indexed fields and the deleted flag: a full reconcile re-reads
  ``mnemon.db`` and re-indexes exactly the rows whose signature changed.
- ``created`` is epoch seconds (recency ranking), ``tags`` the JSON tag list, ``branches`` the JSON list of
  its ``branch:<name>`` tags alone, ``NULL`` for the (many) items without one: a search decodes nothing for
  those (branch filtering only looks at branch tags).
- ``fts`` keeps positions (``detail=full``): BM25 counts a term's occurrences in a row from the index; with
  ``detail=none`` FTS5 re-read and re-tokenized the text of every row it scored (a few thousand per query
  at 100,000 items, most of a recall's time), for the same values.
- One statement per search (:mod:`.index_query`): document frequencies come from an ``fts5vocab`` view
  inside it; terms held by more than ``max(500, 2 %)`` of the items only count toward coverage, and a
  query made of such terms only takes the newest items holding them; it answers each candidate's coverage
  counts too (see :meth:`SideIndex.search`).
- Schema 2 (``detail=none``, the terms in FTS5's own content table, no ``branches``, a statement per query
  term): an index of it is dropped and rebuilt from ``mnemon.db`` when it is opened, like any index whose
  stored ``schema`` differs (derived data: a rebuild costs ~20 s at 100,000 items, once).

Freshness: the fingerprint ``{"rowid": max insights rowid, "oplog": max oplog id, "active": active
rows, "total": all rows}`` of ``mnemon.db`` that the index reflects is stored in ``meta``; the provider
compares it with ``mnemon.db``'s current one whenever another connection has committed (``PRAGMA
data_version``) and catches up incrementally (new rowids; ids named by new oplog rows) or, when counts
still differ or the oplog has a gap, by a full reconcile. A corrupt file is deleted and rebuilt.
Several processes share the file (WAL, ``busy_timeout``); every update is idempotent (by item id).
"""

from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from ..sqliteindex import DerivedIndex, content_hash
from ..text import ENGLISH_STOPWORDS, QueryTerm, Tokenizer
from . import index_query

SCHEMA_VERSION = 3
#: SQLite page cache of the index connection, KiB (``PRAGMA cache_size``): the side index's share of the
#: resident memory bound of an open space (see :mod:`mnemon_ls.spaces.providers.native`, "Memory").
INDEX_CACHE_KIB = 16 * 1024
#: Page cache (KiB) while :meth:`SideIndex.apply` writes a rebuild or a batch of at least :data:`BULK_ROWS`
#: rows (imports, full reconciles); back to :data:`INDEX_CACHE_KIB` afterwards.
BULK_CACHE_KIB = 64 * 1024
BULK_ROWS = 500
#: More FTS5 segments than this, found at the first write of a connection, are merged into one
#: (:meth:`SideIndex.apply`), as is an index whose bulk import was killed before its merge
#: (:meth:`SideIndex.merge_pending`): the segment count stays bounded.
MAX_SEGMENTS = 8
#: The tokenizer of Memory Space items (:mod:`mnemon_ls.text`): camelCase identifiers split, the Mnemon
#: CLI's English stopwords (mnemon-cli.md 9.1) neither indexed nor searched, at most 32 query terms.
TOKENIZER = Tokenizer(version=1, max_query_terms=32, camel_case=True, stopwords=ENGLISH_STOPWORDS)
INDEX_FILE = ".mnemon-ls-index.db"
BRANCH_PREFIX = "branch:"


@dataclass(frozen=True, slots=True)
class IndexRow:
    """One insight as the index needs it (raw column values of ``mnemon.db``)."""

    id: str
    content: str
    category: str | None
    importance: int | None
    tags: list[str]
    entities: list[str]
    source: str | None
    created: float
    active: bool

    def sig(self) -> str:
        """Signature of every indexed field (module doc)."""
        body = json.dumps([self.content, self.category, self.importance, self.tags, self.entities, self.source,
                           self.created, self.active], ensure_ascii=False)
        return content_hash(body)


def branches_json(tags: Sequence[str]) -> str | None:
    """The ``branches`` column of an item with ``tags``: the JSON list of its ``branch:<name>`` tags, or
    ``None`` when it has none."""
    found = [tag for tag in tags if tag.startswith(BRANCH_PREFIX) and len(tag) > len(BRANCH_PREFIX)]
    return json.dumps(found, ensure_ascii=False) if found else None


def indexed_terms(row: IndexRow) -> str:
    """The space-joined indexed terms of ``row`` (content, non-branch tags, entities)."""
    document_terms = TOKENIZER.document_terms
    terms = document_terms(row.content)
    for tag in row.tags:
        if not tag.startswith("branch:"):
            terms.extend(document_terms(tag))
    for entity in row.entities:
        terms.extend(document_terms(entity))
    return " ".join(terms)


class SideIndex(DerivedIndex):
    """The index file at ``path`` (see module doc). Not thread-safe: the provider serializes calls."""

    TABLES = ("docs", "fts", "ents")
    INITIAL_META = {"fingerprint": "null"}

    def __init__(self, path: Path | None) -> None:
        """``path`` ``None``: in memory (used while the file system is full or read-only)."""
        super().__init__(Path(path) if path is not None else None, schema=SCHEMA_VERSION, tokenizer=TOKENIZER.version)
        self._segments_checked = -1  # the connection (:attr:`opens`) whose segments a write has counted

    def create_tables(self, db: sqlite3.Connection) -> None:
        """Documents, their FTS5 terms and the entity index."""
        db.execute("CREATE TABLE docs(doc INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, active INTEGER NOT NULL,"
                   " importance INTEGER, created REAL, source TEXT, category TEXT, chash TEXT, tags TEXT, sig TEXT,"
                   " branches TEXT, terms TEXT NOT NULL)")
        db.execute("CREATE INDEX docs_chash ON docs(chash)")
        db.execute("CREATE INDEX docs_active ON docs(active)")
        db.execute("CREATE VIRTUAL TABLE fts USING fts5(terms, content=docs, content_rowid=doc, detail=full,"
                   " tokenize=\"ascii tokenchars '-._'\")")
        db.execute("CREATE TABLE ents(entity TEXT NOT NULL, created REAL NOT NULL, doc INTEGER NOT NULL,"
                   " PRIMARY KEY(entity, created, doc)) WITHOUT ROWID")

    def after_open(self, db: sqlite3.Connection) -> None:
        """A page cache of :data:`INDEX_CACHE_KIB` and the fts5vocab view used for document frequencies."""
        db.execute(f"PRAGMA cache_size={-INDEX_CACHE_KIB}")
        db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.vocab USING fts5vocab(main, fts, 'row')")

    # ------------------------------------------------------------------ state

    def fingerprint(self) -> dict | None:
        """The stored fingerprint of ``mnemon.db`` the index reflects (``None``: never synced)."""
        row = self.connect().execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()
        return json.loads(row[0]) if row and row[0] else None

    def counts(self) -> tuple[int, int]:
        """``(active rows, all rows)`` indexed."""
        db = self.connect()
        active = db.execute("SELECT count(*) FROM docs WHERE active = 1").fetchone()[0]
        total = db.execute("SELECT count(*) FROM docs").fetchone()[0]
        return active, total

    def signatures(self) -> dict[str, str]:
        """``id -> sig`` of every indexed row (full reconcile)."""
        return {row[0]: row[1] for row in self.connect().execute("SELECT id, sig FROM docs")}

    # ------------------------------------------------------------------ writes

    def apply(self, rows: Sequence[IndexRow], *, removed: Iterable[str] = (), fingerprint: dict | None = None,
              replace_all: bool = False, force: bool = False) -> None:
        """Upsert ``rows`` (by id), delete ``removed`` ids, and store ``fingerprint`` when it is newer than the
        stored one (by oplog id, then rowid), or always with ``force``/``replace_all``; one transaction.
        ``replace_all`` first empties the index (full rebuild; then :meth:`optimize`). A rebuild or a batch of
        :data:`BULK_ROWS` rows or more runs with a page cache of :data:`BULK_CACHE_KIB`. The first write of a
        connection counts the FTS5 segments (:meth:`segments`) and merges them (:meth:`optimize`) when there
        are more than :data:`MAX_SEGMENTS`, or when a bulk import was killed before its merge
        (:meth:`merge_pending`)."""
        db = self.connect()
        prepared = [(row, indexed_terms(row) if row.active else "") for row in rows]
        bulk = replace_all or len(prepared) >= BULK_ROWS
        if bulk:
            db.execute(f"PRAGMA cache_size={-BULK_CACHE_KIB}")
        try:
            self._apply(db, prepared, removed, fingerprint, replace_all, force)
            if replace_all:
                self.optimize()
            elif self._segments_checked != self.opens:
                self._segments_checked = self.opens
                pending = db.execute("SELECT 1 FROM meta WHERE key = 'merge'").fetchone()
                if pending is not None or self.segments() > MAX_SEGMENTS:
                    self.optimize()
        finally:
            if bulk:
                db.execute(f"PRAGMA cache_size={-INDEX_CACHE_KIB}")

    def segments(self) -> int:
        """How many FTS5 segments the index has (the ``fts_idx`` table holds one row per segment and leaf page
        range: 67 rows at 10,000 items, 412 at 100,000). Measured on a 2-core machine (median of 20): 0.007 ms at
        10,000 items and 0.024 ms at 100,000 (5 segments each); counted once per connection, at its first write."""
        return self.connect().execute("SELECT count(DISTINCT segid) FROM fts_idx").fetchone()[0]

    def optimize(self) -> None:
        """Merge the FTS5 index into one segment (FTS5's ``'optimize'`` command, in its own transaction): FTS5
        adds a segment per committed batch and merges them only four at a time, so after an import in batches
        or a rebuild every query term is looked up in each of several segments. Measured on a 2-core machine
        (the search statement alone, CPU, median of 5 passes): over ``bench/recall_100k.py``'s 100,000 items and
        200 queries 1.73 -> 1.50 ms per query (7 segments -> 1), over ``bench/mcp_start.py``'s 10,000 items and 60
        queries 0.73 -> 0.64 ms (6 -> 1); the merge itself took 0.77 s at 100,000 items. Called after a rebuild
        (:meth:`apply` with ``replace_all``) and by an import of at least :data:`BULK_ROWS` items
        (:meth:`~mnemon_ls.spaces.providers.native.NativeProvider.import_items`); the index answers the same rows
        in the same order before and after; the mark of :meth:`merge_pending` is removed with it. Raises
        :class:`sqlite3.Error` as SQLite does."""
        db = self.connect()
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute("INSERT INTO fts(fts) VALUES('optimize')")
            db.execute("DELETE FROM meta WHERE key = 'merge'")
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def merge_pending(self) -> None:
        """Mark the index as due for :meth:`optimize` (a ``merge`` row in ``meta``), before a bulk import writes
        its batches: killed before its own merge, the index is merged at the next connection's first write
        (:meth:`apply`; not this connection's: the import merges at its end). Raises :class:`sqlite3.Error` as
        SQLite does."""
        self.connect().execute("INSERT OR REPLACE INTO meta(key, value) VALUES('merge', 'pending')")
        self._segments_checked = self.opens

    def _apply(self, db: sqlite3.Connection, prepared: list[tuple[IndexRow, str]], removed: Iterable[str],
               fingerprint: dict | None, replace_all: bool, force: bool) -> None:
        db.execute("BEGIN IMMEDIATE")
        try:
            if replace_all:
                db.execute("INSERT INTO fts(fts) VALUES('delete-all')")
                db.execute("DELETE FROM docs")
                db.execute("DELETE FROM ents")
            for key in removed:
                self._drop(db, key)
            for row, terms in prepared:
                self._drop(db, row.id)
                cursor = db.execute(
                    "INSERT INTO docs(id, active, importance, created, source, category, chash, tags, sig, branches,"
                    " terms) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (row.id, 1 if row.active else 0, row.importance, row.created, row.source, row.category,
                     content_hash(row.content), json.dumps(row.tags, ensure_ascii=False), row.sig(),
                     branches_json(row.tags), terms))
                doc = cursor.lastrowid
                if row.active:
                    db.execute("INSERT INTO fts(rowid, terms) VALUES(?, ?)", (doc, terms))
                    db.executemany("INSERT OR IGNORE INTO ents(entity, created, doc) VALUES(?, ?, ?)",
                                   ((entity, row.created, doc) for entity in row.entities))
            if fingerprint is not None:
                stored_row = db.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()
                stored = json.loads(stored_row[0]) if stored_row and stored_row[0] else None
                if replace_all or force or stored is None or _order(fingerprint) >= _order(stored):
                    db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES('fingerprint', ?)",
                               (json.dumps(fingerprint, sort_keys=True),))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    @staticmethod
    def _drop(db: sqlite3.Connection, key: str) -> None:
        found = db.execute("SELECT doc, active, created, terms FROM docs WHERE id = ?", (key,)).fetchone()
        if found is None:
            return
        doc = found[0]
        if found[1]:  # external content: FTS5 removes exactly the terms it is given, the ones it indexed
            db.execute("INSERT INTO fts(fts, rowid, terms) VALUES('delete', ?, ?)", (doc, found[3]))
            db.execute("DELETE FROM ents WHERE doc = ? AND created = ?", (doc, found[2]))
        db.execute("DELETE FROM docs WHERE doc = ?", (doc,))

    # ------------------------------------------------------------------ reads

    def duplicates(self, content: str) -> list[str]:
        """Ids of active items whose content hash equals ``content``'s (verify the text in ``mnemon.db``)."""
        return [row[0] for row in self.connect().execute(
            "SELECT id FROM docs WHERE chash = ? AND +active = 1", (content_hash(content),))]

    def entity_neighbours(self, entity: str, limit: int = 5, exclude: str | None = None) -> list[str]:
        """Ids of the ``limit`` newest active items whose entities hold exactly ``entity``."""
        rows = self.connect().execute(
            "SELECT d.id FROM ents e JOIN docs d ON d.doc = e.doc WHERE e.entity = ? AND d.active = 1 "
            "AND d.id != ? ORDER BY e.created DESC LIMIT ?", (entity, exclude or "", limit))
        return [row[0] for row in rows]

    def top_entities(self, limit: int = 20) -> list[dict]:
        """``[{"entity", "count"}]`` over active items, most frequent first (ties by name)."""
        rows = self.connect().execute(
            "SELECT entity, count(*) AS n FROM ents GROUP BY entity ORDER BY n DESC, entity ASC LIMIT ?", (limit,))
        return [{"entity": row[0], "count": row[1]} for row in rows]

    def search(self, terms: Sequence[QueryTerm], limit: int, total: int, *, category: str | None = None,
               source: str | None = None) -> list[tuple[str, float | None, int | None, float | None, str | None,
                                                        int, int, int, str]]:
        """Candidates for ``terms``, at most ``limit``, in one SQL statement (:mod:`.index_query`): ``[(id, bm25
        (higher is better) or None, importance, created, branches (JSON list of the ``branch:`` tags, or
        None), matched, exact, held, counts)]`` with ``matched``/``exact`` the query groups the item holds /
        holds by their whole term (:func:`mnemon_ls.text.grouped`; :func:`mnemon_ls.text.match_scores` counts
        the same), ``held`` the bit mask of the groups it holds and ``counts`` how many items hold each term
        (``"n0,n1,..."``, at most the common cap + 1).

        Terms held by more than ``max(500, 2 % of total)`` items (``total``: active items) are *common*:
        ranking them with BM25 would score most of the space, so when the query has rarer terms only those
        are matched (BM25, ``rank``) and common terms count in coverage only; a query of common terms only
        takes the newest items holding all of them, then the newest holding any (no BM25). Raises
        :class:`sqlite3.Error` as SQLite does."""
        if not terms:
            return []
        sql, params = index_query.statement(terms, pool=limit, total=total, category=category, source=source)
        return index_query.held(terms, self.connect().execute(sql, params).fetchall())

    def created_between(self, start: float, end: float, limit: int, *, category: str | None = None,
                        source: str | None = None) -> list[tuple]:
        """The newest ``limit`` active items created in ``[start, end)`` (epoch seconds), as rows shaped like
        :meth:`search`'s with no query term held: ``(id, None, importance, created, branches, 0, 0, 0, "")``.
        ``category``/``source`` filter. Reads every ``docs`` row (there is no index on ``created``): a query that
        names a time range pays one scan. Raises :class:`sqlite3.Error` as SQLite does."""
        sql = ("SELECT id, NULL, importance, created, branches, 0, 0, 0, '' FROM docs WHERE active = 1 "
               "AND created >= ? AND created < ?")
        params: list = [start, end]
        if category is not None:
            sql += " AND category = ?"
            params.append(category)
        if source is not None:
            sql += " AND source = ?"
            params.append(source)
        return self.connect().execute(sql + " ORDER BY created DESC, doc DESC LIMIT ?", [*params, limit]).fetchall()

    def size_bytes(self) -> int:
        """Bytes of the index file plus its WAL."""
        total = 0
        for suffix in ("", "-wal"):
            try:
                total += os.stat(f"{self.path}{suffix}").st_size
            except FileNotFoundError:
                pass
        return total


def _order(fp: dict) -> tuple[int, int]:
    return int(fp.get("oplog", 0)), int(fp.get("rowid", 0))

