"""``mnemon/memoryChanged`` (mnemon_ls/lsp/views.py): editor views refresh when a Source's truth changes.

Real servers on real directories; the writes come from the same server, from a second server on the
same root (two editor windows) and from a plain file write by another process (the CLI's path).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from tests.gitrepo import make_repo
from tests.lsp.conftest import MEMORY_CHANGED, NOTIFY_TIMEOUT, Launcher, MnemonClient, uri

INIT = {"storageScope": "workspace", "runtimeUserScope": "storage"}


async def changed(client: MnemonClient, source: str, trigger) -> dict:
    """Run ``trigger`` (a coroutine factory) and return the first ``memoryChanged`` of ``source`` after it.

    Every notification is recorded in ``client.notes``; the next one is armed before the notes are
    looked at, so none arriving in between is missed (others, e.g. a late one of the previous write, are
    skipped)."""
    mark = client.mark()
    await trigger()
    deadline = asyncio.get_running_loop().time() + NOTIFY_TIMEOUT
    while True:
        armed = client.expect(MEMORY_CHANGED)
        for note in client.notes_since(mark, MEMORY_CHANGED):
            if note["source"] == source:
                return note
        left = deadline - asyncio.get_running_loop().time()
        if left <= 0:
            raise AssertionError(f"no mnemon/memoryChanged of {source} within {NOTIFY_TIMEOUT} s")
        try:
            await asyncio.wait_for(asyncio.shield(armed), left)
        except asyncio.TimeoutError:
            pass


def make_ws(tmp_path: Path) -> Path:
    path = Path(tmp_path.resolve()) / "ws"
    make_repo(path)
    return path


async def test_each_source_announces_its_own_writes(lsp: Launcher, tmp_path: Path):
    ws = make_ws(tmp_path)
    client = await lsp.start(folders=[ws], init=INIT)
    note = await changed(client, "runtime", lambda: client.call(
        "mnemon/runtime/mutate", {"action": "add", "content": "Run tests with pytest -n 2"}))
    assert note == {"workspace": uri(ws), "source": "runtime"}
    note = await changed(client, "documents", lambda: client.call(
        "mnemon/documents/create", {"title": "Design", "description": "d", "content": "Body"}))
    assert note == {"workspace": uri(ws), "source": "documents"}
    note = await changed(client, "spaces", lambda: client.call(
        "mnemon/spaces/create", {"name": "Team", "description": "Shared facts", "active": True}))
    assert note == {"workspace": uri(ws), "source": "spaces"}
    note = await changed(client, "records", lambda: client.call(
        "mnemon/records/propose", {"title": "Port", "content": "8080"}))
    assert note == {"workspace": uri(ws), "source": "records"}


async def test_a_second_window_on_the_same_root_sees_the_first_ones_remove(lsp: Launcher, tmp_path: Path):
    ws = make_ws(tmp_path)
    first = await lsp.start(folders=[ws], init=INIT)
    second = await lsp.start(folders=[ws], init=INIT)
    await first.call("mnemon/runtime/mutate", {"action": "add", "content": "Deploy with make release"})
    note = await changed(second, "runtime", lambda: first.call(
        "mnemon/runtime/mutate", {"action": "remove", "oldText": "make release"}))
    assert note == {"workspace": uri(ws), "source": "runtime"}
    snapshot = await second.call("mnemon/runtime/snapshot", {})
    assert [e["content"] for e in snapshot["entries"]] == []
    # What the view does next: its remove of the same entry is refused and changes nothing.
    error = await second.call_error("mnemon/runtime/mutate", {"action": "remove", "oldText": "make release"})
    assert error.data["code"] == "no-match"


async def test_a_write_by_another_process_is_announced(lsp: Launcher, tmp_path: Path):
    ws = make_ws(tmp_path)
    writer = await lsp.start(folders=[ws], init=INIT)
    await writer.call("mnemon/runtime/mutate", {"action": "add", "content": "first"})
    # Started once the store exists, so its watchers are armed on runtime/ itself.
    client = await lsp.start(folders=[ws], init=INIT)
    runtime = ws / ".mnemon" / "runtime"
    # A writer outside this server replaces memories.json (what the CLI or the TypeScript plugin does).
    document = json.loads((runtime / "memories.json").read_text(encoding="utf-8"))
    document["entries"][0]["content"] = "second"

    async def write() -> None:
        (runtime / "memories.json").write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")

    note = await changed(client, "runtime", write)
    assert note == {"workspace": uri(ws), "source": "runtime"}
    snapshot = await client.call("mnemon/runtime/snapshot", {})
    assert [e["content"] for e in snapshot["entries"]] == ["second"]


async def test_a_folder_without_git_is_announced_and_hides_branch_scoped_entries(lsp: Launcher, tmp_path: Path):
    ws = Path(tmp_path.resolve()) / "plain"
    ws.mkdir()
    client = await lsp.start(folders=[ws], init=INIT)
    note = await changed(client, "runtime", lambda: client.call(
        "mnemon/runtime/mutate", {"action": "add", "content": "only on main", "branches": ["main"]}))
    assert note == {"workspace": uri(ws), "source": "runtime"}
    row = (await client.status())["workspaces"][0]
    assert row["branch"] is None and row["branchReason"]
    # The view lists every entry (runtime/snapshot) and marks this one hidden; the wake hides it.
    snapshot = await client.call("mnemon/runtime/snapshot", {})
    assert [(e["content"], e["branches"]) for e in snapshot["entries"]] == [("only on main", ["main"])]
    assert "only on main" not in (await client.call("mnemon/wake", {}))["text"]
