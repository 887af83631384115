"""A byte-level client for the real server: frames written by hand, so tests can send malformed ones.

pytest-lsp (and pygls' client) can only send well-formed messages; the framing tests need to write any
bytes to the server's stdin. :class:`RawServer` starts ``python -m mnemon_ls serve`` as a subprocess,
reads its stdout with a strict parser of its own (``Content-Length`` header block, then exactly that many
bytes of UTF-8 JSON; anything else fails the test) and files every message it receives: responses by
id (``None`` for ``"id": null``), server requests are answered with ``null`` (so the server is never
left waiting), notifications are kept in order.

No sleep is used as synchronisation: :meth:`RawServer.response` waits for an event set by the reader,
bounded by a timeout, and :meth:`RawServer.exit_code` waits for the process with a bound.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

from tests.lsp.conftest import REQUEST_TIMEOUT, server_command

_HEADER = re.compile(rb"Content-Length: (\d+)\r\n(?:Content-Type: [^\r\n]*\r\n)?\r\n")


def frame(body: bytes | str | dict[str, Any]) -> bytes:
    """A well-formed frame around ``body`` (a dict is encoded as compact JSON)."""
    if isinstance(body, dict):
        body = json.dumps(body, separators=(",", ":"))
    if isinstance(body, str):
        body = body.encode("utf-8")
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


class RawServer:
    """One server subprocess spoken to in raw bytes (see the module doc)."""

    def __init__(self) -> None:
        self.proc: asyncio.subprocess.Process | None = None
        self.responses: dict[Any, list[dict[str, Any]]] = {}
        self.notifications: list[dict[str, Any]] = []
        self.protocol_errors: list[str] = []
        self.stderr = b""
        self._arrived = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._next_id = 1000

    async def start(self, env: dict[str, str], cwd: Path, command: list[str] | None = None) -> None:
        """Start ``command`` (default: the server under test, :func:`server_command`)."""
        self.proc = await asyncio.create_subprocess_exec(
            *(command or server_command()), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env=env, cwd=cwd)
        self._tasks = [asyncio.create_task(self._read()), asyncio.create_task(self._drain_stderr())]

    async def _drain_stderr(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        while chunk := await self.proc.stderr.read(65536):
            self.stderr += chunk

    async def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        stdout = self.proc.stdout
        buffer = b""
        while True:
            match = _HEADER.match(buffer)
            if match is None:
                if b"\r\n\r\n" in buffer:
                    self.protocol_errors.append(f"bad header from the server: {buffer[:200]!r}")
                    return
                chunk = await stdout.read(65536)
                if not chunk:
                    return
                buffer += chunk
                continue
            length = int(match.group(1))
            while len(buffer) < match.end() + length:
                chunk = await stdout.read(65536)
                if not chunk:
                    return
                buffer += chunk
            body, buffer = buffer[match.end():match.end() + length], buffer[match.end() + length:]
            message = json.loads(body.decode("utf-8"))
            self._file(message)

    def _file(self, message: Any) -> None:
        if not isinstance(message, dict):
            self.protocol_errors.append(f"the server sent a non-object message: {message!r}")
        elif "method" in message and "id" in message:  # a server request: answer null, never leave it waiting
            self.write(frame({"jsonrpc": "2.0", "id": message["id"], "result": None}))
        elif "method" in message:
            self.notifications.append(message)
        else:
            self.responses.setdefault(message.get("id"), []).append(message)
        self._arrived.set()

    # ------------------------------------------------------------------ sending

    def write(self, data: bytes) -> None:
        """Write raw bytes to the server's stdin."""
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write(data)

    def next_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def request(self, method: str, params: Any = None, msg_id: Any = None) -> Any:
        """Send a well-formed request; returns its id."""
        msg_id = self.next_id() if msg_id is None else msg_id
        self.write(frame({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}))
        return msg_id

    def notify(self, method: str, params: Any = None) -> None:
        self.write(frame({"jsonrpc": "2.0", "method": method, "params": params}))

    async def call(self, method: str, params: Any = None, timeout: float = REQUEST_TIMEOUT) -> dict[str, Any]:
        """A well-formed request and its response message (result or error)."""
        return await self.response(self.request(method, params), timeout)

    # ------------------------------------------------------------------ receiving

    async def response(self, msg_id: Any, timeout: float = REQUEST_TIMEOUT) -> dict[str, Any]:
        """The first response to ``msg_id`` (``None`` for ``"id": null``); fails after ``timeout`` seconds."""
        deadline = asyncio.get_running_loop().time() + timeout
        while not self.responses.get(msg_id):
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0 or self.proc is None or (self.proc.returncode is not None and self._tasks[0].done()):
                raise AssertionError(f"no response to id {msg_id!r} within {timeout} s "
                                     f"(exit code {self.proc.returncode if self.proc else None}); "
                                     f"stderr: {self.stderr[-2000:]!r}")
            self._arrived.clear()
            try:
                await asyncio.wait_for(self._arrived.wait(), min(remaining, 0.5))
            except asyncio.TimeoutError:
                pass
        return self.responses[msg_id].pop(0)

    async def notification(self, method: str, predicate: Any = None,
                           timeout: float = REQUEST_TIMEOUT) -> dict[str, Any]:
        """The params of the first notification ``method`` (matching ``predicate``) received so far or
        within ``timeout`` seconds; it is taken out of :attr:`notifications`."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            for index, note in enumerate(self.notifications):
                if note["method"] == method and (predicate is None or predicate(note.get("params"))):
                    del self.notifications[index]
                    return note.get("params")
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0:
                raise AssertionError(f"no {method} notification within {timeout} s; got {self.notifications!r}")
            self._arrived.clear()
            try:
                await asyncio.wait_for(self._arrived.wait(), min(remaining, 0.5))
            except asyncio.TimeoutError:
                pass

    async def initialize(self, folders: list[Path] = (), init: Any = None, **params: Any) -> dict[str, Any]:
        """``initialize`` (no client capabilities) + ``initialized``; returns the initialize response."""
        base = {"processId": None, "capabilities": {}, "initializationOptions": init,
                "workspaceFolders": [{"uri": f.as_uri(), "name": f.name} for f in folders] if folders else None}
        response = await self.call("initialize", base | params)
        self.notify("initialized", {})
        return response

    async def exit_code(self, timeout: float = REQUEST_TIMEOUT) -> int | None:
        """The exit code once the process ended within ``timeout`` seconds, else ``None``."""
        assert self.proc is not None
        try:
            return await asyncio.wait_for(self.proc.wait(), timeout)
        except asyncio.TimeoutError:
            return None

    async def close(self) -> None:
        """Shut down politely when possible, else kill the process this object started."""
        if self.proc is None:
            return
        if self.proc.returncode is None:
            try:
                await asyncio.wait_for(self.call("shutdown"), 5)
                self.notify("exit")
                self.proc.stdin.close()
            except Exception:
                pass
            if await self.exit_code(5) is None:
                self.proc.kill()
                await self.proc.wait()
        for task in self._tasks:
            try:
                await asyncio.wait_for(task, 5)
            except Exception:
                task.cancel()
