"""``mnemon-ls mcp`` answers ``initialize`` before it builds its tools (issue 27 item 2: no timing here; the
figures are bench/mcp_start.py's): the command is parsed without the operation registry, the tools, resources
and prompts are registered at the first request after ``initialize`` (nor is the workspace host's code imported
before it), and a client sees the same capabilities,
tools, resources and prompts as from a server that registered them at once."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from mnemon_ls.mcp.server import MnemonMcp
from mnemon_ls.mcp.workspaces import McpWorkspaces
from mnemon_ls.settings import load_settings
from tests.mcp.conftest import mcp_session, server_env

DEFERRED = """
import json, sys
from mnemon_ls.mcp.server import MnemonMcp
from mnemon_ls.mcp.workspaces import McpWorkspaces
from mnemon_ls.settings import load_settings
app = MnemonMcp(McpWorkspaces(load_settings({}), sys.argv[1]), defer=True)
before = {"registry": "mnemon_ls.ops.registry" in sys.modules, "tools": len(app.server._tool_manager.list_tools()),
          "host": sorted({"mnemon_ls.host", "mnemon_ls.runtime.model", "mnemon_ls.packgate"} & set(sys.modules))}
app.register()
app.register()  # once
after = {"registry": "mnemon_ls.ops.registry" in sys.modules, "tools": len(app.server._tool_manager.list_tools())}
print(json.dumps([before, after]))
"""


def test_a_deferred_server_builds_nothing_until_asked(workspace: Path) -> None:
    out = subprocess.run([sys.executable, "-c", DEFERRED, str(workspace)], capture_output=True, text=True, check=True,
                         env=server_env()).stdout
    before, after = json.loads(out)
    eager = MnemonMcp(McpWorkspaces(load_settings({}), str(workspace)))
    assert before == {"registry": False, "tools": 0, "host": []}  # the host is built at the first call
    assert after == {"registry": True, "tools": len(eager.server._tool_manager.list_tools())}


async def test_the_first_request_after_initialize_sees_every_tool_resource_and_prompt(workspace: Path,
                                                                                       data_dir: Path) -> None:
    eager = MnemonMcp(McpWorkspaces(load_settings({"storageScope": "custom", "dataDir": str(data_dir)}),
                                    str(workspace)))
    expected_tools = sorted(t.name for t in eager.server._tool_manager.list_tools())
    async with mcp_session(["--workspace", str(workspace), "--data-dir", str(data_dir)]) as session:
        tools = sorted(t.name for t in (await session.list_tools()).tools)
        resources = sorted(str(r.uri) for r in (await session.list_resources()).resources)
        prompts = [p.name for p in (await session.list_prompts()).prompts]
        wake = await session.call_tool("mnemon_wake", {})
    assert tools == expected_tools
    assert resources == ["mnemon://runtime/MEMORY.md", "mnemon://runtime/USER.md", "mnemon://wake"]
    assert prompts == ["mnemon-routing"]
    assert not wake.is_error


async def test_a_tool_call_as_the_first_request_is_served(workspace: Path, data_dir: Path) -> None:
    async with mcp_session(["--workspace", str(workspace), "--data-dir", str(data_dir)]) as session:
        added = await session.call_tool("mnemon_runtime_memory", {"action": "add", "content": "we build with make"})
        wake = await session.call_tool("mnemon_wake", {})
    assert not added.is_error and "we build with make" in wake.content[0].text


def test_mcp_help_and_usage_errors_come_from_the_full_parser(workspace: Path) -> None:
    bad = subprocess.run([sys.executable, "-m", "mnemon_ls", "mcp", "--read-onyl"], capture_output=True, text=True,
                         cwd=str(workspace), env=server_env(), timeout=60)
    assert bad.returncode == 2
    assert bad.stderr == ("mnemon-ls: error: unrecognized arguments: --read-onyl (see `mnemon-ls mcp --help`)\n")
