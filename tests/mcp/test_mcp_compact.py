"""USER.md compaction over MCP: the ``runtime-capacity`` tool error carries the numbered plan, and
``mnemon_runtime_compact`` commits the assistant's rewrite (the real ``mnemon-ls mcp`` subprocess)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.mcp.conftest import mcp_session, text

ENTRIES = [("prefers tabs over spaces in Go", "normal"), ("never force-push to main, ever", "critical"),
           ("likes short commit subject li", "low")]


async def test_full_user_md_plan_and_compact(workspace: Path, data_dir: Path) -> None:
    args = ["--workspace", str(workspace), "--scope", "custom", "--data-dir", str(data_dir),
            "--runtime-user-scope", "storage", "--user-limit-bytes", "120"]
    async with mcp_session(args) as session:
        for content, importance in ENTRIES:
            result = await session.call_tool("mnemon_runtime_memory", {"action": "add", "target": "user",
                                                                       "content": content, "importance": importance})
            assert not result.is_error, text(result)
        failed = await session.call_tool("mnemon_runtime_memory", {"action": "add", "target": "user",
                                                                   "content": "works in UTC+2 hours"})
        message = text(failed)
        assert failed.is_error and message.startswith("Error executing tool mnemon_runtime_memory: runtime-capacity: user is over capacity")
        assert message.endswith("Numbered entries:\n1. [importance=normal] prefers tabs over spaces in Go\n"
                                "2. [importance=critical] never force-push to main, ever\n"
                                "3. [importance=low] likes short commit subject li")
        assert "using at most 60 UTF-8 bytes" in message
        revision = re.search(r"revision=([0-9a-f]{64})", message).group(1)
        bad = await session.call_tool("mnemon_runtime_compact", {"revision": revision, "entries": [
            {"content": "merged", "importance": "low", "sourceIndexes": [1, 2, 3]}],
            "pending": {"action": "add", "content": "works in UTC+2 hours"}})
        assert bad.is_error and text(bad) == ("Error executing tool mnemon_runtime_compact: invalid-input: entries[0].importance: lowers importance: source index 2 "
                                              "is critical, this entry low")
        done = await session.call_tool("mnemon_runtime_compact", {"revision": revision, "entries": [
            {"content": "Go tabs; never force-push main", "importance": "critical", "sourceIndexes": [1, 2]},
            {"content": "short commit subjects", "importance": "low", "sourceIndexes": [3]}],
            "pending": {"action": "add", "content": "works in UTC+2 hours"}})
        assert not done.is_error, text(done)
        assert text(done).startswith("Entry added. Compacted user: kept 2 of 2. USER.md: 3 entries, 79/120 UTF-8 bytes")
    assert (data_dir / "runtime" / "USER.md").read_text() == \
        "Go tabs; never force-push main\n\u00a7\nshort commit subjects\n\u00a7\nworks in UTC+2 hours\n"
