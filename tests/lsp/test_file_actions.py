"""The file code action: "Create document from file", or "Update document from file" when a document
already names the file in its ``sourcePaths``; never on the wake file, managed files or other files of
a storage root. The update command ``mnemon.server.updateDocumentFromFile {uri, id?, documentRevision?}``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lsprotocol import types

from tests.lsp.conftest import Launcher, MnemonClient, tree_state, uri

CREATE = "mnemon.server.createDocumentFromFile"
UPDATE = "mnemon.server.updateDocumentFromFile"
SHOW_WAKE = "mnemon.server.showWakeSnapshot"
GUIDE = "# Release guide\nTag the commit, then run the release workflow.\n"


def _open(client: MnemonClient, path: Path) -> None:
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        types.TextDocumentItem(uri=uri(path), language_id="markdown", version=1, text=path.read_text())))


async def _titles(client: MnemonClient, path: Path) -> list[tuple[str, str, dict]]:
    caret = types.Range(types.Position(0, 0), types.Position(0, 0))
    params = types.CodeActionParams(types.TextDocumentIdentifier(uri(path)), caret,
                                    types.CodeActionContext(diagnostics=[]))
    actions = await client.text_document_code_action_async(params) or []
    return [(a.title, a.command.command, dict(a.command.arguments[0])) for a in actions]


def _index(root: Path) -> list[dict]:
    return json.loads((root / "documents" / "index.json").read_text(encoding="utf-8"))["documents"]


@pytest.fixture(params=["visual-studio-code", "neovim@v0.7"])
async def editor(request, lsp: Launcher, repo, repo_dir: Path) -> MnemonClient:
    return await lsp.start(request.param, [repo_dir], {"mnemon": {"storageScope": "workspace"}})


async def test_a_file_with_a_document_offers_update(editor: MnemonClient, repo_dir: Path):
    root = repo_dir / ".mnemon"
    source = repo_dir / "docs" / "release.md"
    source.parent.mkdir()
    source.write_text(GUIDE, encoding="utf-8")
    _open(editor, source)
    assert (await _titles(editor, source))[-1] == ("Create document from file", CREATE, {"uri": uri(source)})
    created = await editor.command(CREATE, {"uri": uri(source)})
    doc = created["document"]

    # Now the file has a document: the action updates it (fenced by its revision), never a duplicate.
    actions = await _titles(editor, source)
    assert [t for t, _, _ in actions] == ["Show wake snapshot", "Update document from file (Release guide)"]
    assert actions[-1][1:] == (UPDATE, {"uri": uri(source), "id": doc["id"], "documentRevision": 1})
    source.write_text(GUIDE + "Then announce it.\n", encoding="utf-8")
    editor.messages.clear()
    result = await editor.command(UPDATE, actions[-1][2])
    assert result["success"] is True and result["action"] == "updated"
    assert result["document"]["id"] == doc["id"] and result["document"]["revision"] == 2
    assert result["path"] == str(root / doc["relativePath"])
    assert "Then announce it." in (root / doc["relativePath"]).read_text(encoding="utf-8")
    assert [(d["id"], d["revision"], d["title"]) for d in _index(root)] == [(doc["id"], 2, "Release guide")]
    assert [(m.type, m.message) for m in editor.messages] == [
        (types.MessageType.Info, "mnemon: document updated: Release guide (revision 2)")]

    # A stale revision (the action was computed before another update): refused, nothing changes.
    before = tree_state(root)
    editor.messages.clear()
    stale = await editor.command(UPDATE, actions[-1][2])
    assert stale["success"] is False and stale["error"]["code"] == "revision-conflict"
    assert "documentRevision: expected revision 1, the document is at 2 " in stale["error"]["message"]
    assert tree_state(root) == before
    assert [m.type for m in editor.messages] == [types.MessageType.Error]
    assert editor.messages[0].message.startswith("mnemon: document not updated: ")

    # An archived document does not count: the file may become a new document again.
    await editor.call("mnemon/documents/archive", {"id": doc["id"], "documentRevision": 2})
    assert (await _titles(editor, source))[-1] == ("Create document from file", CREATE, {"uri": uri(source)})
    missing = await editor.command(UPDATE, {"uri": uri(source)})
    assert missing["success"] is False and missing["error"]["code"] == "not-found"
    assert "no active document names" in missing["error"]["message"]


async def test_two_documents_of_one_file_need_an_id(editor: MnemonClient, repo_dir: Path):
    root = repo_dir / ".mnemon"
    source = repo_dir / "plan.md"
    source.write_text(GUIDE, encoding="utf-8")
    first = (await editor.command(CREATE, {"uri": uri(source)}))["document"]
    second = (await editor.command(CREATE, {"uri": uri(source), "title": "Copy"}))["document"]
    _open(editor, source)
    title, command, argument = (await _titles(editor, source))[-1]
    assert (title, command, argument) == ("Update document from file (2 documents name it)", UPDATE,
                                          {"uri": uri(source)})
    before = tree_state(root)
    result = await editor.command(UPDATE, argument)
    assert result["success"] is False and result["error"]["code"] == "ambiguous-match"
    assert sorted(result["error"]["ids"]) == sorted([first["id"], second["id"]])
    assert tree_state(root) == before
    source.write_text("# Plan\nchanged\n", encoding="utf-8")
    chosen = await editor.command(UPDATE, {"uri": uri(source), "id": second["id"]})
    assert chosen["success"] is True and chosen["document"]["title"] == "Copy"
    assert [d["revision"] for d in _index(root)] == [1, 2]


async def test_no_file_action_in_a_storage_root(editor: MnemonClient, repo_dir: Path):
    """The wake file, MEMORY.md and a managed document are memory, not workspace files."""
    root = repo_dir / ".mnemon"
    await editor.call("mnemon/runtime/mutate", {"action": "add", "content": "A fact"})
    shown = await editor.command(SHOW_WAKE, {"uri": uri(repo_dir)})
    wake_file = Path(shown["path"])
    source = repo_dir / "guide.md"
    source.write_text(GUIDE, encoding="utf-8")
    managed = Path((await editor.command(CREATE, {"uri": uri(source)}))["path"])
    for path in (wake_file, root / "runtime" / "MEMORY.md", managed):
        _open(editor, path)
        assert await _titles(editor, path) == [("Show wake snapshot", SHOW_WAKE, {"uri": uri(path)})], path
    before = tree_state(root)
    memory = root / "runtime" / "MEMORY.md"
    for command, path in ((UPDATE, memory), (CREATE, wake_file), (CREATE, memory)):
        refused = await editor.command(command, {"uri": uri(path)})
        assert refused["success"] is False and refused["error"]["code"] == "invalid-input", (command, path)
        assert "is a file of a storage root" in refused["error"]["message"]
    assert tree_state(root) == before
