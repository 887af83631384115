"""The real ByteRover engine for the provider's tests, with what it needs on a machine without internet, all
started and stopped by the tests themselves:

- :class:`LoginStub`: a stand-in of ByteRover's login service on loopback. byterover-cli's daemon fetches the
  OpenID discovery document of ``BRV_IAM_BASE_URL`` when it starts and stops when that service cannot be
  reached; the stand-in answers that document (``authorization_endpoint``, ``token_endpoint``) and HTTP 404 to
  everything else (which byterover-cli takes as a warning). No account, no token: nothing here logs in.
- :class:`FakeModel`: a scripted OpenAI-compatible chat endpoint for ``brv curate`` (ByteRover's own writes go
  through a language model): its first answer to a curate task is one ``code_exec`` tool call running
  ByteRover's own ``tools.curate`` on the operation the curate text holds as JSON (``{type, path, title,
  text}``); every other request is answered "Done.".
- :class:`ByteRoverHome`: one private ByteRover state (``XDG_CONFIG_HOME``, ``XDG_DATA_HOME``,
  ``XDG_CACHE_HOME``, ``XDG_STATE_HOME`` under a temporary directory), its ``BRV_*_BASE_URL`` variables naming
  the stand-in, its own web UI port and ``BRV_DISABLE_AUTOUPDATE=1``; :meth:`ByteRoverHome.stop` ends every
  process started with that state (the daemon, its agents, any ``brv`` left), found by the environment they
  run with.

The ``brv`` command is ``MNEMON_BYTEROVER_BRV``, else ``brv`` on ``PATH`` (byterover-cli 3.14.0 from npm).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable

#: How long one engine command of a test may take (seconds): the first one starts the daemon.
COMMAND_SECONDS = 120
#: How long a test waits for ByteRover's search to see a write (seconds): its index cache lives 5 s; the rest is
#: room for a loaded machine.
VISIBLE_SECONDS = 90
#: The variables of ByteRover's hosted services, all pointed at the stand-in.
BASE_URLS = ("BRV_IAM_BASE_URL", "BRV_COGIT_BASE_URL", "BRV_GIT_REMOTE_BASE_URL", "BRV_LLM_BASE_URL",
             "BRV_WEB_APP_URL", "BRV_BILLING_BASE_URL")


def brv_command() -> str | None:
    """The ``brv`` command to run (module doc), or ``None``."""
    return os.environ.get("MNEMON_BYTEROVER_BRV") or shutil.which("brv")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class _Server:
    """A stdlib HTTP server on 127.0.0.1 (a free port) in a thread of the test process."""

    handler: type[BaseHTTPRequestHandler]

    def start(self) -> "_Server":
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self.handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.httpd.owner = self  # type: ignore[attr-defined]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if getattr(self, "httpd", None) is not None:
            self.httpd.shutdown()
            self.httpd.server_close()
            self.httpd = None  # type: ignore[assignment]


def _send(handler: BaseHTTPRequestHandler, status: int, body: bytes, kind: str = "application/json") -> None:
    handler.send_response(status)
    handler.send_header("Content-Type", kind)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


class _StubHandler(BaseHTTPRequestHandler):
    def _answer(self) -> None:
        owner = self.server.owner  # type: ignore[attr-defined]
        owner.paths.append(f"{self.command} {self.path}")
        if self.path.endswith("/.well-known/openid-configuration"):
            _send(self, 200, json.dumps({"issuer": owner.url, "authorization_endpoint": owner.url + "/authorize",
                                         "token_endpoint": owner.url + "/token"}).encode())
        else:
            _send(self, 404, b'{"error":"offline stand-in"}')

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _answer

    def log_message(self, *args: Any) -> None:
        pass


class LoginStub(_Server):
    """The stand-in of ByteRover's login service (module doc); ``paths`` lists the requests it answered."""

    handler = _StubHandler

    def __init__(self) -> None:
        self.paths: list[str] = []


#: The code the scripted model asks ByteRover's sandbox to run: the curate text parsed as one operation, handed to
#: ByteRover's own curate tool (``%(ctx)s``: the sandbox variable holding the curate text).
CURATE_CODE = r'''(async () => {
  const raw = typeof %(ctx)s === 'string' ? %(ctx)s : JSON.stringify(%(ctx)s);
  const p = JSON.parse(raw);
  const op = { type: p.type || 'UPSERT', path: p.path, title: p.title, reason: 'scripted test model' };
  if (op.type !== 'DELETE') { op.summary = p.text.slice(0, 200); op.content = { narrative: { structure: p.text } }; }
  console.log(JSON.stringify(await tools.curate([op])));
})()'''


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"id": "fake", "object": "chat.completion.chunk", "created": int(time.time()), "model": "fake-model",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


