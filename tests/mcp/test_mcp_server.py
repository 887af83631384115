"""``mnemon-ls mcp`` through the official SDK client over stdio: tools, resources, prompts, errors, roots,
branch scope on real git repositories, and concurrent writers on one root."""

from __future__ import annotations

import asyncio
import json
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from mcp.shared.exceptions import MCPError

from mnemon_ls import guidance
from tests.helpers.procs import LineReader
from tests.gitrepo import create_branch, make_repo, snapshot, switch
from tests.mcp.conftest import REPO, mcp_session, server_env, text
from tests.helpers.zygote import mnemon_command

TOOLS = {"mnemon_runtime_memory", "mnemon_wake", "mnemon_recall", "mnemon_remember", "mnemon_related",
         "mnemon_link", "mnemon_forget", "mnemon_document_search", "mnemon_document_create",
         "mnemon_document_manage", "mnemon_memory_spaces", "mnemon_status", "mnemon_records_propose",
         "mnemon_records_search", "mnemon_runtime_compact", "mnemon_import_propose", "mnemon_citations"}
READ_TOOLS = {"mnemon_wake", "mnemon_recall", "mnemon_related", "mnemon_document_search", "mnemon_memory_spaces",
              "mnemon_document_manage", "mnemon_status", "mnemon_records_search", "mnemon_citations"}


def files(state: dict) -> dict:
    """The regular files of a :func:`tests.gitrepo.snapshot`."""
    return {k: v for k, v in state.items() if stat.S_ISREG(v[0])}


def args_for(workspace: Path, data_dir: Path, *extra: str) -> list[str]:
    return ["--workspace", str(workspace), "--scope", "custom", "--data-dir", str(data_dir), *extra]


async def call(session, name: str, arguments: dict) -> tuple[bool, str]:
    result = await session.call_tool(name, arguments)
    return bool(result.is_error), text(result)


async def test_tools_have_schemas_descriptions_and_the_routing_guidance(workspace: Path, data_dir: Path) -> None:
    async with mcp_session(args_for(workspace, data_dir)) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert set(tools) == TOOLS
        for tool in tools.values():
            assert tool.input_schema["type"] == "object"
            assert len(tool.description or "") >= 120, tool.name  # says when to use it and when not
        limit = tools["mnemon_recall"].input_schema["properties"]["limit"]
        assert (limit["type"], limit["minimum"], limit["maximum"], limit["default"]) == ("integer", 1, 12, 8)
        # One schema per operation: the tool's arguments are the language server's params model's fields.
        from mnemon_ls.ops.runtime import RuntimeMutateParams
        from mnemon_ls.ops.spaces import ForgetParams, LinkParams
        for name, model in (("mnemon_runtime_memory", RuntimeMutateParams), ("mnemon_link", LinkParams),
                            ("mnemon_forget", ForgetParams)):
            properties = tools[name].input_schema["properties"]
            assert set(properties) == set(model.model_fields), name
            assert all(properties[f]["description"] == model.model_fields[f].description
                       for f in model.model_fields), name
        assert tools["mnemon_runtime_memory"].input_schema["required"] == ["action"]
        assert tools["mnemon_wake"].annotations.read_only_hint is True
        assert tools["mnemon_forget"].annotations.destructive_hint is True
        prompt = await session.get_prompt("mnemon-routing")
        assert prompt.messages[0].content.text == f"{guidance.ROUTING_GUIDANCE}\n\n{guidance.ADMISSION_RULES}"
    assert "Never save secrets" in guidance.instructions()


async def test_initialize_carries_the_instructions(workspace: Path, data_dir: Path) -> None:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=sys.executable, args=["-m", "mnemon_ls", "mcp", *args_for(workspace, data_dir)],
                                   cwd=str(REPO), env=server_env())
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        result = await session.initialize()
    assert result.instructions == guidance.instructions()
    assert result.server_info.name == "mnemon-ls"


