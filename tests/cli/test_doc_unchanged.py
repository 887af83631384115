"""A no-op ``doc update`` (the same title and body) makes no revision (issue: every update made one): the
command line and the MCP tool, as real processes on a real git repository, both answer ``no change; revision N
kept`` from the one operation, and the managed file and ``index.json`` keep their bytes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.gitrepo import make_repo
from tests.helpers.zygote import mnemon_command
from tests.mcp.conftest import REPO, answer as call, mcp_session, server_env


def cli(workspace: Path, data_dir: Path, *args: str) -> str:
    proc = subprocess.run([*mnemon_command(), *args, "--workspace", str(workspace), "--data-dir", str(data_dir)],
                          capture_output=True, text=True, env=server_env(), cwd=str(REPO), timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


async def test_a_no_op_update_keeps_the_revision_on_the_command_line_and_in_mcp(tmp_path: Path) -> None:
    workspace, data_dir = Path(make_repo(tmp_path / "repo").workdir), tmp_path / "root"
    created = json.loads(cli(workspace, data_dir, "doc", "create", "--title", "Release plan", "--content",
                             "Tag, build.", "--json"))["document"]
    doc_id, index = created["id"], data_dir / "documents" / "index.json"
    before = (index.read_bytes(), Path(created["path"]).read_bytes())
    assert cli(workspace, data_dir, "doc", "update", doc_id, "--content", "Tag, build.", "--title",
               "Release plan") == f"Document unchanged: Release plan ({doc_id}): no change; revision 1 kept\n"
    unchanged = json.loads(cli(workspace, data_dir, "doc", "update", doc_id, "--json"))
    assert (unchanged["action"], unchanged["document"]["revision"], unchanged["notices"]) == (
        "unchanged", 1, ["no change; revision 1 kept"])
    args = ["--workspace", str(workspace), "--scope", "custom", "--data-dir", str(data_dir)]
    async with mcp_session(args, env=server_env()) as session:
        said = await call(session, "mnemon_document_manage", {"action": "update", "id": doc_id,
                                                              "content": "Tag, build."})
    assert said == f"Document unchanged: Release plan (id: {doc_id}): no change; revision 1 kept"
    assert (index.read_bytes(), Path(created["path"]).read_bytes()) == before  # nothing was written
    assert cli(workspace, data_dir, "doc", "update", doc_id, "--content", "Tag, build, publish.").startswith(
        f"Document updated: Release plan ({doc_id}), revision 2, ")
