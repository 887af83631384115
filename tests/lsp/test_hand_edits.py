"""Hand edits of MEMORY.md / USER.md while the real language server runs (``handEdits: import``, the default).

The server's projection watcher sees the save, imports the edit as one commit and sends
``mnemon/projectionRepaired {workspace, file, preservedAs, handEdit}`` followed by a ``window/showMessage``
saying what happened ("2 entries added from your edit of MEMORY.md"). An edit that breaks a rule is not
applied: the file is rebuilt, the edit is kept under ``runtime/edits/`` and the person gets a
``window/showMessageRequest`` whose "Open edit" action opens the saved edit (``window/showDocument``).
A change of line endings alone is announced (``handEdit.status: format``) but is no edit and pops nothing up.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from lsprotocol import types

from tests.lsp.conftest import (
    PROJECTION_REPAIRED,
    Launcher,
    MnemonClient,
    memory_file,
    projection,
    read_entries,
    seed_store,
    uri,
)

WORKSPACE = {"mnemon": {"storageScope": "workspace"}}


@pytest.fixture
def root(repo, repo_dir: Path) -> Path:
    root = repo_dir / ".mnemon"
    seed_store(root, [("user", "Name: Ada"), ("memory", "alpha"), ("memory", "beta", ["main"])])
    return root


def in_place_save(path: Path, data: bytes) -> None:
    """Save as editors that keep the inode do: truncate the file, then write it through the same descriptor."""
    with open(path, "r+b") as editor:
        editor.truncate(0)
        editor.flush()
        editor.write(data)
        editor.flush()
        os.fsync(editor.fileno())


async def edit_and_wait(client: MnemonClient, save) -> dict:
    armed = client.expect(PROJECTION_REPAIRED)
    save()
    return await client.received(armed)


@pytest.mark.parametrize("caps", ["visual-studio-code", "neovim@v0.7"])
async def test_in_place_save_is_imported_with_metadata_kept(lsp: Launcher, caps: str, root: Path, repo_dir: Path):
    client = await lsp.start(caps, [repo_dir], WORKSPACE)
    memory = memory_file(root)
    before = {e["content"]: e for e in read_entries(root)}
    shown = client.expect("window/showMessage")
    edited = "alpha\n\u00a7\nbeta\n\u00a7\nRun the tests with pytest -n 2\n\u00a7\nThe wiki has the vault address\n".encode()
    note = await edit_and_wait(client, lambda: in_place_save(memory, edited))
    await client.received(shown)
    [saved] = sorted((root / "runtime" / "edits").iterdir())
    assert note["workspace"] == uri(repo_dir) and note["file"] == str(memory) and note["preservedAs"] == str(saved)
    result = note["handEdit"]
    assert (result["status"], result["added"], result["removed"], result["replaced"]) == (
        "imported", ["Run the tests with pytest -n 2", "The wiki has the vault address"], [], [])
    assert result["message"] == "2 entries added from your edit of MEMORY.md"
    assert [(m.type, m.message) for m in client.messages] == [
        (types.MessageType.Info, "mnemon: 2 entries added from your edit of MEMORY.md")]
    after = read_entries(root)
    assert [e["content"] for e in after] == ["Name: Ada", "alpha", "beta", "Run the tests with pytest -n 2",
                                             "The wiki has the vault address"]
    for entry in after[:3]:
        assert entry == before[entry["content"]]  # importance, branches and timestamps kept
    assert after[3]["importance"] == "normal" and "branches" not in after[3]
    assert memory.read_bytes() == edited and saved.read_bytes() == edited
    wake = await client.call("mnemon/wake", {})
    assert "The wiki has the vault address" in wake["text"]


async def test_replace_and_remove_through_an_atomic_save(lsp: Launcher, root: Path, repo_dir: Path):
    client = await lsp.start("visual-studio-code", [repo_dir], WORKSPACE)
    memory = memory_file(root)

    def save() -> None:
        temp = memory.with_name(".MEMORY.md.swp")
        temp.write_bytes("beta, on main only\n".encode())
        os.replace(temp, memory)

    note = await edit_and_wait(client, save)
    result = note["handEdit"]
    assert (result["removed"], result["replaced"]) == (["alpha"], [{"from": "beta", "to": "beta, on main only"}])
    [entry] = [e for e in read_entries(root) if e["target"] == "memory"]
    assert (entry["content"], entry["branches"]) == ("beta, on main only", ["main"])


async def test_rejected_edit_is_kept_reported_and_offered_to_open(lsp: Launcher, root: Path, repo_dir: Path):
    client = await lsp.start("visual-studio-code", [repo_dir], WORKSPACE)
    memory = memory_file(root)
    truth = (root / "runtime" / "memories.json").read_bytes()
    edited = "alpha\n\u00a7\nbeta \u00a7 gamma\n".encode()
    note = await edit_and_wait(client, lambda: in_place_save(memory, edited))
    result = note["handEdit"]
    assert result["status"] == "rejected"
    assert [(p["item"], p["field"]) for p in result["problems"]] == [(2, "content")]
    await client.until(lambda: client.message_requests and client.shown_documents,
                       "the showMessageRequest and the document its action opened")
    [request] = client.message_requests
    assert request.type == types.MessageType.Warning
    assert request.message.startswith("mnemon: your edit of MEMORY.md was not applied: MEMORY.md item 2")
    assert "must not contain '\u00a7'" in request.message
    assert [a.title for a in request.actions] == ["Open edit"]
    [saved] = sorted((root / "runtime" / "edits").iterdir())
    assert saved.read_bytes() == edited
    assert [d.uri for d in client.shown_documents] == [saved.as_uri()]  # "Open edit" opened it
    assert (root / "runtime" / "memories.json").read_bytes() == truth
    assert memory.read_bytes() == projection(["alpha", "beta"])
    assert client.messages == []


async def test_line_endings_alone_are_announced_but_not_an_edit(lsp: Launcher, root: Path, repo_dir: Path):
    client = await lsp.start("visual-studio-code", [repo_dir], WORKSPACE)
    memory = memory_file(root)
    truth = (root / "runtime" / "memories.json").read_bytes()
    note = await edit_and_wait(client, lambda: memory.write_bytes(b"\xef\xbb\xbfalpha\r\n\xc2\xa7\r\nbeta\r\n"))
    assert note["handEdit"]["status"] == "format" and note["preservedAs"] is None
    assert memory.read_bytes() == projection(["alpha", "beta"])
    assert (root / "runtime" / "memories.json").read_bytes() == truth
    assert not (root / "runtime" / "edits").exists()
    status = await client.call("mnemon/status", {})  # a round trip: anything sent before it has arrived
    assert status and client.messages == [] and client.message_requests == []


async def test_edit_racing_a_mutation_is_never_lost(lsp: Launcher, root: Path, repo_dir: Path):
    """A save and a mutation at the same moment: the lock orders them. Either the import came first (the
    mutation lands on top of it) or the mutation did (its commit keeps the edit under runtime/edits/ and
    the person is told, with the "Open edit" action). Either way nothing is lost and one notification says which."""
    client = await lsp.start("visual-studio-code", [repo_dir], WORKSPACE)
    memory = memory_file(root)
    armed = client.expect(PROJECTION_REPAIRED)
    memory.write_bytes("alpha\n\u00a7\nbeta\n\u00a7\ntyped during a write\n".encode())
    await client.call("mnemon/runtime/mutate", {"action": "add", "content": "written by the assistant"})
    note = await client.received(armed)
    contents = [e["content"] for e in read_entries(root)]
    result = note["handEdit"]
    if result["status"] == "imported":
        assert contents[-2:] == ["typed during a write", "written by the assistant"]
    else:
        assert result["status"] == "conflict"
        assert contents[-1] == "written by the assistant" and "typed during a write" not in contents
        [saved] = sorted((root / "runtime" / "edits").iterdir())
        assert b"typed during a write" in saved.read_bytes() and result["savedAs"] == str(saved)
        await client.until(lambda: client.message_requests, "the showMessageRequest")
        assert "a write to memories.json came first" in client.message_requests[0].message
