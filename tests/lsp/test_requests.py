"""Every ``mnemon/*`` request against the real server, for VS Code, Neovim 0.7 and current Neovim.

Receipts, snapshots, wake texts and status rows are asserted exactly; revisions are recomputed from
``memories.json`` on disk the way the spec defines them (sha256 of its compact JSON).
"""

from __future__ import annotations

import re
from pathlib import Path

import pygit2

import mnemon_ls
from tests.gitrepo import create_branch
from tests.lsp.conftest import (
    MnemonClient,
    expected_wake,
    memory_file,
    projection,
    read_entries,
    revision_of_file,
    uri,
    view_revision,
)

ISO_MS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


def _strip_times(entries: list[dict]) -> list[dict]:
    for entry in entries:
        assert ISO_MS.fullmatch(entry["created_at"]) and ISO_MS.fullmatch(entry["updated_at"]), entry
    return [{k: v for k, v in e.items() if k not in ("created_at", "updated_at")} for e in entries]


async def test_mutate_add_replace_remove_receipts(client: MnemonClient, repo_dir: Path):
    root = repo_dir / ".mnemon"
    ws = uri(repo_dir)

    added = await client.call("mnemon/runtime/mutate", {"action": "add", "content": "Use ruff for lint"})
    assert added == {
        "success": True, "message": "Entry added.", "target": "memory", "entryCount": 1,
        "usage": {"used": 17, "limit": 10240}, "revision": revision_of_file(root), "changed": True,
        "added": "Use ruff for lint", "workspace": ws,
    }
    assert memory_file(root).read_bytes() == b"Use ruff for lint\n"

    second = await client.call("mnemon/runtime/mutate", {
        "action": "add", "target": "memory", "content": "  Tests\n live in\ttests/  ", "importance": "critical"})
    assert second == {
        "success": True, "message": "Entry added.", "target": "memory", "entryCount": 2,
        "usage": {"used": 17 + 4 + 20, "limit": 10240}, "revision": revision_of_file(root), "changed": True,
        "added": "Tests live in tests/", "workspace": ws,
    }
    assert second["revision"] != added["revision"]

    replaced = await client.call("mnemon/runtime/mutate", {
        "action": "replace", "oldText": "ruff", "content": "Use ruff and mypy"})
    assert replaced == {
        "success": True, "message": "Entry replaced.", "target": "memory", "entryCount": 2,
        "usage": {"used": 17 + 4 + 20, "limit": 10240}, "revision": revision_of_file(root), "changed": True,
        "replaced": {"from": "Use ruff for lint", "to": "Use ruff and mypy"}, "workspace": ws,
    }
    assert memory_file(root).read_bytes() == projection(["Use ruff and mypy", "Tests live in tests/"])

    removed = await client.call("mnemon/runtime/mutate", {"action": "remove", "oldText": "tests/"})
    assert removed == {
        "success": True, "message": "Entry removed.", "target": "memory", "entryCount": 1,
        "usage": {"used": 17, "limit": 10240}, "revision": revision_of_file(root), "changed": True,
        "removed": "Tests live in tests/", "workspace": ws,
    }

    user = await client.call("mnemon/runtime/mutate", {
        "action": "add", "target": "user", "content": "Prefers short answers", "workspace": ws})
    assert user == {
        "success": True, "message": "Entry added.", "target": "user", "entryCount": 1,
        "usage": {"used": 21, "limit": 4096}, "revision": revision_of_file(root), "changed": True,
        "added": "Prefers short answers", "workspace": ws,
    }
    assert memory_file(root, "USER.md").read_bytes() == b"Prefers short answers\n"
    assert memory_file(root).read_bytes() == b"Use ruff and mypy\n"

    again = await client.call("mnemon/runtime/mutate", {"action": "add", "content": "Use ruff and mypy"})
    assert again == {
        "success": True, "message": "Entry already exists.", "target": "memory", "entryCount": 1,
        "usage": {"used": 17, "limit": 10240}, "revision": user["revision"], "changed": False,
        "added": "Use ruff and mypy", "workspace": ws,
    }
    assert _strip_times(read_entries(root)) == [
        {"content": "Use ruff and mypy", "target": "memory", "importance": "normal"},
        {"content": "Prefers short answers", "target": "user", "importance": "normal"},
    ]


