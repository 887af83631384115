"""Keyword recall of Chinese, Japanese and Korean text by short queries and of identifiers by a substring, on
both servers: the pgserver wheel's (pgvector, no ``pg_trgm``) and the machine's own (``pg_trgm``, no pgvector).

CJK text is matched by its character pairs in the ``tsvector`` (a two-character query is one pair), not by
``pg_trgm``: a trigram index can serve no pattern shorter than three characters, and in a database whose
``LC_CTYPE`` is ``C`` (pgserver's, and any made with ``--no-locale``) it takes no trigram from a CJK character
at all (``show_trgm('部署流程')`` is empty). An identifier's substring of three or more characters is a
``LIKE`` on ``lower(content)``, which the trigram index serves when the server has ``pg_trgm``."""

from __future__ import annotations

from typing import Any

import pytest

from mnemon_ls_provider_postgres.engine import PostgresEngine
from postgres_server import PostgresServer

CHINESE = "数据库连接池使用事务模式"
JAPANESE = "デプロイの前にテストを実行する"
KOREAN = "배포 전에 테스트를 실행합니다"
IDENT = "parseConfigFile returns a ConfigError on bad YAML"
SNAKE = "retry_backoff_ms defaults to 250 in the payment client"
OTHER = ("部署前先跑单元测试", "The staging cluster runs on spot instances")


def _recall_checks(service: dict[str, Any]) -> PostgresEngine:
    engine = PostgresEngine.open(service)
    space = engine.space(engine.create_namespace("Team", "").connection, space_id="postgres-cjk")
    ids = {text: space.remember(text, category="fact", importance=3, tags=[], entities=[], source="user")["id"]
           for text in (CHINESE, JAPANESE, KOREAN, IDENT, SNAKE, *OTHER)}

    def first(query: str) -> str | None:
        items = space.search(query, limit=5).items
        return items[0].id if items else None

    # every two-character piece of the Chinese item finds it first (one of its character pairs)
    pairs = [CHINESE[i:i + 2] for i in range(len(CHINESE) - 1)]
    assert {pair: first(pair) for pair in pairs} == {pair: ids[CHINESE] for pair in pairs}
    assert first("连接") == ids[CHINESE] and first("事务") == ids[CHINESE]
    assert first("测试") == ids[OTHER[0]]  # 测试 (Chinese) is not テスト or 테스트
    assert first("実行") == ids[JAPANESE] and first("テスト") == ids[JAPANESE]
    assert first("배포") == ids[KOREAN] and first("실행") == ids[KOREAN]
    # an identifier by a substring that is no part of it (inside, across its camel-case or '_' joins)
    for piece in ("onfigfil", "rseconf", "igerro", "koff_m", "ry_back"):
        assert first(piece) == ids[IDENT if piece in IDENT.lower() else SNAKE], piece
    found = space.search("onfigfil", limit=5).items
    assert [i.id for i in found] == [ids[IDENT]] and 0 < found[0].score
    assert space.search("spotinst", limit=5).items == []  # words of plain text are not an identifier
    return engine


def test_cjk_by_two_characters_and_identifiers_by_substring_without_pg_trgm(service: dict[str, Any],
                                                                             pg_server: PostgresServer) -> None:
    engine = _recall_checks(service)
    try:
        assert pg_server.sql("SELECT value FROM mnemon.meta WHERE key = 'trigram'", service["database"]) == [("off",)]
    finally:
        engine.close()


def test_the_same_with_pg_trgm_whose_index_serves_the_substring(system_server: PostgresServer) -> None:
    system_server.sql("CREATE DATABASE team")
    service = {"host": system_server.host, "port": system_server.port, "database": "team",
               "user": system_server.user, "password": system_server.password, "semantic": "false"}
    engine = _recall_checks(service)
    try:
        assert system_server.sql("SELECT value FROM mnemon.meta WHERE key = 'trigram'", "team") == [("on",)]
        # the match condition of the provider's candidates (recall.py): the pairs by the tsvector index, the substring by the
        # trigram index (plain scans off: with seven rows the planner would read the table instead)
        import psycopg

        with psycopg.connect(host=system_server.host, port=system_server.port, user=system_server.user,
                             password=system_server.password, dbname="team", autocommit=True) as conn:
            conn.execute("SET enable_seqscan = off")
            conn.execute("SET enable_indexscan = off")
            plan = "\n".join(row[0] for row in conn.execute(
                "EXPLAIN SELECT i.id FROM mnemon.items i WHERE i.tsv @@ %s::tsquery OR lower(i.content) LIKE ANY(%s)",
                ["'连接'", ["%onfigfil%"]]).fetchall())
        assert "items_tsv" in plan and "items_trgm" in plan, plan
        # and why the pairs are not left to pg_trgm: this C-locale database takes no trigram from CJK text
        assert system_server.sql("SELECT show_trgm('部署流程')", "team") == [([],)]
    finally:
        engine.close()


@pytest.mark.parametrize("query", ["连", "モ"])
def test_one_cjk_character_finds_the_items_holding_it(service: dict[str, Any], query: str) -> None:
    engine = PostgresEngine.open(service)
    try:
        space = engine.space(engine.create_namespace("Team", "").connection, space_id="postgres-one")
        made = {t: space.remember(t, category="fact", importance=3, tags=[], entities=[], source="user")["id"]
                for t in (CHINESE, "リモート作業の日", "nothing here")}
        want = {made[t] for t in made if query in t}
        assert {i.id for i in space.search(query, limit=5).items} == want and want
    finally:
        engine.close()
