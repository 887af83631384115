"""A long-lived ``mnemon-ls mcp`` keeps what it may between tool calls (the wake it rendered, the parsed store, the
registry, paths that depend only on the environment), yet every call answers from the disk and the repository as
they are now: another process's write, a hand edit of ``MEMORY.md``, a branch switch and a new Memory Spaces item
are seen by the very next call of the same session (a real server through the SDK's stdio client)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pygit2

from tests.gitrepo import create_branch, switch
from tests.helpers.zygote import mnemon_command
from tests.mcp.conftest import REPO, answer as tool, mcp_session, server_env

WAKE = "mnemon_wake"


def cli(workspace: Path, data_dir: Path, *args: str) -> str:
    """``mnemon-ls <args>`` on the same root, in a process of its own; its stdout (it must succeed)."""
    proc = subprocess.run([*mnemon_command(), *args, "--workspace", str(workspace), "--scope", "custom",
                           "--data-dir", str(data_dir)], capture_output=True, text=True, env=server_env(),
                          cwd=str(REPO), timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def memory_lines(wake: str) -> list[str]:
    """The content lines of MEMORY.md in a wake (annotation lines and separators left out)."""
    body = wake.split('<runtime-memory-file name="MEMORY.md">\n', 1)[1].split("\n</runtime-memory-file>", 1)[0]
    return [line for line in body.split("\n") if line not in ("§", "(empty)") and not line.startswith("[")]


async def test_each_call_sees_writes_hand_edits_and_branch_switches_made_since_the_last(
        workspace: Path, data_dir: Path) -> None:
    repo = pygit2.Repository(str(workspace))
    args = ["--workspace", str(workspace), "--scope", "custom", "--data-dir", str(data_dir)]
    async with mcp_session(args) as session:
        await tool(session, "mnemon_runtime_memory", {"action": "add", "content": "alpha from the session"})
        first = await tool(session, WAKE, {})
        assert memory_lines(first) == ["alpha from the session"] and "Git branch: main\n" in first
        assert await tool(session, WAKE, {}) == first  # nothing changed: the same text, revision included

        cli(workspace, data_dir, "runtime", "add", "--content", "beta from another process")
        second = await tool(session, WAKE, {})
        assert memory_lines(second) == ["alpha from the session", "beta from another process"]
        assert second.split("\n")[1] != first.split("\n")[1]  # a new view revision

        memory = data_dir / "runtime" / "MEMORY.md"
        memory.write_bytes(memory.read_bytes().rstrip(b"\n") + "\n§\ngamma typed by hand\n".encode())
        third = await tool(session, WAKE, {})
        assert memory_lines(third) == ["alpha from the session", "beta from another process", "gamma typed by hand"]

        cli(workspace, data_dir, "runtime", "remove", "--target", "memory", "--old-text", "alpha from the session")
        fourth = await tool(session, WAKE, {})
        assert memory_lines(fourth) == ["beta from another process", "gamma typed by hand"]

        create_branch(repo, "other")
        switch(repo, "other")
        on_other = await tool(session, WAKE, {})
        assert "Git branch: other\n" in on_other and "Git branch: main" not in on_other
        switch(repo, "main")
        assert "Git branch: main\n" in await tool(session, WAKE, {})


async def test_recall_sees_items_another_process_remembered_and_forgot(workspace: Path, data_dir: Path) -> None:
    args = ["--workspace", str(workspace), "--scope", "custom", "--data-dir", str(data_dir)]
    async with mcp_session(args) as session:
        await tool(session, "mnemon_memory_spaces", {"action": "create", "name": "Project", "description": "facts",
                                                     "active": True})
        await tool(session, "mnemon_remember", {"content": "the nightly build runs on the quokka runner"})
        assert "quokka runner" in await tool(session, "mnemon_recall", {"query": "quokka"})
        wake = await tool(session, WAKE, {})
        assert "1 item" in wake

        cli(workspace, data_dir, "remember", "the quokka cache is cleared on Mondays")
        found = await tool(session, "mnemon_recall", {"query": "quokka"})
        assert "quokka runner" in found and "cleared on Mondays" in found
        assert "2 items" in await tool(session, WAKE, {})  # the Memory Spaces cover counts it too

        lines = found.split("\n")
        meta = lines[next(i for i, line in enumerate(lines) if "quokka runner" in line) + 1]  # "space: S (Project) · id: I"
        space_id, runner_id = meta.split("space: ", 1)[1].split(" ", 1)[0], meta.split("id: ", 1)[1].split(" ", 1)[0]
        cli(workspace, data_dir, "space", "forget", runner_id, "--space", space_id)
        after = await tool(session, "mnemon_recall", {"query": "quokka"})
        assert "quokka runner" not in after and "cleared on Mondays" in after


async def test_a_storage_root_made_or_replaced_after_the_first_call_is_read_at_the_next(
        workspace: Path, data_dir: Path, tmp_path: Path) -> None:
    """The root does not exist at the first calls; another process makes it; then a whole other root (made by
    yet another process at another path) is renamed into its place, as a pack import or a restore swaps roots.
    Each time the very next wake and recall of the same session answer from the root now at that path."""
    args = ["--workspace", str(workspace), "--scope", "custom", "--data-dir", str(data_dir)]
    other = tmp_path / "other-root"
    cli(workspace, other, "runtime", "add", "--content", "kept in the replacement root")
    cli(workspace, other, "space", "create", "--name", "Project", "--description", "facts", "--active")
    cli(workspace, other, "remember", "the replacement root knows the wombat runner")
    async with mcp_session(args) as session:
        assert memory_lines(await tool(session, WAKE, {})) == []
        assert "wombat" not in await tool(session, "mnemon_recall", {"query": "wombat"})
        assert not data_dir.exists()  # reading made nothing

        cli(workspace, data_dir, "runtime", "add", "--content", "made by another process")
        assert memory_lines(await tool(session, WAKE, {})) == ["made by another process"]
        cli(workspace, data_dir, "space", "create", "--name", "Notes", "--description", "facts", "--active")
        cli(workspace, data_dir, "remember", "the first root knows the wombat cache")
        cli(workspace, data_dir, "remember", "the first root knows the wombat pipeline")
        first = await tool(session, WAKE, {})
        assert "2 items" in first and "Notes" in first
        found = await tool(session, "mnemon_recall", {"query": "wombat"})
        assert "wombat cache" in found and "wombat pipeline" in found and "wombat runner" not in found

        data_dir.rename(tmp_path / "first-root")  # the session's store connections stay open on the first root
        other.rename(data_dir)
        swapped = await tool(session, WAKE, {})
        assert memory_lines(swapped) == ["kept in the replacement root"]
        assert "1 item" in swapped and "Project" in swapped and "Notes" not in swapped
        found = await tool(session, "mnemon_recall", {"query": "wombat"})
        assert "wombat runner" in found and "wombat cache" not in found and "wombat pipeline" not in found

        data_dir.rename(other)  # and back to the first root: nothing of the replacement is left in the answers
        (tmp_path / "first-root").rename(data_dir)
        back = await tool(session, WAKE, {})
        assert memory_lines(back) == ["made by another process"] and "2 items" in back and "Project" not in back
        found = await tool(session, "mnemon_recall", {"query": "wombat"})
        assert "wombat cache" in found and "wombat runner" not in found
