"""mnemon-ls spaces on a real OpenViking server (openviking 0.5.2, its embedded file store and vector index,
embeddings from a loopback endpoint; no mocks, no network): configuration errors, discovery of the memories
OpenViking's own clients wrote, remember/recall in English and Chinese, forget with OpenViking's delete,
capability gating, keys and user isolation, and the isolation of a server that goes away in federated recall."""

from __future__ import annotations

from pathlib import Path

import pytest

from mnemon_ls.errors import InvalidInput, ProviderNotConfigured, ProviderUnavailable, SpaceRefused
from mnemon_ls.spaces import SpacesService
from provider_checks import check_isolated_when_gone, check_silent_server_named


def _write(server, uri: str, text: str, **kw) -> None:
    """Write as OpenViking's own clients do (its HTTP API)."""
    answer = server.call("POST", "/api/v1/content/write", {"uri": uri, "content": text, "wait": True,
                                                           "processing_mode": "vectors_only"}, **kw)
    assert answer["status"] == "ok", answer


def test_not_configured_bad_fields_and_a_server_that_is_not_there_change_nothing(tmp_path: Path) -> None:
    root = tmp_path / "root"
    service = SpacesService(root, provider_timeout=60)
    with pytest.raises(ProviderNotConfigured) as refused:
        service.thirdparty.test("openviking")
    assert refused.value.data["reason"] == "not-configured"
    assert not (root / "state").exists()
    service.thirdparty.configure("openviking", {"timeoutSeconds": "5"})
    before = (root / "state" / "memory-providers.json").read_bytes()
    for bad, field in (({"endpoint": "http://user:pw-SECRET@127.0.0.1:9"}, "services.endpoint"),
                       ({"endpoint": "ftp://127.0.0.1:9"}, "services.endpoint"),
                       ({"endpoint": "http://127.0.0.1:9/?x=1"}, "services.endpoint"),
                       ({"timeoutSeconds": "0"}, "services.timeoutSeconds"),
                       ({"user": "../alice"}, "services.user"),
                       ({"endpoint": "http://127.0.0.1:9", "apiKey": "ключ"}, "services.apiKey")):
        with pytest.raises(InvalidInput) as error:
            service.thirdparty.enable("openviking", bad)
        assert error.value.data["field"] == field, (bad, error.value.to_dict())
        assert "pw-SECRET" not in str(error.value.to_dict())
    with pytest.raises(InvalidInput) as missing:
        service.thirdparty.enable("openviking", {})
    assert missing.value.data["field"] == "services.endpoint" and "is required" in missing.value.rule
    from postgres_server import free_port

    nowhere = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(ProviderUnavailable) as down:
        service.thirdparty.enable("openviking", {"endpoint": nowhere, "apiKey": "sk-live-SECRET"})
    assert down.value.data["reason"] == "engine-failed" and "cannot be reached" in down.value.message
    assert nowhere in down.value.message and "sk-live-SECRET" not in str(down.value.to_dict())
    assert (root / "state" / "memory-providers.json").read_bytes() == before
    service.close()


