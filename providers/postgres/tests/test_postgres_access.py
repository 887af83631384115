"""Team and user spaces, enforced by PostgreSQL row-level security: two database roles (neither a superuser nor
the tables' owner) on one real server; the checks read the tables as each role with plain SQL too, so they
prove what the database refuses, not what the client chose not to ask."""

from __future__ import annotations

from typing import Any, Iterator

import psycopg
import pytest

from mnemon_ls.errors import InvalidInput, SpaceRefused
from mnemon_ls_provider_postgres.engine import PostgresEngine

GRANTS = ("GRANT USAGE ON SCHEMA mnemon TO {role}; GRANT SELECT ON mnemon.meta TO {role}; "
          "GRANT SELECT, INSERT, UPDATE ON mnemon.spaces, mnemon.items TO {role}; "
          "GRANT SELECT, INSERT, DELETE ON mnemon.postings TO {role}")


@pytest.fixture
def roles(service: dict[str, Any], pg_server: Any) -> Iterator[dict[str, dict[str, Any]]]:
    """``{"alice": service, "bob": service}``: two login roles granted the provider's tables (README)."""
    PostgresEngine.open(service).close()  # the owner (admin) creates the schema
    out = {}
    for role in ("alice", "bob"):
        pg_server.sql(f"DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{role}') THEN "
                      f"CREATE ROLE {role} LOGIN PASSWORD 'pw-{role}-secret'; END IF; END $$")
        for statement in GRANTS.format(role=role).split("; "):
            pg_server.sql(statement, service["database"])
        out[role] = {**service, "user": role, "password": f"pw-{role}-secret", "author": role}
    yield out


def _sql(service: dict[str, Any], statement: str, args: tuple = ()) -> list[tuple]:
    with psycopg.connect(host=service["host"], port=service["port"], dbname=service["database"],
                         user=service["user"], password=service["password"], autocommit=True) as conn:
        cursor = conn.execute(statement, args)
        return cursor.fetchall() if cursor.description else []


def test_user_space_is_read_and_written_by_its_author_only(roles: dict[str, dict[str, Any]]) -> None:
    alice = PostgresEngine.open({**roles["alice"], "access": "user"})
    bob = PostgresEngine.open(roles["bob"])
    try:
        private = alice.create_namespace("Alice notes", "mine")
        mine = alice.space(private.connection, space_id="postgres-a")
        item = mine.remember("my salary review is on Friday", category="fact", importance=3, tags=[], entities=[],
                             source="user")["id"]
        assert [i.id for i in mine.search("salary review", limit=5).items] == [item]
        assert private.external_id not in {n.external_id for n in bob.discover()}
        theirs = bob.space(private.connection, space_id="postgres-a")  # bob knows the key: still nothing
        assert theirs.search("salary review", limit=5).items == [] and theirs.count() == 0
        with pytest.raises(SpaceRefused) as refused:
            theirs.remember("bob was here", category="fact", importance=3, tags=[], entities=[], source="user")
        assert refused.value.data["reason"] == "access"
        with pytest.raises(InvalidInput):
            theirs.forget(item)
        # the database itself refuses: plain SQL as bob sees no row and may not write one
        assert _sql(roles["bob"], "SELECT count(*) FROM mnemon.items") == [(0,)]
        # nor a term of it in recall's index (postings), which alice's write filled
        assert _sql(roles["bob"], "SELECT count(*) FROM mnemon.postings") == [(0,)]
        assert _sql(roles["alice"], "SELECT count(*) FROM mnemon.postings WHERE term = 'salary'") == [(1,)]
        assert _sql(roles["bob"], "DELETE FROM mnemon.postings RETURNING item_id") == []
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            _sql(roles["bob"], "INSERT INTO mnemon.postings VALUES (%s, 'forged', now(), 'x')", (private.external_id,))
        assert _sql(roles["bob"], "SELECT count(*) FROM mnemon.spaces") == [(0,)]
        assert _sql(roles["bob"], "UPDATE mnemon.items SET deleted_at = now() RETURNING id") == []
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            _sql(roles["bob"], "INSERT INTO mnemon.items (id, space_id, content, content_hash, category, importance, "
                               "author) VALUES ('x', %s, 'forged', 'h', 'fact', 3, 'bob')", (private.external_id,))
        assert _sql(roles["alice"], "SELECT id, deleted_at FROM mnemon.items") == [(item, None)]
    finally:
        alice.close()
        bob.close()


def test_team_space_is_shared_and_every_item_names_its_writer(roles: dict[str, dict[str, Any]]) -> None:
    alice = PostgresEngine.open(roles["alice"])
    bob = PostgresEngine.open(roles["bob"])
    try:
        team = bob.create_namespace("Team", "decisions")
        assert [n.name for n in alice.discover()] == ["Team"]
        ours_a = alice.space(team.connection, space_id="postgres-t")
        ours_b = bob.space(team.connection, space_id="postgres-t")
        first = ours_a.remember("we deploy on Tuesdays", category="decision", importance=4, tags=[], entities=[],
                                source="user")["id"]
        second = ours_b.remember("we freeze every deploy in December", category="decision", importance=4, tags=[],
                                 entities=[], source="user")["id"]
        assert {i.id for i in ours_b.search("deploy", limit=5).items} == {first, second}
        assert _sql(roles["bob"], "SELECT id, author, author_role FROM mnemon.items ORDER BY author") == [
            (first, "alice", "alice"), (second, "bob", "bob")]
        # a writer cannot pass itself off as another role
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            _sql(roles["bob"], "INSERT INTO mnemon.items (id, space_id, content, content_hash, category, importance, "
                               "author, author_role) VALUES ('y', %s, 'forged', 'h2', 'fact', 3, 'alice', 'alice')",
                 (team.external_id,))
        assert ours_b.forget(first)["status"] == "deleted"  # every member writes a team space
        assert [i.id for i in ours_a.search("deploy", limit=5).items] == [second]
    finally:
        alice.close()
        bob.close()


def test_the_migration_to_version_4_grants_recall_s_index_to_the_roles_that_could_write(
        service: dict[str, Any], pg_server: Any) -> None:
    """A role granted the tables as the README said before version 4 (no ``postings``) keeps writing and
    recalling after the owner's next open migrates the database."""
    from mnemon_ls_provider_postgres import schema

    info = {"host": service["host"], "port": service["port"], "dbname": service["database"],
            "user": service["user"], "password": service["password"]}
    with psycopg.connect(**info, autocommit=True) as conn:
        schema.migrate(conn, "mnemon", "here", target=3)
    pg_server.sql("DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'carol') THEN "
                  "CREATE ROLE carol LOGIN PASSWORD 'pw-carol-secret'; END IF; END $$")
    old_grants = GRANTS.split("; GRANT SELECT, INSERT, DELETE ON mnemon.postings")[0]
    for statement in old_grants.format(role="carol").split("; "):
        pg_server.sql(statement, service["database"])
    PostgresEngine.open(service).close()  # the owner opens: 3 -> 4
    carol = PostgresEngine.open({**service, "user": "carol", "password": "pw-carol-secret", "author": "carol"})
    try:
        space = carol.space(carol.create_namespace("Team", "").connection, space_id="postgres-c")
        made = space.remember("the on-call rota changes on Mondays", category="fact", importance=3, tags=[],
                              entities=[], source="user")["id"]
        assert [i.id for i in space.search("on-call rota", limit=5).items] == [made]
    finally:
        carol.close()
