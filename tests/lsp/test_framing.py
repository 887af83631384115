"""The base protocol under abuse: malformed frames and malformed JSON-RPC, written as raw bytes.

After any bad frame the server must answer the next valid request (it resynchronises on the next
``Content-Length`` header) and a request whose id can still be read gets an error response with that id
(-32700 parse error, -32600 invalid request, JSON-RPC 2.0 section 5.1), never silence and never a
traceback. Every error carries a stable ``data.code``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.lsp.conftest import Launcher
from tests.lsp.rawclient import RawServer, frame

STATUS = {"jsonrpc": "2.0", "id": 7, "method": "mnemon/status", "params": {}}
STATUS_BYTES = json.dumps(STATUS, separators=(",", ":")).encode()


@pytest.fixture
async def raw(lsp: Launcher, repo, repo_dir: Path):
    server = RawServer()
    await server.start(lsp.env(), lsp.tmp_path)
    response = await server.initialize([repo_dir], {"mnemon": {"storageScope": "workspace"}})
    assert "result" in response, response
    yield server
    await server.close()


async def assert_alive(server: RawServer) -> None:
    """The server answers a valid request (the stream is in sync again)."""
    response = await server.call("mnemon/status", {})
    assert response["result"]["workspaces"], response


# Each bad frame is followed by a valid request in the same write (the way a client pipes them).
BAD_FRAMES = {
    "non-numeric Content-Length": b"Content-Length: abc\r\n\r\n" + STATUS_BYTES,
    "negative Content-Length": b"Content-Length: -5\r\n\r\n" + STATUS_BYTES,
    "missing Content-Length": b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n" + STATUS_BYTES,
    "no header at all": b"\r\n" + STATUS_BYTES,
    "short Content-Length": b"Content-Length: %d\r\n\r\n" % (len(STATUS_BYTES) - 9) + STATUS_BYTES,
    "long Content-Length": b"Content-Length: %d\r\n\r\n" % (len(STATUS_BYTES) + 20) + STATUS_BYTES,
    "random bytes": bytes(range(256)) * 3,
    "header without CRLF": b"Content-Length: 12\n\n" + STATUS_BYTES,
    "huge Content-Length": b"Content-Length: 99999999999999999999999\r\n\r\n" + STATUS_BYTES,
    "header line of garbage": b"\x00\xff garbage: \x01\r\n" + frame(STATUS),
}


@pytest.mark.parametrize("name", list(BAD_FRAMES))
async def test_server_resynchronises_after_a_bad_frame(raw: RawServer, name: str):
    raw.write(BAD_FRAMES[name])
    await assert_alive(raw)
    assert raw.proc.returncode is None
    assert raw.protocol_errors == []
    assert b"Traceback" not in raw.stderr


async def test_misframed_request_with_a_readable_id_gets_a_parse_error(raw: RawServer):
    # Content-Length 9 bytes short: the body is cut mid-message; its id is still readable.
    raw.write(BAD_FRAMES["short Content-Length"])
    error = (await raw.response(7))["error"]
    assert error["code"] == -32700 and error["data"]["code"] == "parse-error"
    # Non-numeric Content-Length: the frame is skipped up to the next header (here the valid request
    # sent after it); the request in the skipped stretch is answered, not run.
    raw.write(b"Content-Length: abc\r\n\r\n" + STATUS_BYTES.replace(b'"id":7', b'"id":8'))
    await assert_alive(raw)
    error = (await raw.response(8))["error"]
    assert error["code"] == -32700 and error["data"]["code"] == "parse-error"
    assert "Content-Length" in error["message"]
    await assert_alive(raw)


def _request(body: str) -> bytes:
    return frame(body)


# (name, body, expected id of the error response, JSON-RPC code, data.code)
INVALID_MESSAGES = [
    ("invalid UTF-8", b'{"jsonrpc":"2.0","id":11,"method":"mnemon/status","params":{"x":"\xff\xfe"}}',
     11, -32700, "parse-error"),
    ("100k-deep nesting", b'{"jsonrpc":"2.0","id":12,"method":"mnemon/status","params":'
     + b"[" * 100_000 + b"]" * 100_000 + b"}", 12, -32700, "parse-error"),
    ("deep nesting, id last", b'{"jsonrpc":"2.0","method":"mnemon/status","params":'
     + b"{\"a\":" * 50_000 + b"1" + b"}" * 50_000 + b',"id":"deep"}', "deep", -32700, "parse-error"),
    ("not JSON", b'{"jsonrpc":"2.0","id":13,"method":"mnemon/status",}', 13, -32700, "parse-error"),
    ("NaN is not JSON", b'{"jsonrpc":"2.0","id":14,"method":"mnemon/status","params":{"x":NaN}}',
     14, -32700, "parse-error"),
    ('jsonrpc "1.0"', b'{"jsonrpc":"1.0","id":15,"method":"mnemon/status","params":{}}', 15, -32600, "invalid-request"),
    ("no jsonrpc member", b'{"id":16,"method":"mnemon/status","params":{}}', 16, -32600, "invalid-request"),
    ("missing method", b'{"jsonrpc":"2.0","id":17,"params":{}}', 17, -32600, "invalid-request"),
    ("numeric method", b'{"jsonrpc":"2.0","id":18,"method":42,"params":{}}', 18, -32600, "invalid-request"),
    ("object id", b'{"jsonrpc":"2.0","id":{},"method":"mnemon/status","params":{}}', None, -32600, "invalid-request"),
    ("boolean id", b'{"jsonrpc":"2.0","id":true,"method":"mnemon/status","params":{}}', None, -32600,
     "invalid-request"),
    ("a number, not an object", b"42", None, -32600, "invalid-request"),
    ("empty body", b"", None, -32700, "parse-error"),
    ("unknown method", b'{"jsonrpc":"2.0","id":19,"method":"mnemon/nope","params":{}}', 19, -32601,
     "method-not-found"),
    ("params of the wrong LSP type", b'{"jsonrpc":"2.0","id":20,"method":"textDocument/codeAction","params":'
     b'{"textDocument":{"uri":5}}}', 20, -32602, "invalid-input"),
]


@pytest.mark.parametrize("name,body,msg_id,code,stable", INVALID_MESSAGES, ids=[m[0] for m in INVALID_MESSAGES])
async def test_invalid_message_gets_a_json_rpc_error(raw: RawServer, name, body, msg_id, code, stable):
    raw.write(frame(body))
    response = await raw.response(msg_id)
    error = response["error"]
    assert (error["code"], error["data"]["code"]) == (code, stable), error
    assert response["id"] == msg_id and "id" in response
    assert "traceback" not in json.dumps(error).lower()
    await assert_alive(raw)
    assert b"Traceback" not in raw.stderr


async def test_batch_is_refused_per_request(raw: RawServer):
    batch = [{"jsonrpc": "2.0", "id": 31, "method": "mnemon/status", "params": {}},
             {"jsonrpc": "2.0", "method": "initialized", "params": {}},
             {"jsonrpc": "2.0", "id": "b", "method": "mnemon/status", "params": {}}]
    raw.write(frame(json.dumps(batch)))
    for msg_id in (31, "b"):
        error = (await raw.response(msg_id))["error"]
        assert (error["code"], error["data"]["code"]) == (-32600, "invalid-request")
        assert "batch" in error["message"]
    raw.write(frame("[]"))
    error = (await raw.response(None))["error"]
    assert (error["code"], error["data"]["code"]) == (-32600, "invalid-request")
    await assert_alive(raw)


async def test_request_after_shutdown_is_refused(raw: RawServer):
    assert "result" in await raw.call("shutdown")
    error = (await raw.call("mnemon/status", {}))["error"]
    assert (error["code"], error["data"]["code"]) == (-32600, "invalid-request")
    raw.notify("exit")
    assert await raw.exit_code() == 0
