"""The side index's search (mnemon_ls/spaces/index_query.py) on real SQLite files: one SQL statement per
search, counted with sqlite3's trace callback; the same candidates, BM25 values and coverage counts as the
search of schema 2 it replaced (a vocabulary statement per term, then one or two MATCH statements),
reimplemented here as the reference; only branch tags reach the branch rule; and the migration of an index
written by schema 2 when it is opened."""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path

import pytest

from mnemon_ls.spaces.index_query import common_cap
from mnemon_ls.spaces.index import INDEX_FILE, SCHEMA_VERSION, TOKENIZER, IndexRow, SideIndex, indexed_terms
from mnemon_ls.spaces.providers.native import NativeProvider
from mnemon_ls.text import QueryTerm, fts_match, grouped

from tests.conftest import FrozenClock


def top_level(statements: list[str]) -> list[str]:
    """The statements our code ran: sqlite3 reports those a virtual table (FTS5) runs inside one as ``-- ...``."""
    return [s for s in statements if not s.startswith("-- ")]


# --------------------------------------------------------------------------- the reference: schema 2's search


def reference_search(db: sqlite3.Connection, terms: list[QueryTerm], limit: int, total: int,
                     category: str | None = None, source: str | None = None) -> list[tuple]:
    """Schema 2's ``SideIndex.search`` on this index: ``[(id, bm25 or None, terms text)]`` in its order."""
    def frequency(term: QueryTerm) -> int:
        if term.prefix:
            upper = term.text[:-1] + chr(ord(term.text[-1]) + 1)
            row = db.execute("SELECT coalesce(sum(doc), 0) FROM temp.vocab WHERE term >= ? AND term < ?",
                             (term.text, upper)).fetchone()
        else:
            row = db.execute("SELECT doc FROM temp.vocab WHERE term = ?", (term.text,)).fetchone()
        return int(row[0]) if row and row[0] else 0

    present = [(t, n) for t, n in ((t, frequency(t)) for t in terms) if n > 0]
    if not present:
        return []
    cap = common_cap(total)
    selective = [t for t, n in present if n <= cap]
    where, extra = "", []
    if category is not None:
        where, extra = where + " AND d.category = ?", [*extra, category]
    if source is not None:
        where, extra = where + " AND d.source = ?", [*extra, source]
    base = "SELECT d.id, {score}, d.terms FROM fts JOIN docs d ON d.doc = fts.rowid WHERE fts MATCH ?" + where
    if selective:
        rows = db.execute(base.format(score="-bm25(fts)") + " ORDER BY rank LIMIT ?",
                          [fts_match(selective), *extra, limit]).fetchall()
        return [tuple(r) for r in rows]
    common = [t for t, _ in present]
    sql = base.format(score="NULL") + " ORDER BY fts.rowid DESC LIMIT ?"
    rows = db.execute(sql, [fts_match(common, "AND"), *extra, limit]).fetchall()
    if len(rows) < limit and len(common) > 1:
        seen = {r[0] for r in rows}
        rows += [r for r in db.execute(sql, [fts_match(common), *extra, limit]).fetchall() if r[0] not in seen]
    return [tuple(r) for r in rows[:limit]]


def counts(terms: list[QueryTerm], text: str) -> tuple[int, int, int]:
    """``(groups held, groups held by their whole term, bit mask of the groups held)`` of ``text`` (space-joined
    terms), by sets."""
    held = set(text.split())

    def holds(term: QueryTerm) -> bool:
        return any(t.startswith(term.text) for t in held) if term.prefix else term.text in held

    groups = grouped(terms)
    matched = sum(1 for g in groups if any(holds(t) for t in g))
    mask = sum(1 << bit for bit, g in enumerate(groups) if any(holds(t) for t in g))
    return matched, sum(1 for g in groups if holds(g[0])), mask


def frequencies(db: sqlite3.Connection, terms: list[QueryTerm], cap: int) -> str:
    """How many active items hold each term (a prefix term: the sum over the terms it begins), at most
    ``cap + 1``, comma-joined in the order of ``terms``."""
    out = []
    for term in terms:
        if term.prefix:
            upper = term.text[:-1] + chr(ord(term.text[-1]) + 1)
            n = db.execute("SELECT coalesce(sum(doc), 0) FROM temp.vocab WHERE term >= ? AND term < ?",
                           (term.text, upper)).fetchone()[0]
        else:
            n = db.execute("SELECT count(*) FROM (SELECT 1 FROM fts WHERE fts MATCH ? LIMIT ?)",
                           (fts_match([term]), cap + 1)).fetchone()[0]
        out.append(str(min(n, cap + 1) if not term.prefix else n))
    return ",".join(out)


