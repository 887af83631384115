"""The MCP server section of docs/assistants.md lists exactly the tools ``mnemon-ls mcp`` registers (and, for
``--read-only``, exactly the read tools), asked of the real server over stdio, so the list cannot drift from the
code. (The README sends readers there for the tools.)"""

from __future__ import annotations

import re
from pathlib import Path

from tests.mcp.conftest import REPO, mcp_session


GUIDE = REPO / "docs" / "assistants.md"


def _documented_lists() -> tuple[list[str], list[str], int, int]:
    """(every tool, the read tools, the two counts the prose states) from docs/assistants.md's MCP server section."""
    text = GUIDE.read_text(encoding="utf-8")
    assert "\n## The MCP server\n" in text, "docs/assistants.md has no '## The MCP server' section"
    section = text.split("\n## The MCP server\n", 1)[1].split("\n## ", 1)[0]
    prose = " ".join(section.split())
    found = re.search(r"Its (\d+) tools: (.*?) \(`--read-only` keeps only the (\d+) reads: (.*?)\);", prose)
    assert found, ("docs/assistants.md's MCP server section no longer says "
                   "'Its N tools: ... (`--read-only` keeps only the M reads: ...)'")
    every = re.findall(r"`(mnemon_\w+)`", found.group(2))
    reads = re.findall(r"`(mnemon_\w+)`", found.group(4))
    return every, reads, int(found.group(1)), int(found.group(3))


async def test_the_assistants_guide_lists_exactly_the_registered_tools(tmp_path: Path) -> None:
    every, reads, count, read_count = _documented_lists()
    args = ["--workspace", str(tmp_path), "--scope", "custom", "--data-dir", str(tmp_path / "root")]
    async with mcp_session(args) as session:
        registered = [t.name for t in (await session.list_tools()).tools]
    async with mcp_session([*args, "--read-only"]) as session:
        registered_reads = [t.name for t in (await session.list_tools()).tools]
    assert len(every) == len(set(every)) and len(reads) == len(set(reads))  # each named once
    assert sorted(every) == sorted(registered)
    assert sorted(reads) == sorted(registered_reads)
    assert (count, read_count) == (len(registered), len(registered_reads))


async def test_the_remember_tool_states_the_content_limit_it_enforces(tmp_path: Path) -> None:
    """``mnemon_remember``'s schema said "at most 8192 characters" while the rule is 8,000 UTF-8 bytes: an
    assistant writing 8,100 characters by the schema was refused. The schema states the limit enforced, and
    content at exactly that limit is taken while one byte more is refused with the rule."""
    args = ["--workspace", str(tmp_path), "--scope", "custom", "--data-dir", str(tmp_path / "root")]
    async with mcp_session(args) as session:
        tool = next(t for t in (await session.list_tools()).tools if t.name == "mnemon_remember")
        said = tool.input_schema["properties"]["content"]["description"]
        found = re.search(r"at most ([\d,]+) UTF-8 bytes", said)
        assert found, said
        limit = int(found.group(1).replace(",", ""))
        made = await session.call_tool("mnemon_memory_spaces", {"action": "create", "name": "facts",
                                                                "description": "facts", "active": True})
        assert not made.is_error, made.content
        over = await session.call_tool("mnemon_remember", {"content": "é" * (limit // 2) + "x"})
        assert over.is_error and f"at most {limit} UTF-8 bytes" in over.content[0].text, over.content
        kept = await session.call_tool("mnemon_remember", {"content": "é" * (limit // 2)})
        assert not kept.is_error, kept.content
