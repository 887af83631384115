"""Projection repair while the server runs: USER.md / MEMORY.md changed outside the server.

The truth is ``runtime/memories.json``; a projection that no longer matches it is rebuilt byte-exact,
a hand edit is first saved under ``runtime/edits/``, and the client gets exactly one
``mnemon/projectionRepaired {workspace, file, preservedAs}`` plus one ``window/showMessage``. After a
repair nothing else is written to ``runtime/`` for 2 seconds (no repair loop): measured by polling
``os.stat`` of every file in a bounded window.

``touch`` (mtime only): DESIGN.md says projections are "rebuilt from the truth when missing or changed"
and the repair rule is "touched outside the server ... repaired". A touched file whose bytes equal the
projection is not changed, so nothing needs writing: the server must neither rewrite it nor notify.

Stores are seeded before the server starts (with the real Runtime store) so the projection watcher
watches an existing ``runtime/`` from its start; the case of a store the server creates itself is a
separate test.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest
from lsprotocol import types

from tests.lsp.conftest import (
    NOTIFY_TIMEOUT,
    PROJECTION_REPAIRED,
    Launcher,
    MnemonClient,
    memory_file,
    projection,
    seed_store,
    uri,
    wait_for_bytes,
    watch_for_writes,
)

#: ``handEdits: restore``: these tests are about rebuilding projections (importing edits: test_hand_edits.py).
WORKSPACE = {"mnemon": {"storageScope": "workspace", "runtimeUserScope": "storage", "handEdits": "restore"}}
QUIET = 1.0


@pytest.fixture
def root(repo, repo_dir: Path) -> Path:
    root = repo_dir / ".mnemon"
    seed_store(root, [("user", "Name: Ada"), ("memory", "alpha"), ("memory", "beta")])
    return root


async def wait_for_no_temp_files(directory: Path, timeout: float = NOTIFY_TIMEOUT) -> None:
    """Poll until ``directory`` holds no temp file (``.<name>.<pid>.<time>.<hex>.tmp``): the repair's write has
    finished. A guarded rewrite swaps its temp file with the projection (the new bytes are in place at once) and
    leaves what it displaced under the temp name until it has looked at it (``mnemon_ls.fswatch``), then removes it:
    the bytes alone do not say the repair is over (``timeout``: a safety bound, seconds)."""
    deadline = time.monotonic() + timeout
    while any(name.endswith(".tmp") for name in os.listdir(directory)):
        if time.monotonic() > deadline:
            raise AssertionError(f"temp files left in {directory}: {sorted(os.listdir(directory))}")
        await asyncio.sleep(0.02)


async def _repair(client: MnemonClient, change) -> dict:
    """Make ``change`` with the waits armed; the projectionRepaired it caused, once its showMessage arrived too."""
    mark = client.mark()
    armed = client.expect(PROJECTION_REPAIRED)
    shown = client.expect("window/showMessage")
    change()
    note = await client.received(armed)
    await client.received(shown)
    return {"note": note, "mark": mark}


async def _assert_settled(client: MnemonClient, root: Path, mark: int) -> None:
    """No further writes to runtime/ for QUIET seconds, and exactly one notification in total."""
    assert await watch_for_writes(root / "runtime", QUIET) == [], "writes after the repair (a loop?)"
    assert len(client.notes_since(mark, PROJECTION_REPAIRED)) == 1


def _edits(root: Path) -> list[Path]:
    edits = root / "runtime" / "edits"
    return sorted(edits.iterdir()) if edits.exists() else []


@pytest.mark.parametrize("caps", ["visual-studio-code", "neovim@v0.7"])
async def test_hand_edit_is_repaired_and_preserved(lsp: Launcher, caps: str, root: Path, repo_dir: Path):
    client = await lsp.start(caps, [repo_dir], WORKSPACE)
    memory = memory_file(root)
    expected = projection(["alpha", "beta"])
    assert memory.read_bytes() == expected
    edited = b"alpha\n\xc2\xa7\nbeta\n\xc2\xa7\nmy own note, typed into MEMORY.md\n"

    seen = await _repair(client, lambda: memory.write_bytes(edited))
    [saved] = _edits(root)
    assert seen["note"] == {"workspace": uri(repo_dir), "file": str(memory), "preservedAs": str(saved)}
    assert saved.name.endswith("-MEMORY.md") and saved.read_bytes() == edited
    assert saved.stat().st_mode & 0o777 == 0o600
    assert memory.read_bytes() == expected
    assert memory_file(root, "USER.md").read_bytes() == b"Name: Ada\n"
    assert [(m.type, m.message) for m in client.messages] == [(
        types.MessageType.Warning,
        f"mnemon: MEMORY.md was edited outside mnemon; it was rebuilt from memories.json and your edit saved at {saved}")]
    await _assert_settled(client, root, seen["mark"])
    assert len(client.messages) == 1


async def test_deleted_projection_is_rebuilt(lsp: Launcher, root: Path, repo_dir: Path):
    client = await lsp.start("visual-studio-code", [repo_dir], WORKSPACE)
    user = memory_file(root, "USER.md")
    seen = await _repair(client, user.unlink)
    assert seen["note"] == {"workspace": uri(repo_dir), "file": str(user), "preservedAs": None}
    assert user.read_bytes() == b"Name: Ada\n"
    assert _edits(root) == []
    assert [(m.type, m.message) for m in client.messages] == [
        (types.MessageType.Info, "mnemon: USER.md was missing or empty; rebuilt from memories.json")]
    await _assert_settled(client, root, seen["mark"])


async def test_editor_style_save_is_repaired(lsp: Launcher, root: Path, repo_dir: Path):
    """Editors save by writing a temp file beside the target and renaming it over (os.replace)."""
    client = await lsp.start("visual-studio-code", [repo_dir], WORKSPACE)
    memory = memory_file(root)
    edited = "alpha\n\u00a7\nbeta, reworded in an editor\n".encode()

    def save() -> None:
        temp = memory.with_name(".MEMORY.md.swp")
        temp.write_bytes(edited)
        os.replace(temp, memory)

    seen = await _repair(client, save)
    [saved] = _edits(root)
    assert seen["note"] == {"workspace": uri(repo_dir), "file": str(memory), "preservedAs": str(saved)}
    assert saved.read_bytes() == edited
    assert memory.read_bytes() == projection(["alpha", "beta"])
    assert [m.type for m in client.messages] == [types.MessageType.Warning]
    await _assert_settled(client, root, seen["mark"])


async def test_touch_neither_rewrites_nor_notifies(lsp: Launcher, root: Path, repo_dir: Path):
    client = await lsp.start("visual-studio-code", [repo_dir], WORKSPACE)
    memory = memory_file(root)
    mark = client.mark()
    os.utime(memory)  # `touch`: mtime only, bytes unchanged
    assert await watch_for_writes(root / "runtime", QUIET) == []
    assert client.notes_since(mark) == [] and client.messages == []
    # The watcher was alive all along: a real edit is repaired (checked on disk, no notification needed).
    memory.write_bytes(b"alpha\nsomething else\n")
    await wait_for_bytes(memory, projection(["alpha", "beta"]))


async def test_hand_edit_is_repaired_on_disk(lsp: Launcher, root: Path, repo_dir: Path):
    """The repair itself, observed on disk only (independent of the notification)."""
    client = await lsp.start("neovim@v0.7", [repo_dir], WORKSPACE)
    memory = memory_file(root)
    memory.write_bytes(b"a hand edit\n")
    await wait_for_bytes(memory, projection(["alpha", "beta"]))
    await wait_for_no_temp_files(root / "runtime")  # (under load the displaced copy was still there: CI, stop 51)
    assert [p.read_bytes() for p in _edits(root)] == [b"a hand edit\n"]
    assert await watch_for_writes(root / "runtime", QUIET) == []
    assert (await client.call("mnemon/runtime/snapshot", {}))["problems"] == []


async def test_edit_right_after_the_server_created_the_store(lsp: Launcher, repo, repo_dir: Path):
    """The projection watcher started before runtime/ existed; the edit lands while it moves onto runtime/.

    The edit is an atomic replace: the watcher's first look at a newly appeared runtime/ is not debounced,
    so an in-place write (truncate, then write) could be caught half-way (see the report).
    """
    client = await lsp.start("visual-studio-code", [repo_dir], WORKSPACE)
    await client.call("mnemon/runtime/mutate", {"action": "add", "content": "alpha"})
    memory = memory_file(repo_dir / ".mnemon")

    def save() -> None:
        temp = memory.with_name("MEMORY.md.new")
        temp.write_bytes(b"alpha\nedited at once\n")
        os.replace(temp, memory)

    seen = await _repair(client, save)
    assert seen["note"]["preservedAs"] is not None
    assert memory.read_bytes() == b"alpha\n"


async def test_edit_made_while_no_server_ran_is_repaired_at_start(lsp: Launcher, root: Path, repo_dir: Path):
    """The server looks at the projections when it starts (before any wake), so an offline edit is
    handled at once; the wake then shows the truth."""
    memory = memory_file(root)
    memory.write_bytes(b"alpha\nedited offline\n")
    client = await lsp.start("visual-studio-code", [repo_dir], WORKSPACE)
    wake = await client.call("mnemon/wake", {})
    assert "alpha" in wake["text"] and "beta" in wake["text"] and "edited offline" not in wake["text"]
    [saved] = _edits(root)
    await client.note(PROJECTION_REPAIRED)  # the start-up repair runs in a worker thread
    assert client.notes_since(0, PROJECTION_REPAIRED) == [{"workspace": uri(repo_dir), "file": str(memory), "preservedAs": str(saved)}]
    assert saved.read_bytes() == b"alpha\nedited offline\n"
    assert memory.read_bytes() == projection(["alpha", "beta"])


async def test_two_folders_sharing_one_root_repair_once(lsp: Launcher, tmp_path: Path):
    """Both folders of one window watch the shared global root: one hand edit, one repair, one notification."""
    from tests.gitrepo import make_repo

    first, second = tmp_path / "first", tmp_path / "second"
    make_repo(first)
    make_repo(second)
    seed_store(lsp.data_dir, [("memory", "alpha"), ("memory", "beta")])
    client = await lsp.start("visual-studio-code", [first, second],
                             {"mnemon": {"storageScope": "global", "handEdits": "restore"}})
    memory = memory_file(lsp.data_dir)
    seen = await _repair(client, lambda: memory.write_bytes(b"alpha\nedited once\n"))
    assert seen["note"]["workspace"] in (uri(first), uri(second))
    assert seen["note"]["file"] == str(memory)
    assert [p.read_bytes() for p in _edits(lsp.data_dir)] == [b"alpha\nedited once\n"]
    assert memory.read_bytes() == projection(["alpha", "beta"])
    await _assert_settled(client, lsp.data_dir, seen["mark"])
    assert len(client.messages) == 1
