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
        assert text(done).startswith((
            "Entry added. Compacted user: merged 1, 2 into one entry; rewrote 3; 2 entries remain (were 3). USER.md: "
            "3 entries, 79/120 UTF-8 bytes"))
    assert (data_dir / "runtime" / "USER.md").read_text() == \
        "Go tabs; never force-push main\n\u00a7\nshort commit subjects\n\u00a7\nworks in UTC+2 hours\n"


async def test_merge_and_drop_name_only_the_changes(workspace: Path, data_dir: Path) -> None:
    """A person's form through the tool (issue 23 item 9): no revision (the current one), ``merge`` and ``drop``
    numbered as the plan; the answer says what was merged into what, what was dropped and the bytes."""
    args = ["--workspace", str(workspace), "--scope", "custom", "--data-dir", str(data_dir),
            "--runtime-user-scope", "storage", "--user-limit-bytes", "120"]
    async with mcp_session(args) as session:
        for content, importance in ENTRIES:
            await session.call_tool("mnemon_runtime_memory", {"action": "add", "target": "user", "content": content,
                                                              "importance": importance})
        bad = await session.call_tool("mnemon_runtime_compact", {"merge": [{"sourceIndexes": [1, 4], "content": "x"}]})
        assert bad.is_error and text(bad) == ("Error executing tool mnemon_runtime_compact: invalid-input: "
                                              "merge[0].sourceIndexes[1]: entry 4 does not exist: USER.md has entries "
                                              "1..3")
        zero = await session.call_tool("mnemon_runtime_compact", {"drop": [0]})
        assert zero.is_error and text(zero) == (
            "Error executing tool mnemon_runtime_compact: invalid-input: drop[0]: the first number is 0, not an "
            "entry number: entries are numbered from 1, as the compaction plan and `mnemon-ls runtime list` number "
            "them")
        twice = await session.call_tool("mnemon_runtime_compact", {"drop": [3, 3.0]})
        assert twice.is_error and text(twice) == (
            "Error executing tool mnemon_runtime_compact: invalid-input: drop[1]: the second number names "
            "entry 3 again; name each entry once")
        done = await session.call_tool("mnemon_runtime_compact", {
            "merge": [{"sourceIndexes": [2, 1], "content": "Go tabs; never force-push main"}], "drop": [3]})
        assert not done.is_error, text(done)
        lines = text(done).splitlines()
        assert re.fullmatch(r"Compacted user: merged 2, 1 into one entry; dropped 3; 1 entry remains \(were 3\)\. USER\.md: "
                            r"1 entry, 30/120 UTF-8 bytes; revision [0-9a-f]{12}",
                            lines[0])
        assert lines[1:5] == [
            "maintenance (local-compaction): Compacted USER.md: 1 entry replace 2, 1 dropped (30/120 bytes); the "
            "replaced and dropped text is kept in runtime/archived/",
            "  merged 2, 1 into: Go tabs; never force-push main",
            "  dropped 3",
            "  USER.md: 97 -> 30 of 120 UTF-8 bytes"]
    assert (data_dir / "runtime" / "USER.md").read_text() == "Go tabs; never force-push main\n"
