"""The order of fused keyword and vector candidates (mnemon_ls/semantic/fusion.py, issue 27 item 8b): by one
calibrated score, whatever found a candidate; a vector candidate far below the query's best cosine is kept and
scored by its own similarity. Pure: no model is loaded."""

from __future__ import annotations

import pytest

from mnemon_ls.semantic.backends import E5_SCALE
from mnemon_ls.semantic.fusion import KeywordHit, Spread, fuse, vector_only_score

#: A space of 2,000 vectors whose cosines to the query average 0.77 (sd 0.02): z = (cosine - 0.77) / 0.02.
SPREAD = Spread(2000, 0.77, 0.02)


def test_a_result_found_by_meaning_ranks_above_a_weaker_word_match() -> None:
    # "m" stands out by meaning (z 5, over the floor): medium; "k" shares one word and is unrelated in meaning
    fused = fuse([KeywordHit("k", 0.3, False)], [("m", 0.87), ("k", 0.78)], E5_SCALE, medium_floor=0.795,
                 spread=SPREAD)
    assert [(f.id, f.via) for f in fused] == [("m", "vector"), ("k", "keyword+vector")]
    assert fused[0].score == pytest.approx(vector_only_score(0.87, 0.795, SPREAD, E5_SCALE)[0], abs=1e-4)
    assert fused[0].score >= 0.3 > fused[1].score


def test_an_exact_word_match_is_never_buried() -> None:
    fused = fuse([KeywordHit("e", 0.75, True)], [("m", 0.95)], E5_SCALE, medium_floor=0.795, spread=SPREAD)
    assert [f.id for f in fused] == ["e", "m"] and fused[1].score < fused[0].score


def test_a_vector_candidate_far_below_the_best_cosine_is_kept() -> None:
    # the best cosine 0.91; "far" is 0.06 below it (a window of 0.04 used to drop it), still over the floor
    fused = fuse([], [("best", 0.91), ("far", 0.85), ("under", E5_SCALE.floor)], E5_SCALE, medium_floor=0.795,
                 spread=SPREAD)
    assert [f.id for f in fused] == ["best", "far"]  # under the model's floor: not used
    assert fused[1].score == pytest.approx(vector_only_score(0.85, 0.795, SPREAD, E5_SCALE)[0], abs=1e-4)
    assert fused[1].score > 0


def test_meaning_adds_to_the_words_in_proportion_to_what_they_left_unexplained() -> None:
    # two partial word matches with the same cosine keep their keyword order; both are lifted by the same meaning
    cosine = 0.84  # z 3.5: related, not standing out in a space of 2,000
    meaning = vector_only_score(cosine, 0.795, SPREAD, E5_SCALE)[0]
    fused = fuse([KeywordHit("a", 0.5, False), KeywordHit("b", 0.4, False)], [("a", cosine), ("b", cosine)],
                 E5_SCALE, medium_floor=0.795, spread=SPREAD)
    assert [f.id for f in fused] == ["a", "b"]
    assert fused[0].score == pytest.approx(min(0.5 + 0.5 * meaning, max(0.5, E5_SCALE.cap)))
    assert fused[1].score == pytest.approx(min(0.4 + 0.6 * meaning, max(0.4, E5_SCALE.cap)))
    assert fused[1].score > 0.4


def test_an_unknown_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="calibrated or cli"):
        fuse([], [], E5_SCALE, mode="rrf")


def test_a_far_vector_candidate_keeps_its_own_scripts_floor() -> None:
    # an English query (floor 0.795) and a Korean item (0.85): the item 0.06 under the best cosine is used by
    # fusion (no window), so it is judged by the stricter Korean floor; under the model's floor, by the query's
    from mnemon_ls.semantic.spaces import item_floors

    query_floor = E5_SCALE.medium_floor("how do we deploy")
    korean = E5_SCALE.medium_floor("배포 절차 문서")
    assert korean > query_floor
    got = item_floors([("best", 0.91), ("ko", 0.85), ("under", E5_SCALE.floor), ("known", 0.9)],
                      {"best": "deploy", "ko": "배포 절차 문서", "under": "배포 절차 문서"}, query_floor, E5_SCALE)
    assert got == {"best": query_floor, "ko": korean, "under": query_floor}
