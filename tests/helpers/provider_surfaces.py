"""The real surfaces of mnemon-ls (CLI subprocesses, the language server, the MCP server) driven on a root whose
active space lives in a third-party provider, for the provider packages' surface tests (``providers/*/tests``).
Loaded by path (this folder is put on ``sys.path`` by the packages' conftest).

:func:`make_root` builds the root; :func:`cli`, :func:`lsp_answers` and :func:`mcp_answers` run one surface on it
and return what it answered, for the test to check.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]


def make_root(data: Path, provider: str, service_fields: dict[str, str], space_name: str, content: str) -> dict[str, str]:
    """A global root at ``data`` with a native space and an active ``provider`` space named ``space_name`` holding
    ``content``: ``{"data", "team" (the space id), "item" (the item id), "externalId", "env:<NAME>"...}`` (the
    environment of the CLI/servers on it: ``--scope global``, ``MNEMON_DATA_DIR``)."""
    from mnemon_ls.spaces import SpacesService

    service = SpacesService(data, provider_timeout=120)
    service.create_space("Project", "project decisions", active=True)
    service.remember("We chose SQLite FTS5 for the side index")
    service.thirdparty.enable(provider, service_fields)
    view = service.create_space(space_name, "team decisions", active=True, provider=provider)
    item = service.remember(content, space_id=view.record.id).to_dict()["id"]
    service.close()
    return {"data": str(data), "team": view.record.id, "item": item, "externalId": view.record.external_id,
            **root_env(data)}


def root_env(data: Path) -> dict[str, str]:
    """``{"env:<NAME>": value}``: the environment of the CLI and servers on the global root ``data`` (this
    process's, without ``MNEMON_*``, plus ``--scope global``, ``MNEMON_DATA_DIR``, semantic recall off)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMON_")}
    env.update(HOME=os.environ["HOME"], MNEMON_DATA_DIR=str(data), MNEMON_STORAGE_SCOPE="global",
               MNEMON_SEMANTIC="off", PYTHONUNBUFFERED="1", MNEMON_PROVIDER_TIMEOUT_MS="300000")
    return {f"env:{k}": v for k, v in env.items()}


def env_of(root: dict[str, str]) -> dict[str, str]:
    """The environment of the CLI and servers on ``root``."""
    return {k[4:]: v for k, v in root.items() if k.startswith("env:")}


def cli(root: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    """``mnemon-ls ARGS`` run on ``root`` (a subprocess; text output; 300 s at most)."""
    return subprocess.run([sys.executable, "-m", "mnemon_ls", *args], capture_output=True, text=True,
                          env=env_of(root), cwd=root["data"], timeout=300)


def lsp_answers(root: dict[str, str], tmp_path: Path, query: str) -> tuple[list[Any], dict[str, dict]]:
    """The language server's answers on ``root`` (a workspace with ``notes.md`` open): ``spaces``
    (``mnemon/spaces/list``), ``recall`` (``query`` in the provider space), ``related``, ``other`` (a remember in
    it), ``link`` (item to ``other``), ``forget`` (of ``other``), ``actions`` (the code actions on the first line).
    Returns
    ``(protocol errors, answers)``."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from tests.lsp.rawclient import RawServer  # the strict frame parser of the main suite

    folder = tmp_path / "repo"
    (folder / ".git").mkdir(parents=True)
    source = folder / "notes.md"
    source.write_text("Releases need two approvals\n", encoding="utf-8")
    uri = source.as_uri()

    async def session() -> tuple[RawServer, dict[str, dict]]:
        server = RawServer()
        await server.start(env_of(root), tmp_path)
        answers: dict[str, dict] = {}
        try:
            await server.initialize([folder], {"mnemon": {"storageScope": "global", "providerTimeoutMs": 300000}})
            server.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "markdown",
                                                                     "version": 1, "text": source.read_text()}})
            for name, method, params in (
                    ("spaces", "mnemon/spaces/list", {}),
                    ("recall", "mnemon/recall", {"query": query, "spaces": [root["team"]]}),
                    ("related", "mnemon/related", {"spaceId": root["team"], "id": root["item"]}),
                    ("other", "mnemon/remember", {"content": "Hotfixes need one approval", "spaceId": root["team"]}),
                    ("actions", "textDocument/codeAction", {
                        "textDocument": {"uri": uri},
                        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 27}},
                        "context": {"diagnostics": []}})):
                answers[name] = await server.call(method, params, timeout=180)
            answers["link"] = await server.call("mnemon/link", {
                "spaceId": root["team"], "sourceId": root["item"], "targetId": answers["other"]["result"]["id"]},
                timeout=180)
            answers["forget"] = await server.call("mnemon/forget", {
                "spaceId": root["team"], "id": answers["other"]["result"]["id"]}, timeout=180)
        finally:
            await server.close()
        return server, answers

    server, answers = asyncio.run(session())
    return server.protocol_errors, answers


def mcp_answers(root: dict[str, str], tmp_path: Path, query: str) -> dict[int, dict]:
    """The MCP server's answers on ``root`` by request id: 1 ``initialize``, 2 ``mnemon_recall`` of ``query``,
    3 ``mnemon_related`` and 4 ``mnemon_link`` on the provider space's item. Every line of its stdout must be one
    JSON-RPC message (a line that is not raises)."""
    calls = {2: ("mnemon_recall", {"query": query}),
             3: ("mnemon_related", {"space_id": root["team"], "id": root["item"]}),
             4: ("mnemon_link", {"space_id": root["team"], "source_id": root["item"], "target_id": "mnemon-other"})}
    messages = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
                 "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                            "clientInfo": {"name": "test", "version": "1"}}},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                *({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": t, "arguments": a}}
                  for n, (t, a) in calls.items())]
    proc = subprocess.Popen([sys.executable, "-m", "mnemon_ls", "mcp", "--workspace", str(tmp_path)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env_of(root),
                            cwd=tmp_path)
    try:
        for message in messages:
            proc.stdin.write((json.dumps(message) + "\n").encode())
            proc.stdin.flush()
        answers: dict[int, dict] = {}
        while len(answers) < 4:
            line = proc.stdout.readline()
            if not line:
                raise AssertionError(proc.stderr.read().decode())
            message = json.loads(line)  # every line of stdout is one JSON-RPC message
            if message.get("id") in (1, 2, 3, 4):
                answers[message["id"]] = message
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
    return answers


#: What :func:`make_root` remembers in the provider space, and the question that finds it.
CONTENT = "We deploy on Tuesdays after review"
QUERY = "when do we deploy"


def check_language_server(root: dict[str, str], tmp_path: Path, **capabilities: Any) -> None:
    """The language server on ``root`` (:func:`lsp_answers`): no protocol error; the provider space's
    capabilities (related, link, merge false, forget true, write exact, and ``capabilities``, e.g.
    ``browse=False``); recall finds :data:`CONTENT`; related and link are ``space-refused``; forget commits; the
    code actions offer the space as a write target. Raises AssertionError saying what differs."""
    errors, answers = lsp_answers(root, tmp_path, QUERY)
    assert errors == [], errors
    spaces = {s["id"]: s for s in answers["spaces"]["result"]["spaces"]}
    got = spaces[root["team"]]["capabilities"]
    expected = {"related": False, "link": False, "merge": False, "forget": True, "write": "exact", **capabilities}
    assert {k: got[k] for k in expected} == expected, got
    assert [r["content"] for r in answers["recall"]["result"]["results"]] == [CONTENT], answers["recall"]
    for name in ("related", "link"):
        error = answers[name]["error"]
        assert error["data"]["code"] == "space-refused" and error["message"].endswith(f"does not support {name}"), error
    assert answers["forget"]["result"]["status"] == "committed", answers["forget"]
    titles = [a["title"] for a in answers["actions"]["result"]]
    assert f"Remember selection in space {spaces[root['team']]['name']}" in titles, titles


def check_mcp(root: dict[str, str], tmp_path: Path) -> None:
    """The MCP server on ``root`` (:func:`mcp_answers`): recall finds :data:`CONTENT`; related and link are tool
    errors ending ``space-refused: space <id> does not support <name>``. Raises AssertionError saying what
    differs."""
    answers = mcp_answers(root, tmp_path, QUERY)
    recall = answers[2]["result"]
    assert not recall.get("isError") and CONTENT in recall["content"][0]["text"], recall
    for number, name in ((3, "related"), (4, "link")):
        result = answers[number]["result"]
        assert result["isError"] is True, result
        assert result["content"][0]["text"].endswith(f"space-refused: space {root['team']} does not support {name}"), result
