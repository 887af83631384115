"""A small JSON-RPC client over the real ``python -m mnemon_ls serve`` (stdio, Content-Length framing)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from queue import Queue
from typing import Any


class Server:
    """Start the server with ``env``; :meth:`call` sends a request and waits for its answer (server requests
    such as ``workspace/configuration`` are answered with ``null``/``[]``; notifications are dropped)."""

    def __init__(self, env: dict[str, str], cwd: Path) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "mnemon_ls", "serve"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
        self.next_id = 0
        self.answers: dict[int, Queue] = {}
        self.lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode("utf-8")
        with self.lock:
            self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            self.proc.stdin.flush()

    def _read(self) -> None:
        out = self.proc.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            message = json.loads(out.read(length))
            if "method" in message and "id" in message:  # a server request
                self._send({"jsonrpc": "2.0", "id": message["id"],
                            "result": [None] * len(message.get("params", {}).get("items", []))
                            if message["method"] == "workspace/configuration" else None})
            elif "id" in message and message["id"] in self.answers:
                self.answers[message["id"]].put(message)

    def call(self, method: str, params: Any = None, timeout: float = 60) -> dict[str, Any]:
        """The raw answer: ``{"result": ...}`` or ``{"error": {...}}``."""
        self.next_id += 1
        box: Queue = Queue()
        self.answers[self.next_id] = box
        self._send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return box.get(timeout=timeout)

    def notify(self, method: str, params: Any = None) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def initialize(self, folder: Path) -> None:
        uri = folder.resolve().as_uri()
        self.call("initialize", {"processId": None, "rootUri": uri, "capabilities": {},
                                 "workspaceFolders": [{"uri": uri, "name": folder.name}]})
        self.notify("initialized", {})

    def close(self) -> None:
        try:
            self.call("shutdown", None, timeout=20)
            self.notify("exit")
            self.proc.wait(timeout=20)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
