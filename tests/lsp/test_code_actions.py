"""Code actions on a selection and their ``workspace/executeCommand`` commands.

Each command takes one argument object (``mnemon.server.rememberSelection {uri, text, branches?,
importance?}``, ``mnemon.server.showWakeSnapshot {uri}``). Results, files on disk and the
``window/showMessage`` / ``window/showDocument`` traffic the client received are checked exactly.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from lsprotocol import types

from tests.lsp.conftest import (
    CLIENTS,
    Launcher,
    MnemonClient,
    memory_file,
    read_entries,
    revision_of_file,
    tree_state,
    uri,
)

REMEMBER = "mnemon.server.rememberSelection"
SHOW_WAKE = "mnemon.server.showWakeSnapshot"
CREATE_DOCUMENT = "mnemon.server.createDocumentFromFile"  # the Documents tier's action (tested with Documents)
SOURCE = "import os\n# keep the cache small\nprint(os.getcwd())\n"
SELECTED = "keep the cache small"


def _open(client: MnemonClient, path: Path, text: str = SOURCE) -> None:
    path.write_text(text)
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        types.TextDocumentItem(uri=uri(path), language_id="python", version=1, text=text)))


async def _actions(client: MnemonClient, path: Path, rng: types.Range, only: list[str] | None = None,
                   trigger: types.CodeActionTriggerKind | None = None) -> list:
    params = types.CodeActionParams(types.TextDocumentIdentifier(uri(path)), rng,
                                    types.CodeActionContext(diagnostics=[], only=only, trigger_kind=trigger))
    return list(await client.text_document_code_action_async(params) or [])


SELECTION = types.Range(types.Position(1, 2), types.Position(1, 22))
#: SELECTION as the Remember selection commands' ``range`` (the memory cites those lines)
SELECTION_RANGE = {"start": {"line": 1, "character": 2}, "end": {"line": 1, "character": 22}}


def _action(title: str, command: str, argument: dict) -> types.CodeAction:
    return types.CodeAction(title=title, kind="refactor.mnemon",
                            command=types.Command(title=title, command=command, arguments=(argument,)))


async def test_actions_on_selection(client: MnemonClient, repo_dir: Path):
    source = repo_dir / "notes.py"
    _open(client, source)
    actions = await _actions(client, source, SELECTION)
    assert actions == [
        _action("Remember selection", REMEMBER, {"uri": uri(source), "text": SELECTED, "range": SELECTION_RANGE}),
        _action("Remember selection for branch main", REMEMBER,
                {"uri": uri(source), "text": SELECTED, "range": SELECTION_RANGE, "branches": ["main"]}),
        _action("Show wake snapshot", SHOW_WAKE, {"uri": uri(source)}),
        _action("Create document from file", CREATE_DOCUMENT, {"uri": uri(source)}),
    ]


async def test_only_and_trigger_kind_filter(client: MnemonClient, repo_dir: Path):
    source = repo_dir / "notes.py"
    _open(client, source)
    assert await _actions(client, source, SELECTION, only=["quickfix"]) == []
    assert await _actions(client, source, SELECTION, only=["source"]) == []
    for only in (["refactor"], ["refactor.mnemon"], ["quickfix", "refactor"]):
        titles = [a.title for a in await _actions(client, source, SELECTION, only=only)]
        assert titles == ["Remember selection", "Remember selection for branch main", "Show wake snapshot",
                          "Create document from file"], only

    # VS Code asks on every cursor move (triggerKind Automatic): no light bulb for that, but explicit asks work.
    assert await _actions(client, source, SELECTION, trigger=types.CodeActionTriggerKind.Automatic) == []
    invoked = await _actions(client, source, SELECTION, trigger=types.CodeActionTriggerKind.Invoked)
    assert len(invoked) == 4
    asked = await _actions(client, source, SELECTION, only=["refactor.mnemon"],
                           trigger=types.CodeActionTriggerKind.Automatic)
    assert [a.title for a in asked] == [a.title for a in invoked]


def _units(text: str, encoding: str) -> int:
    """Length of ``text`` in the negotiated position encoding's code units."""
    if encoding == "utf-8":
        return len(text.encode("utf-8"))
    if encoding == "utf-32":
        return len(text)
    return len(text.encode("utf-16-le")) // 2


