"""Two servers (two editors) on one workspace root, taking remember requests alternately.

Both are real pytest-lsp clients of real server processes (one with VS Code's capabilities, one with
Neovim 0.7's). The 100 requests are all in flight at once, alternating between the servers, so the
cross-process Runtime lock is contended all the time; each server's projection watcher also sees every
commit of the other. No entry may be lost or duplicated, the projection must match the truth, and both
servers must render the same wake afterwards.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from tests.lsp.conftest import Launcher, memory_file, projection, revision_of_file

WORKSPACE = {"mnemon": {"storageScope": "workspace"}}
COUNT = 100
#: Requests of one server waiting for the store's lock at once (test_two_servers_alternating_remember_requests).
IN_FLIGHT = 2


async def test_two_servers_alternating_remember_requests(lsp: Launcher, repo, repo_dir: Path):
    first = await lsp.start("visual-studio-code", [repo_dir], WORKSPACE)
    second = await lsp.start("neovim@v0.7", [repo_dir], WORKSPACE)
    texts = [f"decision {i:03d}: keep the change small and reviewed" for i in range(COUNT)]

    # At most IN_FLIGHT requests per server wait for the lock at once: with all 100 queued, the last waited
    # past the store's 10 s lock timeout on a loaded machine (StoreBusy, as designed), and with 4 per server
    # too at load 18 (the lock is polled, not queued: a waiter can lose several rounds); the two servers still
    # contend for every commit.
    in_flight = {id(first): asyncio.Semaphore(IN_FLIGHT), id(second): asyncio.Semaphore(IN_FLIGHT)}

    async def remember(i: int) -> dict:
        server = first if i % 2 == 0 else second
        async with in_flight[id(server)]:
            return await server.call("mnemon/runtime/mutate", {"action": "add", "content": texts[i]}, timeout=60)

    receipts = await asyncio.gather(*(remember(i) for i in range(COUNT)))
    assert all(r["success"] and r["changed"] and r["message"] == "Entry added." for r in receipts)
    assert sorted(r["entryCount"] for r in receipts) == list(range(1, COUNT + 1)), "each commit saw all earlier ones"

    root = repo_dir / ".mnemon"
    stored = json.loads((root / "runtime" / "memories.json").read_text())["entries"]
    contents = [e["content"] for e in stored]
    assert sorted(contents) == sorted(texts) and len(contents) == COUNT, "every entry exactly once"
    assert memory_file(root).read_bytes() == projection(contents)
    assert not (root / "runtime" / "edits").exists(), "a commit of one server was taken for a hand edit"

    wake_1 = await first.call("mnemon/wake", {})
    wake_2 = await second.call("mnemon/wake", {})
    assert wake_1 == wake_2
    assert wake_1["storeRevision"] == revision_of_file(root)
    assert all(t in wake_1["text"] for t in texts)
    snap_1 = await first.call("mnemon/runtime/snapshot", {})
    assert snap_1 == await second.call("mnemon/runtime/snapshot", {})
    assert first.notes == second.notes == [] and first.messages == second.messages == []
    # No lock is left behind. Each server's projection watcher re-reads the other's commits under the lock
    # (hand-edit check), so the lock file may exist for a moment after the last receipt; by the time both
    # servers have answered a wake and a snapshot those reads are done.
    assert not (root / "runtime" / ".memories.lock").exists()


async def test_one_server_many_requests_in_flight(lsp: Launcher, repo, repo_dir: Path):
    """One server, 60 mutations sent at once (its worker threads contend for the same lock)."""
    client = await lsp.start("neovim", [repo_dir], WORKSPACE)
    texts = [f"parallel note {i:02d}" for i in range(60)]
    receipts = await asyncio.gather(*(client.call("mnemon/runtime/mutate", {"action": "add", "content": t},
                                                  timeout=60) for t in texts))
    assert sorted(r["entryCount"] for r in receipts) == list(range(1, 61))
    stored = [e["content"] for e in json.loads((repo_dir / ".mnemon/runtime/memories.json").read_text())["entries"]]
    assert sorted(stored) == texts
    removals = await asyncio.gather(*(client.call("mnemon/runtime/mutate", {"action": "remove", "oldText": t},
                                                  timeout=60) for t in texts[::2]))
    assert all(r["removed"] in texts for r in removals)
    remaining = [e["content"] for e in json.loads((repo_dir / ".mnemon/runtime/memories.json").read_text())["entries"]]
    assert sorted(remaining) == texts[1::2]
    assert memory_file(repo_dir / ".mnemon").read_bytes() == projection(remaining)
