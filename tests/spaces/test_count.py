"""What the wake's Memory Spaces cover counts, and how cheaply: a native store's count is kept between wakes only
while nothing changed (the provider's own writes, another connection's, a replaced file), the one-command cover
counts without the provider and renders what the service renders, and recall's one-pass match scores equal
:func:`mnemon_ls.text.coverage` and :func:`mnemon_ls.text.exactness`."""

from __future__ import annotations

from pathlib import Path

import pytest

from mnemon_ls.spaces import SpacesService
from mnemon_ls.spaces.cover import cover, native_count
from mnemon_ls.spaces.index import TOKENIZER
from mnemon_ls.spaces.providers.native import NativeProvider
from mnemon_ls.text import coverage, exactness, grouped, match_scores


def test_the_kept_count_follows_every_change(tmp_path: Path) -> None:
    path = tmp_path / "mnemon.db"
    mine, other = NativeProvider(path, create=True), None
    try:
        first = mine.remember("the build uses make")["id"]
        assert mine.count() == 1 and mine.count() == 1  # the second from the kept count
        mine.remember("the cache lives in .cache")
        assert mine.count() == 2  # its own write
        other = NativeProvider(path)
        other.remember("deploys run on Fridays")
        assert mine.count() == 3  # another connection's write (PRAGMA data_version)
        mine.forget(first)
        assert mine.count() == 2
        other.forget(other.search("deploys", limit=1).items[0].id)
        assert mine.count() == 1 == native_count(path)
        mine.close()  # a reopened connection counts again (its data_version starts over)
        third = NativeProvider(path)
        third.remember("one more")
        third.close()
        assert mine.count() == 2
    finally:
        mine.close()
        if other is not None:
            other.close()


def test_the_one_command_cover_renders_what_the_service_renders(tmp_path: Path) -> None:
    root = tmp_path / "root"
    service = SpacesService(root)
    made = service.create_space("Project", "Build facts", active=True)
    service.create_space("Old", "Archived notes")
    for text in ("the build uses make", "tests run with pytest", "the cache lives in .cache"):
        service.remember(text, space_id=made.record.id)
    (root / "data" / "stray").mkdir()
    (root / "data" / "stray" / "mnemon.db").write_bytes(b"")  # an interrupted creation: never discovered
    expected = service.cover(600, "mnemon_recall")
    service.close()
    light = cover(root, 600, "mnemon_recall")
    assert light == expected
    assert "- Project (id default, 3 items): Build facts" in light.text


def test_native_count_of_a_store_it_cannot_read_is_none(tmp_path: Path) -> None:
    assert native_count(tmp_path / "missing.db") is None
    (tmp_path / "junk.db").write_bytes(b"not sqlite at all, just bytes" * 10)
    assert native_count(tmp_path / "junk.db") is None


@pytest.mark.parametrize("query", ["retry_backoff cache", "build make", "数据库 升级", "max_conn", "the"])
@pytest.mark.parametrize("document", ["retry_backoff_ms cache flush", "build with make", "数据库 升级 计划",
                                      "max_conn pool_min", "nothing here"])
def test_match_scores_are_coverage_and_exactness(query: str, document: str) -> None:
    terms = TOKENIZER.query_terms(query)
    held = set(TOKENIZER.document_terms(document)) if hasattr(TOKENIZER, "document_terms") else set(document.split())
    assert match_scores(grouped(terms), held) == (coverage(terms, held), exactness(terms, held))
