"""What an assistant sees through a real ``mnemon-ls mcp`` server (SDK stdio client, real git repository) when
cited code changes under a long-lived server (issue 24 items 4 and 7): the wake tool marks the entry and counts
it once; recall says the cited code changed and ranks it below a fresh one of its tier; a write citing the same
lines names what it possibly supersedes."""

from __future__ import annotations

from pathlib import Path

from tests.gitrepo import commit_files, make_repo
from tests.mcp.conftest import answer as call, mcp_session

CODE = "".join(f"line {n}\n" for n in range(1, 21))


async def test_wake_recall_and_writes_follow_the_cited_code_in_one_server(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    commit_files(repo, {"src/limits.py": CODE}, "limits")
    workspace, data_dir = Path(repo.workdir), tmp_path / "root"
    args = ["--workspace", str(workspace), "--scope", "custom", "--data-dir", str(data_dir)]
    async with mcp_session(args) as session:
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
        (workspace / "src" / "limits.py").write_text(CODE.replace("line 5\n", "line five\n").replace("line 10\n", "X\n"))
        lines = (await call(session, "mnemon_wake", {})).splitlines()
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
