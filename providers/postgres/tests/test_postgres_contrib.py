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