async def test_runtime_snapshot(client: MnemonClient, repo_dir: Path):
    root = repo_dir / ".mnemon"
    empty = await client.call("mnemon/runtime/snapshot", {})
    assert empty == {
        "workspace": uri(repo_dir), "revision": empty["revision"], "entries": [],
        "usage": {"user": {"used": 0, "limit": 4096}, "memory": {"used": 0, "limit": 10240}}, "problems": [],
    }
    await client.call("mnemon/runtime/mutate", {"action": "add", "target": "user", "content": "Name: Ada"})
    await client.call("mnemon/runtime/mutate", {"action": "add", "content": "Deploys from main", "branches": ["main"]})
    last = await client.call("mnemon/runtime/mutate", {"action": "add", "content": "CI is slow", "importance": "low"})

    snapshot = await client.call("mnemon/runtime/snapshot", {"workspace": uri(repo_dir / "file.txt")})
    assert snapshot["revision"] == last["revision"] == revision_of_file(root)
    assert snapshot["entries"] == read_entries(root)
    assert _strip_times(snapshot["entries"]) == [
        {"content": "Name: Ada", "target": "user", "importance": "normal"},
        {"content": "Deploys from main", "target": "memory", "importance": "normal", "branches": ["main"]},
        {"content": "CI is slow", "target": "memory", "importance": "low"},
    ]
    assert {k: v for k, v in snapshot.items() if k not in ("entries", "revision")} == {
        "workspace": uri(repo_dir),
        "usage": {"user": {"used": 9, "limit": 4096}, "memory": {"used": 17 + 4 + 10, "limit": 10240}},
        "problems": [],
    }


async def _seed_branch_entries(client: MnemonClient) -> str:
    await client.call("mnemon/runtime/mutate", {"action": "add", "target": "user", "content": "Prefers terse answers"})
    await client.call("mnemon/runtime/mutate", {"action": "add", "content": "Shared fact"})
    await client.call("mnemon/runtime/mutate", {"action": "add", "content": "Main only fact", "branches": ["main"]})
    last = await client.call("mnemon/runtime/mutate", {
        "action": "add", "content": "Topic only fact", "branches": ["topic"], "importance": "critical"})
    return last["revision"]


async def test_wake_is_exact_for_current_and_given_branch(client: MnemonClient, repo_dir: Path):
    revision = await _seed_branch_entries(client)
    used = (21, 11 + 4 + 14 + 4 + 15)
    wake = await client.call("mnemon/wake", {})
    text = expected_wake(revision, "Git branch: main (1 branch-scoped entry hidden)",
                         [("normal", "Prefers terse answers")],
                         [("normal", "Shared fact"), ("normal", "Main only fact", ["main"])], used)
    assert wake == {"text": text, "revision": view_revision(text), "storeRevision": revision, "branch": "main",
                    "branchReason": None, "hidden": 1, "omitted": 0, "chars": len(text), "notices": [], "archived": 0,
                    "workspace": uri(repo_dir)}
    # The status bar's counts are the wake's: entries visible on this branch, plus the whole store.
    [row] = (await client.call("mnemon/status"))["workspaces"]
    assert (row["entries"], row["storedEntries"], row["hiddenEntries"]) == (
        {"user": 1, "memory": 2}, {"user": 1, "memory": 3}, 1)

    given = await client.call("mnemon/wake", {"branch": "topic"})
    text = expected_wake(revision, "Git branch: topic (given; 1 branch-scoped entry hidden)",
                         [("normal", "Prefers terse answers")],
                         [("normal", "Shared fact"), ("critical", "Topic only fact", ["topic"])], used)
    assert given == {"text": text, "revision": view_revision(text), "storeRevision": revision, "branch": "topic",
                     "branchReason": "given", "hidden": 1, "omitted": 0, "chars": len(text), "notices": [], "archived": 0,
                     "workspace": uri(repo_dir)}
    assert given["revision"] != wake["revision"]  # the same store shows different content on the two branches
    # The override is per request: the next plain wake is on the checked-out branch again.
    assert await client.call("mnemon/wake", {}) == wake


