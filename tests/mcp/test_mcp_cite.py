"""The MCP write tools take ``cites`` (issue 24 item 2): a real ``mnemon-ls mcp`` through the SDK's stdio client,
on a real git repository. What a tool stores is what the command line reads back; a later recall in the same
long-lived server sees the cited file change (the freshness cache is kept only while the file's stat is the
same); a bad citation is a tool error naming the field and the rule, and nothing changes on disk."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

from tests.gitrepo import commit_files, make_repo
from tests.helpers.procs import tree_snapshot
from tests.helpers.zygote import mnemon_command
from tests.mcp.conftest import REPO, answer as call, mcp_session, server_env, text


def at_once() -> dict[str, str]:
    """The server's environment with the cited-file watch off: every call checks the cited files, so a change
    made by the test is seen at once, not when the watch reports it (tests/mcp/test_mcp_staleness.py runs the
    watched server)."""
    return server_env(MNEMON_WATCH_CITED_FILES="0")

LIB = "def parse(text):\n    return text.split()\n"
PARSE = {"path": "src/lib.py", "startLine": 1, "endLine": 2, "sha256": hashlib.sha256(LIB.encode()).hexdigest(),
         "symbol": "parse"}


def cli_json(workspace: Path, data_dir: Path, *args: str) -> dict:
    proc = subprocess.run([*mnemon_command(), *args, "--json", "--workspace", str(workspace), "--scope", "custom",
                           "--data-dir", str(data_dir)], capture_output=True, text=True, env=server_env(),
                          cwd=str(REPO), timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


async def test_every_write_tool_cites_and_recall_follows_the_file(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    commit_files(repo, {"src/lib.py": LIB}, "lib")
    workspace, data_dir = Path(repo.workdir), tmp_path / "root"
    cite = [{"path": "src/lib.py", "startLine": 1, "endLine": 2, "symbol": "parse"}]
    args = ["--workspace", str(workspace), "--scope", "custom", "--data-dir", str(data_dir)]
    async with mcp_session(args, env=at_once()) as session:
        added = await call(session, "mnemon_runtime_memory", {"action": "add", "content": "parse splits words",
                                                               "cites": cite})
        assert added.splitlines()[-1] == "cites: src/lib.py:1-2 [parse] (fresh)"
        assert cli_json(workspace, data_dir, "runtime", "list")["entries"][0]["cites"] == [PARSE | {"freshness": "fresh"}]

        await call(session, "mnemon_memory_spaces", {"action": "create", "name": "Project", "description": "facts",
                                                     "active": True})
        remembered = await call(session, "mnemon_remember", {"content": "the wombat parser splits words",
                                                             "cites": cite})
        assert remembered.splitlines()[-2:] == ["cites: src/lib.py:1-2 [parse] (fresh)", (  # the same lines as the entry
            'possibly superseded (cites the same lines; check it and update or remove it): runtime MEMORY.md '
            '"parse splits words"')]
        assert "   cites: src/lib.py:1-2 [parse] (fresh)" in (await call(session, "mnemon_recall",
                                                                         {"query": "wombat parser"})).splitlines()
        (workspace / "src" / "lib.py").write_text("import re\n\n" + LIB)  # same server, the file changed
        assert "   cites: src/lib.py:1-2 [parse] (moved to 3-4)" in (await call(session, "mnemon_recall",
                                                                               {"query": "wombat parser"})).splitlines()

        proposed = await call(session, "mnemon_records_propose", {"title": "Parser", "content": "splits words",
                                                                  "source_refs": [{"kind": "file", "id": "src/lib.py"}],
                                                                  "cites": [{"path": "src/lib.py", "startLine": 3}]})
        assert proposed.splitlines()[-2] == "cites: src/lib.py:3 (fresh)"
        # line 3 is the second of the lines 1-2 the entry and the item cite: they moved there
        assert proposed.splitlines()[-1].startswith('possibly superseded (cites the same lines; check it and update '
                                                    'or remove it): runtime MEMORY.md "parse splits words"; spaces ')
        created = await call(session, "mnemon_document_create", {"title": "Lib", "content": "# Lib", "cites": [
            {"path": "src/lib.py", "startLine": 3, "endLine": 4, "symbol": "parse"}]})
        assert "cites: src/lib.py:3-4 [parse] (fresh)" in created.splitlines()

    records = cli_json(workspace, data_dir, "records", "list")["records"]
    assert [r["cites"][0]["startLine"] for r in records] == [3]
    side = json.loads((data_dir / "state" / "citations" / "documents.json").read_text())["citations"]
    assert list(side.values()) == [[PARSE | {"startLine": 3, "endLine": 4}]]


async def test_a_bad_citation_is_a_tool_error_and_changes_nothing(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    commit_files(repo, {"src/lib.py": LIB}, "lib")
    workspace, data_dir = Path(repo.workdir), tmp_path / "root"
    args = ["--workspace", str(workspace), "--scope", "custom", "--data-dir", str(data_dir)]
    async with mcp_session(args, env=at_once()) as session:
        await call(session, "mnemon_runtime_memory", {"action": "add", "content": "already here"})
        before, tree = tree_snapshot(data_dir), tree_snapshot(workspace)
        cases = [
            ([{"path": "../elsewhere.py"}], f"cites[0].path: must be a file inside the workspace {workspace} (got "
                                            "'../elsewhere.py')"),
            ([{"path": "src/lib.py", "startLine": 2, "endLine": 1}], "cites[0].endLine: must not be before startLine "
                                                                     "(1 < 2)"),
            ([{"path": ".git/config"}], "cites[0].path: must not be inside a .git directory (got '.git/config')"),
            ([{"path": "src"}], "cites[0].path: is a directory, not a file (src)"),
        ]
        for cites, error in cases:
            for name, arguments in (("mnemon_runtime_memory", {"action": "add", "content": "a fact"}),
                                    ("mnemon_document_create", {"title": "T", "content": "body"})):
                result = await session.call_tool(name, arguments | {"cites": cites})
                assert result.is_error and text(result) == f"Error executing tool {name}: invalid-input: {error}"
        result = await session.call_tool("mnemon_runtime_memory", {"action": "add", "target": "user",
                                                                   "content": "likes tea", "cites": [{"path": "x"}]})
        assert result.is_error and text(result).endswith("invalid-input: cites: only MEMORY.md entries (target "
                                                         "memory) cite code; USER.md is about the person")
        assert tree_snapshot(data_dir) == before and tree_snapshot(workspace) == tree


async def test_a_path_past_the_one_path_rule_is_refused_by_the_file_action_and_never_repeated(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    workspace, data_dir = Path(repo.workdir), tmp_path / "root"
    rule = "must be a path of at most 4096 characters without NUL"
    long = "a" * 40_000
    args = ["--workspace", str(workspace), "--scope", "custom", "--data-dir", str(data_dir)]
    async with mcp_session(args, env=at_once()) as session:
        for path in (long, "/" + long, workspace.as_uri() + "/" + long):
            result = await session.call_tool("mnemon_citations", {"action": "file", "path": path})
            assert result.is_error, text(result)[:300]
            assert text(result) == f"Error executing tool mnemon_citations: invalid-input: path: {rule}"
        cited = await session.call_tool("mnemon_remember", {"content": "c", "cites": [{"path": long}]})
        assert cited.is_error and text(cited).endswith(f"cites[0].path: {rule}"), text(cited)[:300]
        outside = await session.call_tool("mnemon_citations", {"action": "file", "path": "/" + "b" * 4000})
        assert outside.is_error and "must be a file inside the workspace" in text(outside)
        assert len(text(outside)) < 600, len(text(outside))


async def test_a_uri_that_names_no_workspace_file_is_repeated_short(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    workspace, data_dir = Path(repo.workdir), tmp_path / "root"
    args = ["--workspace", str(workspace), "--scope", "custom", "--data-dir", str(data_dir)]
    async with mcp_session(args, env=at_once()) as session:
        for name, arguments, rule in (
                ("mnemon_citations", {"action": "file", "path": "file://elsewhere/" + "c" * 4000},
                 "path: remote file URIs are not supported (got 'file://elsewhere/ccc"),
                ("mnemon_status", {"workspace": "vscode-vfs://" + "d" * 40_000},
                 "workspace: only file: URIs are supported (got 'vscode-vfs://ddd")):
            result = await session.call_tool(name, arguments)
            assert result.is_error and rule in text(result), text(result)[:300]
            assert len(text(result)) < 600, len(text(result))
