"""On a PostgreSQL with contrib (``pg_trgm``) and without pgvector -- the distribution's own server, e.g.
Debian's ``postgresql`` package, when this machine has one (the pgserver wheel has pgvector but no
``pg_trgm``): the trigram index is made, semantic recall says why it is off, recall still works."""

from __future__ import annotations

from mnemon_ls_provider_postgres.engine import PostgresEngine
from postgres_server import PostgresServer


def test_trigram_index_without_pgvector(system_server: PostgresServer) -> None:
    system_server.sql("CREATE DATABASE team")
    service = {"host": system_server.host, "port": system_server.port, "database": "team",
               "user": system_server.user, "password": system_server.password, "semantic": "true"}
    engine = PostgresEngine.open(service)
    try:
        details = engine.health().details
        assert details["semantic"] is False and "no pgvector" in details["semanticNote"]
        assert system_server.sql("SELECT key, value FROM mnemon.meta ORDER BY key", "team") == [
            ("postings_backfilled", "0"), ("schema_version", "4"), ("trigram", "on"), ("vectors", "off")]
        assert system_server.sql("SELECT count(*) FROM pg_indexes WHERE indexname = 'items_trgm'", "team") == [(1,)]
        space = engine.space(engine.create_namespace("Team", "").connection, space_id="postgres-c")
        ident = space.remember("parseConfigFile returns a ConfigError on bad YAML", category="fact", importance=3,
                               tags=[], entities=[], source="user")["id"]
        assert [i.id for i in space.search("configerror yaml", limit=5).items] == [ident]
        assert [i.id for i in space.search("onfigfil", limit=5).items] == [ident]  # a substring of the identifier
    finally:
        engine.close()


def test_an_extension_the_server_gets_later_is_used_at_the_next_open(system_server: PostgresServer) -> None:
    """A database migrated while the server lacked ``pg_trgm`` (``meta.trigram`` ``off``, no index) gets the
    trigram index at the first open after the server has it, and says so; before, it stayed off for good."""
    system_server.sql("CREATE DATABASE later")
    service = {"host": system_server.host, "port": system_server.port, "database": "later",
               "user": system_server.user, "password": system_server.password, "semantic": "false"}
    PostgresEngine.open(service).close()
    system_server.sql("DROP INDEX mnemon.items_trgm", "later")  # as a server without the extension left it
    system_server.sql("UPDATE mnemon.meta SET value = 'off' WHERE key = 'trigram'", "later")
    engine = PostgresEngine.open(service)
    try:
        health = engine.health()
        assert health.details["added"] == ["trigram"] and "pg_trgm substring index added" in health.message
        assert system_server.sql("SELECT value FROM mnemon.meta WHERE key = 'trigram'", "later") == [("on",)]
        assert system_server.sql("SELECT count(*) FROM pg_indexes WHERE indexname = 'items_trgm'", "later") == [(1,)]
    finally:
        engine.close()
    again = PostgresEngine.open(service)
    try:
        assert "added" not in again.health().details  # nothing more to add
    finally:
        again.close()
