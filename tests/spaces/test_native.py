"""The embedded native provider on real SQLite files: the CLI's schema and value formats read back with plain
SQL the way shared/reference/mnemon-cli.md says the Mnemon CLI reads them, older and newer schema variants
built here from the documented DDL, search across scripts, the side index catching up with rows written
behind its back, and the errors of bad stores."""

from __future__ import annotations

import json
import re
import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from mnemon_ls.errors import InvalidInput, UnreadableStore
from mnemon_ls.spaces.errors import SpaceReadOnly
from mnemon_ls.spaces.index import INDEX_FILE
from mnemon_ls.spaces.providers.native import NativeProvider

from tests.conftest import FrozenClock

RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")
UUID4 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")

# The older CLI generation (mnemon-cli.md 4.1-4.4 "older code versions"): no stored_at, 4-type CHECK,
# the three older indexes, user_version 0.
OLDER_DDL = """
CREATE TABLE insights (id TEXT PRIMARY KEY, content TEXT NOT NULL, category TEXT DEFAULT 'general',
  importance INTEGER DEFAULT 3, tags TEXT DEFAULT '[]', entities TEXT DEFAULT '[]', source TEXT DEFAULT 'user',
  access_count INTEGER DEFAULT 0, created_at TEXT NOT NULL, updated_at TEXT NOT NULL, deleted_at TEXT,
  last_accessed_at TEXT, embedding BLOB, effective_importance REAL DEFAULT 0.5);
CREATE TABLE edges (source_id TEXT NOT NULL REFERENCES insights(id) ON DELETE CASCADE,
  target_id TEXT NOT NULL REFERENCES insights(id) ON DELETE CASCADE,
  edge_type TEXT NOT NULL CHECK(edge_type IN ('temporal','semantic','causal','entity')),
  weight REAL DEFAULT 1.0, metadata TEXT DEFAULT '{}', created_at TEXT NOT NULL,
  PRIMARY KEY (source_id, target_id, edge_type));
CREATE TABLE oplog (id INTEGER PRIMARY KEY AUTOINCREMENT, operation TEXT NOT NULL, insight_id TEXT,
  detail TEXT DEFAULT '', created_at TEXT NOT NULL);
CREATE INDEX idx_insights_importance ON insights(importance);
CREATE INDEX idx_insights_created ON insights(created_at);
CREATE INDEX idx_insights_source ON insights(source);
CREATE INDEX idx_insights_deleted ON insights(deleted_at);
"""

# The first generation (the early snapshot the Python port copied): no last_accessed_at/embedding/EI either.
FIRST_GENERATION_DDL = """
CREATE TABLE insights (id TEXT PRIMARY KEY, content TEXT NOT NULL, category TEXT DEFAULT 'general',
  importance INTEGER DEFAULT 3, tags TEXT DEFAULT '[]', entities TEXT DEFAULT '[]', source TEXT DEFAULT 'user',
  access_count INTEGER DEFAULT 0, created_at TEXT NOT NULL, updated_at TEXT NOT NULL, deleted_at TEXT);
CREATE TABLE edges (source_id TEXT NOT NULL, target_id TEXT NOT NULL,
  edge_type TEXT NOT NULL CHECK(edge_type IN ('temporal','semantic','causal','entity')),
  weight REAL DEFAULT 1.0, metadata TEXT DEFAULT '{}', created_at TEXT NOT NULL,
  PRIMARY KEY (source_id, target_id, edge_type));
CREATE TABLE oplog (id INTEGER PRIMARY KEY AUTOINCREMENT, operation TEXT NOT NULL, insight_id TEXT,
  detail TEXT DEFAULT '', created_at TEXT NOT NULL);
"""


@pytest.fixture
def store(tmp_path: Path, clock: FrozenClock) -> NativeProvider:
    provider = NativeProvider(tmp_path / "data" / "default" / "mnemon.db", clock=clock)
    yield provider
    provider.close()


def raw(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path)
    db.row_factory = sqlite3.Row
    return db


def make_db(path: Path, ddl: str, user_version: int = 0) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as db:
        db.executescript(ddl)
        db.execute(f"PRAGMA user_version = {user_version}")
    db.close()