async def test_read_only_offers_only_read_tools(workspace: Path, data_dir: Path) -> None:
    async with mcp_session(args_for(workspace, data_dir, "--read-only")) as session:
        assert {t.name for t in (await session.list_tools()).tools} == READ_TOOLS
        error, message = await call(session, "mnemon_memory_spaces", {"action": "create", "name": "A", "description": "a"})
        assert error and ("invalid-input: action: create is disabled in read-only mode (mnemon-ls mcp --read-only); "
                          "available: list") in message
        error, message = await call(session, "mnemon_document_manage", {"action": "archive", "id": "x", "revision": 1})
        assert error and "action: archive is disabled in read-only mode" in message and "available: get" in message
        with pytest.raises(MCPError) as refused:  # a tool not offered is a protocol error (MCP spec, tools)
            await session.call_tool("mnemon_runtime_memory", {"action": "add", "content": "x"})
        assert refused.value.code == -32602 and refused.value.message == "Unknown tool: mnemon_runtime_memory"
    assert not data_dir.exists()


async def test_runtime_add_shows_in_wake_resources_and_status(workspace: Path, data_dir: Path) -> None:
    async with mcp_session(args_for(workspace, data_dir)) as session:
        error, message = await call(session, "mnemon_runtime_memory",
                                    {"action": "add", "content": "Run tests with pytest -n 2", "importance": "critical"})
        assert not error and message.startswith("Entry added. MEMORY.md: 1 entry, 26/10240 UTF-8 bytes; revision ")
        error, message = await call(session, "mnemon_runtime_memory",
                                    {"action": "add", "target": "user", "content": "Prefers short answers"})
        assert not error and "USER.md: 1 entry" in message
        error, wake = await call(session, "mnemon_wake", {})
        assert not error
        rest = wake  # no "View: view-..." line: it meant nothing to a reader (issue 23 item 8)
        assert rest.startswith("MNEMON RUNTIME MEMORY SNAPSHOT\n")
        assert "[importance=critical; created=0d; updated=0d]\nRun tests with pytest -n 2" in rest
        assert "Git branch: main" in rest
        memory = await session.read_resource("mnemon://runtime/MEMORY.md")
        assert memory.contents[0].text == "Run tests with pytest -n 2"
        user = await session.read_resource("mnemon://runtime/USER.md")
        assert user.contents[0].text == "Prefers short answers"
        wake_resource = await session.read_resource("mnemon://wake")
        assert wake_resource.contents[0].text == rest
        error, status = await call(session, "mnemon_status", {})
        assert not error and f"storage root: {data_dir} (scope custom)" in status
        assert "memory: 1 entry, 26/10240 UTF-8 bytes" in status and "git branch: main" in status
        assert "memory spaces: 0 (0 active)" in status
    # The same fact is in the store the CLI and the editors read.
    stored = json.loads((data_dir / "runtime" / "memories.json").read_text())
    assert [e["content"] for e in stored["entries"] if e["target"] == "memory"] == ["Run tests with pytest -n 2"]


async def test_branch_scope_hides_a_branch_only_fact_on_another_branch(workspace: Path, data_dir: Path) -> None:
    import pygit2

    repo = pygit2.Repository(str(workspace))
    create_branch(repo, "other")
    async with mcp_session(args_for(workspace, data_dir)) as session:
        assert not (await call(session, "mnemon_runtime_memory",
                               {"action": "add", "content": "Main-only: deploy from main", "branches": ["main"]}))[0]
        assert not (await call(session, "mnemon_memory_spaces",
                               {"action": "create", "name": "Project", "description": "decisions"}))[0]
        error, message = await call(session, "mnemon_remember",
                                    {"content": "The release train leaves from main on Fridays", "scope_to_branch": True})
        assert not error and message.startswith("committed: Remembered in Project.")
        # the same fact for every branch is not stored again, and the answer says its branch scope was kept
        error, again = await call(session, "mnemon_remember", {"content": "The release train leaves from main on Fridays"})
        assert not error and again.startswith("skipped: Already remembered in Project as ")
        assert ", scoped to branch main only: it was not stored for every branch" in again
        assert again.splitlines()[0].endswith("; no new item was stored.")
        assert "Main-only: deploy from main" in (await call(session, "mnemon_wake", {}))[1]
        assert "memory spaces: 1 (1 active)" in (await call(session, "mnemon_status", {}))[1]
        _, found = await call(session, "mnemon_recall", {"query": "release train"})
        assert found.startswith("1. The release train leaves from main on Fridays")
        switch(repo, "other")
        _, wake = await call(session, "mnemon_wake", {})
        assert "Main-only" not in wake and "Git branch: other (1 branch-scoped entry hidden)" in wake
        _, found = await call(session, "mnemon_recall", {"query": "release train"})
        assert "release train" not in found.split("hidden: 1 item scoped to another git branch")[0]
        assert "{" not in found  # no Python dict (issue 23 item 8)
        assert "No memory matched." in found


