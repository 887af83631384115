"""``mnemon.server.rememberSelection`` (the command both editors' "Remember Selection" runs): a selected
comment is remembered without its comment markers (by the language the client opened the document with,
an explicit ``languageId``, or the file name); ``quiet`` leaves the message to the client; a write into an
inactive space says what activating it changed; observers hear of the command's writes as of the requests'.
"""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from mnemon_ls.host import WorkspaceHost
from mnemon_ls.settings import load_settings
from tests.lsp.conftest import Launcher, MnemonClient, read_entries, uri

REMEMBER = "mnemon.server.rememberSelection"
CODE_ACTION_RANGE = types.Range(types.Position(0, 0), types.Position(2, 0))


def _open(client: MnemonClient, path: Path, text: str, language: str) -> None:
    path.write_text(text)
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        types.TextDocumentItem(uri=uri(path), language_id=language, version=1, text=text)))


def _contents(repo_dir: Path) -> list[str]:
    return [e["content"] for e in read_entries(repo_dir / ".mnemon")]


async def test_a_selected_comment_is_remembered_without_its_markers(client: MnemonClient, repo_dir: Path) -> None:
    source = repo_dir / "deploy.py"
    _open(client, source, "# Deploy with make release\n# (needs the VPN)\nrelease()\n", "python")
    params = types.CodeActionParams(types.TextDocumentIdentifier(uri(source)), CODE_ACTION_RANGE,
                                    types.CodeActionContext(diagnostics=[]))
    action = (await client.text_document_code_action_async(params))[0]
    assert action.command.arguments[0]["text"] == "# Deploy with make release\n# (needs the VPN)\n"
    result = await client.command(action.command.command, action.command.arguments[0])
    assert result["added"] == "Deploy with make release (needs the VPN)"

    # Not opened in the editor: the file name says SQL.
    await client.command(REMEMBER, {"uri": uri(repo_dir / "schema.sql"), "text": "-- orders are never deleted"})
    # The client names the language: it wins over the file name.
    await client.command(REMEMBER, {"uri": uri(repo_dir / "notes.txt"), "text": "// the cache is per tenant",
                                    "languageId": "typescript"})
    # Lisp and a block comment.
    await client.command(REMEMBER, {"uri": uri(repo_dir / "init.el"), "text": ";; the atom holds the session"})
    await client.command(REMEMBER, {"uri": uri(repo_dir / "Main.java"), "text": "/**\n * Retries three times.\n */"})
    # Code (a trailing comment stays with it) and plain text keep their characters (whitespace runs are
    # collapsed, as for any selection).
    await client.command(REMEMBER, {"uri": uri(source), "text": "retries = 3  # three is enough"})
    await client.command(REMEMBER, {"uri": uri(repo_dir / "todo.txt"), "text": "# not a comment in plain text"})
    assert _contents(repo_dir) == [
        "Deploy with make release (needs the VPN)", "orders are never deleted", "the cache is per tenant",
        "the atom holds the session", "Retries three times.", "retries = 3 # three is enough",
        "# not a comment in plain text"]


async def test_quiet_leaves_the_message_to_the_client(client: MnemonClient, repo_dir: Path) -> None:
    source = repo_dir / "notes.py"
    added = await client.command(REMEMBER, {"uri": uri(source), "text": "# quiet one", "quiet": True})
    assert (added["success"], added["added"]) == (True, "quiet one")
    refused = await client.command(REMEMBER, {"uri": uri(source), "text": "a \u00a7 b", "quiet": True})
    assert (refused["success"], refused["error"]["field"]) == (False, "content")
    loud = await client.command(REMEMBER, {"uri": uri(source), "text": "# loud one"})
    assert loud["success"] is True
    # Only the last one was shown by the server (messages arrive before the command's answer).
    assert [(m.type, m.message) for m in client.messages] == [
        (types.MessageType.Info, "mnemon: Entry added. MEMORY.md: 2 entries, 21/10240 bytes")]
    bad = await client.command(REMEMBER, {"uri": uri(source), "text": "x", "quiet": "yes"})
    assert (bad["success"], bad["error"]["field"]) == (False, "quiet")


def _spaces(repo_dir: Path) -> str:
    """A native space Default (active) and Team (inactive); returns Team's id."""
    host = WorkspaceHost(repo_dir, load_settings({"storageScope": "workspace"}))
    try:
        host.spaces.create_space("Default", "General facts", active=True)
        return host.spaces.create_space("Team", "What the team agreed", active=False).record.id
    finally:
        host.close()


