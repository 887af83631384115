"""What ``mnemon-ls mcp`` says must match what the CLI says for the same operation (an attack pass found
``mnemon_memory_spaces`` naming the native provider "Mnemon" while the CLI, the language server and the
docs use the provider id ``mnemon-native``), run for real: the MCP server over stdio with the official SDK
client and the CLI in a subprocess, on one storage root."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.helpers import procs
from tests.mcp.conftest import REPO, mcp_session, text
from tests.mcp.test_mcp_server import args_for


def _cli(workspace: Path, data_dir: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mnemon_ls", *args, *args_for(workspace, data_dir)],
                          cwd=str(REPO), env=procs.child_env(), capture_output=True, text=True, encoding="utf-8",
                          timeout=procs.WAIT_SECONDS)


async def test_memory_spaces_name_the_provider_as_the_cli_does(workspace: Path, data_dir: Path) -> None:
    async with mcp_session(args_for(workspace, data_dir)) as session:
        created = await session.call_tool("mnemon_memory_spaces", {"action": "create", "name": "Project",
                                                                  "description": "decisions", "active": True})
        assert not created.is_error, text(created)
        listed = await session.call_tool("mnemon_memory_spaces", {"action": "list"})
    assert not listed.is_error
    lines = text(listed).splitlines()
    space_line = next(line for line in lines if ": Project (" in line)
    space_id = space_line.removeprefix("- ").split(":", 1)[0]
    assert space_line == f"- {space_id}: Project (active, mnemon-native)"
    cli = _cli(workspace, data_dir, "space", "list")
    assert (cli.returncode, cli.stderr) == (0, "")
    cli_line = next(line for line in cli.stdout.splitlines() if f"{space_id}  Project" in line)
    assert cli_line == f"* {space_id}  Project  (mnemon-native)"  # the same provider word on both surfaces
