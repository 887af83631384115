"""The PostgreSQL provider ranks as the native provider does: the same items, the same keyword queries, the
same items, scores within what differs by design (the relevance term: ``ts_rank`` instead of BM25, 6% of
the score), and the same order wherever native's scores are further apart than that."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mnemon_ls.spaces.providers.native import NativeProvider
from mnemon_ls_provider_postgres.engine import PostgresEngine

ITEMS = (("Billing retries use exponential backoff with jitter", 4),
         ("The billing service owns the invoices table", 3),
         ("Priya Raman owns the deploy pipeline", 3),
         ("retry_backoff_ms defaults to 250 in the payment client", 2),
         ("数据库连接池使用事务模式", 3),
         ("Deploys are frozen during the December holidays", 5),
         ("The deploy pipeline runs on GitHub Actions", 3))
QUERIES = ("billing retries", "who owns the deploy pipeline", "retry_backoff_ms", "连接池", "Priya",
           "december deploy freeze", "invoices table owner", "backoff")


def test_keyword_ranking_matches_native(tmp_path: Path, service: dict[str, Any]) -> None:
    native = NativeProvider(tmp_path / "native" / "mnemon.db", create=True, track_access=False)
    engine = PostgresEngine.open(service)
    try:
        shared = engine.space(engine.create_namespace("Team", "").connection, space_id="postgres-p")
        for text, importance in ITEMS:
            for provider in (native, shared):
                provider.remember(text, category="fact", importance=importance, tags=[], entities=[], source="user")
        for query in QUERIES:
            want = {i.content: i.score for i in native.search(query, limit=10, mode="keyword").items}
            got = {i.content: i.score for i in shared.search(query, limit=10, mode="keyword").items}
            assert set(got) == set(want), query  # the same items found (and the same left out)
            for content, score in got.items():
                assert abs(score - want[content]) <= 0.06, (query, got, want)
            # an order native is sure of (scores further apart than the relevance term can move) is kept
            for a in want:
                for b in want:
                    if want[a] - want[b] > 0.06:
                        assert got[a] > got[b], (query, a, b, got, want)
    finally:
        native.close()
        engine.close()


def test_a_question_answered_on_another_branch_weakens_this_branchs_matches_as_native_does(
        tmp_path: Path, service: dict[str, Any]) -> None:
    """Issue 27 item 7 (mnemon_ls.spaces.querysense.answered_elsewhere): on ``main`` a memory of a feature branch
    holds the whole question and ``main``'s memory only its subject, so both providers score ``main``'s memory
    as a weak match (at most ``WEAK_MATCH_CAP``), count the other branch's memory as hidden and say why; on
    the feature branch the same question is answered."""
    from mnemon_ls.spaces.querysense import ELSEWHERE_NOTICE, WEAK_MATCH_CAP
    from mnemon_ls.spaces.service_recall import _BranchScope

    native = NativeProvider(tmp_path / "native" / "mnemon.db", create=True, track_access=False)
    engine = PostgresEngine.open(service)
    question = "On which port does the search service call the ranking sidecar?"
    try:
        shared = engine.space(engine.create_namespace("Team", "").connection, space_id="postgres-b")
        for provider in (native, shared):
            provider.remember("The search service calls the ranking sidecar on port 7971.", category="fact",
                              importance=3, tags=["branch:feature/x"], entities=[], source="user")
            provider.remember("The search service listens on port 8080.", category="fact", importance=3,
                              tags=["branch:main"], entities=[], source="user")
        for provider in (native, shared):
            on_main = provider.search(question, limit=10, mode="keyword", keep=_BranchScope("main", "filter", "hide").keep)
            assert [i.content for i in on_main.items] == ["The search service listens on port 8080."], provider
            assert on_main.items[0].score <= WEAK_MATCH_CAP and on_main.dropped == 1, provider
            assert on_main.notices == [ELSEWHERE_NOTICE], provider
            on_feature = provider.search(question, limit=10, mode="keyword",
                                         keep=_BranchScope("feature/x", "filter", "hide").keep)
            assert on_feature.items[0].content.endswith("port 7971.") and on_feature.items[0].score > WEAK_MATCH_CAP
            assert on_feature.notices == [], provider
    finally:
        native.close()
        engine.close()
