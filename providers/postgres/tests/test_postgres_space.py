"""The PostgreSQL provider's data plane on a real server: writes, recall with the native policy, the branch
scope in SQL, soft delete, and the schema's forward migration."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from mnemon_ls.errors import InvalidInput, ProviderUnavailable
from mnemon_ls.spaces.service_recall import _BranchScope
from mnemon_ls_provider_postgres import schema
from mnemon_ls_provider_postgres.engine import PostgresEngine
from mnemon_ls_provider_postgres.recall import branch_sql


def _space(service: dict[str, Any], name: str = "Team") -> tuple[PostgresEngine, Any]:
    engine = PostgresEngine.open(service)
    ns = engine.create_namespace(name, "team decisions")
    return engine, engine.space(ns.connection, space_id="postgres-" + ns.external_id[:24])


def _put(space: Any, text: str, *, tags: list[str] | None = None, importance: int = 3) -> dict[str, Any]:
    return space.remember(text, category="fact", importance=importance, tags=tags or [], entities=[], source="user")


def test_items_keep_the_native_fields_and_the_author(service: dict[str, Any], pg_server: Any) -> None:
    engine, space = _space({**service, "author": "priya"})
    try:
        receipt = space.remember("Billing retries use exponential backoff", category="decision", importance=4,
                                 tags=["billing", "branch:main"], entities=["BillingService"], source="agent")
        assert receipt["action"] == "added" and receipt["created_at"].endswith("Z")
        item = space.get(receipt["id"])
        assert (item.content, item.category, item.importance, item.tags, item.entities, item.source) == (
            "Billing retries use exponential backoff", "decision", 4, ["billing", "branch:main"],
            ["BillingService"], "agent")
        row = pg_server.sql(f"SELECT author, author_role, branches, deleted_at FROM mnemon.items WHERE id = "
                            f"'{receipt['id']}'", service["database"])
        assert row == [("priya", pg_server.user, ["main"], None)]
        again = _put(space, "  Billing retries use exponential backoff ")
        assert again == {"id": receipt["id"], "action": "skipped", "content": "Billing retries use exponential backoff"}
        assert space.count() == 1
    finally:
        engine.close()


def test_recall_ranks_as_native_for_words_identifiers_and_cjk(service: dict[str, Any]) -> None:
    engine, space = _space(service)
    try:
        ids = {text: _put(space, text)["id"] for text in (
            "retry_backoff_ms defaults to 250 in the payment client",
            "数据库连接池使用事务模式",
            "The deploy script needs the staging kubeconfig",
            "デプロイの前にテストを実行する")}
        assert [i.id for i in space.search("retry_backoff_ms", limit=5).items] == \
            [ids["retry_backoff_ms defaults to 250 in the payment client"]]
        backoff = space.search("backoff", limit=5).items  # a part of the identifier
        assert [i.id for i in backoff] == [ids["retry_backoff_ms defaults to 250 in the payment client"]]
        assert space.search("连接池", limit=5).items[0].id == ids["数据库连接池使用事务模式"]
        assert space.search("テスト", limit=5).items[0].id == ids["デプロイの前にテストを実行する"]
        both = space.search("staging kubeconfig", limit=5).items
        assert both[0].id == ids["The deploy script needs the staging kubeconfig"] and both[0].score >= 0.9
        half = space.search("staging database", limit=5).items  # one group of two: at most the coverage's share
        assert half[0].id == ids["The deploy script needs the staging kubeconfig"] and half[0].score < 0.55
        assert space.search("nothing like this", limit=5).items == []
    finally:
        engine.close()


def test_branch_scope_is_filtered_in_sql(service: dict[str, Any]) -> None:
    engine, space = _space(service)
    try:
        main = _put(space, "cache layer uses redis on main", tags=["branch:main"])["id"]
        feature = _put(space, "cache layer uses memcached on the feature", tags=["branch:feature-x"])["id"]
        common = _put(space, "cache layer is documented in docs/cache.md")["id"]
        scope = _BranchScope("main", "filter", "hide")
        condition = branch_sql(scope.keep)
        assert condition == ("(cardinality(i.branches) = 0 OR %s = ANY(i.branches))", ["main"])
        found = space.search("cache layer", limit=10, keep=scope.keep)
        assert sorted(i.id for i in found.items) == sorted([main, common]) and found.dropped == 1
        assert feature not in {i.id for i in found.items}
        assert len(space.search("cache layer", limit=10).items) == 3
        detached = space.search("cache layer", limit=10, keep=_BranchScope(None, "filter", "hide").keep)
        assert [i.id for i in detached.items] == [common] and detached.dropped == 2
    finally:
        engine.close()


def test_forget_is_a_soft_delete_and_the_text_can_come_back(service: dict[str, Any], pg_server: Any) -> None:
    engine, space = _space(service)
    try:
        first = _put(space, "the on-call rota lives in PagerDuty")["id"]
        assert space.forget(first)["status"] == "deleted"
        assert space.search("rota PagerDuty", limit=5).items == [] and space.count() == 0
        with pytest.raises(InvalidInput) as refused:
            space.forget(first)
        assert refused.value.field == "id"
        assert pg_server.sql(f"SELECT deleted_at IS NOT NULL FROM mnemon.items WHERE id = '{first}'",
                             service["database"]) == [(True,)]
        second = _put(space, "the on-call rota lives in PagerDuty")
        assert second["action"] == "added" and second["id"] != first
        assert space.status()["deleted_insights"] == 1
    finally:
        engine.close()


def test_schema_is_migrated_forward_on_open_and_says_so(service: dict[str, Any], pg_server: Any) -> None:
    info = {"host": service["host"], "port": service["port"], "dbname": service["database"],
            "user": service["user"], "password": service["password"]}
    with psycopg.connect(**info, autocommit=True) as conn:
        assert schema.migrate(conn, "mnemon", "here", target=1) == (0, 1)
    engine = PostgresEngine.open(service)
    try:
        health = engine.health()
        assert health.details["migrated"] == "1 -> 4" and "migrated from version 1 to 4" in health.message
        assert pg_server.sql("SELECT value FROM mnemon.meta WHERE key = 'schema_version'", service["database"]) \
            == [("4",)]
    finally:
        engine.close()
    again = PostgresEngine.open(service)
    try:
        assert "migrated" not in again.health().details  # already current: nothing to say
    finally:
        again.close()


def test_a_newer_schema_is_refused_and_left_as_it_is(service: dict[str, Any], pg_server: Any) -> None:
    PostgresEngine.open(service).close()
    pg_server.sql("UPDATE mnemon.meta SET value = '99' WHERE key = 'schema_version'", service["database"])
    with pytest.raises(ProviderUnavailable) as refused:
        PostgresEngine.open(service)
    assert refused.value.data["reason"] == "format-too-new" and "version 99" in str(refused.value)
    assert pg_server.sql("SELECT value FROM mnemon.meta WHERE key = 'schema_version'", service["database"]) \
        == [("99",)]


def test_a_version_3_database_gets_its_postings_backfilled_and_kept_by_the_trigger(service: dict[str, Any],
                                                                                     pg_server: Any) -> None:
    """Issue 25 item 7: items written before version 4 (by SQL, as the older package wrote them) are found by
    recall after the migration; later writes and soft deletes keep the postings in the same transaction."""
    from mnemon_ls_provider_postgres.rows import content_hash, item_terms

    info = {"host": service["host"], "port": service["port"], "dbname": service["database"],
            "user": service["user"], "password": service["password"]}
    texts = ["Billing retries use exponential backoff", "The staging cluster runs on spot instances",
             "parseConfigFile returns a ConfigError"]
    with psycopg.connect(**info, autocommit=True) as conn:
        assert schema.migrate(conn, "mnemon", "here", target=3) == (0, 3)
        conn.execute("INSERT INTO mnemon.spaces (id, name, access, author) VALUES ('k3', 'Old', 'team', 'ana')")
        for n, text in enumerate(texts):
            conn.execute("INSERT INTO mnemon.items (id, space_id, content, content_hash, category, importance, "
                         "author, terms) VALUES (%s, 'k3', %s, %s, 'fact', 3, 'ana', %s)",
                         (f"old-{n}", text, content_hash(text), item_terms(text, [], [])))
        conn.execute("UPDATE mnemon.items SET deleted_at = now() WHERE id = 'old-2'")  # deleted before: no postings
    engine = PostgresEngine.open(service)
    try:
        assert engine.health().details["migrated"] == "3 -> 4"
        db = service["database"]
        assert pg_server.sql("SELECT value FROM mnemon.meta WHERE key = 'postings_backfilled'", db) == [("2",)]
        expected = sum(len(item_terms(t, [], [])) for t in texts[:2])
        assert pg_server.sql("SELECT count(*) FROM mnemon.postings", db) == [(expected,)]
        space = engine.space({"spaceKey": "k3"}, space_id="postgres-old")
        assert [i.id for i in space.search("exponential backoff", limit=5).items] == ["old-0"]
        assert space.search("ConfigError", limit=5).items == []
        made = _put(space, "Spot instances are reclaimed with two minutes notice")
        assert [i.id for i in space.search("reclaimed notice", limit=5).items] == [made["id"]]
        space.forget("old-1")
        assert pg_server.sql("SELECT count(*) FROM mnemon.postings WHERE item_id = 'old-1'", db) == [(0,)]
        assert [i.id for i in space.search("spot instances", limit=5).items] == [made["id"]]
        assert pg_server.sql("SELECT count(*) FROM mnemon.postings", db) == [(
            len(item_terms(texts[0], [], [])) + len(item_terms(made["content"], [], [])),)]
    finally:
        engine.close()


def test_provider_test_reads_an_older_schema_without_migrating_it(service: dict[str, Any], pg_server: Any) -> None:
    info = {"host": service["host"], "port": service["port"], "dbname": service["database"],
            "user": service["user"], "password": service["password"]}
    with psycopg.connect(**info, autocommit=True) as conn:
        schema.migrate(conn, "mnemon", "here", target=1)
    probe = PostgresEngine.open({**service, "probe": True})
    try:
        health = probe.health()
        assert health.ok and health.details["schemaVersion"] == 1 and "migrates it to 4" in health.message
    finally:
        probe.close()
    assert pg_server.sql("SELECT value FROM mnemon.meta WHERE key = 'schema_version'", service["database"]) \
        == [("1",)]


def test_provider_test_on_an_empty_database_creates_nothing(service: dict[str, Any], pg_server: Any) -> None:
    probe = PostgresEngine.open({**service, "probe": True})
    health = probe.health()
    assert not health.ok and "provider enable creates it" in health.message and probe.discover() == []
    assert pg_server.sql("SELECT count(*) FROM pg_namespace WHERE nspname = 'mnemon'", service["database"]) == [(0,)]


def test_a_migration_is_not_cut_by_the_statement_timeout(service: dict[str, Any], pg_server: Any) -> None:
    """A migration that waits or works longer than ``timeoutSeconds`` (version 4's backfill of a large database
    takes minutes; here another machine's migration holds the advisory lock) finishes: cut short, it was rolled
    back and started over at every open, never done. The holder keeps the lock until the waiting open has been
    waiting twice the timeout (read from ``pg_stat_activity``), then lets go."""
    import threading

    info = {"host": service["host"], "port": service["port"], "dbname": service["database"],
            "user": service["user"], "password": service["password"]}
    with psycopg.connect(**info, autocommit=True) as conn:
        schema.migrate(conn, "mnemon", "here", target=3)
    outcome: dict[str, Any] = {}

    def open_engine() -> None:
        try:
            outcome["engine"] = PostgresEngine.open({**service, "timeoutSeconds": 0.5})
        except Exception as exc:  # noqa: BLE001 (reported below)
            outcome["error"] = exc

    with psycopg.connect(**info, autocommit=True) as holder:
        holder.execute("SELECT pg_advisory_lock(%s)", (schema._LOCK_KEY,))
        opening = threading.Thread(target=open_engine)
        opening.start()
        with psycopg.connect(**info, autocommit=True) as watcher:
            while opening.is_alive():
                waited = watcher.execute(
                    "SELECT extract(epoch FROM now() - query_start) FROM pg_stat_activity WHERE wait_event_type = "
                    "'Lock' AND wait_event = 'advisory' AND pid <> pg_backend_pid()").fetchone()
                if waited is not None and waited[0] > 1.0:
                    break
        holder.execute("SELECT pg_advisory_unlock(%s)", (schema._LOCK_KEY,))
    opening.join(timeout=60)
    assert "error" not in outcome, outcome.get("error")
    try:
        assert outcome["engine"].migrated == (3, 4)
    finally:
        outcome["engine"].close()


def test_a_rare_term_brings_every_item_holding_it_and_common_terms_count_for_coverage(
        service: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """Recall's candidates come from ``postings`` bounded by rarity (issue 25 item 7): with the rare cap at 3, an
    old item holding the rare term and the common words comes first although twelve newer items hold the common
    words; a common term alone still finds its newest items."""
    from mnemon_ls_provider_postgres import recall

    monkeypatch.setattr(recall, "RARE_ITEMS", 3)
    engine, space = _space(service)
    try:
        old = _put(space, "the deploy pipeline pins zebra images")["id"]
        newer = [_put(space, f"the deploy pipeline step {n} runs lint")["id"] for n in range(12)]
        found = [i.id for i in space.search("deploy pipeline zebra", limit=5).items]
        assert found[0] == old and len(found) == 1  # the common words alone are not candidates beside a rare one
        assert {i.id for i in space.search("deploy pipeline", limit=20).items} == {old, *newer}
    finally:
        engine.close()


def test_hand_made_repeated_terms_never_stop_the_migration(service: dict[str, Any],
                                                                                    pg_server: Any) -> None:
    """An item whose ``terms`` a hand (or another tool) wrote with a repeat (PostgreSQL's ``array_to_tsvector``
    itself refuses a NULL or an empty term): the backfill to version 4 keeps one row of it (without ``DISTINCT``
    the key's index would not build and the migration would fail at every open); the trigger does the same for
    a later write."""
    info = {"host": service["host"], "port": service["port"], "dbname": service["database"],
            "user": service["user"], "password": service["password"]}
    with psycopg.connect(**info, autocommit=True) as conn:
        schema.migrate(conn, "mnemon", "here", target=3)
        conn.execute("INSERT INTO mnemon.spaces (id, name, access, author) VALUES ('k', 'Old', 'team', 'ana')")
        conn.execute("INSERT INTO mnemon.items (id, space_id, content, content_hash, category, importance, author, "
                     "terms) VALUES ('odd', 'k', 'billing', 'h1', 'fact', 3, 'ana', ARRAY['billing', "
                     "'billing'])")
    engine = PostgresEngine.open(service)
    try:
        assert engine.migrated == (3, 4)
        db = service["database"]
        assert pg_server.sql("SELECT term FROM mnemon.postings WHERE item_id = 'odd'", db) == [("billing",)]
        pg_server.sql("INSERT INTO mnemon.items (id, space_id, content, content_hash, category, importance, author, "
                      "terms) VALUES ('odd2', 'k', 'invoice', 'h2', 'fact', 3, 'ana', ARRAY['invoice', 'invoice'])", db)
        assert pg_server.sql("SELECT term FROM mnemon.postings WHERE item_id = 'odd2'", db) == [("invoice",)]
        space = engine.space({"spaceKey": "k"}, space_id="postgres-odd")
        assert [i.id for i in space.search("billing", limit=5).items] == ["odd"]
    finally:
        engine.close()
