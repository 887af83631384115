"""Documents over the real ``mnemon-ls mcp``, as the other surfaces take them: the ``mnemon://documents/{id}``
resource takes a unique id prefix of at least 8 characters as ``doc get`` does (it needed the whole id); the
``mnemon_document_manage`` tool restores an archived document (the command line and the language server did,
the tool had no such action); a tool's ``workspace`` that is a file is refused with the rule of
``mnemon-ls mcp --workspace FILE`` at start (it was taken as the workspace holding the file)."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp.shared.exceptions import MCPError

from tests.gitrepo import snapshot
from tests.mcp.conftest import mcp_session, text
from tests.mcp.test_mcp_server import args_for, call, files


async def test_the_document_resource_takes_the_id_prefix_doc_get_takes(workspace: Path, data_dir: Path) -> None:
    async with mcp_session(args_for(workspace, data_dir)) as session:
        error, created = await call(session, "mnemon_document_create", {"title": "Plan", "content": "Ship on Friday."})
        assert not error, created
        doc_id = created.split("(id: ")[1].split(")")[0]
        whole = await session.read_resource(f"mnemon://documents/{doc_id}")
        prefix = await session.read_resource(f"mnemon://documents/{doc_id[:8]}")
        error, got = await call(session, "mnemon_document_manage", {"action": "get", "id": doc_id[:8]})
        with pytest.raises(MCPError) as short:
            await session.read_resource(f"mnemon://documents/{doc_id[:7]}")
    assert whole.contents[0].text == prefix.contents[0].text == "Ship on Friday."
    assert not error and got.endswith("Ship on Friday.")
    assert (short.value.error.code, short.value.error.message) == (
        -32002, f"Resource not found: mnemon://documents/{doc_id[:7]} (an id prefix needs at least 8 characters)")


async def test_the_document_tool_restores_an_archived_document(workspace: Path, data_dir: Path) -> None:
    async with mcp_session(args_for(workspace, data_dir)) as session:
        actions = {t.name: t.input_schema for t in (await session.list_tools()).tools}[
            "mnemon_document_manage"]["properties"]["action"]["enum"]
        error, created = await call(session, "mnemon_document_create", {"title": "Plan", "content": "Ship on Friday."})
        doc_id = created.split("(id: ")[1].split(")")[0]
        error, archived = await call(session, "mnemon_document_manage",
                                     {"action": "archive", "id": doc_id, "revision": 1})
        assert not error, archived
        error, restored = await call(session, "mnemon_document_manage", {"action": "restore", "id": doc_id[:8]})
        error_again, again = await call(session, "mnemon_document_manage", {"action": "restore", "id": doc_id})
        _, hits = await call(session, "mnemon_document_search", {"query": "Friday"})
    assert actions == ["get", "update", "archive", "restore"]
    assert not error and restored == (f"Document restored: Plan (id: {doc_id}), revision 3, "
                                        f"documents/active/plan-{doc_id[:8]}.md"), restored
    assert error_again and again == ("Error executing tool mnemon_document_manage: document-status: cannot restore "
                                     f"document {doc_id}: it is already active"), again
    assert f"(id: {doc_id}" in hits and "archived" not in hits.split("\n")[0], hits


async def test_a_file_as_workspace_is_refused_as_at_start(workspace: Path, data_dir: Path) -> None:
    (workspace / "f.py").write_text("x = 1\n", encoding="utf-8")
    async with mcp_session(args_for(workspace, data_dir)) as session:
        assert not (await session.call_tool("mnemon_runtime_memory", {"action": "add", "content": "seed"})).is_error
        before = files(snapshot(data_dir))
        error, answer = await call(session, "mnemon_runtime_memory",
                                   {"action": "add", "content": "x", "workspace": str(workspace / "f.py")})
        uri_error, uri_answer = await call(session, "mnemon_status", {"workspace": (workspace / "f.py").as_uri()})
        missing_error, missing = await call(session, "mnemon_status", {"workspace": str(workspace / "gone")})
        after = files(snapshot(data_dir))
        ok_error, ok = await call(session, "mnemon_status", {"workspace": str(workspace)})
    real = workspace.resolve()
    assert error and answer == (f"Error executing tool mnemon_runtime_memory: invalid-input: workspace: {real / 'f.py'} "
                                "is not a directory")
    assert uri_error and uri_answer.endswith(f"invalid-input: workspace: {real / 'f.py'} is not a directory")
    assert missing_error and missing.endswith(f"workspace: {real / 'gone'} does not exist"), missing
    assert after == before
    assert not ok_error, ok


async def test_a_missing_document_resource_is_named_escaped(workspace: Path, data_dir: Path) -> None:
    """``%1b`` in the resource URI is a raw ESC in the id: the not-found message repeats it escaped, so a client
    printing the error does not clear the screen (the id was echoed raw)."""
    async with mcp_session(args_for(workspace, data_dir)) as session:
        with pytest.raises(MCPError) as missing:
            await session.read_resource("mnemon://documents/abcdefgh%1b%5b2J")
    assert (missing.value.error.code, missing.value.error.message) == (
        -32002, "Resource not found: mnemon://documents/abcdefgh\\x1b[2J")
    assert missing.value.error.data == {"uri": "mnemon://documents/abcdefgh\\x1b[2J"}
