"""Workspace folders and settings: several folders in one window, folder changes, and the three ways
settings arrive (``initializationOptions``, ``workspace/configuration`` per folder, and
``workspace/didChangeConfiguration``).

The server applies folder and configuration notifications asynchronously and announces nothing when
done, so the tests that follow one poll ``mnemon/status`` until it reflects the change (bounded).
Tests that show a request answered with the state from *before* such a notification are xfail bugs.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest
from lsprotocol import types

from tests.gitrepo import make_repo
from tests.lsp.conftest import CLIENTS, REQUEST_TIMEOUT, Launcher, folder, memory_file, uri
from tests.helpers.zygote import mnemon_command

WORKSPACE = {"mnemon": {"storageScope": "workspace"}}
GLOBAL = {"mnemon": {"storageScope": "global"}}


def _folders_event(added=(), removed=()) -> types.DidChangeWorkspaceFoldersParams:
    return types.DidChangeWorkspaceFoldersParams(event=types.WorkspaceFoldersChangeEvent(
        added=[folder(p) for p in added], removed=[folder(p) for p in removed]))


def default_root(data_dir: Path, folder_path: Path) -> Path:
    """``<global>/workspaces/<sha256 of the folder's real path>``, spelled out (the default storage root)."""
    digest = hashlib.sha256(os.fsencode(os.path.realpath(folder_path))).hexdigest()
    return data_dir / "workspaces" / digest


def _rows(status: dict) -> dict[str, dict]:
    return {row["uri"]: row for row in status["workspaces"]}