async def test_documents_create_search_get_update_archive(workspace: Path, data_dir: Path) -> None:
    async with mcp_session(args_for(workspace, data_dir)) as session:
        error, created = await call(session, "mnemon_document_create",
                                    {"title": "Rollback plan", "content": "Roll back when the error rate passes 2%."})
        assert not error and created.startswith("Document created: Rollback plan (id: ")
        doc_id = created.split("(id: ")[1].split(")")[0]
        error, hits = await call(session, "mnemon_document_search", {"query": "error rate"})
        assert not error and f"- Rollback plan (id: {doc_id}" in hits and hits.endswith("1 result(s)")
        error, body = await call(session, "mnemon_document_manage", {"action": "get", "id": doc_id})
        assert not error and body.startswith("# Rollback plan\n") and body.endswith("Roll back when the error rate passes 2%.")
        resource = await session.read_resource(f"mnemon://documents/{doc_id}")
        assert "error rate passes 2%" in resource.contents[0].text
        error, updated = await call(session, "mnemon_document_manage",
                                    {"action": "update", "id": doc_id, "content": "Roll back at 3%.", "revision": 1})
        assert not error and "revision 2" in updated
        error, message = await call(session, "mnemon_document_manage", {"action": "archive", "id": doc_id})
        assert error and message.endswith("invalid-input: revision: is required for action=archive")
        error, archived = await call(session, "mnemon_document_manage", {"action": "archive", "id": doc_id, "revision": 2})
        assert not error and archived.startswith("Document archived: Rollback plan")