WORDS = [f"w{n:03d}" for n in range(200)]
HAN = "数据库索引缓存分支提交记忆空间"


def generated_rows(count: int, seed: int = 5) -> list[IndexRow]:
    """``count`` rows: ``usual`` in ~90 % of them and ``often`` in ~85 % (common past 1,000 items), Zipf-ish
    words, identifiers with parts, Chinese runs, mixed categories, sources, importances and times."""
    rng = random.Random(seed)
    rows = []
    for n in range(count):
        words = rng.choices(WORDS, [1 / (i + 1) for i in range(len(WORDS))], k=rng.randint(3, 9))
        if rng.random() < 0.9:
            words.append("usual")
        if rng.random() < 0.85:
            words.append("often")
        if n % 3 == 0:
            words.append(rng.choice(["retry_backoff", "retry_backoff_ms", "getUserName", "getUser", "max_retry"]))
        if n % 4 == 0:
            start = rng.randrange(len(HAN) - 3)
            words.append(HAN[start:start + rng.randint(2, 4)])
        rows.append(IndexRow(id=f"item-{n:05d}", content=" ".join(words), category=rng.choice(["fact", "decision"]),
                             importance=rng.choice([None, 1, 3, 5]), tags=rng.choice([[], ["ops"]]), entities=[],
                             source=rng.choice(["user", "agent"]), created=rng.choice([0.0, 1.7e9 + n * 3600.0]),
                             active=n % 17 != 0))
    return rows


@pytest.fixture(scope="module")
def big_index(tmp_path_factory: pytest.TempPathFactory) -> SideIndex:
    index = SideIndex(tmp_path_factory.mktemp("index") / INDEX_FILE)
    index.apply(generated_rows(1300), replace_all=True)
    yield index
    index.close()


QUERIES = [
    "w150 w199",                  # rare words: BM25
    "w001 w150",                  # a frequent and a rare word
    "usual",                      # one common term: the newest holding it
    "usual often",                # only common terms: all of them, then any (the fill)
    "usual often w190",           # common terms and a rare one: BM25 on the rare one only
    "retry_backoff",              # an identifier and its parts (one group)
    "getUserName settings",       # camelCase parts, a word nobody holds
    "数",                          # one Chinese character: a prefix term
    "索引缓存",                      # Chinese bigrams
    "nothing-stored-here zzz",    # no term held: no candidate
    'quote"d w003',               # a quote in a term
]


@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize("limit,category,source", [(64, None, None), (5, None, None), (64, "fact", None),
                                                   (30, "decision", "agent")])
def test_one_statement_finds_what_schema_2_found(big_index: SideIndex, query: str, limit: int,
                                                 category: str | None, source: str | None) -> None:
    db = big_index.connect()
    terms = TOKENIZER.query_terms(query)
    total = big_index.counts()[0]
    expected = reference_search(db, terms, limit, total, category, source)
    seen: list[str] = []
    db.set_trace_callback(seen.append)
    try:
        found = big_index.search(terms, limit, total, category=category, source=source)
    finally:
        db.set_trace_callback(None)
    assert len(top_level(seen)) == 1, top_level(seen)
    assert [(row[0], row[1]) for row in found] == [(row[0], row[1]) for row in expected]  # ids, order, BM25 exactly
    assert [row[5:8] for row in found] == [counts(terms, row[2]) for row in expected]
    assert {row[8] for row in found} <= {frequencies(db, terms, common_cap(total))}
    if query in ("usual often", "usual"):
        assert len(found) == limit and all(row[1] is None for row in found)  # the newest-items strategy ran


