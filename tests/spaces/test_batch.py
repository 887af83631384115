"""``SpacesService.remember_many`` (issue 9's "one batch per destination"): the embedded provider writes the
batch in one transaction (all or nothing), later items see earlier ones, duplicates (stored or within the
batch) are skipped naming the item, bad input names ``items[i].<field>`` before anything is written, and an
inactive space is refused rather than activated."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from mnemon_ls.errors import InvalidInput
from mnemon_ls.spaces import SpacesService

from tests.conftest import FrozenClock, disk_state


@pytest.fixture
def service(root: Path, clock: FrozenClock) -> SpacesService:
    svc = SpacesService(root, clock=clock)
    yield svc
    svc.close()


def rows(root: Path, space: str) -> list[tuple]:
    db = sqlite3.connect(root / "data" / space / "mnemon.db")
    try:
        return db.execute("SELECT content, category, importance, tags, source FROM insights "
                          "WHERE deleted_at IS NULL ORDER BY rowid").fetchall()
    finally:
        db.close()


def test_a_batch_is_stored_in_order_with_its_fields_and_duplicates_are_skipped(service: SpacesService, root: Path) -> None:
    space = service.create_space("Project", "Build facts", active=True).record.id
    old = service.remember("Deploys go out on Thursdays", space_id=space)
    receipts = service.remember_many(space, [
        {"content": "The cache lives in .cache/build", "category": "context", "importance": 5,
         "tags": ["branch:feature/x"], "source": "agent"},
        {"content": "Deploys go out on Thursdays"},
        {"content": "The cache lives in .cache/build", "importance": 1},
        {"content": "Run make check before a push", "importance": 1},
    ])
    assert [r.status for r in receipts] == ["committed", "skipped", "skipped", "committed"]
    assert receipts[1].id == old.id and receipts[2].id == receipts[0].id
    assert rows(root, space)[1:] == [
        ("The cache lives in .cache/build", "context", 5, '["branch:feature/x"]', "agent"),
        ("Run make check before a push", "general", 1, "[]", "user")]
    found = service.recall("cache build", spaces=[space], mode="keyword", branch="feature/x")
    assert found.results[0]["id"] == receipts[0].id


def test_bad_input_names_the_item_and_writes_nothing(service: SpacesService, root: Path) -> None:
    space = service.create_space("Project", "Build facts", active=True).record.id
    service.remember("warm the store", space_id=space)
    before = disk_state(root / "data" / space)
    with pytest.raises(InvalidInput) as error:
        service.remember_many(space, [{"content": "fine"}, {"content": "   "}])
    assert error.value.field == "items[1].content"
    with pytest.raises(InvalidInput) as error:
        service.remember_many(space, [{"content": "fine", "importance": 9}])
    assert error.value.field == "items[0].importance"
    assert disk_state(root / "data" / space) == before


def test_an_inactive_space_is_refused_not_activated(service: SpacesService, root: Path) -> None:
    space = service.create_space("Project", "Build facts", active=False).record.id
    with pytest.raises(InvalidInput) as error:
        service.remember_many(space, [{"content": "fine"}])
    assert error.value.field == "spaceId" and "never activates" in error.value.rule
    assert service.get_space(space).record.active is False
    assert service.remember_many(space, [{"content": "fine"}], require_active=False)[0].status == "committed"
