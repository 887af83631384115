"""Property: any sequence of valid and invalid ``mnemon/*`` requests (and malformed frames between them)
leaves every store readable and exactly the acknowledged writes on disk.

One real server (a subprocess on a real git repository) takes every example hypothesis draws, so the
stores grow across examples; the model below is updated only from the server's answers: an
acknowledged Runtime add or remove must be in (or gone from) ``runtime/memories.json`` (which must
parse, and must hold nothing the server did not acknowledge), and every acknowledged Document must
still be readable through ``mnemon/documents/get`` with the body it had. Bounded: seeded, 25 examples
of at most 8 requests.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from tests.gitrepo import make_repo
from tests.lsp.conftest import Launcher
from tests.lsp.rawclient import RawServer, frame

TEXT = st.text(alphabet=st.sampled_from(list("ab cdé中\t\n§") + ["\x00", "\ud800"]), max_size=24)

ADD = st.tuples(st.just("add"), st.sampled_from(["user", "memory", "project"]), TEXT)
REMOVE = st.tuples(st.just("remove"), st.sampled_from(["user", "memory"]), st.integers(0, 50))
DOCUMENT = st.tuples(st.just("document"), TEXT, TEXT)
GARBAGE = st.tuples(st.just("garbage"), st.sampled_from([
    b"Content-Length: x\r\n\r\n{}", b"\r\n{\"jsonrpc\":\"2.0\",\"id\":1}", b"\x00\xff\xfe",
    b"Content-Length: 3\r\n\r\n{\"jsonrpc\"", frame(b'{"jsonrpc":"1.0","id":5,"method":"mnemon/wake"}')]))
BAD = st.tuples(st.just("bad"), st.sampled_from([
    ("mnemon/runtime/mutate", {"action": "add", "content": 5}),
    ("mnemon/runtime/mutate", {"action": "add", "content": "x", "workspace": "file://"}),
    ("mnemon/runtime/mutate", {"action": "add", "content": "x", "workspace": "/tmp/a\u0000b"}),
    ("mnemon/runtime/mutate", {"action": "replace", "oldText": "", "content": "y"}),
    ("mnemon/documents/create", {"title": "t", "content": ["not", "text"]}),
    ("mnemon/documents/get", {"id": "no-such-document"}),
    ("mnemon/documents/update", {"id": "no-such-document", "content": "x"}),
    ("mnemon/wake", {"budgetChars": True}),
    ("mnemon/spaces/create", {"name": "\ud800", "description": "d"}),
    ("mnemon/nope", {}),
]))
OPERATIONS = st.lists(st.one_of(ADD, REMOVE, DOCUMENT, GARBAGE, BAD), min_size=1, max_size=8)


class Model:
    """What the server acknowledged: runtime contents per target and documents by id."""

    def __init__(self) -> None:
        self.runtime: dict[str, set[str]] = {"user": set(), "memory": set()}
        self.documents: dict[str, str] = {}


async def _apply(server: RawServer, model: Model, operation: tuple) -> None:
    kind = operation[0]
    if kind == "add":
        response = await server.call("mnemon/runtime/mutate", {"action": "add", "target": operation[1],
                                                               "content": operation[2]})
        if "result" in response and response["result"]["changed"]:
            model.runtime[operation[1]].add(response["result"]["added"])
    elif kind == "remove":
        known = sorted(model.runtime[operation[1]])
        old = known[operation[2] % len(known)] if known else f"absent {operation[2]}"
        response = await server.call("mnemon/runtime/mutate", {"action": "remove", "target": operation[1],
                                                               "oldText": old})
        if "result" in response:
            model.runtime[operation[1]].discard(response["result"]["removed"])
    elif kind == "document":
        response = await server.call("mnemon/documents/create", {"title": operation[1], "content": operation[2]})
        if "result" in response:
            document_id = response["result"]["document"]["id"]
            got = await server.call("mnemon/documents/get", {"id": document_id})
            model.documents[document_id] = got["result"]["content"]
    elif kind == "garbage":
        server.write(operation[1])
        return  # answered (or not) once the next frame resynchronises the stream
    else:
        method, params = operation[1]
        response = await server.call(method, params)
    assert "result" in response or isinstance(response["error"]["data"]["code"], str), response


async def _check(server: RawServer, model: Model, root: Path) -> None:
    status = await server.call("mnemon/status", {})
    assert status["result"]["workspaces"], status
    memories = root / "runtime" / "memories.json"
    entries = json.loads(memories.read_text(encoding="utf-8"))["entries"] if memories.exists() else []
    on_disk = {"user": set(), "memory": set()}
    for entry in entries:
        on_disk[entry["target"]].add(entry["content"])
    assert on_disk == model.runtime
    for document_id, content in model.documents.items():
        got = await server.call("mnemon/documents/get", {"id": document_id})
        assert got.get("result", {}).get("content") == content, got


def test_request_sequences_keep_stores_readable(tmp_path: Path):
    repo_dir = tmp_path / "repo"
    make_repo(repo_dir, "main")
    launcher = Launcher(tmp_path)
    loop = asyncio.new_event_loop()
    server = RawServer()
    model = Model()

    async def start() -> None:
        await server.start(launcher.env(), tmp_path)
        response = await server.initialize([repo_dir], {"mnemon": {"storageScope": "workspace"}})
        assert "result" in response, response

    @seed(15)
    @settings(max_examples=25, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
    @given(OPERATIONS)
    def run(operations: list[tuple]) -> None:
        async def example() -> None:
            for operation in operations:
                await _apply(server, model, operation)
            await _check(server, model, repo_dir / ".mnemon")

        loop.run_until_complete(example())

    try:
        loop.run_until_complete(start())
        run()
        assert b"Traceback" not in server.stderr, server.stderr[-3000:]
    finally:
        loop.run_until_complete(server.close())
        loop.close()
