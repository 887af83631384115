"""``mnemon-ls mcp`` driven by a client nobody on this project wrote: the MCP Inspector CLI (npm
``@modelcontextprotocol/inspector``). ``.ci/run`` installs it and sets ``MNEMON_MCP_INSPECTOR`` to its
``mcp-inspector`` binary; without that variable the test is skipped (a developer may not have it)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.gitrepo import create_branch, make_repo, switch
from tests.helpers.zygote import mnemon_command
from tests.mcp.conftest import REPO, server_env

INSPECTOR = os.environ.get("MNEMON_MCP_INSPECTOR")
pytestmark = pytest.mark.skipif(not INSPECTOR, reason="MNEMON_MCP_INSPECTOR is not set (.ci/run installs the MCP Inspector)")


def inspector(workspace: Path, data_dir: Path, *args: str) -> dict:
    proc = subprocess.run([INSPECTOR, "--cli", *mnemon_command("mcp", "--workspace", str(workspace), "--scope", "custom",
                                                                "--data-dir", str(data_dir)), *args],
                          capture_output=True, text=True, env=server_env(), cwd=str(REPO), timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def tool(workspace: Path, data_dir: Path, tool_name: str, **arguments: str) -> str:
    result = inspector(workspace, data_dir, "--method", "tools/call", "--tool-name", tool_name,
                       *[f"--tool-arg={k}={v}" for k, v in arguments.items()])
    assert result["isError"] is False, result
    return result["content"][0]["text"]


def test_the_mcp_inspector_lists_reads_adds_remembers_and_recalls_in_a_real_repository(tmp_path: Path) -> None:
    assert Path(INSPECTOR).exists(), f"MNEMON_MCP_INSPECTOR={INSPECTOR} does not exist"
    repo_dir, data_dir = tmp_path / "repo", tmp_path / "root"
    repo = make_repo(repo_dir)
    create_branch(repo, "other")
    names = {t["name"] for t in inspector(repo_dir, data_dir, "--method", "tools/list")["tools"]}
    assert {"mnemon_wake", "mnemon_runtime_memory", "mnemon_remember", "mnemon_recall"} <= names
    assert tool(repo_dir, data_dir, "mnemon_runtime_memory", action="add",
                content="The Inspector added this fact").startswith("Entry added. MEMORY.md: 1 entry")
    wake = inspector(repo_dir, data_dir, "--method", "resources/read", "--uri", "mnemon://wake")
    assert "The Inspector added this fact" in wake["contents"][0]["text"]
    tool(repo_dir, data_dir, "mnemon_memory_spaces", action="create", name="Project", description="decisions")
    assert tool(repo_dir, data_dir, "mnemon_remember", content="Branch-only: the OTTER flag is on",
                scope_to_branch="true").startswith("committed:")
    assert tool(repo_dir, data_dir, "mnemon_recall", query="OTTER flag").startswith("1. Branch-only: the OTTER flag is on")
    switch(repo, "other")
    assert "No memory matched." in tool(repo_dir, data_dir, "mnemon_recall", query="OTTER flag")
    # The editor's surfaces read the same store: the CLI's wake shows the fact the Inspector added.
    cli = subprocess.run(mnemon_command("wake", "--workspace", str(repo_dir), "--scope", "custom",
                          "--data-dir", str(data_dir)), capture_output=True, text=True, env=server_env(),
                         cwd=str(REPO), timeout=60)
    assert "The Inspector added this fact" in cli.stdout


def test_every_kind_of_tool_argument_is_usable_from_the_inspector_cli(tmp_path: Path) -> None:
    """``--tool-arg limit=3`` was refused ("input should be a valid integer, not a string"): the Inspector
    converts a typed text by the schema's top-level ``type``, which an optional argument's ``anyOf`` hid.
    Integers, booleans and arrays are usable now; a value of the wrong kind is still refused. (The Inspector turns
    a number it cannot read, ``depth=many``, into ``null``: an optional argument's default, as any client's
    ``null`` is; a text that is not a JSON array reaches the server as text.)"""
    repo_dir, data_dir = tmp_path / "repo", tmp_path / "root"
    make_repo(repo_dir)
    tool(repo_dir, data_dir, "mnemon_memory_spaces", action="create", name="Project", description="decisions")
    for n in range(4):
        assert tool(repo_dir, data_dir, "mnemon_remember", content=f"Heron fact number {n}", importance="4",
                    tags='["birds", "heron"]').startswith("committed:")
    recalled = tool(repo_dir, data_dir, "mnemon_recall", query="heron fact", limit="2")
    assert [line[:3] for line in recalled.splitlines() if line[:1].isdigit()] == ["1. ", "2. "]
    tool(repo_dir, data_dir, "mnemon_document_search", query="heron", include_archived="true", limit="3")  # not refused
    refused = inspector(repo_dir, data_dir, "--method", "tools/call", "--tool-name", "mnemon_remember",
                        "--tool-arg=content=Heron fact", "--tool-arg=tags=birds, heron")
    assert refused["isError"] is True and "tags: input should be an array, not a string" in refused["content"][0]["text"]