def test_discovery_remember_recall_forget_and_gating(tmp_path: Path, openviking, folder: str) -> None:
    # memories OpenViking's own clients wrote for another user (``folder`` as the user id), one in a subfolder with
    # a space in its name
    theirs = f"viking://user/{folder}/memories"
    _write(openviking, f"{theirs}/preferences/alice/editor theme.md", "Alice prefers dark mode in every editor",
           user=folder)  # where OpenViking's own memory extraction writes a preference
    root = tmp_path / "root"
    service = SpacesService(root, provider_timeout=120)
    enabled = service.thirdparty.enable("openviking", {"endpoint": openviking.endpoint})
    assert enabled["health"]["ok"] is True and enabled["health"]["engine"] == "OpenViking 0.5.2 (dev mode)"
    views = {v.record.external_id: v.to_dict() for v in service.list_spaces()}
    assert views[theirs]["name"] == f"OpenViking {folder}"
    assert views[theirs]["description"] == f"OpenViking memories of user {folder}."
    assert views[theirs]["location"]["connectionFields"] == ["targetUri"]
    caps = views[theirs]["capabilities"]
    assert (caps["related"], caps["link"], caps["merge"], caps["delete"], caps["write"], caps["forget"]) == \
        (False, False, False, "hard", "exact", True)
    name = f"Team {folder}"
    space = service.create_space(name, "decisions of the team", active=True, provider="openviking").to_dict()
    mine = f"viking://user/default/memories/team_{folder}"
    assert space["location"]["externalId"] == mine
    english = service.remember("We roll back when the error rate passes five percent", space_id=space["id"],
                               tags=["release", "团队"], category="decision", importance=4).to_dict()
    chinese = service.remember("部署窗口是每周二晚上八点", space_id=space["id"]).to_dict()
    assert english["status"] == chinese["status"] == "committed"
    assert english["id"].startswith("mnemon-") and english["id"] != chinese["id"]
    # the file is OpenViking's, holding the text as given
    assert openviking.call("GET", f"/api/v1/content/read?uri={mine}/{english['id']}.md")["result"] == \
        "We roll back when the error rate passes five percent"
    hit = service.recall("when do we roll back a release", spaces=[space["id"]]).to_dict()["results"]
    assert hit[0]["id"] == english["id"] and hit[0]["tags"] == ["release", "团队"]
    assert (hit[0]["category"], hit[0]["importance"]) == ("decision", 4)
    assert hit[0]["content"] == "We roll back when the error rate passes five percent"
    assert hit[0]["tier"] == "unknown" and 0 < hit[0]["score"] <= 1  # a cosine of a model this package does not know
    hit = service.recall("部署窗口是什么时候", spaces=[space["id"]]).to_dict()["results"]
    assert hit[0]["id"] == chinese["id"] and hit[0]["content"] == "部署窗口是每周二晚上八点"
    long = " ".join(f"Step {i}: the release checklist item number {i} is reviewed by the on-call engineer." for i in range(90))
    assert 7000 < len(long.encode()) < 8000
    whole = service.remember(long, space_id=space["id"]).to_dict()
    found = service.recall("release checklist reviewed by the on-call engineer", spaces=[space["id"]]).to_dict()["results"]
    assert found[0]["id"] == whole["id"] and found[0]["content"] == long
    for wordless in ("🚀", "???"):  # searched by meaning: whatever it finds, the space does not fail
        assert service.recall(wordless, spaces=[space["id"]]).to_dict()["failed"] == []
    assert service.space_status(space["id"])["status"]["total_insights"] == 3
    # a name with no ASCII letter or digit names its folder by its hash
    import hashlib

    named = service.create_space("团队记忆", "中文名字的空间", provider="openviking").to_dict()
    assert named["location"]["externalId"] == \
        "viking://user/default/memories/space_" + hashlib.sha256("团队记忆".encode()).hexdigest()[:12]
    with pytest.raises(SpaceRefused):
        service.related(space["id"], english["id"])
    with pytest.raises(SpaceRefused):
        service.link(space["id"], english["id"], chinese["id"])
    gone = service.forget(space["id"], chinese["id"]).to_dict()
    assert gone["status"] == "committed" and "hard delete" in gone["message"]
    assert openviking.call("GET", f"/api/v1/fs/stat?uri={mine}/{chinese['id']}.md")["error"]["code"] == "NOT_FOUND"
    assert chinese["id"] not in [r["id"] for r in service.recall("部署窗口", spaces=[space["id"]]).to_dict()["results"]]
    with pytest.raises(InvalidInput) as again:
        service.forget(space["id"], chinese["id"])
    assert again.value.data["field"] == "id"
    for junk in ("b64~%%%", "b64~Li4vLi4vZXRj", "h~" + "0" * 40, "mnemon-" + "0" * 32):  # the second is ../../etc
        with pytest.raises(InvalidInput):
            service.forget(space["id"], junk)
    # the folder OpenViking's client wrote is readable through its space; a path is an item id in base64url
    alice = [v.record.id for v in service.list_spaces() if v.record.external_id == theirs][0]
    service.activate(alice)
    found = service.recall("which editor theme does Alice like", spaces=[alice]).to_dict()["results"]
    assert found[0]["content"] == "Alice prefers dark mode in every editor"
    from mnemon_ls.spaces.providers.carried_ids import carry

    assert found[0]["id"] == carry("preferences/alice/editor_theme.md")  # OpenViking's spelling of the name
    assert service.forget(alice, found[0]["id"]).to_dict()["status"] == "committed"
    assert openviking.call("GET", f"/api/v1/fs/stat?uri={theirs}/preferences/alice/editor_theme.md")["status"] == "error"
    deep = "x" * 240 + ".md"  # too long to carry: named by its hash, found among the folder's files
    _write(openviking, f"{theirs}/{deep}", "Bob reviews every database migration", user=folder)
    found = service.recall("who reviews database migrations", spaces=[alice]).to_dict()["results"]
    assert found[0]["id"].startswith("h~") and found[0]["content"] == "Bob reviews every database migration"
    assert service.forget(alice, found[0]["id"]).to_dict()["status"] == "committed"
    assert openviking.call("GET", f"/api/v1/fs/stat?uri={theirs}/{deep}")["status"] == "error"
    # a folder made on the server since this root last discovered is not taken over by a "create" here
    assert openviking.call("POST", "/api/v1/fs/mkdir", {"uri": f"viking://user/default/memories/z_{folder}"})[
        "status"] == "ok"
    with pytest.raises(InvalidInput) as taken:
        service.create_space(f"Z {folder}", "mine", provider="openviking")
    assert taken.value.data["field"] == "name" and f"z_{folder}" in taken.value.rule and "discover" in taken.value.rule
    service.close()