def cli_insert(db: sqlite3.Connection, ident: str, content: str, created: str, **extra) -> None:
    """An insert as the Go CLI writes it (named columns of the older schema)."""
    values = {"id": ident, "content": content, "category": "fact", "importance": 3, "tags": "[]", "entities": "[]",
              "source": "user", "access_count": 0, "created_at": created, "updated_at": created, **extra}
    db.execute(f"INSERT INTO insights({', '.join(values)}) VALUES({', '.join('?' * len(values))})", list(values.values()))


# --------------------------------------------------------------------------- fresh store, read back as the CLI


def test_fresh_store_has_the_cli_schema_and_rows_the_cli_reads(store: NativeProvider, tmp_path: Path) -> None:
    first = store.remember("Chose SQLite because it needs no server", category="decision", importance=5,
                           tags=["architecture", "branch:main"], entities=["SQLite"], source="agent")
    second = store.remember("SQLite WAL mode lets readers run during writes", category="fact", importance=3,
                            tags=[], entities=[], source="agent")
    assert first["action"] == second["action"] == "added"
    db = raw(store.db_path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == 1
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    columns = [r["name"] for r in db.execute("PRAGMA table_info(insights)")]
    assert columns == ["id", "content", "category", "importance", "tags", "entities", "source", "access_count",
                       "stored_at", "created_at", "updated_at", "deleted_at", "last_accessed_at", "embedding",
                       "effective_importance"]
    assert [r["name"] for r in db.execute("PRAGMA table_info(edges)")] == [
        "source_id", "target_id", "edge_type", "weight", "metadata", "created_at"]
    edges_sql = db.execute("SELECT sql FROM sqlite_master WHERE name = 'edges'").fetchone()[0]
    assert "'supersedes'" in edges_sql
    assert db.execute("SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name = 'set_insight_stored_at'"
                      ).fetchone()[0] == 1
    assert {"insights", "edges", "oplog"} <= {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
    # no table of ours in mnemon.db
    assert {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")} == {
        "insights", "edges", "oplog", "sqlite_sequence"}
    row = db.execute("SELECT * FROM insights WHERE id = ?", (first["id"],)).fetchone()
    assert UUID4.match(row["id"])
    assert row["content"] == "Chose SQLite because it needs no server"
    assert (row["category"], row["importance"], row["source"]) == ("decision", 5, "agent")
    assert row["tags"] == '["architecture","branch:main"]'
    assert row["entities"] == '["SQLite"]'
    assert row["created_at"] == row["updated_at"] == row["stored_at"] == "2026-09-15T08:00:00Z"
    assert row["deleted_at"] is None and row["embedding"] is None
    assert row["access_count"] == 0
    assert row["effective_importance"] == 1.0  # base(5) * (1 + 0.1 * 0 edges)
    for r in db.execute("SELECT tags, entities, created_at, updated_at FROM insights"):
        assert json.loads(r["tags"]) is not None and json.loads(r["entities"]) is not None
        assert RFC3339.match(r["created_at"]) and RFC3339.match(r["updated_at"])
    # temporal backbone (same source) and the shared entity, both directions, JSON metadata of strings
    edges = {(r["source_id"], r["target_id"], r["edge_type"]): (r["weight"], json.loads(r["metadata"]), r["created_at"])
             for r in db.execute("SELECT * FROM edges")}
    a, b = first["id"], second["id"]
    assert edges[(a, b, "temporal")][:2] == (1.0, {"direction": "precedes", "sub_type": "backbone"})
    assert edges[(b, a, "temporal")][:2] == (1.0, {"direction": "succeeds", "sub_type": "backbone"})
    assert edges[(b, a, "entity")][:2] == (1.0, {"entity": "SQLite"})
    assert edges[(a, b, "entity")][:2] == (1.0, {"entity": "SQLite"})
    assert all(RFC3339.match(v[2]) for v in edges.values())
    assert all(isinstance(v, str) for meta in edges.values() for v in meta[1].values())
    oplog = [tuple(r) for r in db.execute("SELECT operation, insight_id, detail, created_at FROM oplog ORDER BY id")]
    assert oplog == [("remember", a, "Chose SQLite because it needs no server", "2026-09-15T08:00:00Z"),
                     ("remember", b, "SQLite WAL mode lets readers run during writes", "2026-09-15T08:00:00Z")]
    assert db.execute("SELECT count(*) FROM oplog WHERE insight_id IS NULL OR detail IS NULL").fetchone()[0] == 0
    assert oct(store.db_path.stat().st_mode & 0o777) == "0o600"
    assert (store.db_path.parent / INDEX_FILE).exists()


def test_duplicate_content_is_skipped_and_names_the_existing_id(store: NativeProvider) -> None:
    first = store.remember("Deploys go through the staging cluster first")
    again = store.remember("Deploys go through the staging cluster first")
    assert again["action"] == "skipped" and again["replaced_id"] == first["id"] and again["id"] != first["id"]
    db = raw(store.db_path)
    assert db.execute("SELECT count(*) FROM insights").fetchone()[0] == 1
    assert [tuple(r) for r in db.execute("SELECT operation, insight_id, detail FROM oplog ORDER BY id")][-1] == (
        "diff-skip", again["id"], f"duplicate of {first['id']}")
    # a near-duplicate is a new insight: nothing is ever replaced
    store.remember("Deploys go through the staging cluster first!")
    assert db.execute("SELECT count(*) FROM insights WHERE deleted_at IS NULL").fetchone()[0] == 2


def test_forget_soft_deletes_and_drops_edges(store: NativeProvider, clock: FrozenClock) -> None:
    a = store.remember("Redis caches sessions", entities=["Redis"])["id"]
    b = store.remember("Redis runs on port 6380 here", entities=["Redis"])["id"]
    clock.advance(minutes=5)
    assert store.forget(a) == {"id": a, "status": "deleted", "message": "Insight soft-deleted successfully"}
    db = raw(store.db_path)
    row = db.execute("SELECT deleted_at, updated_at FROM insights WHERE id = ?", (a,)).fetchone()
    assert tuple(row) == ("2026-09-15T08:05:00Z", "2026-09-15T08:05:00Z")
    assert db.execute("SELECT count(*) FROM edges WHERE source_id = ? OR target_id = ?", (a, a)).fetchone()[0] == 0
    assert [i.id for i in store.search("Redis", limit=5).items] == [b]
    with pytest.raises(InvalidInput) as again:
        store.forget(a)
    assert again.value.field == "id"
    with pytest.raises(InvalidInput):
        store.forget("no-such-id")


def test_link_related_and_their_errors(store: NativeProvider, clock: FrozenClock) -> None:
    a = store.remember("We picked Postgres for reporting", source="user")["id"]
    clock.advance(days=2)
    b = store.remember("Reporting queries need window functions", source="agent")["id"]
    clock.advance(days=2)
    c = store.remember("Window functions arrived in SQLite 3.25", source="external")["id"]
    # different sources (no backbone), more than 24 h apart (no proximity), no shared entity
    assert store.related(a) == []
    linked = store.link(a, b, edge_type="causal", weight=0.8, metadata={"reason": "needs"})
    assert linked == {"status": "linked", "source_id": a, "target_id": b, "edge_type": "causal", "weight": 0.8,
                      "metadata": {"reason": "needs", "created_by": "mnemon-ls"}}
    store.link(b, c, edge_type="semantic", weight=0.5)
    walk = store.related(a, depth=2)
    assert [(i.id, i.depth, i.edge_type) for i in walk] == [(b, 1, "causal"), (c, 2, "semantic")]
    assert [i.id for i in store.related(a, depth=1)] == [b]
    assert [i.id for i in store.related(a, depth=2, edge_type="causal")] == [b]
    store.link(c, a, edge_type="supersedes", weight=1.0)
    db = raw(store.db_path)
    assert db.execute("SELECT count(*) FROM edges WHERE edge_type = 'supersedes'").fetchone()[0] == 1
    store.forget(c)
    with pytest.raises(InvalidInput) as gone:
        store.link(a, c)
    assert gone.value.field == "targetId"
    with pytest.raises(InvalidInput) as missing:
        store.link("nope", a)
    assert missing.value.field == "sourceId"
    with pytest.raises(InvalidInput):
        store.related(c)


# --------------------------------------------------------------------------- search across scripts


@pytest.fixture
def multilingual(store: NativeProvider) -> dict[str, str]:
    texts = {
        "zh": "数据库迁移后按灰度阶段顺序发布，自动回滚阈值写在发布手册里",
        "zh_other": "事故复盘：缓存雪崩导致接口超时",
        "ja": "データベースの移行はメンテナンス時間に行う",
        "ko": "데이터베이스 마이그레이션은 점검 시간에 진행한다",
        "ident": "Call parse_config.py before getUserName in the HTTPServer bootstrap",
        "en": "The release runbook lists the rollback threshold",
    }
    return {k: store.remember(v)["id"] for k, v in texts.items()}


@pytest.mark.parametrize("query, expected", [
    ("数据库迁移", "zh"), ("灰度发布", "zh"), ("回滚", "zh"), ("缓存雪崩", "zh_other"),
    ("データベース", "ja"), ("移行", "ja"), ("데이터베이스", "ko"), ("마이그레이션", "ko"),
    ("parse_config.py", "ident"), ("parse_config", "ident"), ("config", "ident"), ("getUserName", "ident"),
    ("user name", "ident"), ("HTTPServer", "ident"), ("server", "ident"), ("rollback threshold", "en"),
])
def test_search_finds_each_script_first(store: NativeProvider, multilingual: dict[str, str], query: str,
                                        expected: str) -> None:
    outcome = store.search(query, limit=5, mode="keyword")
    assert outcome.items, query
    assert outcome.items[0].id == multilingual[expected]
    assert 0 < outcome.items[0].score <= 1


def test_scores_are_normalized_and_rank_coverage_first(store: NativeProvider) -> None:
    full = store.remember("alpha bravo charlie delta")["id"]
    half = store.remember("alpha bravo only here")["id"]
    store.remember("nothing relevant at all")
    items = store.search("alpha bravo charlie delta", limit=5, mode="keyword").items
    assert [i.id for i in items] == [full, half]
    assert items[0].score >= 0.78 and 0.39 <= items[1].score < 0.5
    assert all(0 <= i.score <= 1 for i in items)
    assert store.search("zulu", limit=5).items == []
    assert store.search("the of and", limit=5).items == []  # stopwords only


def test_importance_and_recency_break_ties(store: NativeProvider, clock: FrozenClock) -> None:
    old = store.remember("kafka consumer lag alert", importance=3)["id"]
    clock.advance(days=200)
    new = store.remember("kafka consumer lag dashboard", importance=3)["id"]
    vital = store.remember("kafka consumer lag runbook", importance=5)["id"]
    items = store.search("kafka consumer lag", limit=5, mode="keyword").items
    assert [i.id for i in items] == [vital, new, old]


def test_basic_mode_is_the_cli_like_scan(store: NativeProvider) -> None:
    low = store.remember("Use 100% of the budget", importance=2)["id"]
    high = store.remember("Never spend 100% of the budget", importance=4)["id"]
    items = store.search("100%", limit=5, mode="basic").items
    assert [i.id for i in items] == [high, low] and all(i.score is None for i in items)


def test_smart_mode_adds_causal_neighbours_of_strong_hits(store: NativeProvider) -> None:
    cause = store.remember("Nightly backups saturate the disk", source="user")["id"]
    effect = store.remember("Builds fail at 02:00 on the CI runner", source="agent")["id"]
    store.link(cause, effect, edge_type="causal", weight=1.0)
    smart = store.search("nightly backups", limit=5, mode="smart").items
    assert [(i.id, i.matched_via) for i in smart] == [(cause, "keyword"), (effect, "causal")]
    assert smart[1].score == pytest.approx(0.45 * smart[0].score, abs=1e-4)
    assert [i.id for i in store.search("nightly backups", limit=5, mode="keyword").items] == [cause]


def test_reads_bump_access_counters_like_the_cli(store: NativeProvider) -> None:
    ident = store.remember("Feature flags live in LaunchDarkly")["id"]
    store.search("feature flags", limit=5)
    db = raw(store.db_path)
    assert db.execute("SELECT access_count FROM insights").fetchone()[0] == 0  # batched until a flush
    store.search("feature flags", limit=5, mode="keyword")
    assert store.flush_access() is True
    row = db.execute("SELECT access_count, last_accessed_at FROM insights WHERE id = ?", (ident,)).fetchone()
    assert tuple(row) == (2, "2026-09-15T08:00:00Z")
    assert [tuple(r) for r in db.execute("SELECT operation, insight_id, detail FROM oplog ORDER BY id DESC LIMIT 2")] == [
        ("search", "", "q=feature flags hits=1"), ("recall", "", "q=feature flags hits=1")]


# --------------------------------------------------------------------------- side index freshness


def test_rows_written_behind_our_back_are_found(store: NativeProvider, clock: FrozenClock) -> None:
    mine = store.remember("Tokens expire after one hour")["id"]
    assert store.search("tokens expire", limit=5).items[0].id == mine
    db = sqlite3.connect(store.db_path)
    cli_insert(db, "cli-1", "Refresh tokens expire after thirty days", "2026-09-15T08:00:00Z", stored_at="x")
    db.execute("INSERT INTO oplog(operation, insight_id, detail, created_at) VALUES('remember', 'cli-1', 'x', "
               "'2026-09-15T08:00:00Z')")
    db.commit()
    assert {i.id for i in store.search("tokens expire", limit=5).items} == {mine, "cli-1"}
    # soft delete by another writer (oplog forget) and a hand edit that no oplog row mentions
    db.execute("UPDATE insights SET deleted_at = '2026-09-15T09:00:00Z' WHERE id = ?", (mine,))
    db.execute("INSERT INTO oplog(operation, insight_id, detail, created_at) VALUES('forget', ?, '', "
               "'2026-09-15T09:00:00Z')", (mine,))
    db.commit()
    assert [i.id for i in store.search("tokens expire", limit=5).items] == ["cli-1"]
    db.execute("UPDATE insights SET deleted_at = '2026-09-15T09:00:00Z' WHERE id = 'cli-1'")  # no oplog row
    db.commit()
    db.close()
    assert store.search("tokens expire", limit=5).items == []
    assert store.status()["index"]["items"] == 0


def test_corrupt_or_deleted_index_is_rebuilt(store: NativeProvider) -> None:
    ident = store.remember("Logs rotate daily at midnight")["id"]
    store.close()
    index = store.db_path.parent / INDEX_FILE
    for suffix in ("-wal", "-shm"):
        Path(f"{index}{suffix}").unlink(missing_ok=True)
    index.write_bytes(b"this is not a database" * 100)
    assert [i.id for i in store.search("logs rotate", limit=5).items] == [ident]
    store.close()
    index.unlink()
    assert [i.id for i in store.search("logs rotate", limit=5).items] == [ident]
    assert store.reindex()["items"] == 1


# --------------------------------------------------------------------------- schema variants


@pytest.mark.parametrize("ddl", [OLDER_DDL, FIRST_GENERATION_DDL], ids=["older", "first-generation"])
def test_older_schemas_are_used_without_migration(tmp_path: Path, clock: FrozenClock, ddl: str) -> None:
    path = tmp_path / "data" / "legacy" / "mnemon.db"
    make_db(path, ddl)
    with sqlite3.connect(path) as db:
        cli_insert(db, "old-1", "Legacy note about Docker builds", "2025-01-02T03:04:05Z",
                   entities='["Docker"]')
        cli_insert(db, "old-2", "Retired narrative entry", "2025-01-02 03:04:05",
                   deleted_at="2025-01-03 00:00:00")  # legacy datetime('now') form
    db.close()
    before_schema = _schema(path)
    provider = NativeProvider(path, clock=clock)
    assert [i.id for i in provider.search("docker builds", limit=5).items] == ["old-1"]
    new = provider.remember("New note about Docker layers", entities=["Docker"])
    provider.link(new["id"], "old-1", edge_type="semantic")
    with pytest.raises(InvalidInput) as refused:
        provider.link(new["id"], "old-1", edge_type="supersedes")
    assert refused.value.field == "edgeType"
    provider.forget("old-1")
    provider.close()
    assert _schema(path) == before_schema  # no DDL, no new column, no index
    db = raw(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == 0  # never touched
    row = db.execute("SELECT * FROM insights WHERE id = ?", (new["id"],)).fetchone()
    assert row["tags"] == "[]" and row["entities"] == '["Docker"]' and RFC3339.match(row["created_at"])
    assert "stored_at" not in row.keys()
    assert db.execute("SELECT count(*) FROM oplog WHERE insight_id IS NULL OR detail IS NULL").fetchone()[0] == 0


def _schema(path: Path) -> list[tuple]:
    with sqlite3.connect(path) as db:
        return sorted(db.execute("SELECT type, name, sql FROM sqlite_master").fetchall(), key=repr)


def test_newer_unknown_schema_is_read_only_with_a_notice(tmp_path: Path, clock: FrozenClock) -> None:
    path = tmp_path / "data" / "future" / "mnemon.db"
    make_db(path, OLDER_DDL.replace("effective_importance REAL DEFAULT 0.5",
                                    "effective_importance REAL DEFAULT 0.5, shard TEXT NOT NULL"), user_version=2)
    with sqlite3.connect(path) as db:
        cli_insert(db, "f-1", "Future schema row about Kubernetes", "2026-01-01T00:00:00Z", shard="a")
    db.close()
    before = path.read_bytes()
    provider = NativeProvider(path, clock=clock)
    outcome = provider.search("kubernetes", limit=5)
    assert [i.id for i in outcome.items] == ["f-1"]
    assert outcome.notices and "read-only" in outcome.notices[0] and "schema version 2" in outcome.notices[0]
    with pytest.raises(SpaceReadOnly):
        provider.remember("a write")
    with pytest.raises(SpaceReadOnly):
        provider.forget("f-1")
    assert provider.status()["read_only"] is True
    provider.close()
    assert path.read_bytes() == before


def test_not_sqlite_and_foreign_sqlite_files_are_clear_errors(tmp_path: Path) -> None:
    path = tmp_path / "data" / "junk" / "mnemon.db"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"hello, I am a text file\n")
    with pytest.raises(UnreadableStore) as junk:
        NativeProvider(path).count()
    assert "not a SQLite database" in junk.value.message
    assert path.read_bytes() == b"hello, I am a text file\n"
    other = tmp_path / "data" / "other" / "mnemon.db"
    make_db(other, "CREATE TABLE notes(x);")
    before = other.read_bytes()
    with pytest.raises(UnreadableStore) as foreign:
        NativeProvider(other).search("x", limit=1)
    assert "not a Mnemon store" in foreign.value.message
    assert other.read_bytes() == before


def test_oplog_is_capped_at_5000(store: NativeProvider) -> None:
    ident = store.remember("Seed row")["id"]
    db = sqlite3.connect(store.db_path)
    db.executemany("INSERT INTO oplog(operation, insight_id, detail, created_at) VALUES('show', ?, 'full insight', "
                   "'2026-09-15T08:00:00Z')", [(ident,)] * 5100)
    db.commit()
    store.remember("One more row")
    count, low, high = db.execute("SELECT count(*), min(id), max(id) FROM oplog").fetchone()
    assert count == 5000 and high - low == 4999
    db.close()


def test_import_keeps_times_and_rebuilds_the_backbone(store: NativeProvider) -> None:
    from mnemon_ls.spaces.providers.base import ExportItem
    day = datetime(2026, 1, 1, tzinfo=timezone.utc)
    items = [ExportItem(f"s{i}", f"Imported note {i}", "fact", 3, [], [], "user",
                        (day + timedelta(days=i)).strftime("%Y-%m-%dT%H:%M:%SZ")) for i in (0, 2, 1)]
    result = store.import_items(items)
    assert (result["imported"], result["skipped"], result["errors"]) == (3, 0, 0)
    ids = {r["source_id"]: r["id"] for r in result["results"]}
    db = raw(store.db_path)
    backbone = {(r[0], r[1]) for r in db.execute(
        "SELECT source_id, target_id FROM edges WHERE edge_type = 'temporal' AND metadata LIKE '%precedes%'")}
    assert backbone == {(ids["s0"], ids["s1"]), (ids["s1"], ids["s2"])}
    created = dict(db.execute("SELECT content, created_at FROM insights").fetchall())
    assert created["Imported note 2"] == "2026-01-03T00:00:00Z"
    again = store.import_items(items[:1])
    assert again["skipped"] == 1 and again["results"][0]["id"] == ids["s0"]


def test_vacuum_by_the_cli_renumbering_rows_is_survived(store: NativeProvider) -> None:
    ids = [store.remember(f"vacuum survivor number {i}")["id"] for i in range(6)]
    for ident in ids[:3]:
        store.forget(ident)
    store.close()
    db = sqlite3.connect(store.db_path)
    db.execute("DELETE FROM insights WHERE deleted_at IS NOT NULL")  # hard delete by hand, then compact
    db.commit()
    db.execute("VACUUM")
    db.close()
    assert {i.id for i in store.search("vacuum survivor", limit=10).items} == set(ids[3:])
    assert store.status()["index"]["items"] == 3
    again = store.remember("vacuum survivor number 0")  # its old twin is gone: a new row, no false duplicate
    assert again["action"] == "added"


@pytest.mark.parametrize("query,target_text,decoy_texts", [
    ("retry_backoff", "Set retry_backoff before the upload loop",
     ["retry_backoff_ms is read from the env", "max_retry_backoff caps the wait", "retry_backoff.max in the yaml",
      "retry_backoff_ms defaults to 250", "retry_backoff_seconds for the slow path"]),
    ("getUser", "getUser returns the cached account",
     ["getUserName splits the display name", "getUserById hits the database", "getUserSettings is lazy",
      "the getUserName helper"]),
    ("gen-itgc", "Run gen-itgc after the import",
     ["gen-itgc-report prints the summary", "gen-itgc-v2 replaces the old tool", "pre-gen-itgc hook"]),
])
def test_an_exact_identifier_outranks_longer_identifiers_containing_it(
        store: NativeProvider, clock: FrozenClock, query: str, target_text: str, decoy_texts: list[str]) -> None:
    # the exact match is old and unimportant; every decoy is newer, more important, shorter or repeated
    target = store.remember(target_text, importance=1)["id"]
    clock.advance(days=400)
    for index, text in enumerate(decoy_texts):
        store.remember(text, importance=5)
        store.remember(f"{text} (note {index})", importance=4)
    items = store.search(query, limit=5, mode="keyword").items
    assert items[0].id == target, [i.content for i in items]
    assert all(items[0].score > other.score for other in items[1:])
    assert len(items) == 5  # the decoys still match (their parts do), below the exact hit


def test_resident_memory_of_an_open_space_is_bounded(store: NativeProvider) -> None:
    # the bound documented in the provider (module doc, "Memory"): page caches capped, no memory map
    from mnemon_ls.spaces.index import INDEX_CACHE_KIB
    from mnemon_ls.spaces.providers.base import ExportItem
    from mnemon_ls.spaces.providers.native import BULK_CACHE_KIB, CACHE_KIB

    store.remember("bounded caches keep the server small")
    store.search("bounded caches", limit=5)
    db, index = store._conn(), store.index.connect()
    assert (CACHE_KIB, INDEX_CACHE_KIB, BULK_CACHE_KIB) == (8192, 16384, 65536)
    assert db.execute("PRAGMA cache_size").fetchone()[0] == -CACHE_KIB
    assert db.execute("PRAGMA mmap_size").fetchone()[0] == 0
    assert index.execute("PRAGMA cache_size").fetchone()[0] == -INDEX_CACHE_KIB
    store.import_items([ExportItem("x1", "imported while the cache is larger", "fact", 3, [], [], "user",
                                   "2026-09-01T00:00:00Z")])
    assert db.execute("PRAGMA cache_size").fetchone()[0] == -CACHE_KIB