async def test_every_tool_error_names_the_code_and_changes_nothing(workspace: Path, data_dir: Path) -> None:
    async with mcp_session(args_for(workspace, data_dir)) as session:
        assert not (await call(session, "mnemon_runtime_memory", {"action": "add", "content": "seed"}))[0]
        assert not (await call(session, "mnemon_memory_spaces", {"action": "create", "name": "P", "description": "p"}))[0]
        # Reads build derived side indexes on first use: build them before taking the snapshot.
        assert not (await call(session, "mnemon_recall", {"query": "seed"}))[0]
        assert not (await call(session, "mnemon_document_search", {"query": "seed"}))[0]
        before = snapshot(data_dir)
        cases = [
            ("mnemon_runtime_memory", {"action": "add", "content": "a\n§\nb"}, "invalid-input: content: "),
            ("mnemon_runtime_memory", {"action": "add", "content": "x" * 8193}, "invalid-input: content: "),
            ("mnemon_runtime_memory", {"action": "remove", "old_text": "no such entry"}, "no-match: "),
            ("mnemon_runtime_memory", {"action": "replace", "content": "x"}, "invalid-input: old_text: "),
            ("mnemon_runtime_memory", {"action": "add", "content": "x", "branches": ["a..b"]}, "invalid-input: branches"),
            ("mnemon_wake", {"branch": "-bad"}, "invalid-input: branch: "),
            ("mnemon_recall", {"query": ""}, "invalid-input: query"),
            ("mnemon_recall", {"query": "x", "limit": 13}, "limit"),
            ("mnemon_remember", {"content": ""}, "invalid-input: content"),
            ("mnemon_remember", {"content": "x", "space_id": "nope"}, "invalid-input: space_id: is not a registered space"),
            ("mnemon_related", {"space_id": "default", "id": "missing"}, "id"),
            ("mnemon_link", {"space_id": "default", "source_id": "a", "target_id": "a"},
             "invalid-input: target_id: must differ from source_id"),  # the rule names the argument too, as the tool spells it
            ("mnemon_forget", {"space_id": "default", "id": "missing"}, "no-match: id: "),  # a missing match (exit 3)
            ("mnemon_document_search", {"query": "x", "limit": 0}, "limit"),
            ("mnemon_document_create", {"title": "", "content": "x"}, "invalid-input: title"),
            ("mnemon_document_manage", {"action": "get", "id": "00000000-0000-4000-8000-000000000000"}, "not-found"),
            ("mnemon_memory_spaces", {"action": "create", "name": "", "description": "d"}, "invalid-input: name"),
            ("mnemon_memory_spaces", {"action": "activate"}, "invalid-input: space_id"),
            ("mnemon_memory_spaces", {"action": "create", "name": "Ｐ", "description": "a fullwidth twin"},
             "invalid-input: name: is already the name of space P (default)"),
            ("mnemon_memory_spaces", {"action": "update", "space_id": "DEFAULT", "name": "P\u2060"},
             "invalid-input: name: must not contain invisible format characters such as zero-width spaces (found U+2060"),
            ("mnemon_status", {"workspace": "relative/dir"}, "invalid-input: workspace"),
            ("mnemon_status", {"workspace": "/"}, "not-in-workspace: "),
            ("mnemon_recall", {"query": "x", "bogus": 1}, "invalid-input: bogus: is not an argument of mnemon_recall"),
            ("mnemon_recall", {"query": 5}, "query"),
            ("mnemon_recall", {}, "query"),
        ]
        for name, arguments, expected in cases:
            error, message = await call(session, name, arguments)
            assert error, (name, arguments, message)
            assert expected in message, (name, arguments, message)
            assert "Traceback" not in message
        # an id in another case is that id (the one naming rule of every surface): the same answers as the id
        for name, arguments in (("mnemon_memory_spaces", {"action": "activate"}),
                                ("mnemon_related", {"id": "missing"}), ("mnemon_forget", {"id": "missing"})):
            exact = await call(session, name, {**arguments, "space_id": "default"})
            for other in ("DEFAULT", "Default"):
                assert await call(session, name, {**arguments, "space_id": other}) == exact, (name, other)
        huge = "x" * (10 * 1024 * 1024)
        error, message = await call(session, "mnemon_remember", {"content": huge})
        assert error and "invalid-input: content" in message
        # Every file byte-identical and untouched (a rejected write may take and drop a lock, which moves
        # only its directory's mtime).
        assert files(snapshot(data_dir)) == files(before)


async def test_a_remember_that_activates_its_space_tells_the_model_what_changed(workspace: Path, data_dir: Path) -> None:
    async with mcp_session(args_for(workspace, data_dir)) as session:
        for name, active in (("Default", True), ("Team", False)):
            assert not (await call(session, "mnemon_memory_spaces", {
                "action": "create", "name": name, "description": f"{name} facts", "active": active}))[0]
        _, listed = await call(session, "mnemon_memory_spaces", {})
        team = next(line.split(":")[0][2:] for line in listed.splitlines() if ": Team (" in line)
        error, message = await call(session, "mnemon_remember", {"content": "We deploy on Fridays", "space_id": team})
        assert not error and message.splitlines()[-1] == (
            f"Team was inactive: this write made it active. 2 spaces are active now (Default, Team), so "
            f"mnemon_remember without space_id is refused until only one is: name the space (space_id={team}), or "
            f"make Team inactive again with mnemon_memory_spaces action=deactivate space_id={team}.")
        error, message = await call(session, "mnemon_remember", {"content": "A plain fact"})
        assert error and "2 spaces are active (Default, Team)" in message


