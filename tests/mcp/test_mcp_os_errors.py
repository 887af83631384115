"""An operating-system error reaches an MCP client with its code and its file, never as the SDK's bare "Error
executing tool <name>": a storage root the file system will not create (``/proc/nosuch``: mkdir answers
ENOENT under /proc) is ``storage-error`` naming it, and an error no layer maps is ``internal-error`` naming the
file, clipped (the new user saw only "Error executing tool mnemon_runtime_memory")."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mnemon_ls.mcp.server import os_tool_error
from tests.mcp.conftest import mcp_session, text


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc (Linux)")
async def test_a_root_the_file_system_will_not_create_is_named_with_its_code(workspace: Path) -> None:
    async with mcp_session(["--workspace", str(workspace), "--data-dir", "/proc/nosuch"]) as session:
        for tool, arguments in (("mnemon_runtime_memory", {"action": "add", "content": "x"}),
                                ("mnemon_document_create", {"title": "t", "content": "c"})):
            result = await session.call_tool(tool, arguments)
            assert result.is_error
            assert text(result) == (f"Error executing tool {tool}: storage-error: /proc/nosuch: the file system "
                                    "refused the operation (this file system does not allow creating a directory "
                                    "here)")


def test_an_unmapped_os_error_names_its_code_and_file_clipped() -> None:
    error = os_tool_error(FileNotFoundError(2, "No such file or directory", "/tmp/" + "x" * 5000))
    assert str(error).startswith("internal-error: /tmp/xxx") and str(error).endswith(": No such file or directory")
    assert len(str(error)) < 400
    assert str(os_tool_error(PermissionError(13, "Permission denied", "/root/f"))).startswith("storage-denied: /root/f")