@pytest.fixture
def two_repos(tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "alpha", tmp_path / "beta"
    make_repo(a, "main")
    make_repo(b, "develop")
    return a, b


@pytest.mark.parametrize("caps", CLIENTS)
async def test_two_folders_workspace_scope_have_two_roots(lsp: Launcher, caps: str, two_repos):
    a, b = two_repos
    client = await lsp.start(caps, [a, b], WORKSPACE)
    rows = _rows(await client.status())
    assert {u: (r["root"], r["scope"], r["branch"]) for u, r in rows.items()} == {
        uri(a): (str(a / ".mnemon"), "workspace", "main"),
        uri(b): (str(b / ".mnemon"), "workspace", "develop"),
    }
    # With two folders open a request must name one.
    error = await client.call_error("mnemon/wake", {})
    assert error.data["code"] == "invalid-input" and error.data["field"] == "workspace"
    await client.call("mnemon/runtime/mutate", {"action": "add", "content": "alpha fact", "workspace": uri(a)})
    await client.call("mnemon/runtime/mutate", {"action": "add", "content": "beta fact",
                                                "workspace": uri(b / "src" / "deep.py")})
    assert memory_file(a / ".mnemon").read_bytes() == b"alpha fact\n"
    assert memory_file(b / ".mnemon").read_bytes() == b"beta fact\n"
    assert "beta fact" not in (await client.call("mnemon/wake", {"workspace": uri(a)}))["text"]
    assert not lsp.data_dir.exists()


@pytest.mark.parametrize("caps", CLIENTS)
async def test_two_folders_global_scope_share_one_root(lsp: Launcher, caps: str, two_repos):
    a, b = two_repos
    client = await lsp.start(caps, [a, b], GLOBAL)
    rows = _rows(await client.status())
    assert {r["root"] for r in rows.values()} == {str(lsp.data_dir)}
    assert {r["scope"] for r in rows.values()} == {"global"}
    await client.call("mnemon/runtime/mutate", {"action": "add", "content": "shared fact", "workspace": uri(a)})
    assert memory_file(lsp.data_dir).read_bytes() == b"shared fact\n"
    wake_a = await client.call("mnemon/wake", {"workspace": uri(a)})
    wake_b = await client.call("mnemon/wake", {"workspace": uri(b)})
    assert "shared fact" in wake_b["text"] and wake_a["storeRevision"] == wake_b["storeRevision"]
    assert wake_a["revision"] != wake_b["revision"]  # the snapshots name different branches
    assert (wake_a["branch"], wake_b["branch"]) == ("main", "develop")
    assert not (a / ".mnemon").exists() and not (b / ".mnemon").exists()


@pytest.mark.parametrize("caps", CLIENTS)
async def test_did_change_workspace_folders(lsp: Launcher, caps: str, two_repos, tmp_path: Path):
    a, b = two_repos
    client = await lsp.start(caps, [a], WORKSPACE)
    client.workspace_did_change_workspace_folders(_folders_event(added=[b]))
    status = await client.eventually("mnemon/status", {}, lambda s: len(s["workspaces"]) == 2)
    assert _rows(status)[uri(b)]["root"] == str(b / ".mnemon")
    assert _rows(status)[uri(b)]["branch"] == "develop"
    await client.call("mnemon/runtime/mutate", {"action": "add", "content": "beta fact", "workspace": uri(b)})
    assert memory_file(b / ".mnemon").read_bytes() == b"beta fact\n"

    client.workspace_did_change_workspace_folders(_folders_event(removed=[a]))
    status = await client.eventually("mnemon/status", {}, lambda s: len(s["workspaces"]) == 1)
    assert [r["uri"] for r in status["workspaces"]] == [uri(b)]
    error = await client.call_error("mnemon/wake", {"workspace": uri(a)})
    assert error.data == {"code": "not-in-workspace", "field": "workspace", "uri": uri(a)}
    # The one folder left is the default again.
    assert (await client.call("mnemon/wake", {}))["workspace"] == uri(b)
    assert not (a / ".mnemon").exists()


@pytest.mark.parametrize("caps", ["visual-studio-code", "neovim@v0.7"])
async def test_request_after_folder_removal_is_not_served_for_it(lsp: Launcher, caps: str, two_repos):
    a, b = two_repos
    client = await lsp.start(caps, [a, b], WORKSPACE)
    client.workspace_did_change_workspace_folders(_folders_event(removed=[a]))
    error = await client.call_error("mnemon/runtime/mutate", {"action": "add", "content": "late", "workspace": uri(a)})
    assert error.data["code"] == "not-in-workspace"
    assert not (a / ".mnemon").exists()


@pytest.mark.parametrize("caps", CLIENTS)
async def test_settings_from_initialization_options(lsp: Launcher, caps: str, repo, repo_dir: Path):
    client = await lsp.start(caps, [repo_dir], {"mnemon": {
        "storageScope": "workspace", "wakeBudgetChars": 2048, "trace": "verbose",
        "runtimeMemory": {"memoryLimitBytes": 2000, "userLimitBytes": 1000}}})
    [row] = (await client.status())["workspaces"]
    assert (row["scope"], row["root"], row["usage"]) == ("workspace", str(repo_dir / ".mnemon"), {
        "user": {"used": 0, "limit": 1000}, "memory": {"used": 0, "limit": 2000}})
    for i in range(40):
        await client.call("mnemon/runtime/mutate", {"action": "add", "content": f"fact {i:02d} " + "x" * 30})
    wake = await client.call("mnemon/wake", {})
    assert wake["chars"] <= 2048 and wake["omitted"] > 0


@pytest.mark.parametrize("caps", CLIENTS)
async def test_flat_initialization_options_and_invalid_settings(lsp: Launcher, caps: str, repo, repo_dir: Path):
    # The object itself may be the section; an invalid value is reported once and left out: the other
    # settings stay (before, every setting fell back to its default and the folder moved to another root)
    client = await lsp.start(caps, [repo_dir], {"storageScope": "workspace", "wakeBudgetChars": 5,
                                                "recallPolicy": "bogus"})
    [row] = (await client.status())["workspaces"]
    assert row["scope"] == "workspace" and row["root"] == str(repo_dir / ".mnemon")
    assert [(m.type, m.message) for m in client.messages] == [
        (types.MessageType.Warning,
         f"mnemon-ls: invalid setting for {uri(repo_dir)}: wakeBudgetChars: must be an integer in 1024..4194304 "
         "(got 5); its default is used"),
        (types.MessageType.Warning,
         f"mnemon-ls: invalid setting for {uri(repo_dir)}: recallPolicy: must be one of auto, strict-v2, "
         "strict-v1, balanced-v1, exhaustive-v1 (got 'bogus'); its default is used")]
    # a bad change later keeps the root too
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"mnemon": {"storageScope": "workspace", "recallPolicy": "lenient"}}))
    row = (await client.eventually("mnemon/status", {}, lambda s: len(client.messages) >= 3))["workspaces"][0]
    assert row["root"] == str(repo_dir / ".mnemon")


async def test_an_invalid_storage_setting_keeps_the_folder_where_it_is(lsp: Launcher, repo, repo_dir: Path):
    client = await lsp.start("neovim@v0.7", [repo_dir], {"storageScope": "workspace"})  # settings pushed
    await client.call("mnemon/runtime/mutate", {"action": "add", "content": "stays in the workspace root"})
    shown = client.expect("window/showMessage")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"mnemon": {"storageScope": "workspac"}}))
    message = await client.received(shown)
    assert message.message == (f"mnemon-ls: invalid setting for {uri(repo_dir)}: storageScope: must be one of "
                               "global, workspace, workspaces, custom (got 'workspac')")
    [row] = (await client.status())["workspaces"]
    assert row["root"] == str(repo_dir / ".mnemon")  # not moved to the default root
    assert "stays in the workspace root" in (await client.call("mnemon/wake", {}))["text"]
    assert not default_root(lsp.data_dir, repo_dir).exists()


