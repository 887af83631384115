"""What ``mnemon-ls mcp`` says must match what the CLI says for the same operation (an attack pass found
``mnemon_memory_spaces`` naming the native provider "Mnemon" while the CLI, the language server and the
docs use the provider id ``mnemon-native``), run for real: the MCP server over stdio with the official SDK
client and the CLI in a subprocess, on one storage root."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.gitrepo import snapshot
from tests.helpers import procs
from tests.mcp.conftest import REPO, mcp_session, text
from tests.mcp.test_mcp_server import args_for, files
from tests.helpers.zygote import mnemon_command


def _cli(workspace: Path, data_dir: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*mnemon_command(), *args, *args_for(workspace, data_dir)],
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


async def test_records_search_query_is_bounded_like_recall_on_every_surface(workspace: Path, data_dir: Path) -> None:
    """``mnemon_records_search`` took a query of any size (a megabyte was scanned against every record); it
    is now bounded by the one query rule of recall and Documents search (``mnemon_ls.text.MAX_QUERY_CHARS``
    characters, counted in code points) and a longer one is refused naming the field and changing nothing."""
    from mnemon_ls.text import MAX_QUERY_CHARS

    long_query = "\U0001F600" * (MAX_QUERY_CHARS + 1)  # one code point each, two UTF-16 units, four bytes
    rule = f"must be at most {MAX_QUERY_CHARS} characters (Unicode code points; got {MAX_QUERY_CHARS + 1})"
    async with mcp_session(args_for(workspace, data_dir)) as session:
        proposed = await session.call_tool("mnemon_records_propose", {"title": "Ruff", "content": "Lint with ruff",
                                                                     "source_refs": [{"kind": "file", "id": "a.py"}]})
        assert not proposed.is_error, text(proposed)
        before = files(snapshot(workspace))
        refused = await session.call_tool("mnemon_records_search", {"query": long_query})
        recall = await session.call_tool("mnemon_recall", {"query": long_query})
        at_limit = await session.call_tool("mnemon_records_search", {"query": "\U0001F600" * MAX_QUERY_CHARS})
        found = await session.call_tool("mnemon_records_search", {"query": "ruff"})
        assert files(snapshot(workspace)) == before
    assert refused.is_error
    assert text(refused) == f"Error executing tool mnemon_records_search: invalid-input: query: {rule}"
    assert text(recall) == f"Error executing tool mnemon_recall: invalid-input: query: {rule}"  # the same rule
    assert (at_limit.is_error, text(at_limit)) == (False, "No records found.")
    assert "Ruff" in text(found) and text(found).endswith("1 record(s)")

    cli = _cli(workspace, data_dir, "records", "list", "--text", long_query)
    assert (cli.returncode, cli.stdout) == (2, "")
    assert cli.stderr == f"mnemon-ls: error: --text: {rule}\n"  # the option typed
