"""A watched ``mnemon-ls mcp`` server (SDK stdio client, real git repository) after the ancestors of a cited file
change under it (issue 24 items 3 and 9): the directory holding the cited file is renamed away, or the
workspace's subdirectory is replaced; the next wakes show the citation ``gone`` within the watch's debounce (the
test asks again until they do, up to a deadline a loaded machine meets), where before the watch kept answering
``fresh`` from its trust until the server restarted."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.gitrepo import commit_files, make_repo
from tests.mcp.conftest import answer as call, mcp_session, server_env
from tests.mcp.test_mcp_staleness import CODE, wake_after_change


@pytest.mark.parametrize("how", ["rename", "replace"])
async def test_an_ancestor_renamed_or_replaced_under_a_watched_server_makes_the_citation_gone(tmp_path: Path,
                                                                                             how: str) -> None:
    repo = make_repo(tmp_path / "repo")
    commit_files(repo, {"lib/pkg/limits.py": CODE}, "limits")
    workspace, data_dir = Path(repo.workdir), tmp_path / "root"
    args = ["--workspace", str(workspace), "--scope", "custom", "--data-dir", str(data_dir)]
    async with mcp_session(args, env=server_env()) as session:
        await call(session, "mnemon_runtime_memory", {"action": "add", "content": "the limit lives at lines 5-6",
                                                      "cites": [{"path": "lib/pkg/limits.py", "startLine": 5,
                                                                 "endLine": 6}]})
        for _ in range(3):  # computed, then trusted once the watch stands
            assert "Citations:" not in await call(session, "mnemon_wake", {})
        (workspace / "lib").rename(tmp_path / "lib-away")
        if how == "replace":  # a directory of the same name, without the file
            (workspace / "lib" / "pkg").mkdir(parents=True)
        lines = (await wake_after_change(session, True)).splitlines()
        assert lines[lines.index("the limit lives at lines 5-6") - 1].endswith("; cites lib/pkg/limits.py:5-6: gone]")


async def test_a_file_edited_through_its_hard_link_shows_in_the_next_wake(tmp_path: Path) -> None:
    """A hard-linked file is never trusted (an edit through its other name is reported in that name's directory,
    not the cited one's): the very next wake reads it."""
    import os

    repo = make_repo(tmp_path / "repo")
    commit_files(repo, {"src/limits.py": CODE}, "limits")
    workspace = Path(repo.workdir)
    (tmp_path / "elsewhere").mkdir()
    alias = tmp_path / "elsewhere" / "limits.py"
    os.link(workspace / "src" / "limits.py", alias)
    args = ["--workspace", str(workspace), "--scope", "custom", "--data-dir", str(tmp_path / "root")]
    async with mcp_session(args, env=server_env()) as session:
        await call(session, "mnemon_runtime_memory", {"action": "add", "content": "the limit lives at lines 5-6",
                                                      "cites": [{"path": "src/limits.py", "startLine": 5,
                                                                 "endLine": 6}]})
        for _ in range(3):
            assert "Citations:" not in await call(session, "mnemon_wake", {})
        with open(alias, "r+") as handle:  # the same inode, through the other name: no event in src/
            handle.write(CODE.replace("line 5\n", "line V\n"))
        assert "cites src/limits.py:5-6: changed]" in await call(session, "mnemon_wake", {})
