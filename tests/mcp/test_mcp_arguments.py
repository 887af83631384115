"""Strict tool arguments and malformed ``tools/call`` requests against the real ``mnemon-ls mcp`` (an attack
pass found ``limit: "5"`` and ``limit: true`` coerced, JSON-looking text refused or turned into ``None``,
``params: "x"`` answered -32600, ``name: ["x"]`` crashing the check, and only the first problem named)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp.shared.exceptions import MCPError

from tests.gitrepo import snapshot
from tests.mcp.conftest import mcp_session, text
from tests.mcp.test_mcp_hostile import INITIALIZED, RawClient
from tests.mcp.test_mcp_server import INIT, args_for, files

# (tool, arguments, the exact problem text after "invalid-input: ")
WRONG_TYPES = [
    ("mnemon_recall", {"query": "x", "limit": "5"}, "limit: input should be a valid integer, not a string (got '5')"),
    ("mnemon_recall", {"query": "x", "limit": True}, "limit: input should be a valid integer, not a boolean (got true)"),
    ("mnemon_recall", {"query": "x", "limit": 5.5}, "limit: must be an integer (got 5.5)"),
    ("mnemon_recall", {"query": {"text": ["x"]}}, "query: input should be a valid string, not an object (got {'text': ['x']})"),
    ("mnemon_recall", {"query": "x", "spaces": "default"}, "spaces: input should be an array, not a string (got 'default')"),
    ("mnemon_remember", {"content": "x", "importance": "3"}, "importance: input should be a valid integer, not a string (got '3')"),
    ("mnemon_remember", {"content": "x", "tags": '["a"]'}, "tags: input should be an array, not a string (got '[\"a\"]')"),
    ("mnemon_remember", {"content": "x", "scope_to_branch": 1}, "scope_to_branch: input should be a valid boolean, not an integer "
     "(got 1)"),
    ("mnemon_related", {"space_id": "s", "id": "i", "depth": "2"}, "depth: input should be a valid integer, not a string (got '2')"),
    ("mnemon_document_search", {"query": "x", "include_archived": "yes"},
     "include_archived: input should be a valid boolean, not a string (got 'yes')"),
    ("mnemon_document_manage", {"action": "get", "id": "d", "revision": "3"},
     "revision: input should be a valid integer, not a string (got '3')"),
    ("mnemon_memory_spaces", {"active": 1}, "active: input should be a valid boolean, not an integer (got 1)"),
    ("mnemon_records_search", {"limit": "3"}, "limit: input should be a valid integer, not a string (got '3')"),
    ("mnemon_records_search", {"proposals_only": "true"},
     "proposals_only: input should be a valid boolean, not a string (got 'true')"),
    ("mnemon_records_propose", {"title": "t", "content": "c", "source_refs": [{"kind": 5}]},
     "source_refs[0].kind: input should be a valid string, not an integer (got 5)"),
    ("mnemon_runtime_compact", {"revision": "r", "entries": "[]"}, "entries: input should be an array, not a string (got '[]')"),
    ("mnemon_forget", {"id": 5}, "space_id: is required; id: input should be a valid string, not an integer (got 5)"),
    ("mnemon_status", {"bogus": 1, "other": 2}, "bogus, other: are not arguments of mnemon_status (it takes workspace)"),
    # another action's argument was dropped silently: a get with a revision answered the current one
    ("mnemon_document_manage", {"action": "get", "id": "d", "revision": 5},
     "revision: is not an argument of action=get (it takes action, id, workspace)"),
    ("mnemon_document_manage", {"action": "archive", "id": "d", "title": "t"},
     "title: is not an argument of action=archive (it takes action, id, revision, workspace)"),
    ("mnemon_memory_spaces", {"action": "list", "name": "x"},
     "name: is not an argument of action=list (it takes action, workspace)"),
]


async def test_wrong_json_types_are_refused_naming_every_field_and_change_nothing(workspace: Path,
                                                                                 data_dir: Path) -> None:
    async with mcp_session(args_for(workspace, data_dir)) as session:
        seeded = await session.call_tool("mnemon_runtime_memory", {"action": "add", "content": "seed"})
        assert not seeded.is_error
        before = files(snapshot(data_dir))
        for name, arguments, problem in WRONG_TYPES:
            result = await session.call_tool(name, arguments)
            assert result.is_error and text(result) == f"Error executing tool {name}: invalid-input: {problem}", \
                (name, arguments, text(result))
        assert files(snapshot(data_dir)) == before
        # The right JSON types still pass (an integer is a valid number: JSON has no separate float).
        good = await session.call_tool("mnemon_recall", {"query": "seed", "limit": 5})
        weight = await session.call_tool("mnemon_link", {"space_id": "nope", "source_id": "a", "target_id": "b",
                                                         "weight": 1})
    assert not good.is_error, text(good)
    assert "invalid-input: space_id: is not a registered space" in text(weight)


async def test_text_that_looks_like_json_is_kept_and_no_match_names_the_field(workspace: Path, data_dir: Path) -> None:
    """The SDK parsed string arguments as JSON: ``[1, 2]`` was refused, ``null`` became a missing value."""
    texts = ["[1, 2]", "null", "true", '{"a": 1}']
    async with mcp_session(args_for(workspace, data_dir)) as session:
        for content in texts:
            result = await session.call_tool("mnemon_runtime_memory", {"action": "add", "content": content})
            assert not result.is_error, (content, text(result))
        created = await session.call_tool("mnemon_document_create", {"title": "t", "content": "body",
                                                                     "description": "null"})
        assert not created.is_error, text(created)
        # A remove that matches nothing names the field as the other surfaces do (runtime.ops.locate).
        missing = await session.call_tool("mnemon_runtime_memory", {"action": "remove", "old_text": "zzz"})
    assert missing.is_error and text(missing) == (
        "Error executing tool mnemon_runtime_memory: no-match: old_text: no memory entry contains 'zzz'")
    stored = json.loads((data_dir / "runtime" / "memories.json").read_text())
    assert [e["content"] for e in stored["entries"]] == texts
    (document,) = (data_dir / "documents" / "active").glob("*.md")
    assert 'description: "null"' in document.read_text().splitlines()  # the text, not a missing value


@pytest.fixture
def raw(workspace: Path, data_dir: Path):
    client = RawClient(workspace, data_dir)
    client.send(json.dumps(INIT))
    assert "result" in client.answer()
    client.send(json.dumps(INITIALIZED))
    yield client
    client.close()


MALFORMED_CALLS = [
    ('"x"', "Invalid params: params: must be an object, not a string (got 'x') (MCP requests take named parameters)"),
    ('["mnemon_status", {}]', "Invalid params: params: must be an object, not an array (got ['mnemon_status', {}]) "
                              "(MCP requests take named parameters)"),
    ('{"name": 5, "arguments": {}}', "Invalid params: name: input should be a valid string, not an integer (got 5)"),
    ('{"name": ["mnemon_status"]}', "Invalid params: name: input should be a valid string, not an array "
                                   "(got ['mnemon_status'])"),
    ('{"arguments": {}}', "Invalid params: name: is required"),
    ('{"name": "mnemon_recall", "arguments": "query=x"}',
     "Invalid params: arguments: input should be an object, not a string (got 'query=x')"),
    ('{"name": "mnemon_no_such_tool", "arguments": {}}', "Unknown tool: mnemon_no_such_tool"),
]


def test_a_malformed_tools_call_is_invalid_params_naming_the_field(raw: RawClient, data_dir: Path) -> None:
    for request_id, (params, message) in enumerate(MALFORMED_CALLS, start=41):
        raw.send('{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}' % (request_id, params))
        assert raw.answer() == {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32602, "message": message}}
    raw.send('{"jsonrpc":"2.0","id":99,"method":"ping"}')  # and the connection still serves
    assert raw.answer() == {"jsonrpc": "2.0", "id": 99, "result": {}}
    assert not (data_dir / "runtime" / "memories.json").exists()


def test_other_methods_name_the_bad_field_and_an_unknown_prompt_is_invalid_params(raw: RawClient) -> None:
    raw.send('{"jsonrpc":"2.0","id":51,"method":"tools/list","params":{"cursor":5}}')
    assert raw.answer()["error"] == {"code": -32602,
                                     "message": "Invalid params: cursor: input should be a valid string, not an integer "
                                                "(got 5)"}
    raw.send('{"jsonrpc":"2.0","id":52,"method":"prompts/get","params":{"name":"no-such-prompt"}}')
    assert raw.answer()["error"] == {"code": -32602, "message": "Unknown prompt: no-such-prompt"}
    raw.send('{"jsonrpc":"2.0","id":53,"method":"prompts/get","params":{"name":"mnemon-routing"}}')
    assert raw.answer()["result"]["messages"]


async def test_every_tool_schema_refuses_unknown_arguments(workspace: Path, data_dir: Path) -> None:
    async with mcp_session(args_for(workspace, data_dir)) as session:
        tools = (await session.list_tools()).tools
        with pytest.raises(MCPError) as unknown:
            await session.call_tool("mnemon_nope", {})
    assert len(tools) == 17
    assert {t.name: t.input_schema.get("additionalProperties") for t in tools} == {t.name: False for t in tools}
    assert unknown.value.code == -32602 and unknown.value.message == "Unknown tool: mnemon_nope"


HOSTILE_CALLS = [  # (tool, arguments as JSON text, the exact tool error after "invalid-input: ")
    ("mnemon_records_propose", '{"title": "t\\u0000", "content": "c"}', "title: must not contain NUL characters (found U+0000)"),
    ("mnemon_records_propose", '{"title": "two\\nlines", "content": "c"}',
     "title: must not contain control characters (found U+000A)"),
    ("mnemon_records_propose", '{"title": "t", "content": "c\\u0000"}', "content: must not contain NUL characters (found U+0000)"),
    ("mnemon_records_propose", '{"title": "t", "content": "c", "note": "\\u0000"}',
     "note: must not contain NUL characters (found U+0000)"),
    ("mnemon_records_propose", '{"title": "%s", "content": "c"}' % ("t" * 201), "title: string should have at most 200 characters"),
    # NaN and -Infinity are not JSON: refused by the transport (tests/mcp/test_mcp_numbers.py)
]


def test_control_characters_non_finite_numbers_and_missing_resources(raw: RawClient, workspace: Path,
                                                                     data_dir: Path) -> None:
    """A record title with NUL or a line break was stored; NaN reached the range check; a missing document
    resource was an internal error (-32603) instead of the spec's -32002."""
    before = (files(snapshot(workspace)), files(snapshot(data_dir)) if data_dir.exists() else {})
    for request_id, (name, arguments, problem) in enumerate(HOSTILE_CALLS, start=61):
        raw.send('{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"%s","arguments":%s}}'
                 % (request_id, name, arguments))
        answer = raw.answer()
        assert answer["result"]["isError"] is True, answer
        assert answer["result"]["content"][0]["text"] == f"Error executing tool {name}: invalid-input: {problem}"
    raw.send('{"jsonrpc":"2.0","id":80,"method":"resources/read","params":{"uri":"mnemon://documents/nope"}}')
    assert raw.answer()["error"] == {"code": -32002, "message": "Resource not found: mnemon://documents/nope (an id "
                                                                "prefix needs at least 8 characters)",
                                     "data": {"uri": "mnemon://documents/nope"}}
    assert (files(snapshot(workspace)), files(snapshot(data_dir)) if data_dir.exists() else {}) == before
    raw.send('{"jsonrpc":"2.0","id":81,"method":"tools/call","params":{"name":"mnemon_records_propose",'
             '"arguments":{"title":"tab\\tis fine","content":"multi\\nline content"}}}')
    assert raw.answer()["result"]["isError"] is False
