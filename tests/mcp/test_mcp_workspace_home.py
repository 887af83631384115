"""A tool's ``workspace`` argument follows the rule of every path someone gives: ``~`` and ``~/`` are your own
home, ``~name`` (another user's home, which ``os.path.expanduser`` looks up in the password database) is bad input
naming ``workspace`` and the rule. The real ``mnemon-ls mcp`` with a temporary HOME and data directory."""

from __future__ import annotations

from pathlib import Path

from tests.gitrepo import make_repo
from tests.helpers import procs
from tests.mcp.conftest import mcp_session, server_env, text

OWN_HOME = ("must not start with ~name (another user's home): only ~ or ~/ (your own home) is expanded; "
            "give an absolute path instead")


async def test_workspace_argument_expands_only_your_own_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    project = home / "proj"
    make_repo(project)
    env = server_env(HOME=str(home), MNEMON_DATA_DIR=str(tmp_path / "global"), MNEMON_SEMANTIC="off")
    before = procs.tree_snapshot(tmp_path)
    async with mcp_session(["--scope", "workspaces"], cwd=tmp_path, roots=[project], env=env) as session:
        for value in ("~root/x", "~nosuchuser"):
            result = await session.call_tool("mnemon_status", {"workspace": value})
            assert result.is_error
            assert text(result) == (f"Error executing tool mnemon_status: invalid-input: workspace: {OWN_HOME} "
                                    f"(got '{value}')")
        result = await session.call_tool("mnemon_status", {"workspace": "~/proj"})
        assert not result.is_error, text(result)
        assert f"workspace: {project}" in text(result)
    assert procs.tree_snapshot(tmp_path) == before
