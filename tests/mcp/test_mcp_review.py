"""The ``mnemon_citations`` MCP tool (issue 24 item 5) through a real ``mnemon-ls mcp`` and the SDK's stdio client:
``review`` (the default action) lists a memory whose cited code changed, ``file`` lists the memories citing a
file, ``reanchor`` ("still true") re-anchors it; a key naming no memory is a tool error naming the field, and
nothing changes on disk."""

from __future__ import annotations

from pathlib import Path

from tests.gitrepo import commit_files, make_repo
from tests.helpers.procs import tree_snapshot
from tests.mcp.conftest import mcp_session, text
from tests.mcp.test_mcp_cite import LIB, at_once, call

CONFIRMED = "Confirmed still true: due for review again in 90 days unless updated or recalled first."
NOTHING = "No memory needs review: every citation is fresh or moved, and no memory is due for review."


async def test_review_file_and_reanchor(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    commit_files(repo, {"src/lib.py": LIB}, "lib")
    workspace, data_dir = Path(repo.workdir), tmp_path / "root"
    args = ["--workspace", str(workspace), "--scope", "custom", "--data-dir", str(data_dir)]
    async with mcp_session(args, env=at_once()) as session:
        await call(session, "mnemon_runtime_memory", {"action": "add", "content": "parse splits words",
                                                      "cites": [{"path": "src/lib.py", "startLine": 1, "endLine": 2}]})
        assert await call(session, "mnemon_citations", {}) == NOTHING
        listed = await call(session, "mnemon_citations", {"action": "file", "path": "src/lib.py"})
        assert listed.splitlines()[:5] == ["# Memories citing src/lib.py", "", "## lines 1-2", "",
                                           listed.splitlines()[4]]
        assert listed.splitlines()[4].startswith("- MEMORY.md · 0d · fresh: parse splits words (`runtime` `memory:")
        (workspace / "src" / "lib.py").write_text(LIB.replace("split()", "split(',')"))
        review = (await call(session, "mnemon_citations", {"action": "review"})).splitlines()
        assert review[:3] == ["1 memory needs review:", "- MEMORY.md (0d) parse splits words", "  why: cited code changed"]
        key = review[3].split("key=")[1]
        assert review[4] == "  cites src/lib.py:1-2 (changed)"

        before = tree_snapshot(data_dir)
        result = await session.call_tool("mnemon_citations", {"action": "reanchor", "source": "runtime",
                                                              "key": "memory:nope"})
        assert result.is_error and text(result) == (
            "Error executing tool mnemon_citations: invalid-input: key: names no memory of runtime ('memory:nope'; "
            "see citations.review for the keys)")
        result = await session.call_tool("mnemon_citations", {"action": "reanchor", "source": "runtime"})
        assert result.is_error and text(result) == ("Error executing tool mnemon_citations: invalid-input: key: is "
                                                    "required for action=reanchor")
        assert tree_snapshot(data_dir) == before

        done = await call(session, "mnemon_citations", {"action": "reanchor", "source": "runtime", "key": key})
        assert done.splitlines() == [f"Re-anchored 1 citation of runtime {key} to the current code.",
                                     "cites src/lib.py:1-2 (fresh)", CONFIRMED]
        assert await call(session, "mnemon_citations", {}) == NOTHING
