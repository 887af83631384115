"""MEMORY.md overflow through MCP ``mnemon_runtime_memory`` (issue 9): the same Host operation as the CLI
and the language server, so the tool's answer says what was archived where, and ``routes`` are checked."""

from __future__ import annotations

import json
from pathlib import Path

from tests.mcp.conftest import mcp_session, text


def fact(n: int) -> str:
    return f"Fact {n:03d}: the build cache lives in .cache/build-{n} and is safe to delete"


async def test_an_overflowing_add_reports_the_archival_and_bad_routes_name_the_field(
        workspace: Path, data_dir: Path) -> None:
    args = ["--workspace", str(workspace), "--scope", "custom", "--data-dir", str(data_dir),
            "--memory-limit-bytes", "400"]
    async with mcp_session(args) as session:
        answers = []
        for n in range(8):
            result = await session.call_tool("mnemon_runtime_memory", {"action": "add", "content": fact(n)})
            assert not result.is_error, text(result)
            answers.append(text(result))
        archival = next(a for a in answers if "maintenance (local-archive)" in a)
        assert "Archived " in archival and "runtime/archived/MEMORY.md" in archival
        assert "-> runtime/archived/memories.jsonl: Fact " in archival
        result = await session.call_tool("mnemon_runtime_memory", {
            "action": "add", "content": fact(99), "routes": [{"sourceIndexes": [0], "spaceId": "default"}]})
        assert result.is_error and text(result).endswith(
            "invalid-input: routes[0].sourceIndexes[0]: must be an integer >= 1 (got 0)")  # the key the caller wrote
    lines = (data_dir / "runtime" / "archived" / "lineage.jsonl").read_text().splitlines()
    assert lines and all(json.loads(line)["kind"] == "local-archive" for line in lines)
