"""The rules of issue 24 items 4, 6 and 7 as functions: review_due's units and edges, the ranking's tie-break
inside a tier (never across tiers) and the superseded-below-successor move, overlap of line ranges, and the
lineage side file (a real file, its lock and a hand-broken copy)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

from mnemon_ls.citations.lineage import Lineage, overlaps
from mnemon_ls.citations.model import Citation
from mnemon_ls.citations.ranking import order, worst
from mnemon_ls.citations.review import DAY_MS, review_due, to_ms

NOW = datetime(2026, 12, 4, 12, 0, tzinfo=timezone.utc)


def test_review_due_counts_whole_24_hour_days_from_the_later_of_updated_and_recalled() -> None:
    now_ms = to_ms(NOW)
    assert to_ms("2026-12-04T12:00:00Z") == now_ms == to_ms("2026-12-04T12:00:00.000+00:00")
    assert review_due(now_ms - 90 * DAY_MS, None, NOW, 90) is True  # exactly 90 days
    assert review_due(now_ms - 90 * DAY_MS + 1, None, NOW, 90) is False  # one ms short
    assert review_due((NOW - timedelta(days=200)).isoformat(), (NOW - timedelta(days=3)).isoformat(), NOW, 90) is False
    assert review_due(NOW - timedelta(days=3), NOW - timedelta(days=200), now_ms, 90) is False  # later of the two
    assert review_due(NOW - timedelta(days=200), None, NOW, 0) is False  # 0 turns it off
    assert review_due("not a time", None, NOW, 90) is False  # unknown age is not old age
    assert review_due(None, None, NOW, 90) is False


def test_worst_freshness_and_none_without_citations() -> None:
    assert worst([]) is None
    assert worst([{"freshness": "fresh"}, {"freshness": "moved"}]) == "moved"
    assert worst([{"freshness": "gone"}, {"freshness": "changed"}, {"freshness": "fresh"}]) == "gone"


def test_fresh_ranks_above_changed_inside_a_tier_and_never_across_tiers() -> None:
    results = [
        {"id": "a", "tier": "high", "freshness": "changed"},
        {"id": "b", "tier": "high"},  # no citations: kept where it was relative to the fresh ones
        {"id": "c", "tier": "high", "freshness": "fresh"},
        {"id": "d", "tier": "medium", "freshness": "fresh"},
        {"id": "e", "tier": "low", "freshness": "fresh"},
        {"id": "f", "tier": "low", "freshness": "gone"},
    ]
    ranked = [r["id"] for r in order(results, lambda r: r["id"], {})]
    assert ranked == ["b", "c", "a", "d", "e", "f"]  # a changed high stays above every medium and low one
    assert [r["tier"] for r in order(results, lambda r: r["id"], {})] == [r["tier"] for r in results]


def test_a_superseded_result_goes_right_after_its_successor() -> None:
    results = [{"id": "old", "tier": "high"}, {"id": "other", "tier": "high"}, {"id": "new", "tier": "high"},
               {"id": "last", "tier": "high"}]
    ranked = [r["id"] for r in order(results, lambda r: r["id"], {"old": ["new"]})]
    assert ranked == ["other", "new", "old", "last"]
    # a successor that is not in the results moves nothing; a cycle ends
    assert [r["id"] for r in order(results, lambda r: r["id"], {"old": ["absent"]})] == ["old", "other", "new", "last"]
    assert len(order(results, lambda r: r["id"], {"old": ["new"], "new": ["old"]})) == 4


def test_overlapping_ranges_share_a_line_of_the_same_path() -> None:
    a = Citation("src/a.py", 10, 20, "0" * 64)
    assert overlaps(a, Citation("src/a.py", 20, 30, "1" * 64))
    assert overlaps(a, Citation("src/a.py", 1, 10, "1" * 64))
    assert not overlaps(a, Citation("src/a.py", 21, 30, "1" * 64))
    assert not overlaps(a, Citation("src/b.py", 10, 20, "1" * 64))


def test_lineage_side_file_keeps_what_supersedes_what_and_reads_a_broken_file_as_empty(tmp_path: Path) -> None:
    lineage = Lineage(tmp_path)
    lineage.add(("spaces", "s/new"), [("spaces", "s/old"), ("runtime", "memory:" + "a" * 64)])
    lineage.add(("spaces", "s/new"), [("spaces", "s/old")])  # nothing new: the file is not rewritten
    assert lineage.read() == {("spaces", "s/new"): [("spaces", "s/old"), ("runtime", "memory:" + "a" * 64)]}
    assert lineage.superseded_by() == {("spaces", "s/old"): [("spaces", "s/new")],
                                       ("runtime", "memory:" + "a" * 64): [("spaces", "s/new")]}
    lineage.path.write_text("{not json")
    assert lineage.read() == {}
    lineage.add(("records", "project/r1"), [("records", "project/r0")])
    assert lineage.read() == {("records", "project/r1"): [("records", "project/r0")]}