async def test_workspace_comes_from_the_client_roots_and_is_refused_outside_them(tmp_path: Path) -> None:
    first, second, outside = tmp_path / "first", tmp_path / "second", tmp_path / "outside"
    for path in (first, second, outside):
        make_repo(path)
    data = tmp_path / "global"
    roots = [first]
    env = server_env(MNEMON_DATA_DIR=str(data))
    async with mcp_session(["--scope", "workspaces"], cwd=outside, roots=roots, env=env) as session:
        _, status = await call(session, "mnemon_status", {})
        assert f"workspace: {first}" in status
        error, message = await call(session, "mnemon_status", {"workspace": str(outside)})
        assert error and message.startswith("Error executing tool mnemon_status: not-in-workspace: workspace: ")
        roots.append(second)
        await session.send_roots_list_changed()
        # The notification is handled in order with the next request on the same connection.
        error, message = await call(session, "mnemon_status", {})
        assert error and "invalid-input: workspace: is required when the client has 2 roots" in message
        _, status = await call(session, "mnemon_status", {"workspace": second.as_uri()})
        assert f"workspace: {second}" in status
        _, status = await call(session, "mnemon_status", {"workspace": str(second / "file.txt")})
        assert f"workspace: {second}" in status


async def test_without_roots_or_workspace_the_working_directory_is_used(workspace: Path, data_dir: Path) -> None:
    async with mcp_session(["--scope", "custom", "--data-dir", str(data_dir)], cwd=workspace) as session:
        _, status = await call(session, "mnemon_status", {})
        assert f"workspace: {workspace}" in status


def cli_add(workspace: Path, data_dir: Path, content: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*mnemon_command(), "runtime", "add", "--content", content,
                           *args_for(workspace, data_dir)], capture_output=True, text=True, env=server_env(),
                          cwd=str(REPO), timeout=60)


async def test_two_mcp_servers_and_the_cli_on_one_root_lose_nothing(workspace: Path, data_dir: Path) -> None:
    settings = ["--memory-limit-bytes", "1048576"]

    async def writer(tag: str, count: int) -> None:
        async with mcp_session(args_for(workspace, data_dir, *settings)) as session:
            for n in range(count):
                error, message = await call(session, "mnemon_runtime_memory",
                                            {"action": "add", "content": f"fact {tag}-{n}"})
                assert not error, message

    async def cli(count: int) -> None:
        for n in range(count):
            proc = await asyncio.to_thread(cli_add, workspace, data_dir, f"fact cli-{n}")
            assert proc.returncode == 0, proc.stderr

    await asyncio.gather(writer("a", 20), writer("b", 20), cli(6))
    stored = json.loads((data_dir / "runtime" / "memories.json").read_text())
    contents = {e["content"] for e in stored["entries"] if e["target"] == "memory"}
    expected = {f"fact a-{n}" for n in range(20)} | {f"fact b-{n}" for n in range(20)} | {f"fact cli-{n}" for n in range(6)}
    assert contents == expected


async def test_stdout_carries_only_protocol_messages(workspace: Path, data_dir: Path) -> None:
    """A stdio MCP server must never print to stdout: every line it writes is one JSON-RPC message."""
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                          "clientInfo": {"name": "raw", "version": "0"}}}
    proc = subprocess.run(mnemon_command("mcp", *args_for(workspace, data_dir)),
                          input=json.dumps(request) + "\n", capture_output=True, text=True, env=server_env(),
                          cwd=str(REPO), timeout=60)
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    assert lines and all(json.loads(line)["jsonrpc"] == "2.0" for line in lines)
    assert json.loads(lines[0])["result"]["serverInfo"]["name"] == "mnemon-ls"