async def test_selection_text_in_the_negotiated_encoding(client: MnemonClient, repo_dir: Path):
    encoding = client.init_result.capabilities.position_encoding or "utf-16"
    prefix, wanted = "x = '\U0001f600 caf\u00e9' # remember: ", "na\u00efve \U0001f680 launch"
    source = repo_dir / "unicode.py"
    _open(client, source, f"first line\n{prefix}{wanted}\n")
    start = _units(prefix, encoding)
    rng = types.Range(types.Position(1, start), types.Position(1, start + _units(wanted, encoding)))
    action = (await _actions(client, source, rng))[0]
    assert action.command.arguments[0] == {"uri": uri(source), "text": wanted, "range": {
        "start": {"line": 1, "character": start}, "end": {"line": 1, "character": start + _units(wanted, encoding)}}}
    await client.command(action.command.command, action.command.arguments[0])
    assert memory_file(repo_dir / ".mnemon").read_bytes() == (wanted + "\n").encode("utf-8")

    # The selection is read from the editor's buffer as changed by didChange, not from the file on disk.
    replacement = "prefer \u00e9l\u00e9gant pure functions"
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri(source), version=2),
        content_changes=[types.TextDocumentContentChangePartial(range=rng, text=replacement)]))
    rng = types.Range(types.Position(1, start), types.Position(1, start + _units(replacement, encoding)))
    action = (await _actions(client, source, rng))[0]
    assert action.command.arguments[0]["text"] == replacement
    assert wanted in source.read_text()


async def test_empty_selection_and_file_outside_workspace(client: MnemonClient, repo_dir: Path, tmp_path: Path):
    source = repo_dir / "notes.py"
    _open(client, source)
    caret = types.Range(types.Position(1, 4), types.Position(1, 4))
    assert await _actions(client, source, caret) == [
        _action("Show wake snapshot", SHOW_WAKE, {"uri": uri(source)}),
        _action("Create document from file", CREATE_DOCUMENT, {"uri": uri(source)})]
    blank = types.Range(types.Position(0, 9), types.Position(1, 0))  # only a line break selected
    assert [a.title for a in await _actions(client, source, blank)] == ["Show wake snapshot",
                                                                        "Create document from file"]
    outside = tmp_path / "outside.py"
    _open(client, outside)
    assert await _actions(client, outside, SELECTION) == []


async def test_remember_selection(client: MnemonClient, repo_dir: Path):
    source = repo_dir / "notes.py"
    _open(client, source)
    action = (await _actions(client, source, SELECTION))[0]
    root = repo_dir / ".mnemon"
    result = await client.command(action.command.command, action.command.arguments[0])
    assert result == {
        "success": True, "message": "Entry added.", "target": "memory", "entryCount": 1,
        "usage": {"used": 20, "limit": 10240}, "revision": revision_of_file(root), "changed": True,
        "added": SELECTED, "workspace": uri(repo_dir),
        # the line the selection was made on, as saved: "# keep the cache small"
        "cites": [{"path": "notes.py", "startLine": 2, "endLine": 2, "freshness": "fresh",
                   "sha256": hashlib.sha256(b"# keep the cache small\n").hexdigest()}],
    }
    assert memory_file(root).read_bytes() == b"keep the cache small\n"
    assert [(e["content"], e["target"], e.get("branches")) for e in read_entries(root)] == [(SELECTED, "memory", None)]
    assert [(m.type, m.message) for m in client.messages] == [
        (types.MessageType.Info, "mnemon: Entry added. MEMORY.md: 1 entry, 20/10240 bytes")]


async def test_remember_selection_for_branch(client: MnemonClient, repo_dir: Path):
    source = repo_dir / "notes.py"
    _open(client, source)
    action = (await _actions(client, source, SELECTION))[1]
    assert action.title == "Remember selection for branch main"
    root = repo_dir / ".mnemon"
    result = await client.command(action.command.command, action.command.arguments[0])
    assert result["added"] == SELECTED and result["success"] is True and result["changed"] is True
    assert [(e["content"], e.get("branches")) for e in read_entries(root)] == [(SELECTED, ["main"])]
    assert memory_file(root).read_bytes() == b"keep the cache small\n"
    assert [(m.type, m.message) for m in client.messages] == [
        (types.MessageType.Info, "mnemon: Entry added. MEMORY.md for branch main: 1 entry, 20/10240 bytes")]
    assert SELECTED in (await client.call("mnemon/wake", {}))["text"]
    assert SELECTED not in (await client.call("mnemon/wake", {"branch": "topic"}))["text"]