def test_a_server_with_keys_isolates_users_and_a_wrong_key_is_named(tmp_path: Path, keyed_openviking) -> None:
    server = keyed_openviking
    made = server.call("POST", "/api/v1/admin/accounts", {"account_id": "acme", "admin_user_id": "alice"},
                       key=server.root_key)["result"]
    bob = server.call("POST", "/api/v1/admin/accounts/acme/users", {"user_id": "bob"}, key=server.root_key)["result"]
    alice_key, bob_key = made["user_key"], bob["user_key"]
    alice = SpacesService(tmp_path / "alice", provider_timeout=120)
    alice.thirdparty.enable("openviking", {"endpoint": server.endpoint, "apiKey": alice_key, "user": "alice"})
    space = alice.create_space("Private", "alice only", active=True, provider="openviking").to_dict()
    assert space["location"]["externalId"] == "viking://user/alice/memories/private"
    alice.remember("Alice keeps her signing key in the hardware token", space_id=space["id"])
    assert alice.recall("where is the signing key", spaces=[space["id"]]).to_dict()["results"][0]["content"] == \
        "Alice keeps her signing key in the hardware token"
    other = SpacesService(tmp_path / "bob", provider_timeout=120)
    other.thirdparty.enable("openviking", {"endpoint": server.endpoint, "apiKey": bob_key, "user": "bob"})
    assert "viking://user/alice/memories/private" not in {v.record.external_id for v in other.list_spaces()}
    wrong = SpacesService(tmp_path / "wrong", provider_timeout=120)
    with pytest.raises(ProviderUnavailable) as refused:
        wrong.thirdparty.enable("openviking", {"endpoint": server.endpoint, "apiKey": "not-a-key-at-all"})
        wrong.create_space("X", "x", provider="openviking")
    assert refused.value.data.get("field") == "services.apiKey" and "not-a-key-at-all" not in str(refused.value.to_dict())
    for s in (alice, other, wrong):
        s.close()


def test_a_server_that_goes_away_is_isolated_in_federated_recall(tmp_path: Path, own_openviking, folder: str) -> None:
    check_isolated_when_gone(tmp_path / "root", "openviking", own_openviking, f"Team {folder}")


def test_a_server_that_never_answers_or_is_not_openviking_is_named_and_nothing_is_enabled(tmp_path: Path,
                                                                                         embeddings) -> None:
    root = tmp_path / "root"
    service = SpacesService(root, provider_timeout=60)
    check_silent_server_named(service, "openviking")
    other = embeddings.endpoint.rsplit("/v1", 1)[0]  # an HTTP server that is not OpenViking
    with pytest.raises(ProviderUnavailable) as wrong:
        service.thirdparty.enable("openviking", {"endpoint": other})
    assert f"the server at {other} answered HTTP 501 to GET /health" in wrong.value.message
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Healthy(BaseHTTPRequestHandler):  # answers /health as many servers do, without OpenViking's version
        def do_GET(self) -> None:  # noqa: N802
            body = json.dumps({"status": "ok"}).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    lookalike = ThreadingHTTPServer(("127.0.0.1", 0), Healthy)
    threading.Thread(target=lookalike.serve_forever, daemon=True).start()
    try:
        endpoint = f"http://127.0.0.1:{lookalike.server_address[1]}"
        with pytest.raises(ProviderUnavailable) as unlike:
            service.thirdparty.enable("openviking", {"endpoint": endpoint})
        assert unlike.value.message == (f"provider openviking: {endpoint} answered /health without a version: is it "
                                        "an OpenViking server?")
    finally:
        lookalike.shutdown()
        lookalike.server_close()
    assert not (root / "state" / "memory-providers.json").exists()  # nothing enabled, nothing written
    service.close()


def test_a_users_root_and_the_folders_under_it_are_separate_spaces(tmp_path: Path, openviking, folder: str) -> None:
    """A user's root holds what OpenViking writes itself (its own folders, files directly in it); each other
    folder is a space of its own: a memory is in one space only, so a federated recall over both sends it once."""
    user = "u" + folder
    root_uri = f"viking://user/{user}/memories"
    _write(openviking, f"{root_uri}/preferences/{user}/review style.md", "Reviews happen before lunch", user=user)
    service = SpacesService(tmp_path / "root", provider_timeout=120)
    service.thirdparty.enable("openviking", {"endpoint": openviking.endpoint, "user": user})
    team = service.create_space(f"Team {folder}", "team", active=True, provider="openviking").record.id
    ours = service.remember("Reviews of the billing code happen after lunch", space_id=team).to_dict()["id"]
    root = next(v.record.id for v in service.list_spaces() if v.record.external_id == root_uri)
    service.activate(root)
    both = service.recall("when do reviews happen", spaces=[root, team]).to_dict()["results"]
    assert sorted((r["spaceId"], r["content"]) for r in both) == sorted(
        [(root, "Reviews happen before lunch"), (team, "Reviews of the billing code happen after lunch")]), both
    assert service.space_status(root)["status"]["total_insights"] == 1
    # the folder space, deleted here, is found again by discovery with its memory (an empty one would be too)
    target = f"{root_uri}/team_{folder}"
    service.delete_space(team, confirm=True)  # it holds an item: a delete is confirmed
    found = {r.external_id: r for r in service.thirdparty.discover("openviking")}
    assert found[target].name == f"OpenViking {user}/team_{folder}"
    service.activate(found[target].id)
    assert [r["id"] for r in service.recall("billing code reviews", spaces=[found[target].id]).to_dict()["results"]] \
        == [ours]
    service.close()