@pytest.mark.parametrize("flag", ["--scope", "--memory-limit-bytes"])
def test_bad_flags_are_one_line_errors(flag: str, workspace: Path) -> None:
    proc = subprocess.run(mnemon_command("mcp", flag, "nope", "--workspace", str(workspace)),
                          capture_output=True, text=True, env=server_env(), cwd=str(REPO), timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and proc.stdout == ""


def raw_session(workspace: Path, data_dir: Path, messages: list[dict], *, close_early: bool = False) -> list[dict]:
    """Send newline-delimited JSON-RPC messages to a fresh server, close stdin, return every response."""
    proc = subprocess.Popen(mnemon_command("mcp", *args_for(workspace, data_dir)),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            env=server_env(), cwd=str(REPO))
    out, _ = proc.communicate("".join(json.dumps(m) + "\n" for m in messages), timeout=60)
    assert proc.returncode is not None
    return [json.loads(line) for line in out.splitlines() if line.strip()]


INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}


def test_a_client_that_never_sends_initialized_gets_answers_or_errors_never_silence(workspace: Path, data_dir: Path) -> None:
    add = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
           "params": {"name": "mnemon_runtime_memory", "arguments": {"action": "add", "content": "early fact"}}}
    before_initialize = raw_session(workspace, data_dir, [add])
    assert [r.get("id") for r in before_initialize] == [2] and "error" in before_initialize[0]
    assert not data_dir.exists(), "a call before initialize wrote nothing"
    # initialize, then a call without notifications/initialized, on a connection that stays open.
    proc = subprocess.Popen(mnemon_command("mcp", *args_for(workspace, data_dir)),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            env=server_env(), cwd=str(REPO))
    try:
        reader = LineReader(proc)
        for message in (INIT, add):
            proc.stdin.write((json.dumps(message) + "\n").encode())
            proc.stdin.flush()
        responses = {}
        while len(responses) < 2:
            line = reader.readline(timeout=30)  # raises when a request is left unanswered
            message = json.loads(line)
            responses[message.get("id")] = message
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    assert "result" in responses[1]
    stored = data_dir / "runtime" / "memories.json"
    if "result" in responses[2]:  # served: then it is committed
        assert not responses[2]["result"].get("isError") and "early fact" in stored.read_text()
    else:
        assert not stored.exists()


def test_a_client_that_disconnects_mid_call_leaves_the_write_committed_or_absent(workspace: Path, data_dir: Path) -> None:
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    for n in range(4):
        add = {"jsonrpc": "2.0", "id": 10 + n, "method": "tools/call",
               "params": {"name": "mnemon_runtime_memory", "arguments": {"action": "add", "content": f"fact {n}"}}}
        raw_session(workspace, data_dir, [INIT, initialized, add])  # stdin closes right after the call
        stored = json.loads((data_dir / "runtime" / "memories.json").read_text()) if (
            data_dir / "runtime" / "memories.json").exists() else {"entries": []}
        contents = [e["content"] for e in stored["entries"]]
        assert set(contents) <= {f"fact {k}" for k in range(n + 1)} and len(contents) == len(set(contents))
        assert not (data_dir / "runtime" / ".memories.lock").exists()


async def test_wake_names_the_tools_an_mcp_client_calls(workspace: Path, data_dir: Path) -> None:
    """The wake over MCP carries the routing line and tells the assistant to recall with the tool
    (``mnemon_recall``), not with the language server's request (``mnemon/recall``)."""
    async with mcp_session(args_for(workspace, data_dir)) as session:
        error, _ = await call(session, "mnemon_memory_spaces",
                              {"action": "create", "name": "Project", "description": "Decisions"})
        assert not error
        error, wake = await call(session, "mnemon_wake", {})
        assert not error
        lines = wake.split("\n")
        assert lines[0] == "MNEMON RUNTIME MEMORY SNAPSHOT" and lines[2].startswith("Store revision: ")
        assert guidance.WAKE_GUIDANCE_LINE in lines
        assert "recall it from them (mnemon_recall)." in wake and "mnemon/recall" not in wake