async def test_wake_budget_chars_omits_oldest_whole_entries(client: MnemonClient):
    contents = [f"Entry number {i:02d} explains one decision about the build in some detail" for i in range(30)]
    for content in contents:
        await client.call("mnemon/runtime/mutate", {"action": "add", "content": content})
    wake = await client.call("mnemon/wake", {"budgetChars": 1024})
    text = wake["text"]
    assert len(text) <= 1024 and wake["chars"] == len(text)
    kept = [c for c in contents if c in text]
    assert len(kept) >= 1 and wake["omitted"] == 30 - len(kept)
    assert kept == contents[30 - len(kept):], "oldest (least recently updated) entries go first"
    n = wake["omitted"]
    assert (f"Omitted: {n} entries to fit 1024 characters: MEMORY.md entries 1-{n}, as `mnemon-ls runtime list "
            "--target memory` numbers and shows them (MEMORY.md gives way before USER.md, lowest importance and "
            "least recently updated first); absence here does not mean deletion.") in text.splitlines()
    assert "Contents of MEMORY.md (working reference; entries: 30; UTF-8 bytes: " in text
    assert (await client.call("mnemon/wake", {}))["omitted"] == 0


async def test_turn_views_pin_revision_and_text(client: MnemonClient, repo_dir: Path):
    await client.call("mnemon/runtime/mutate", {"action": "add", "content": "Before the turn"})
    begun = await client.call("mnemon/turn/begin", {})
    pinned = begun["wake"]
    assert set(begun) == {"viewId", "wake", "revisions", "parentViewId"}
    assert begun["parentViewId"] is None
    assert begun["revisions"] == {"runtime": pinned["storeRevision"]}
    assert pinned == await client.call("mnemon/wake", {})
    view_id = begun["viewId"]

    during = await client.call("mnemon/runtime/mutate", {"action": "add", "content": "Written during the turn"})
    assert during["revision"] != pinned["storeRevision"]
    fresh = await client.call("mnemon/wake", {})
    assert "Written during the turn" in fresh["text"] and fresh["storeRevision"] == during["revision"]
    assert fresh["revision"] != pinned["revision"]
    assert await client.call("mnemon/wake", {"viewId": view_id}) == pinned
    assert "Written during the turn" not in pinned["text"]

    child = await client.call("mnemon/turn/begin", {"parentViewId": view_id})
    assert child["viewId"] != view_id
    assert child == {"viewId": child["viewId"], "wake": pinned, "revisions": begun["revisions"],
                     "parentViewId": view_id}

    assert await client.call("mnemon/turn/end", {"viewId": view_id}) == {"viewId": view_id, "ended": True}
    late_child = await client.call("mnemon/turn/begin", {"parentViewId": view_id})
    assert late_child["wake"] == pinned and late_child["parentViewId"] == view_id
    assert await client.call("mnemon/wake", {"viewId": late_child["viewId"]}) == pinned
    assert await client.call("mnemon/wake", {"viewId": child["viewId"]}) == pinned

    for method, params, field in (
        ("mnemon/wake", {"viewId": "view-0-nope"}, "viewId"),
        ("mnemon/turn/end", {"viewId": "view-0-nope"}, "viewId"),
        ("mnemon/turn/begin", {"parentViewId": "view-0-nope"}, "parentViewId"),
    ):
        error = await client.call_error(method, params)
        assert (error.code, error.message, error.data) == (
            -32014, f"{field}: no view 'view-0-nope' (unknown or evicted)", {"code": "not-found", "field": field})


async def test_status(client: MnemonClient, repo: pygit2.Repository, repo_dir: Path):
    await client.call("mnemon/runtime/mutate", {"action": "add", "target": "user", "content": "Name: Ada"})
    await client.call("mnemon/runtime/mutate", {"action": "add", "content": "Shared fact"})
    create_branch(repo, "unused")  # a new ref does not move HEAD
    status = await client.call("mnemon/status")
    root = str(repo_dir / ".mnemon")
    records = status["workspaces"][0].pop("records")  # the records tier (tests/lsp/test_records.py)
    assert re.fullmatch(r"lsp-[0-9a-f]{16}", records["sessionId"])
    assert records == {"sessionId": records["sessionId"], "pendingProposals": 0, "review": {"armed": False},
                       "autoWriter": {"enabled": True, "last": None, "lastError": None, "pending": False}}
    assert status == {
        "version": mnemon_ls.__version__, "protocolVersion": 1,
        "workspaces": [{
            "uri": uri(repo_dir), "name": "repo", "path": str(repo_dir), "root": root, "userRoot": root, "scope": "workspace",
            "branch": "main", "branchReason": None, "detached": False,
            "entries": {"user": 1, "memory": 1}, "storedEntries": {"user": 1, "memory": 1}, "hiddenEntries": 0,
            "usage": {"user": {"used": 9, "limit": 4096}, "memory": {"used": 11, "limit": 10240}},
            "problems": [],
            "documents": None,  # the Documents tier is unused here (its own tests cover it)
        }],
    }
