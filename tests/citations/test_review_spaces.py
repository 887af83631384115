"""Issue 24 item 6 for Memory Space items in the review view: ``citations.review`` lists the items of an active
native space neither updated nor recalled for ``reviewAfterDays`` (reason ``review-due``, ``cites`` ``[]`` when
they cite nothing), found by one bounded SQL query per space (at most ``SPACE_ITEMS_PER_SPACE``, the longest
untouched first); a recalled item is not due; "Still true" restarts an item's clock in the side file without
touching its row in ``mnemon.db``; ``reviewAfterDays: 0`` lists none; nothing is deleted. Real hosts and real
SQLite stores in this process; an item is made old as a hand edit would (``UPDATE insights`` in ``mnemon.db``)."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from mnemon_ls.host import WorkspaceHost
from mnemon_ls.ops import review as review_op
from mnemon_ls.ops.execute import call, parse
from mnemon_ls.ops.registry import operations
from mnemon_ls.settings import load_settings
from tests.gitrepo import commit_files, make_repo

SETTINGS = {"storageScope": "workspace", "runtimeUserScope": "storage"}
OLD, OLDER, OLDEST = "SQLite FTS5 for the side index", "retries back off twice", "deploys go through staging"


def run(host: WorkspaceHost, op: str, **raw):
    operation = operations()[op]
    return call(operation, host, parse(operation, raw), surface="lsp")


@pytest.fixture
def host(tmp_path: Path):
    repo = make_repo(tmp_path / "ws")
    commit_files(repo, {"README.md": "hello\n"}, "init")
    made = WorkspaceHost(Path(repo.workdir), load_settings(SETTINGS))
    yield made
    made.close()


def age(root: Path, days: dict[str, int]) -> None:
    """Set ``created_at``/``updated_at`` of the items with these contents ``days`` ago (a hand edit of the store);
    ``last_accessed_at`` is left as it is (never recalled: NULL)."""
    (db_path,) = root.glob("data/*/mnemon.db")
    with sqlite3.connect(db_path) as db:
        for content, n in days.items():
            old = (datetime.now(timezone.utc) - timedelta(days=n)).strftime("%Y-%m-%dT%H:%M:%SZ")
            assert db.execute("UPDATE insights SET created_at = ?, updated_at = ? WHERE content = ?",
                              (old, old, content)).rowcount == 1
    db.close()


def rows(root: Path) -> list[tuple]:
    (db_path,) = root.glob("data/*/mnemon.db")
    with sqlite3.connect(db_path) as db:
        found = db.execute("SELECT id, content, created_at, updated_at, deleted_at FROM insights ORDER BY id").fetchall()
    db.close()
    return found


def spaces_due(data: dict) -> dict[str, dict]:
    return {m["content"]: m for m in data["memories"] if m["source"] == "spaces"}


def test_space_items_not_updated_or_recalled_are_due_and_still_true_restarts_their_clock(host: WorkspaceHost):
    space = run(host, "spaces.create", name="Project", description="decisions", active=True)["id"]
    for content in (OLD, OLDER, OLDEST, "a fresh fact"):
        run(host, "spaces.remember", content=content, spaceId=space)
    assert spaces_due(run(host, "citations.review")) == {}
    age(host.root, {OLD: 100, OLDER: 120, OLDEST: 150})
    due = spaces_due(run(host, "citations.review"))
    assert set(due) == {OLD, OLDER, OLDEST}
    item = due[OLD]
    assert item["reasons"] == ["review-due"] and item["cites"] == [] and item["label"] == "Memory Space"
    assert item["key"] == f"{space}/{item['id']}" and item["spaceId"] == space and item["age"] == "100d"
    since = datetime.fromisoformat(item["reviewDueSince"])
    assert timedelta(days=9) < datetime.now(timezone.utc) - since < timedelta(days=11)
    text = operations()["citations.review"].text(run(host, "citations.review"))
    assert f"Memory Space (100d) {OLD}\n  why: not updated or confirmed for reviewAfterDays, due since " in text

    # recalled now: no longer due (the later of updated and last accessed counts)
    assert any(r["content"] == OLDER for r in run(host, "spaces.recall", query="retries back off")["results"])
    host.spaces.flush_access()
    assert set(spaces_due(run(host, "citations.review"))) == {OLD, OLDEST}

    # Still true: the row in mnemon.db stays as it was, the item leaves the list; nothing deleted by age
    before = rows(host.root)
    answer = run(host, "citations.reanchor", source="spaces", key=due[OLDEST]["key"])
    assert answer["reanchored"] == 0 and answer["nextReviewDays"] == 90
    assert rows(host.root) == before and all(r[4] is None for r in before) and len(before) == 4
    assert set(spaces_due(run(host, "citations.review"))) == {OLD}
    later = WorkspaceHost(host.workspace, load_settings(SETTINGS),
                          clock=lambda: datetime.now(timezone.utc) + timedelta(days=91))
    try:  # 91 days on, the confirmation and the recall are old too
        assert set(spaces_due(run(later, "citations.review"))) == {OLD, OLDER, OLDEST, "a fresh fact"}
    finally:
        later.close()
    off = WorkspaceHost(host.workspace, load_settings(SETTINGS | {"reviewAfterDays": 0}))
    try:
        assert spaces_due(run(off, "citations.review")) == {}
    finally:
        off.close()


def test_one_call_lists_at_most_the_cap_per_space_the_longest_untouched_first(host: WorkspaceHost, monkeypatch):
    space = run(host, "spaces.create", name="Project", description="decisions", active=True)["id"]
    for content in (OLD, OLDER, OLDEST):
        run(host, "spaces.remember", content=content, spaceId=space)
    age(host.root, {OLD: 100, OLDER: 120, OLDEST: 150})
    monkeypatch.setattr(review_op, "SPACE_ITEMS_PER_SPACE", 2)
    assert set(spaces_due(run(host, "citations.review"))) == {OLDEST, OLDER}
    # a confirmed item does not take a place: the next one is listed
    key = spaces_due(run(host, "citations.review"))[OLDEST]["key"]
    run(host, "citations.reanchor", source="spaces", key=key)
    assert set(spaces_due(run(host, "citations.review"))) == {OLDER, OLD}
    # an inactive space is not scanned
    run(host, "spaces.deactivate", spaceId=space)
    assert spaces_due(run(host, "citations.review")) == {}
