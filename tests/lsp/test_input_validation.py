"""Bad input at the protocol's edges: command arguments and workspace URIs.

``workspace/executeCommand`` takes exactly one argument object; anything else is ``invalid-input`` in
the command's own ``{success: false, error}`` answer (never a TypeError). A NUL in a URI is
``invalid-input`` with no traceback in the log. ``""``, ``file:`` and ``file://`` never mean the
server's working directory: as a request's ``workspace`` they are ``invalid-input``; as a folder of
``initialize`` or ``didChangeWorkspaceFolders`` they are skipped with a warning.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.lsp.conftest import Launcher
from tests.lsp.rawclient import RawServer, frame

COMMANDS = ["mnemon.server.rememberSelection", "mnemon.server.showWakeSnapshot",
            "mnemon.server.createDocumentFromFile"]


async def _server(lsp: Launcher, cwd: Path, folders: list[Path], **params) -> RawServer:
    server = RawServer()
    await server.start(lsp.env(), cwd)
    response = await server.initialize(folders, {"mnemon": {"storageScope": "workspace"}}, **params)
    assert "result" in response, response
    return server


@pytest.fixture
async def raw(lsp: Launcher, repo, repo_dir: Path):
    # The working directory is the workspace itself, so any fallback to it would go unnoticed.
    server = await _server(lsp, repo_dir, [repo_dir])
    yield server
    await server.close()


def _execute(server: RawServer, command: str, arguments: object, *, absent: bool = False) -> int:
    msg_id = server.next_id()
    params: dict[str, object] = {"command": command}
    if not absent:
        params["arguments"] = arguments
    server.write(frame({"jsonrpc": "2.0", "id": msg_id, "method": "workspace/executeCommand", "params": params}))
    return msg_id


@pytest.mark.parametrize("command", COMMANDS)
async def test_command_argument_count(raw: RawServer, repo_dir: Path, command: str):
    argument = {"uri": (repo_dir / "x.py").as_uri(), "text": "t"}
    for arguments, absent, count in ((None, True, 0), (None, False, 0), ([], False, 0),
                                     ([argument, argument], False, 2)):
        response = await raw.response(_execute(raw, command, arguments, absent=absent))
        rule = f"must hold exactly one argument object (got {count})"
        assert response.get("result") == {"success": False, "error": {
            "code": "invalid-input", "message": f"arguments: {rule}", "field": "arguments", "rule": rule}}, response
    assert not (repo_dir / ".mnemon").exists()
    assert b"Traceback" not in raw.stderr


async def test_unknown_command_and_non_list_arguments(raw: RawServer):
    error = (await raw.response(_execute(raw, "mnemon.server.nope", [{}])))["error"]
    assert (error["code"], error["data"]["code"]) == (-32602, "invalid-input")
    error = (await raw.response(_execute(raw, COMMANDS[0], {"uri": "file:///x"})))["error"]
    assert (error["code"], error["data"]["code"], error["data"]["field"]) == (-32602, "invalid-input", "params.arguments")
    assert b"Traceback" not in raw.stderr


async def test_nul_in_a_uri_is_invalid_input(raw: RawServer, repo_dir: Path):
    for workspace in (repo_dir.as_uri() + "/a%00b", str(repo_dir) + "/a\u0000b", repo_dir.as_uri() + "/a\u0000b"):
        error = (await raw.call("mnemon/wake", {"workspace": workspace}))["error"]
        assert (error["code"], error["data"]["code"], error["data"]["field"]) == (-32602, "invalid-input", "workspace")
        assert "NUL" in error["data"]["rule"]
    response = await raw.response(_execute(raw, COMMANDS[0], [{"uri": repo_dir.as_uri() + "/a%00.py", "text": "t"}]))
    assert response["result"]["success"] is False
    assert (response["result"]["error"]["code"], response["result"]["error"]["field"]) == ("invalid-input", "uri")
    assert b"Traceback" not in raw.stderr and b"internal" not in raw.stderr
    assert not (repo_dir / ".mnemon").exists()


@pytest.mark.parametrize("workspace", ["", "file:", "file://", "file:relative/dir"])
async def test_empty_workspace_param_is_invalid_input(raw: RawServer, repo_dir: Path, workspace: str):
    for method, params in (("mnemon/wake", {}), ("mnemon/runtime/mutate", {"action": "add", "content": "x"}),
                           ("mnemon/documents/list", {}), ("mnemon/spaces/list", {})):
        error = (await raw.call(method, params | {"workspace": workspace}))["error"]
        assert (error["code"], error["data"]["code"], error["data"]["field"]) == (
            -32602, "invalid-input", "workspace"), (method, error)
    assert not (repo_dir / ".mnemon").exists()


@pytest.mark.parametrize("root", ["", "file:", "file://"])
async def test_empty_root_uri_is_skipped_with_a_warning(lsp: Launcher, tmp_path: Path, root: str):
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    server = await _server(lsp, cwd, [], rootUri=root)
    try:
        warning = await server.notification("window/showMessage", lambda p: "cannot use workspace folder" in p["message"])
        assert warning["type"] == 2 and repr(root) in warning["message"]
        status = (await server.call("mnemon/status", {}))["result"]
        assert status["workspaces"] == []
        assert not (cwd / ".mnemon").exists()
    finally:
        await server.close()


async def test_empty_folder_uris_are_skipped(lsp: Launcher, repo, repo_dir: Path, tmp_path: Path):
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    server = RawServer()
    await server.start(lsp.env(), cwd)
    try:
        folders = [{"uri": "file://", "name": "empty"}, {"uri": repo_dir.as_uri(), "name": "repo"}]
        response = await server.call("initialize", {"processId": None, "capabilities": {}, "workspaceFolders": folders,
                                                    "initializationOptions": {"storageScope": "workspace"}})
        assert "result" in response
        server.notify("initialized", {})
        await server.notification("window/showMessage", lambda p: "'file://'" in p["message"])
        status = (await server.call("mnemon/status", {}))["result"]
        assert [w["uri"] for w in status["workspaces"]] == [repo_dir.as_uri()]

        server.notify("workspace/didChangeWorkspaceFolders",
                      {"event": {"added": [{"uri": "file:", "name": "bad"}, {"uri": "", "name": "worse"}],
                                 "removed": []}})
        for bad in ("'file:'", "''"):
            await server.notification("window/showMessage", lambda p, bad=bad: f"folder {bad[1:-1]}:" in p["message"]
                                      or bad in p["message"])
        status = (await server.call("mnemon/status", {}))["result"]
        assert [w["uri"] for w in status["workspaces"]] == [repo_dir.as_uri()]
        assert not (cwd / ".mnemon").exists()
    finally:
        await server.close()
