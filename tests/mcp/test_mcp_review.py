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
            "`review` lists the keys)")
        result = await session.call_tool("mnemon_citations", {"action": "reanchor", "source": "runtime"})
        assert result.is_error and text(result) == ("Error executing tool mnemon_citations: invalid-input: key: is "
                                                    "required for action=reanchor")
        assert tree_snapshot(data_dir) == before

        done = await call(session, "mnemon_citations", {"action": "reanchor", "source": "runtime", "key": key})
        assert done.splitlines() == [f"Re-anchored 1 citation of runtime {key} to the current code.",
                                     "cites src/lib.py:1-2 (fresh)", CONFIRMED]
        assert await call(session, "mnemon_citations", {}) == NOTHING


async def test_review_lists_a_space_item_due_for_review_and_reanchor_confirms_it(tmp_path: Path) -> None:
    """Issue 24 item 6 through MCP: a Memory Space item without citations whose row was made 120 days old by hand
    in mnemon.db is listed with why; ``reanchor`` confirms it (the row is unchanged) and nothing is left."""
    import sqlite3
    from datetime import datetime, timedelta, timezone

    repo = make_repo(tmp_path / "repo")
    commit_files(repo, {"src/lib.py": LIB}, "lib")
    workspace, data_dir = Path(repo.workdir), tmp_path / "root"
    args = ["--workspace", str(workspace), "--scope", "custom", "--data-dir", str(data_dir)]
    async with mcp_session(args, env=at_once()) as session:
        await call(session, "mnemon_memory_spaces", {"action": "create", "name": "Project", "description": "facts"})
        await call(session, "mnemon_remember", {"content": "the HERON queue drains at night"})
        assert await call(session, "mnemon_citations", {}) == NOTHING
        (db_path,) = data_dir.glob("data/*/mnemon.db")
        old = (datetime.now(timezone.utc) - timedelta(days=120)).strftime("%Y-%m-%dT%H:%M:%SZ")
        with sqlite3.connect(db_path) as db:
            assert db.execute("UPDATE insights SET created_at = ?, updated_at = ?", (old, old)).rowcount == 1
            row = db.execute("SELECT * FROM insights").fetchall()
        db.close()

        review = (await call(session, "mnemon_citations", {"action": "review"})).splitlines()
        assert review[:2] == ["1 memory needs review:", "- Memory Space (120d) the HERON queue drains at night"]
        assert review[2].startswith("  why: not updated or confirmed for reviewAfterDays, due since ")
        key = review[3].split("key=")[1]
        assert review[3] == f"  source=spaces key={key}" and len(review) == 4  # no citations
        assert (await call(session, "mnemon_citations", {"action": "reanchor", "source": "spaces", "key": key})
                ).endswith(CONFIRMED)
        assert await call(session, "mnemon_citations", {}) == NOTHING
        with sqlite3.connect(db_path) as db:
            assert db.execute("SELECT * FROM insights").fetchall() == row  # confirmed in a side file; nothing deleted
        db.close()