@pytest.mark.parametrize("caps", ["visual-studio-code", "neovim"])
async def test_settings_from_workspace_configuration_per_folder(lsp: Launcher, caps: str, two_repos):
    a, b = two_repos
    client = await lsp.start(caps, [a, b], None, configuration={
        uri(a): {"storageScope": "workspace", "runtimeMemory": {"memoryLimitBytes": 2048}},
        uri(b): {"runtimeMemory": {"userLimitBytes": 512}},
    })
    assert [[(i.scope_uri, i.section) for i in p.items] for p in client.config_requests] == [
        [(uri(a), "mnemon"), (uri(b), "mnemon")]]
    status = await client.eventually("mnemon/status", {},
                                      lambda s: _rows(s)[uri(a)]["scope"] == "workspace")
    rows = _rows(status)
    assert (rows[uri(a)]["root"], rows[uri(a)]["usage"]["memory"]["limit"]) == (str(a / ".mnemon"), 2048)
    assert (rows[uri(b)]["scope"], rows[uri(b)]["root"]) == ("workspaces", str(default_root(lsp.data_dir, b)))
    assert (rows[uri(b)]["usage"]["user"]["limit"], rows[uri(b)]["usage"]["memory"]["limit"]) == (512, 10240)


async def test_neovim_07_is_never_asked_for_configuration(lsp: Launcher, repo, repo_dir: Path):
    client = await lsp.start("neovim@v0.7", [repo_dir], WORKSPACE)
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=WORKSPACE))
    await client.status()
    assert client.config_requests == []


@pytest.mark.parametrize("caps", CLIENTS)
async def test_did_change_configuration(lsp: Launcher, caps: str, repo, repo_dir: Path):
    client = await lsp.start(caps, [repo_dir], WORKSPACE)
    await client.call("mnemon/runtime/mutate", {"action": "add", "content": "in the workspace root"})
    if client.supports_configuration():  # the server pulls the section again
        client.set_configuration({"storageScope": "global", "runtimeMemory": {"memoryLimitBytes": 4096}},
                                 section="mnemon")
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    else:  # Neovim 0.7 pushes the settings in the notification
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
            settings={"mnemon": {"storageScope": "global", "runtimeMemory": {"memoryLimitBytes": 4096}}}))
    status = await client.eventually("mnemon/status", {}, lambda s: s["workspaces"][0]["scope"] == "global")
    [row] = status["workspaces"]
    assert (row["root"], row["usage"]["memory"]) == (str(lsp.data_dir), {"used": 0, "limit": 4096})
    await client.call("mnemon/runtime/mutate", {"action": "add", "content": "in the global root"})
    assert memory_file(lsp.data_dir).read_bytes() == b"in the global root\n"
    assert memory_file(repo_dir / ".mnemon").read_bytes() == b"in the workspace root\n"


@pytest.mark.parametrize("caps", ["visual-studio-code", "neovim"])
async def test_request_during_initial_configuration_uses_folder_settings(lsp: Launcher, caps: str, repo,
                                                                         repo_dir: Path):
    client = await lsp.start(caps, [repo_dir], None, ready=False, hold_configuration=True,
                             configuration={uri(repo_dir): {"storageScope": "workspace"}})
    await asyncio.wait_for(client.config_asked.wait(), REQUEST_TIMEOUT)
    early = asyncio.ensure_future(client.call("mnemon/runtime/mutate", {"action": "add", "content": "early"}))
    # Bounded observation: does the server answer while its configuration is still outstanding?
    await asyncio.wait({early}, timeout=1.0)
    client.config_gate.set()
    result = await early
    assert result["success"] is True
    assert not lsp.data_dir.exists(), "written to the global root"
    assert memory_file(repo_dir / ".mnemon").read_bytes() == b"early\n"


async def test_request_after_did_change_configuration_uses_new_settings(lsp: Launcher, repo, repo_dir: Path):
    client = await lsp.start("neovim@v0.7", [repo_dir], WORKSPACE)
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=GLOBAL))
    await client.call("mnemon/runtime/mutate", {"action": "add", "content": "after the change"})
    await client.eventually("mnemon/status", {}, lambda s: s["workspaces"][0]["scope"] == "global")
    assert not (repo_dir / ".mnemon").exists(), "written with the old settings"
    assert memory_file(lsp.data_dir).read_bytes() == b"after the change\n"


async def test_exit_is_prompt_right_after_a_settings_change(lsp: Launcher, repo, repo_dir: Path):
    client = await lsp.start("neovim@v0.7", [repo_dir], WORKSPACE)
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=GLOBAL))
    await asyncio.wait_for(client.shutdown_async(None), REQUEST_TIMEOUT)
    client.exit(None)
    client.exited = True
    try:  # a server stuck on the pending settings change never ends: waited for with the safety bound (the
        # editors give it 2 s, which a loaded machine exceeds; the bound only says "hung")
        code = await asyncio.wait_for(client._server.wait(), REQUEST_TIMEOUT)
    except asyncio.TimeoutError:
        raise AssertionError(f"the server did not exit within {REQUEST_TIMEOUT} s of `exit`") from None
    assert code == 0


