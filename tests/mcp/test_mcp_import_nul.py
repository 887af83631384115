"""``mnemon_import_propose`` with a ``path`` holding NUL (an attack pass, h-attack49): ``os.lstat`` raised
``ValueError`` and the SDK answered only "Error executing tool mnemon_import_propose", naming no field and no
rule. The path is now refused as invalid input naming ``path``, and nothing under the root changes."""

from __future__ import annotations

from pathlib import Path

from tests.lsp.conftest import tree_state
from tests.mcp.conftest import mcp_session, text
from tests.mcp.test_mcp_server import args_for


async def test_an_import_path_with_nul_is_invalid_input_naming_path(workspace: Path, data_dir: Path) -> None:
    async with mcp_session(args_for(workspace, data_dir)) as session:
        added = await session.call_tool("mnemon_runtime_memory", {"action": "add", "content": "seed fact"})
        assert not added.is_error, text(added)
        before = tree_state(data_dir), tree_state(workspace)
        for path in ("notes\x00.md", "/tmp/a\x00b", "~/x\x00"):
            result = await session.call_tool("mnemon_import_propose", {"source": "agents-md", "path": path})
            assert result.is_error, text(result)
            assert "invalid-input: path: must not contain NUL (got '" in text(result), text(result)
        assert (tree_state(data_dir), tree_state(workspace)) == before