def test_the_common_fill_takes_the_newest_holding_any_after_those_holding_all(big_index: SideIndex) -> None:
    db = big_index.connect()
    terms = TOKENIZER.query_terms("usual often")
    total = big_index.counts()[0]
    every = {r[0] for r in db.execute("SELECT d.id FROM fts JOIN docs d ON d.doc = fts.rowid WHERE fts MATCH "
                                      "'\"usual\" AND \"often\"' AND d.category = 'decision' AND d.source = 'agent'")}
    assert 0 < len(every) < 1000  # so a pool of 1000 is filled up from the items holding only one
    found = big_index.search(terms, 1000, total, category="decision", source="agent")
    assert [r[0] for r in found] == [r[0] for r in reference_search(db, terms, 1000, total, "decision", "agent")]
    assert {r[0] for r in found[:len(every)]} == every and len(found) > len(every)
    assert all(r[5] == 1 for r in found[len(every):])  # the fill holds one of the two words


# --------------------------------------------------------------------------- through a recall


@pytest.fixture
def store(tmp_path: Path, clock: FrozenClock) -> NativeProvider:
    provider = NativeProvider(tmp_path / "data" / "default" / "mnemon.db", clock=clock)
    yield provider
    provider.close()


@pytest.mark.parametrize("mode", ["keyword", "smart"])
def test_a_recall_runs_one_statement_on_the_side_index(store: NativeProvider, mode: str) -> None:
    cause = store.remember("Nightly backups saturate the disk on the build runner")["id"]
    effect = store.remember("Builds fail at 02:00 because the disk is full")["id"]
    store.link(cause, effect, edge_type="causal", weight=1.0)
    for n in range(20):
        store.remember(f"note {n}: retry_backoff_ms is {n * 10} on runner {n}", tags=["branch:main"] if n % 2 else [])
    store.search("warm up", limit=5)  # the store and the index are open, the index is current
    db = store.index.connect()
    for query in ("nightly backups disk runner", "retry_backoff", "数据", "nothing like this"):
        seen: list[str] = []
        db.set_trace_callback(seen.append)
        try:
            store.search(query, limit=10, mode=mode, keep=lambda tags: "branch:main" in tags)
        finally:
            db.set_trace_callback(None)
        assert len(top_level(seen)) == 1, (query, top_level(seen))


def test_only_branch_tags_reach_the_branch_rule(store: NativeProvider) -> None:
    tagged = store.remember("deploy checklist for the feature branch", tags=["branch:feature", "ops"])["id"]
    plain = store.remember("deploy checklist for every branch", tags=["ops"])["id"]
    unnamed = store.remember("deploy checklist with an unnamed branch tag", tags=["branch:", "ops"])["id"]
    asked: list[list[str]] = []

    def keep(tags: list[str]) -> bool:
        asked.append(list(tags))
        return False

    outcome = store.search("deploy checklist", limit=10, mode="keyword", keep=keep)
    assert asked == [["branch:feature"]]
    assert outcome.dropped == 1 and {i.id for i in outcome.items} == {plain, unnamed}
    assert {i.id for i in store.search("deploy checklist", limit=10, mode="keyword").items} == {tagged, plain, unnamed}
    assert next(i for i in store.search("feature", limit=5).items).tags == ["branch:feature", "ops"]


def test_forget_and_rewrite_keep_the_external_content_index_consistent(store: NativeProvider) -> None:
    first = store.remember("alpha bravo charlie", tags=["branch:main"])["id"]
    second = store.remember("delta echo foxtrot")["id"]
    store.forget(first)
    db = store.index.connect()
    db.execute("INSERT INTO fts(fts) VALUES('integrity-check')")  # raises when the index and docs.terms disagree
    assert store.search("alpha", limit=5).items == []
    assert db.execute("SELECT active, terms, branches FROM docs WHERE id = ?", (first,)).fetchone() == (0, "", '["branch:main"]')
    assert [i.id for i in store.search("echo", limit=5).items] == [second]
    store.reindex()
    store.index.connect().execute("INSERT INTO fts(fts) VALUES('integrity-check')")
    assert [i.id for i in store.search("echo", limit=5).items] == [second]


# --------------------------------------------------------------------------- migration of a schema 2 index

SCHEMA_2 = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE docs(doc INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, active INTEGER NOT NULL, importance INTEGER,
  created REAL, source TEXT, category TEXT, chash TEXT, tags TEXT, sig TEXT);