@pytest.mark.parametrize("caps", CLIENTS)
async def test_folder_that_cannot_be_used_is_reported(lsp: Launcher, caps: str, repo, repo_dir: Path, tmp_path: Path):
    client = await lsp.start(caps, [repo_dir], WORKSPACE)
    missing = tmp_path / "gone"
    shown = client.expect("window/showMessage")
    client.workspace_did_change_workspace_folders(_folders_event(added=[missing]))
    message = await client.received(shown)
    assert (message.type, message.message) == (
        types.MessageType.Warning,
        f"mnemon-ls: cannot use workspace folder {uri(missing)}: workspace: {missing} does not exist")
    assert [r["uri"] for r in (await client.status())["workspaces"]] == [uri(repo_dir)]


async def test_folder_that_is_a_symlink_loop_is_reported_as_one(lsp: Launcher, repo, repo_dir: Path, tmp_path: Path):
    """It was reported as "does not exist" (``Path.exists`` is False for ELOOP); a folder under it too."""
    client = await lsp.start("neovim@v0.7", [repo_dir], WORKSPACE)
    loop, other = tmp_path / "loop", tmp_path / "other"
    loop.symlink_to(other)
    other.symlink_to(loop)
    for folder, rule in [(loop, f"{loop} is a symbolic link loop (ELOOP): following it never reaches a directory"),
                         (loop / "sub", f"{loop} is a symbolic link loop (ELOOP), so {loop / 'sub'} cannot exist "
                                        "under it")]:
        shown = client.expect("window/showMessage")
        client.workspace_did_change_workspace_folders(_folders_event(added=[folder]))
        message = await client.received(shown)
        assert (message.type, message.message) == (
            types.MessageType.Warning, f"mnemon-ls: cannot use workspace folder {uri(folder)}: workspace: {rule}")
    assert [r["uri"] for r in (await client.status())["workspaces"]] == [uri(repo_dir)]


async def test_root_uri_without_workspace_folders(lsp: Launcher, repo, repo_dir: Path):
    client = await lsp.start("neovim@v0.7", [], WORKSPACE, root_uri=uri(repo_dir))
    [row] = (await client.status())["workspaces"]
    assert (row["uri"], row["root"], row["branch"]) == (uri(repo_dir), str(repo_dir / ".mnemon"), "main")
    assert (await client.call("mnemon/runtime/mutate", {"action": "add", "content": "x"}))["workspace"] == uri(repo_dir)


async def test_no_folder_open(lsp: Launcher):
    client = await lsp.start("visual-studio-code", [], None)
    assert (await client.status())["workspaces"] == []
    error = await client.call_error("mnemon/wake", {})
    assert (error.code, error.message, error.data) == (
        -32016, "workspace: no workspace folder is open", {"code": "not-in-workspace", "field": "workspace"})


@pytest.mark.parametrize("caps", CLIENTS)
async def test_default_root_is_the_clis_and_outside_the_repository(lsp: Launcher, caps: str, repo, repo_dir: Path):
    # No settings at all: the server and the CLI (run in a subdirectory of the repository, no --workspace)
    # resolve one root for the folder, under the global data dir, and write nothing into the repository.
    client = await lsp.start(caps, [repo_dir], None)
    await client.call("mnemon/runtime/mutate", {"action": "add", "content": "written by the editor"})
    await client.call("mnemon/runtime/mutate", {"action": "add", "target": "user", "content": "Name: Ada"})
    [row] = (await client.status())["workspaces"]
    expected = default_root(lsp.data_dir, repo_dir)
    assert (row["scope"], row["root"], row["userRoot"]) == ("workspaces", str(expected), str(lsp.data_dir))
    assert memory_file(expected).read_bytes() == b"written by the editor\n"
    assert memory_file(lsp.data_dir, "USER.md").read_bytes() == b"Name: Ada\n"
    assert not (repo_dir / ".mnemon").exists()
    assert not str(expected).startswith(str(repo_dir.resolve()) + os.sep)
    sub = repo_dir / "pkg" / "deep"
    sub.mkdir(parents=True)
    cli = subprocess.run(mnemon_command("wake", "--json"), cwd=sub, env=lsp.env(),
                         capture_output=True, text=True, timeout=60)
    assert cli.returncode == 0, cli.stderr
    wake = json.loads(cli.stdout)
    assert wake["root"] == str(expected)
    assert "written by the editor" in wake["text"] and "Name: Ada" in wake["text"]
