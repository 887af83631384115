"""``mnemon/tool``: the one request behind the VS Code language-model tools runs an assistant tool as the MCP
server runs it (mnemon_ls/ops/tools.py), so a tool in the editor and the same tool over MCP answer the same
text. Both servers run for real on one storage root: the language server (pytest-lsp) and ``mnemon-ls mcp``
(the official SDK client)."""

from __future__ import annotations

from pathlib import Path

from tests.mcp.conftest import mcp_session, text

from .conftest import Launcher

SETTINGS = {"storageScope": "custom", "runtimeUserScope": "storage"}


async def test_a_tool_answers_the_same_text_over_the_language_server_and_mcp(lsp: Launcher, repo, repo_dir: Path,
                                                                             tmp_path: Path) -> None:
    root = tmp_path / "root"
    settings = {**SETTINGS, "dataDir": str(root)}
    client = await lsp.start("visual-studio-code", [repo_dir], {"mnemon": settings}, configuration={"": settings})

    async def tool(name: str, arguments: dict) -> str:
        answer = await client.call("mnemon/tool", {"name": name, "arguments": arguments})
        assert answer["workspace"] == repo_dir.as_uri()
        return answer["text"]

    created = await tool("mnemon_memory_spaces", {"action": "create", "name": "Project", "description": "decisions",
                                                  "active": True})
    assert "Project" in created
    remembered = await tool("mnemon_remember", {"content": "The QUOKKA rollout ships on Fridays", "importance": 4})
    assert remembered.startswith("committed: Remembered in Project."), remembered
    added = await tool("mnemon_runtime_memory", {"action": "add", "content": "LM tools reach the running server"})
    assert added.startswith("Entry added. MEMORY.md: 1 entry"), added

    args = ["--workspace", str(repo_dir), "--scope", "custom", "--data-dir", str(root), "--runtime-user-scope",
            "storage"]
    async with mcp_session(args) as session:
        for name, arguments in (("mnemon_recall", {"query": "QUOKKA rollout"}),
                                ("mnemon_memory_spaces", {"action": "list"}),
                                ("mnemon_document_search", {"query": "rollout"}),
                                ("mnemon_status", {})):
            over_mcp = await session.call_tool(name, arguments)
            assert not over_mcp.is_error, text(over_mcp)
            assert await tool(name, arguments) == text(over_mcp), name
        refused = await session.call_tool("mnemon_runtime_memory", {"action": "add", "content": "a\n§\nb"})
    assert refused.is_error
    error = await client.call_error("mnemon/tool", {"name": "mnemon_runtime_memory",
                                                    "arguments": {"action": "add", "content": "a\n§\nb"}})
    assert f"{error.data['code']}: {error.message}" == text(refused).split(": ", 1)[1]  # "Error executing tool ..."
    assert "LM tools reach the running server" in await tool("mnemon_wake", {})


async def test_a_bad_tool_call_names_what_is_wrong_and_changes_nothing(lsp: Launcher, repo, repo_dir: Path,
                                                                       tmp_path: Path) -> None:
    settings = {**SETTINGS, "dataDir": str(tmp_path / "root")}
    client = await lsp.start("visual-studio-code", [repo_dir], {"mnemon": settings}, configuration={"": settings})
    unknown = await client.call_error("mnemon/tool", {"name": "mnemon_nope", "arguments": {}})
    assert unknown.data["field"] == "name" and unknown.message.startswith("name: must be one of mnemon_")
    typed = await client.call_error("mnemon/tool", {"name": "mnemon_recall", "arguments": {"query": "x", "limit": "3"}})
    assert (typed.data["code"], typed.data["field"]) == ("invalid-input", "arguments.limit")
    extra = await client.call_error("mnemon/tool", {"name": "mnemon_recall", "arguments": {"query": "x", "color": 1}})
    assert extra.message == "arguments.color: is not a known field"
    missing = await client.call_error("mnemon/tool", {"name": "mnemon_memory_spaces", "arguments": {"action": "create"}})
    assert missing.message == "name: is required for action=create"
    absent = await client.call_error("mnemon/tool", {"name": "mnemon_document_manage", "arguments": {"action": "get"}})
    assert absent.message == "arguments.id: is required"
    field = await client.call_error("mnemon/tool", {"name": "mnemon_tool", "nope": 1})
    assert field.message.startswith("nope: is not a known field")
    assert not (tmp_path / "root" / "runtime").exists()  # nothing was written by the refused calls