class _ModelHandler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # the model list `brv providers connect` asks for
        _send(self, 200, json.dumps({"object": "list", "data": [{"id": "fake-model", "object": "model",
                                                                  "owned_by": "tests"}]}).encode())

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        messages = request.get("messages") or []
        user = next((m.get("content") for m in messages if m.get("role") == "user"), "")
        user = user if isinstance(user, str) else json.dumps(user)
        variable = re.search(r"Context variable: (__curate_ctx_\w+)", user)
        answered = any(m.get("role") == "tool" for m in messages)
        self.server.owner.requests += 1  # type: ignore[attr-defined]
        if variable and not answered:
            arguments = json.dumps({"code": CURATE_CODE % {"ctx": variable.group(1)}, "timeout": 60000})
            chunks = [_chunk({"role": "assistant", "tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                                                    "function": {"name": "code_exec",
                                                                                 "arguments": arguments}}]}),
                      _chunk({}, "tool_calls")]
        else:
            chunks = [_chunk({"role": "assistant", "content": "Done."}), _chunk({}, "stop")]
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        for chunk in chunks:
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")

    def log_message(self, *args: Any) -> None:
        pass


class FakeModel(_Server):
    """The scripted OpenAI-compatible model (module doc); ``requests`` counts the chat requests it answered."""

    handler = _ModelHandler

    def __init__(self) -> None:
        self.requests = 0


class ByteRoverHome:
    """One private ByteRover state and the environment that selects it (module doc)."""

    def __init__(self, command: str, stub: LoginStub) -> None:
        self.command = command
        self.stub = stub
        self.dir = Path(tempfile.mkdtemp(prefix="brv-home-"))
        self.data = self.dir / "data"
        self.env = {"XDG_CONFIG_HOME": str(self.dir / "config"), "XDG_DATA_HOME": str(self.data),
                    "XDG_CACHE_HOME": str(self.dir / "cache"), "XDG_STATE_HOME": str(self.dir / "state"),
                    "BRV_WEBUI_PORT": str(free_port()), "BRV_DISABLE_AUTOUPDATE": "1",
                    **{name: stub.url for name in BASE_URLS}}

    def brv(self, *args: str, cwd: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
        """``brv args`` run in ``cwd`` with this state (as ByteRover's own users run it)."""
        done = subprocess.run([self.command, *args], cwd=cwd, env={**os.environ, **self.env}, capture_output=True,
                              text=True, timeout=COMMAND_SECONDS, stdin=subprocess.DEVNULL)
        if check and done.returncode != 0:
            raise RuntimeError(f"brv {' '.join(args)} in {cwd} exited {done.returncode}: {done.stdout[-1000:]}"
                               f"{done.stderr[-1000:]}")
        return done

    def init_project(self, path: Path) -> Path:
        """``brv vc init`` in ``path`` (made): an initialised ByteRover project."""
        path.mkdir(parents=True, exist_ok=True)
        self.brv("vc", "init", cwd=path)
        assert (path / ".brv" / "context-tree").is_dir()
        return path

    def processes(self) -> list[int]:
        """The ids of the live processes running with this state (its ``XDG_DATA_HOME`` in their environment)."""
        marker = f"XDG_DATA_HOME={self.data}".encode()
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            try:
                environ = (entry / "environ").read_bytes()
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if state != "Z" and marker in environ.split(b"\0"):
                found.append(int(entry.name))
        return found

    def stop(self, *, remove: bool = True) -> None:
        """End every process of this state (the daemon's group, then any other), waiting until they are gone;
        then remove its directory (``remove``)."""
        daemon = self.data / "brv" / "daemon.json"
        try:
            pid = json.loads(daemon.read_text()).get("pid")
            if isinstance(pid, int):
                os.killpg(pid, signal.SIGTERM)
        except (OSError, ValueError):
            pass
        deadline = time.monotonic() + 10
        for sig in (signal.SIGTERM, signal.SIGKILL):
            while (left := self.processes()) and time.monotonic() < deadline:
                for pid in left:
                    try:
                        os.kill(pid, sig)
                    except ProcessLookupError:
                        pass
                time.sleep(0.1)  # polling for the processes' exit, the event itself
            deadline = time.monotonic() + 30
        left = self.processes()
        if remove:
            shutil.rmtree(self.dir, ignore_errors=True)
        assert not left, f"ByteRover processes still running: {left}"

    def connect(self, model: FakeModel) -> None:
        """Make ``model`` ByteRover's language model (``brv providers connect openai-compatible``), then restart its
        daemon so its agents use it."""
        self.brv("providers", "connect", "openai-compatible", "--base-url", model.url + "/v1", "--api-key",
                 "sk-fake-test", "-m", "fake-model", cwd=self.dir)
        self.brv("restart", cwd=self.dir)


def wait_for(probe: Callable[[], Any], what: str, seconds: float = VISIBLE_SECONDS) -> Any:
    """The first true answer of ``probe()`` (each call runs ByteRover's search once), or a failure naming
    ``what`` after ``seconds``: the event waited for is the search seeing the write."""
    deadline = time.monotonic() + seconds
    while True:
        answer = probe()
        if answer:
            return answer
        assert time.monotonic() < deadline, f"ByteRover's search did not see {what} within {seconds} s"
