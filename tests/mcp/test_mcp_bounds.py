"""What the real ``mnemon-ls mcp`` repeats of a number stays short, in the one range wording
(``errors.range_rule``; an adversarial pass found each): the citations tool's ``line`` of 400 digits was
echoed whole, a ``weight`` of ``10**400`` (too large for a number) was "not an integer", and a malformed
``revision`` given alone to the compaction tool was answered "entries: is required". Nothing refused writes."""

from __future__ import annotations

from pathlib import Path

from tests.gitrepo import snapshot
from tests.mcp.conftest import mcp_session, text
from tests.mcp.test_mcp_server import args_for, files

HUGE = int("9" * 400)


async def test_numbers_past_their_range_are_refused_in_the_range_wording(workspace: Path, data_dir: Path) -> None:
    (workspace / "f.py").write_text("print(1)\n", encoding="utf-8")
    async with mcp_session(args_for(workspace, data_dir)) as session:
        seeded = await session.call_tool("mnemon_runtime_memory", {"action": "add", "content": "seed"})
        assert not seeded.is_error, text(seeded)
        before = files(snapshot(data_dir))
        calls = [
            ("mnemon_citations", {"action": "file", "path": "f.py", "line": HUGE},
             "invalid-input: line: must be an integer in 1..1000000000 (got 99999999999999999999999999999999...)"),
            ("mnemon_link", {"space_id": "default", "source_id": "a", "target_id": "b", "weight": 10**400},
             "invalid-input: weight: must be a number in 0..1 (got 10000000000000000000000000000000...)"),
            ("mnemon_runtime_compact", {"revision": "abc"},
             "invalid-input: revision: must be a revision: 12 to 64 lowercase hex digits (the first 12, as "
             "`mnemon-ls runtime add` prints it, or the whole sha256 of the runtime listing's --json)"),
        ]
        for name, arguments, problem in calls:
            result = await session.call_tool(name, arguments)
            assert result.is_error and text(result) == f"Error executing tool {name}: {problem}", (name, text(result))
        assert files(snapshot(data_dir)) == before
        highest = await session.call_tool("mnemon_citations", {"action": "file", "path": "f.py", "line": 10**9})
    assert not highest.is_error and "No memory cites line 1000000000." in text(highest), text(highest)


async def test_an_expected_document_revision_has_one_rule(workspace: Path, data_dir: Path) -> None:
    async with mcp_session(args_for(workspace, data_dir)) as session:
        made = await session.call_tool("mnemon_document_create", {"title": "Plan", "content": "ship on Friday"})
        assert not made.is_error, text(made)
        doc_id = [d for d in (data_dir / "documents" / "active").iterdir()][0].stem.rsplit("-", 1)[-1]
        before = files(snapshot(data_dir))
        for revision in (0, -1, 2**53):
            for action in ("update", "archive"):
                result = await session.call_tool("mnemon_document_manage", {"action": action, "id": doc_id,
                                                                            "revision": revision})
                assert result.is_error and text(result) == (
                    "Error executing tool mnemon_document_manage: invalid-input: revision: must be an integer in "
                    f"1..9007199254740991 (got {revision})"), (action, text(result))
        assert files(snapshot(data_dir)) == before