async def test_a_write_into_an_inactive_space_says_what_activating_it_changed(lsp: Launcher, repo,
                                                                           repo_dir: Path) -> None:
    team = _spaces(repo_dir)
    client = await lsp.start("neovim", [repo_dir], {"mnemon": {"storageScope": "workspace"}})
    result = await client.command(REMEMBER, {"uri": uri(repo_dir / "a.py"), "text": "# We deploy on Fridays",
                                             "spaceId": "Team"})
    assert (result["status"], result["activated"], result["spaceId"]) == ("committed", True, team)
    assert result["activeSpaces"] == [{"id": "default", "name": "Default"}, {"id": team, "name": "Team"}]
    assert [(m.type, m.message) for m in client.messages] == [(types.MessageType.Info, (
        "mnemon: Remembered in Team. (space Team) Team was inactive: this write made it active. 2 spaces are active "
        "now (Default, Team), so a remember that names no space is refused until only one is: name the space "
        "(name Team), or make Team inactive again with `mnemon-ls space deactivate Team`."))]
    recalled = await client.call("mnemon/recall", {"query": "deploy Fridays", "mode": "keyword"})
    assert [r["content"] for r in recalled["results"]] == ["We deploy on Fridays"]


async def test_observers_hear_of_the_commands_writes(lsp: Launcher, repo, repo_dir: Path) -> None:
    """A MEMORY.md add past the limit archives; the command, like ``mnemon/runtime/mutate``, announces it
    with ``mnemon/maintenanceCompleted`` (VS Code's Remember Selection runs the command)."""
    client = await lsp.start("visual-studio-code", [repo_dir], {"mnemon": {
        "storageScope": "workspace", "runtimeMemory": {"memoryLimitBytes": 200}}})
    mark = client.mark()
    source = repo_dir / "facts.py"
    n = 0
    while True:
        result = await client.command(REMEMBER, {"uri": uri(source), "text": f"# fact {n}: " + "x" * 60, "quiet": True})
        assert result["success"] is True, result
        n += 1
        if "maintenance" in result:
            break
    note = await client.note("mnemon/maintenanceCompleted", since=mark)
    assert note["workspace"] == uri(repo_dir) and note["summary"] == result["maintenance"]["summary"]


async def test_a_selection_cites_the_lines_it_was_selected_from(client: MnemonClient, repo_dir: Path) -> None:
    """Remember Selection cites the saved lines the selection covers (issue 24 item 2): from the code action (its
    range), from a client's own range (an end inside a line counts that line; an end at character 0 does not),
    and not at all when the editor's lines are not the saved ones (the citation would hash other text)."""
    import hashlib

    text = "# Deploy with make release\n# (needs the VPN)\nrelease()\n"
    source = repo_dir / "deploy.py"
    _open(client, source, text, "python")
    params = types.CodeActionParams(types.TextDocumentIdentifier(uri(source)), CODE_ACTION_RANGE,
                                    types.CodeActionContext(diagnostics=[]))
    action = (await client.text_document_code_action_async(params))[0]
    assert action.command.arguments[0]["range"] == {"start": {"line": 0, "character": 0},
                                                   "end": {"line": 2, "character": 0}}
    result = await client.command(action.command.command, action.command.arguments[0])
    lines_1_2 = hashlib.sha256(b"# Deploy with make release\n# (needs the VPN)\n").hexdigest()
    assert result["cites"] == [{"path": "deploy.py", "startLine": 1, "endLine": 2, "sha256": lines_1_2,
                                "freshness": "fresh"}]

    one = await client.command(REMEMBER, {"uri": uri(source), "text": "release()", "range": {
        "start": {"line": 2, "character": 0}, "end": {"line": 2, "character": 9}}})
    assert [(c["startLine"], c["endLine"]) for c in one["cites"]] == [(3, 3)]

    # The person types without saving: the selected lines are no longer the file's lines there.
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        types.VersionedTextDocumentIdentifier(version=2, uri=uri(source)),
        [types.TextDocumentContentChangeWholeDocument(text="# Deploy with make ship\n" + text)]))
    unsaved = await client.command(REMEMBER, {"uri": uri(source), "text": "# Deploy with make ship", "range": {
        "start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 23}}})
    assert unsaved["success"] is True and "cites" not in unsaved
    # A file no citation may name (the storage root's own MEMORY.md) is remembered uncited, not refused.
    bad = await client.command(REMEMBER, {"uri": uri(repo_dir / "missing.py"), "text": "gone", "range": {
        "start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 4}}})
    assert bad["success"] is True and "cites" not in bad
    wrong = await client.command(REMEMBER, {"uri": uri(source), "text": "x", "range": {"start": {"line": -1}}})
    assert (wrong["success"], wrong["error"]["field"]) == (False, "range.start.line")
    assert _contents(repo_dir)[-1] == "gone"
