"""The access counters of ``mnemon_recall`` through the MCP server (issue 27 item 2): written beside the tool
calls by a thread of the server, and every one of them in ``mnemon.db`` once the client closes the server's
standard input and the server has exited by itself (a clean shutdown).

A real ``mnemon-ls mcp`` subprocess driven over newline-delimited JSON-RPC (the client closes stdin, then
waits for the exit: the SDK's client would end a server that takes more than two seconds), real SQLite.
"""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
from pathlib import Path
from typing import Any

from mnemon_ls.spaces.providers.native_schema import ACCESS_FLUSH_THRESHOLD
from tests.helpers.zygote import mnemon_command
from tests.mcp.conftest import REPO, server_env

TIMEOUT = 60.0  # a safety bound for a hung server, never a synchronisation


class RawMcp:
    """The smallest MCP client: requests answered in order over the server's stdio."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.next_id = 0

    async def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        await self.proc.stdin.drain()

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        await self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        assert self.proc.stdout is not None
        while True:
            line = await asyncio.wait_for(self.proc.stdout.readline(), TIMEOUT)
            assert line, "the server closed its output"
            message = json.loads(line)
            if message.get("id") == self.next_id:
                assert "error" not in message, message
                return message["result"]

    async def tool(self, name: str, arguments: dict[str, Any]) -> str:
        result = await self.request("tools/call", {"name": name, "arguments": arguments})
        assert not result.get("isError"), result
        return "\n".join(part["text"] for part in result["content"] if part.get("type") == "text")


async def test_every_count_is_in_mnemon_db_after_the_client_closes(workspace: Path, data_dir: Path) -> None:
    command = mnemon_command("mcp", "--workspace", str(workspace), "--scope", "custom", "--data-dir", str(data_dir))
    proc = await asyncio.create_subprocess_exec(*command, cwd=str(REPO), env=server_env(),
                                                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.DEVNULL)
    client = RawMcp(proc)
    try:
        await client.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                            "clientInfo": {"name": "test", "version": "1"}})
        await client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        await client.tool("mnemon_memory_spaces", {"action": "create", "name": "Project", "description": "Orbit"})
        for n in range(40):
            await client.tool("mnemon_remember", {"content": f"orbit fact number {n}: relay {n} uses port {9000 + n}"})
        recalls = sent = 0
        while sent < 2 * ACCESS_FLUSH_THRESHOLD + 300:  # (hits >= ids sent) the threshold crossed twice
            found = await client.tool("mnemon_recall", {"query": "orbit relay port", "limit": 12})
            shown = len(re.findall(r"· id: ", found))
            assert shown
            recalls += 1
            sent += shown
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        code = await asyncio.wait_for(proc.wait(), TIMEOUT)
    assert code == 0
    [db_path] = list(data_dir.rglob("mnemon.db"))
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    total = db.execute("SELECT coalesce(sum(access_count), 0) FROM insights").fetchone()[0]
    details = [r[0] for r in db.execute("SELECT detail FROM oplog WHERE operation = 'recall'")]
    db.close()
    assert len(details) == recalls  # one oplog row per recall: none lost, none twice
    assert total == sum(int(re.search(r"hits=(\d+)$", d).group(1)) for d in details) >= sent
