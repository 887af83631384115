"""Hostile input to ``mnemon-ls mcp`` found by an attack pass: lines that are not a message, lone
surrogates, argument errors in the SDK's words, huge values echoed back, an impossible workspace path,
and duplicate keys in a client's settings file."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from mnemon_ls.mcp.arguments import ERROR_TEXT_LIMIT
from mnemon_ls.mcp.stdio import answer_for
from tests.helpers.procs import LineReader
from tests.mcp.conftest import REPO, mcp_session, server_env, text
from tests.mcp.test_mcp_server import INIT, args_for
from tests.mcp.test_setup import run as run_cli
from tests.helpers.zygote import mnemon_command

INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


class RawClient:
    """``mnemon-ls mcp`` as a subprocess spoken to line by line (bytes exactly as given)."""

    def __init__(self, workspace: Path, data_dir: Path) -> None:
        self.proc = subprocess.Popen(mnemon_command("mcp", *args_for(workspace, data_dir)),
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     env=server_env(), cwd=str(REPO))
        self.reader = LineReader(self.proc)

    def send(self, line: str | bytes) -> None:
        data = line if isinstance(line, bytes) else line.encode("utf-8", "surrogatepass")
        assert self.proc.stdin is not None
        self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()

    def answer(self) -> dict:
        return json.loads(self.reader.readline(timeout=30))  # raises when nothing answers

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


@pytest.fixture
def client(workspace: Path, data_dir: Path):
    raw = RawClient(workspace, data_dir)
    raw.send(json.dumps(INIT))
    assert "result" in raw.answer()
    raw.send(json.dumps(INITIALIZED))
    yield raw
    raw.close()


def call(request_id: int, arguments_json: str, name: str = "mnemon_runtime_memory") -> str:
    return ('{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"%s","arguments":%s}}'
            % (request_id, name, arguments_json))


def test_a_lone_surrogate_in_a_call_is_answered_and_writes_nothing(client: RawClient, data_dir: Path) -> None:
    """It was never answered: the SDK dropped the line and the client waited forever."""
    client.send(call(7, '{"action":"add","content":"bad \\ud800 text"}'))
    answer = client.answer()
    assert answer["id"] == 7 and answer["error"]["code"] == -32602
    assert "params.arguments.content" in answer["error"]["message"] and "surrogate" in answer["error"]["message"]
    client.send(call(8, '{"action":"add","content":"a good fact"}'))
    good = client.answer()
    assert good["id"] == 8 and not good["result"].get("isError")
    stored = json.loads((data_dir / "runtime" / "memories.json").read_text())
    assert [e["content"] for e in stored["entries"]] == ["a good fact"]


@pytest.mark.parametrize("line, code, request_id", [
    ('{"jsonrpc":"2.0","id":5,"method":', -32700, None),
    ("not json at all", -32700, None),
    ("[1, 2, 3]", -32600, None),
    ('{"jsonrpc":"2.0","id":9,"method":42}', -32600, 9),
    ('{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}', -32600, None),
])
def test_lines_that_are_not_messages_get_json_rpc_errors(client: RawClient, line: str, code: int,
                                                        request_id: int | None) -> None:
    client.send(line)
    answer = client.answer()
    assert answer["error"]["code"] == code and answer["id"] == request_id
    client.send('{"jsonrpc":"2.0","id":100,"method":"ping"}')  # and the connection still serves
    assert client.answer() == {"jsonrpc": "2.0", "id": 100, "result": {}}


def test_invalid_bytes_and_bad_notifications_are_not_answered_but_do_not_stop_the_server(client: RawClient) -> None:
    client.send(b'{"jsonrpc":"2.0","method":"notifications/x","params":{"a":"\\udc80"}}')
    client.send(b"\xff\xfe garbage")  # becomes U+FFFD text: not JSON
    assert client.answer()["error"]["code"] == -32700
    client.send('{"jsonrpc":"2.0","id":101,"method":"ping"}')
    assert client.answer()["id"] == 101


def test_answer_for_passes_messages_through() -> None:
    assert answer_for('{"jsonrpc":"2.0","id":1,"method":"ping"}') is None
    assert answer_for("   ") is None
    assert answer_for('{"jsonrpc":"2.0","method":"x","params":{"v":"\\ud800"}}') is None  # a notification


@pytest.mark.parametrize("arguments, field, rule", [
    ({"action": "add", "importance": 3}, "importance", "input should be"),
    ({"content": "x"}, "action", "is required"),
    ({"action": "add", "branches": ["ok", 5]}, "branches[1]", "input should be a valid string"),
    ({"action": "zap"}, "action", "input should be 'add', 'replace' or 'remove' (got 'zap')"),
])
async def test_argument_errors_name_the_field_and_rule_in_our_words(workspace: Path, data_dir: Path,
                                                                    arguments: dict, field: str, rule: str) -> None:
    async with mcp_session(args_for(workspace, data_dir)) as session:
        result = await session.call_tool("mnemon_runtime_memory", arguments)
    message = text(result)
    assert result.is_error and f"invalid-input: {field}: {rule}" in message, message
    assert "validation error" not in message and "pydantic" not in message
    assert not (data_dir / "runtime" / "memories.json").exists()


async def test_a_huge_rejected_value_is_not_echoed_back(workspace: Path, data_dir: Path) -> None:
    huge = "x" * 10_000_000
    async with mcp_session(args_for(workspace, data_dir)) as session:
        wrong_type = await session.call_tool("mnemon_recall", {"query": "q", "limit": huge})
        too_long = await session.call_tool("mnemon_wake", {"branch": huge})
        extra = await session.call_tool("mnemon_status", {huge: 1})
    for result in (wrong_type, too_long, extra):
        assert result.is_error and len(text(result)) < ERROR_TEXT_LIMIT + 200, len(text(result))
    assert "invalid-input: limit:" in text(wrong_type) and "invalid-input: branch" in text(too_long)


async def test_a_workspace_path_too_long_for_the_system_is_invalid_input(workspace: Path, data_dir: Path) -> None:
    async with mcp_session(["--scope", "custom", "--data-dir", str(data_dir)], cwd=workspace) as session:
        result = await session.call_tool("mnemon_status", {"workspace": "/" + "a" * 5000})
    assert result.is_error and text(result).startswith("Error executing tool mnemon_status: invalid-input: workspace")
    assert "internal-error" not in text(result)


def test_setup_refuses_a_settings_file_with_a_key_given_twice(tmp_path: Path) -> None:
    """It kept the last of the duplicates and wrote the file back without the first."""
    home = tmp_path / "home"
    (home / ".cursor").mkdir(parents=True)
    config = home / ".cursor" / "mcp.json"
    original = '{"mcpServers": {"a": {"command": "x"}}, "mcpServers": {"b": {"command": "y"}}}'
    config.write_text(original)
    proc = run_cli(home, "setup", "cursor", "--workspace", str(tmp_path))
    assert proc.returncode == 2 and "'mcpServers' twice" in proc.stderr and "nothing was written" in proc.stderr
    assert config.read_text() == original


def test_a_deeply_nested_line_is_a_parse_error_and_the_server_lives_on(client: RawClient) -> None:
    """An attack pass found the server dying of RecursionError on one line of 50,000 nested arrays."""
    depth = 50_000
    client.send('{"jsonrpc":"2.0","id":98,"method":"tools/call","params":{"name":"mnemon_wake","arguments":'
                + "[" * depth + "]" * depth + "}}")
    answer = client.answer()
    assert answer["error"]["code"] == -32700 and "nested too deeply" in answer["error"]["message"]
    client.send('{"jsonrpc":"2.0","id":99,"method":"ping"}')
    assert client.answer()["id"] == 99


@pytest.mark.parametrize("line, code, request_id, said", [
    # an integer past Python's int() limit (4,300 digits) in the params: the server exited 1 on it
    ('{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"mnemon_status","arguments":{"limit":%s}}}'
     % ("9" * 5000), -32602, 12, "params.arguments.limit: an integer of 5000 digits (at most 4300)"),
    ('{"jsonrpc":"2.0","id":%s,"method":"ping"}' % ("7" * 4301), -32600, None, "id: an integer of 4301 digits"),
    ("-" + "1" * 6000, -32600, None, "not a JSON-RPC 2.0 request"),
], ids=["in-params", "as-id", "bare-number"])
def test_an_integer_too_long_for_python_is_answered_and_the_server_lives_on(client: RawClient, line: str, code: int,
                                                                            request_id: int | None,
                                                                            said: str) -> None:
    client.send(line)
    answer = client.answer()
    assert answer["error"]["code"] == code and answer["id"] == request_id
    assert said in answer["error"]["message"]
    client.send('{"jsonrpc":"2.0","id":102,"method":"ping"}')
    assert client.answer() == {"jsonrpc": "2.0", "id": 102, "result": {}}
    assert client.proc.poll() is None


def test_a_request_before_initialize_says_the_session_is_not_initialized(workspace: Path, data_dir: Path) -> None:
    """It was answered -32602 "Invalid request parameters" with empty data (issue 23 item 7)."""
    raw = RawClient(workspace, data_dir)
    try:
        raw.send('{"jsonrpc":"2.0","id":1,"method":"tools/list"}')
        early = raw.answer()
        assert early["id"] == 1 and early["error"]["code"] == -32002
        assert early["error"]["message"] == ("Server not initialized: the session is not initialized yet: send "
                                             "initialize before tools/list")
        raw.send('{"jsonrpc":"2.0","id":2,"method":"ping"}')  # ping is allowed at any time
        assert raw.answer() == {"jsonrpc": "2.0", "id": 2, "result": {}}
        raw.send(json.dumps(INIT))
        assert "result" in raw.answer()
        raw.send(json.dumps(INITIALIZED))
        raw.send('{"jsonrpc":"2.0","id":3,"method":"tools/list"}')
        assert any(t["name"] == "mnemon_recall" for t in raw.answer()["result"]["tools"])
    finally:
        raw.close()
    assert not data_dir.exists()