CREATE INDEX docs_chash ON docs(chash);
CREATE INDEX docs_active ON docs(active);
CREATE VIRTUAL TABLE fts USING fts5(terms, detail=none, tokenize="ascii tokenchars '-._'");
CREATE TABLE ents(entity TEXT NOT NULL, created REAL NOT NULL, doc INTEGER NOT NULL,
  PRIMARY KEY(entity, created, doc)) WITHOUT ROWID;
"""


def rewrite_as_schema_2(index_path: Path, skip: str) -> None:
    """Rewrite the index at ``index_path`` as schema 2 wrote it (same rows, same fingerprint), leaving out the
    item ``skip``: an index that is current by its fingerprint, so only its schema can make it rebuilt."""
    db = sqlite3.connect(index_path)
    docs = db.execute("SELECT doc, id, active, importance, created, source, category, chash, tags, sig, terms "
                      "FROM docs WHERE id != ?", (skip,)).fetchall()
    ents = db.execute("SELECT entity, created, doc FROM ents").fetchall()
    fingerprint = db.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()[0]
    for table in ("meta", "docs", "fts", "ents"):
        db.execute(f"DROP TABLE {table}")
    db.executescript(SCHEMA_2)
    db.executemany("INSERT INTO docs VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", [row[:10] for row in docs])
    db.executemany("INSERT INTO fts(rowid, terms) VALUES(?, ?)", [(row[0], row[10]) for row in docs if row[2]])
    db.executemany("INSERT INTO ents VALUES(?, ?, ?)", ents)
    db.executemany("INSERT INTO meta VALUES(?, ?)", [("schema", "2"), ("tokenizer", str(TOKENIZER.version)),
                                                     ("fingerprint", fingerprint)])
    db.commit()
    db.close()


def test_an_index_of_schema_2_is_rebuilt_when_opened_and_recall_answers_the_same(
        tmp_path: Path, clock: FrozenClock) -> None:
    path = tmp_path / "data" / "default" / "mnemon.db"
    store = NativeProvider(path, clock=clock)
    ids = [store.remember(text, tags=tags)["id"] for text, tags in [
        ("Set retry_backoff before the upload loop", []), ("retry_backoff_ms is read from the env", ["branch:main"]),
        ("数据库索引每晚重建", []), ("Nightly backups saturate the disk", ["ops"])]]
    queries = ["retry_backoff", "数据库", "nightly disk", "upload loop env"]
    before = {q: [(i.id, i.score, i.tags) for i in store.search(q, limit=5).items] for q in queries}
    store.close()
    index_path = path.parent / INDEX_FILE
    rewrite_as_schema_2(index_path, skip=ids[0])

    store = NativeProvider(path, clock=clock)
    try:
        after = {q: [(i.id, i.score, i.tags) for i in store.search(q, limit=5).items] for q in queries}
        assert after == before  # the item the old index lacked is back: rebuilt from mnemon.db, not reused
        db = store.index.connect()
        assert dict(db.execute("SELECT key, value FROM meta WHERE key IN ('schema', 'tokenizer')")) == {
            "schema": str(SCHEMA_VERSION), "tokenizer": str(TOKENIZER.version)}
        fts = db.execute("SELECT sql FROM sqlite_master WHERE name = 'fts'").fetchone()[0]
        assert "detail=full" in fts and "content=docs" in fts
        assert db.execute("SELECT branches FROM docs WHERE id = ?", (ids[1],)).fetchone() == ('["branch:main"]',)
        assert db.execute("SELECT count(*) FROM docs WHERE terms != ''").fetchone() == (4,)
        db.execute("INSERT INTO fts(fts) VALUES('integrity-check')")
    finally:
        store.close()


def test_an_older_writer_cannot_add_a_row_without_its_terms(store: NativeProvider) -> None:
    store.remember("a row of this schema")
    db = store.index.connect()
    # schema 2's insert (it names no terms): refused, so that process deletes the index and it is rebuilt
    with pytest.raises(sqlite3.IntegrityError):
        db.execute("INSERT INTO docs(id, active, importance, created, source, category, chash, tags, sig) "
                   "VALUES('old', 1, 3, 0, 'user', 'fact', 'x', '[]', 'y')")


def test_rows_keep_their_branch_tags_alone(tmp_path: Path) -> None:
    index = SideIndex(tmp_path / INDEX_FILE)
    try:
        row = IndexRow(id="a", content="alpha", category=None, importance=None, tags=["branch:main", "x", "branch:"],
                       entities=["Alpha"], source=None, created=0.0, active=True)
        index.apply([row, IndexRow(id="b", content="beta", category=None, importance=None, tags=["x"], entities=[],
                                   source=None, created=0.0, active=True)])
        got = dict(index.connect().execute("SELECT id, branches FROM docs"))
        assert got == {"a": json.dumps(["branch:main"]), "b": None}
        assert index.connect().execute("SELECT terms FROM docs WHERE id = 'a'").fetchone() == (indexed_terms(row),)
    finally:
        index.close()


# --------------------------------------------------------------------------- one segment after bulk writes


def segments(index: SideIndex) -> int:
    """The FTS5 segments of the index (its ``fts_idx`` table has one row per segment and leaf page range)."""
    return index.connect().execute("SELECT count(DISTINCT segid) FROM fts_idx").fetchone()[0]


def test_a_bulk_import_and_a_rebuild_leave_one_segment_and_the_same_answers(store: NativeProvider) -> None:
    from mnemon_ls.spaces.index import BULK_ROWS
    from mnemon_ls.spaces.providers.base import ExportItem

    items = [ExportItem(f"s{i}", f"service {i} keeps retry_backoff_ms at {i} on runner{i % 7}", "fact", 3, [], [],
                        "user", "2026-01-01T00:00:00Z") for i in range(BULK_ROWS + 100)]
    store.remember("a note written before the import")  # a segment of its own
    store.import_items(items, batch=BULK_ROWS // 2)  # three transactions: three more segments before the merge
    assert segments(store.index) == 1
    answers = [[i.id for i in store.search(q, limit=10, mode="keyword").items]
               for q in ("retry_backoff_ms runner3", "service 42", "runner5")]
    assert all(answers)
    store.reindex()
    assert segments(store.index) == 1
    assert [[i.id for i in store.search(q, limit=10, mode="keyword").items]
            for q in ("retry_backoff_ms runner3", "service 42", "runner5")] == answers


def test_an_import_killed_before_its_merge_is_merged_at_the_next_write(tmp_path: Path, clock: FrozenClock) -> None:
    """A bulk import marks the side index due for a merge before its batches: killed (a real process, SIGKILL)
    right before the merge, the index keeps its segments only until the next write of another process, which
    merges it into one; the answers are the same. An index with more than MAX_SEGMENTS segments is merged at
    the first write of a connection too."""
    from mnemon_ls.spaces import index as side
    from tests.helpers import procs

    path = tmp_path / "data" / "default" / "mnemon.db"
    path.parent.mkdir(parents=True)
    with procs.writer("import-space", str(path), str(side.BULK_ROWS + 100), "100", "--pause-at", "optimize:1") as w:
        assert w.reader.readline() == "PAUSED optimize 1"
        assert w.kill() == -9
    store = NativeProvider(path, clock=clock)
    try:
        store.search("service", limit=1, mode="keyword")  # a read merges nothing
        before = segments(store.index)
        assert before > 1
        answers = [i.id for i in store.search("retry_backoff_ms runner3", limit=10, mode="keyword").items]
        store.remember("a note written after the killed import")
        assert segments(store.index) == 1
        assert [i.id for i in store.search("retry_backoff_ms runner3", limit=10, mode="keyword").items] == answers
    finally:
        store.close()
    index = side.SideIndex(path.parent / side.INDEX_FILE)  # a connection of its own
    try:
        index.connect().execute("INSERT INTO fts(fts, rank) VALUES('automerge', 0)")  # FTS5 merges nothing
        for n in range(side.MAX_SEGMENTS + 2):  # each write its own transaction: a segment each
            index.apply([side.IndexRow(f"n{n}", f"note {n} about the runner", None, 3, [], [], None, 1.0, True)])
        index.connect().execute("INSERT INTO fts(fts, rank) VALUES('automerge', 4)")  # FTS5's default again
        assert segments(index) == 1 + side.MAX_SEGMENTS + 2  # the merged one; counted at its first write only
    finally:
        index.close()
    reopened = side.SideIndex(path.parent / side.INDEX_FILE)
    try:
        reopened.apply([side.IndexRow("last", "the last note", None, 3, [], [], None, 1.0, True)])
        assert segments(reopened) == 1
    finally:
        reopened.close()
