"""What an assistant sees through a real ``mnemon-ls mcp`` server (SDK stdio client, real git repository) when
cited code changes under a long-lived server (issue 24 items 4 and 7): the wake tool marks the entry and counts
it once; recall says the cited code changed and ranks it below a fresh one of its tier; a write citing the same
lines names what it possibly supersedes.

Run twice: with the cited-file watch (the default of a long-lived server: a wake answers the citations it trusts
with no system call until the watch reports the change, which the test waits for by asking again until the wake
shows it) and without it (``MNEMON_WATCH_CITED_FILES=0``: every call checks the files, so the very next wake
shows the change)."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest

from tests.gitrepo import commit_files, make_repo
from tests.mcp.conftest import answer as call, mcp_session, server_env

CODE = "".join(f"line {n}\n" for n in range(1, 21))
#: Seconds the watched server may take to report a change (its debounce is 0.08 s; a loaded machine is slower).
WATCH_DEADLINE = 60.0


async def wake_after_change(session, watched: bool) -> str:
    """The wake once it shows the change: the next one without a watch; with it, the first that marks a citation
    (asked again after each answer that does not yet, up to :data:`WATCH_DEADLINE`)."""
    deadline = time.monotonic() + WATCH_DEADLINE
    while True:
        wake = await call(session, "mnemon_wake", {})
        if not watched or "Citations:" in wake or time.monotonic() > deadline:
            return wake
        await anyio.sleep(0.05)  # the interval between two asks, not a wait for the change: the loop waits for it


@pytest.mark.parametrize("watched", [True, False], ids=["watched", "at-once"])
async def test_wake_recall_and_writes_follow_the_cited_code_in_one_server(tmp_path: Path, watched: bool) -> None:
    repo = make_repo(tmp_path / "repo")
    commit_files(repo, {"src/limits.py": CODE}, "limits")
    workspace, data_dir = Path(repo.workdir), tmp_path / "root"
    args = ["--workspace", str(workspace), "--scope", "custom", "--data-dir", str(data_dir)]
    env = server_env() if watched else server_env(MNEMON_WATCH_CITED_FILES="0")
    async with mcp_session(args, env=env) as session:
        await call(session, "mnemon_runtime_memory", {"action": "add", "content": "the limit lives at lines 5-6",
                                                      "cites": [{"path": "src/limits.py", "startLine": 5, "endLine": 6}]})
        await call(session, "mnemon_memory_spaces", {"action": "create", "name": "Project", "description": "facts",
                                                     "active": True})
        await call(session, "mnemon_remember", {"content": "the wombat limit is ten",
                                                "cites": [{"path": "src/limits.py", "startLine": 10}]})
        await call(session, "mnemon_remember", {"content": "the wombat limit is checked twice",
                                                "cites": [{"path": "src/limits.py", "startLine": 15}]})
        wake = await call(session, "mnemon_wake", {})
        assert "Citations:" not in wake
        assert "Citations:" not in await call(session, "mnemon_wake", {})  # a second wake: trusted when watched
        (workspace / "src" / "limits.py").write_text(CODE.replace("line 5\n", "line five\n").replace("line 10\n", "X\n"))
        lines = (await wake_after_change(session, watched)).splitlines()
        assert lines[lines.index("the limit lives at lines 5-6") - 1].endswith("; cites src/limits.py:5-6: changed]")
        assert len([line for line in lines if line.startswith("Citations: 1 cited code range of 1 entry below is "
                                                              "not fresh")]) == 1
        recalled = (await call(session, "mnemon_recall", {"query": "wombat limit ten"})).splitlines()
        tiers = [line for line in recalled if line.startswith("   space:")]
        assert tiers[-1].endswith("· cited code changed") and "cited code" not in tiers[0]
        assert recalled[0].endswith("the wombat limit is checked twice")
        written = await call(session, "mnemon_remember", {"content": "the wombat limit is now twelve",
                                                          "cites": [{"path": "src/limits.py", "startLine": 14,
                                                                     "endLine": 16}]})
        assert written.splitlines()[-1] == ('possibly superseded (cites the same lines; check it and update or remove '
                                            'it): spaces default/' + written.split("spaces default/")[1].split(" ")[0]
                                            + ' "the wombat limit is checked twice"')