async def test_show_wake_snapshot(client: MnemonClient, repo_dir: Path):
    await client.call("mnemon/runtime/mutate", {"action": "add", "content": "Shown in the wake"})
    source = repo_dir / "notes.py"
    _open(client, source)
    action = (await _actions(client, source, SELECTION))[2]
    result = await client.command(action.command.command, action.command.arguments[0])
    wake = await client.call("mnemon/wake", {})
    state_dir = repo_dir / ".mnemon" / "state"
    [wake_file] = list(state_dir.iterdir())
    assert wake_file.name.startswith("wake-") and wake_file.suffix == ".md"
    assert wake_file.read_text() == wake["text"] + "\n"
    assert wake_file.stat().st_mode & 0o777 == 0o400
    can_show = client.spec != "neovim@v0.7"
    assert result == {"success": True, "text": wake["text"], "path": str(wake_file), "uri": uri(wake_file),
                      "shown": can_show, "revision": wake["revision"],
                      "storeRevision": wake["storeRevision"]}
    if can_show:
        assert client.shown_documents == [types.ShowDocumentParams(uri=uri(wake_file), take_focus=True)]
    else:  # Neovim 0.7 has no window/showDocument: the text comes back in the result instead
        assert client.shown_documents == []
    assert client.messages == []

    # Showing it again replaces the read-only file in place of failing on it.
    await client.call("mnemon/runtime/mutate", {"action": "add", "content": "Added later"})
    again = await client.command(SHOW_WAKE, {"uri": uri(repo_dir)})
    assert again["success"] is True and again["path"] == str(wake_file)
    assert "Added later" in wake_file.read_text()


@pytest.fixture(params=CLIENTS)
async def small(request, lsp: Launcher, repo, repo_dir: Path) -> MnemonClient:
    return await lsp.start(request.param, [repo_dir], {
        "mnemon": {"storageScope": "workspace", "runtimeMemory": {"memoryLimitBytes": 30, "maintenance": "reject"}}})


async def test_remember_over_capacity(small: MnemonClient, repo_dir: Path):
    source = repo_dir / "notes.py"
    _open(small, source)
    first = await small.command(REMEMBER, {"uri": uri(source), "text": SELECTED})
    assert first["success"] is True
    before = tree_state(repo_dir / ".mnemon")
    small.messages.clear()
    result = await small.command(REMEMBER, {"uri": uri(source), "text": "a second selection"})
    message = ("memory is over capacity: 42 of 30 UTF-8 bytes after this change (now 20); remove or shorten "
               "entries, or raise runtimeMemory.memoryLimitBytes")
    assert result == {"success": False, "error": {
        "code": "runtime-capacity", "message": message, "target": "memory", "used": 20, "projected": 42, "limit": 30}}
    assert [(m.type, m.message) for m in small.messages] == [
        (types.MessageType.Error, f"mnemon: not remembered: {message}")]
    assert tree_state(repo_dir / ".mnemon") == before


async def test_command_argument_errors(client: MnemonClient, repo_dir: Path, tmp_path: Path):
    result = await client.command(REMEMBER, {"uri": uri(tmp_path / "x.py"), "text": "outside"})
    assert result["success"] is False and result["error"]["code"] == "not-in-workspace"
    result = await client.command(REMEMBER, {"uri": uri(repo_dir / "x.py"), "text": "a \u00a7 b"})
    assert result["success"] is False and result["error"]["code"] == "invalid-input"
    assert result["error"]["field"] == "content"
    result = await client.command(REMEMBER, ["not", "an", "object"])
    rule = "must be an object, not an array (got ['not', 'an', 'object'])"
    assert result == {"success": False, "error": {"code": "invalid-input", "message": f"arguments[0]: {rule}",
                                                  "field": "arguments[0]", "rule": rule}}
    assert [m.type for m in client.messages] == [types.MessageType.Error] * 3
    assert not (repo_dir / ".mnemon").exists()


async def test_show_wake_failure_carries_no_traceback(client: MnemonClient, repo_dir: Path):
    (repo_dir / ".mnemon").mkdir()
    (repo_dir / ".mnemon" / "state").write_text("a file where the state directory belongs\n")
    try:
        result = await client.command(SHOW_WAKE, {"uri": uri(repo_dir)})
    except Exception as error:  # an error response is acceptable, a traceback in it is not
        from tests.lsp.conftest import assert_no_traceback

        assert_no_traceback(error)
    else:
        assert result["success"] is False
        assert "traceback" not in result["error"]
