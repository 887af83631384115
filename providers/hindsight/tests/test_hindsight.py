"""mnemon-ls spaces on a real Hindsight server (hindsight-api 1.1, PostgreSQL with pgvector and pg_trgm, embeddings
from a loopback endpoint; no mocks, no network): configuration errors, discovery of banks Hindsight's own clients
wrote, remember/recall in English and Chinese, forget with Hindsight's delete, capability gating, receipts of
exact and extracting servers, and the isolation of a server that goes away in federated recall."""

from __future__ import annotations

from pathlib import Path

import pytest

from mnemon_ls.errors import InvalidInput, ProviderNotConfigured, ProviderUnavailable, SpaceRefused
from mnemon_ls.spaces import SpacesService
from provider_checks import check_isolated_when_gone, check_silent_server_named


def test_not_configured_bad_fields_and_a_server_that_is_not_there_change_nothing(tmp_path: Path) -> None:
    root = tmp_path / "root"
    service = SpacesService(root, provider_timeout=60)
    with pytest.raises(ProviderNotConfigured) as refused:
        service.thirdparty.test("hindsight")
    assert refused.value.data["reason"] == "not-configured"
    assert not (root / "state").exists()
    service.thirdparty.configure("hindsight", {"timeoutSeconds": "5"})
    before = (root / "state" / "memory-providers.json").read_bytes()
    for bad, field in (({"endpoint": "http://user:pw-SECRET@127.0.0.1:9"}, "services.endpoint"),
                       ({"endpoint": "ftp://127.0.0.1:9"}, "services.endpoint"),
                       ({"timeoutSeconds": "0"}, "services.timeoutSeconds"),
                       ({"extracting": "maybe"}, "services.extracting")):
        with pytest.raises(InvalidInput) as error:
            service.thirdparty.enable("hindsight", bad)
        assert error.value.data["field"] == field
        assert "pw-SECRET" not in str(error.value.to_dict())
    with pytest.raises(InvalidInput) as missing:
        service.thirdparty.enable("hindsight", {})
    assert missing.value.data["field"] == "services.endpoint" and "is required" in missing.value.rule
    from postgres_server import free_port

    nowhere = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(ProviderUnavailable) as down:
        service.thirdparty.enable("hindsight", {"endpoint": nowhere, "apiKey": "sk-live-SECRET"})
    assert down.value.data["reason"] == "engine-failed" and "cannot be reached" in down.value.message
    assert nowhere in down.value.message and "sk-live-SECRET" not in str(down.value.to_dict())
    assert (root / "state" / "memory-providers.json").read_bytes() == before
    service.close()


def test_discovery_remember_recall_forget_and_gating(tmp_path: Path, hindsight, bank: str) -> None:
    # a bank Hindsight's own clients made and wrote
    hindsight.call("PUT", f"/v1/default/banks/{bank}", {"name": "Alice notes", "mission": "What Alice prefers"})
    hindsight.call("POST", f"/v1/default/banks/{bank}/memories",
                   {"items": [{"content": "Alice prefers dark mode in every editor", "document_id": "notes/alice.md"}],
                    "async": False})
    root = tmp_path / "root"
    service = SpacesService(root, provider_timeout=120)
    enabled = service.thirdparty.enable("hindsight", {"endpoint": hindsight.endpoint})
    assert enabled["health"]["ok"] is True and enabled["health"]["engine"].startswith("Hindsight 1.1")
    views = {v.record.external_id: v.to_dict() for v in service.list_spaces()}
    assert views[bank]["name"] == "Alice notes" and views[bank]["location"]["connectionFields"] == ["bankId"]
    caps = views[bank]["capabilities"]
    assert (caps["related"], caps["link"], caps["merge"], caps["delete"], caps["write"], caps["forget"]) == \
        (False, False, False, "hard", "exact", True)
    name = f"Team {bank}"
    space = service.create_space(name, "decisions of the team", active=True, provider="hindsight").to_dict()
    team_bank = f"team_{bank}"
    assert space["location"]["externalId"] == team_bank
    listed = {b["bank_id"]: b for b in hindsight.call("GET", "/v1/default/banks?limit=1000")["banks"]}
    assert (listed[team_bank]["name"], listed[team_bank]["mission"]) == (name, "decisions of the team")
    english = service.remember("We roll back when the error rate passes five percent", space_id=space["id"],
                               tags=["release"], category="decision").to_dict()
    chinese = service.remember("部署窗口是每周二晚上八点", space_id=space["id"]).to_dict()
    assert english["status"] == chinese["status"] == "committed"
    assert english["id"].startswith("mnemon-") and english["id"] != chinese["id"]
    hit = service.recall("when do we roll back a release", spaces=[space["id"]]).to_dict()["results"]
    assert hit[0]["id"] == english["id"] and hit[0]["tags"] == ["release"] and hit[0]["category"] == "decision"
    assert hit[0]["content"] == "We roll back when the error rate passes five percent"
    assert hit[0]["tier"] == "unknown" and 0 < hit[0]["score"] <= 1  # a cosine of a model this package does not know
    hit = service.recall("部署窗口", spaces=[space["id"]]).to_dict()["results"]
    assert hit[0]["id"] == chinese["id"] and hit[0]["content"] == "部署窗口是每周二晚上八点"
    long = " ".join(f"Step {i}: the release checklist item number {i} is reviewed by the on-call engineer." for i in range(90))
    assert 7000 < len(long.encode()) < 8000  # under the 8,000-byte limit, over Hindsight's ~3,000-character chunks
    whole = service.remember(long, space_id=space["id"]).to_dict()
    found = service.recall("release checklist item number 75 reviewed", spaces=[space["id"]]).to_dict()["results"]
    assert found[0]["id"] == whole["id"] and found[0]["content"] == long  # all of it, not the chunk that matched
    for wordless in ("🚀", "???", "___"):  # Hindsight answers HTTP 422 to these: nothing found, no failure
        answer = service.recall(wordless, spaces=[space["id"]]).to_dict()
        assert answer["results"] == [] and answer["failed"] == [], (wordless, answer)
    assert hindsight.call("GET", f"/v1/default/banks/{team_bank}/stats")["total_documents"] == 3
    # a name with no ASCII letter or digit names its bank by its hash; the bank keeps the name
    import hashlib

    named = service.create_space("团队记忆", "中文名字的空间", provider="hindsight").to_dict()
    made = "space_" + hashlib.sha256("团队记忆".encode()).hexdigest()[:12]
    assert named["location"]["externalId"] == made
    assert {b["bank_id"]: b["name"] for b in hindsight.call("GET", "/v1/default/banks?limit=1000")["banks"]}[made] == "团队记忆"
    with pytest.raises(SpaceRefused):
        service.related(space["id"], english["id"])
    with pytest.raises(SpaceRefused):
        service.link(space["id"], english["id"], chinese["id"])
    gone = service.forget(space["id"], chinese["id"]).to_dict()
    assert gone["status"] == "committed" and "hard delete" in gone["message"]
    assert hindsight.status(f"/v1/default/banks/{team_bank}/documents/{chinese['id']}") == 404
    assert chinese["id"] not in [r["id"] for r in service.recall("部署窗口", spaces=[space["id"]]).to_dict()["results"]]
    with pytest.raises(InvalidInput) as again:
        service.forget(space["id"], chinese["id"])
    assert again.value.data["field"] == "id"
    # the bank Hindsight's client wrote is untouched and readable through its space
    alice = [v.record.id for v in service.list_spaces() if v.record.external_id == bank][0]
    service.activate(alice)
    found = service.recall("which editor theme does Alice like", spaces=[alice]).to_dict()["results"]
    # a document id with a slash (Hindsight's own clients name documents by path) is an item id in base64url
    assert (found[0]["content"], found[0]["id"]) == ("Alice prefers dark mode in every editor", "b64~bm90ZXMvYWxpY2UubWQ")
    assert service.forget(alice, found[0]["id"]).to_dict()["status"] == "committed"
    assert hindsight.status(f"/v1/default/banks/{bank}/documents/notes/alice.md") == 404
    long = "notes/" + "x" * 300  # too long for an item id: named by its hash, found among the bank's documents
    hindsight.call("POST", f"/v1/default/banks/{bank}/memories",
                   {"items": [{"content": "Bob reviews every database migration", "document_id": long}], "async": False})
    found = service.recall("who reviews database migrations", spaces=[alice]).to_dict()["results"]
    assert found[0]["id"].startswith("h~") and found[0]["content"] == "Bob reviews every database migration"
    assert service.forget(alice, found[0]["id"]).to_dict()["status"] == "committed"
    assert hindsight.status(f"/v1/default/banks/{bank}/documents/{long}") == 404
    hindsight.call("POST", f"/v1/default/banks/{bank}/memories",  # a document id that looks like a hashed one
                   {"items": [{"content": "Carol owns the release calendar", "document_id": "h~abc"}], "async": False})
    found = service.recall("who owns the release calendar", spaces=[alice]).to_dict()["results"]
    assert found[0]["id"] == "b64~aH5hYmM" and found[0]["content"] == "Carol owns the release calendar"
    import base64

    other_spelling = "b64~" + base64.urlsafe_b64encode(b"h~abc").decode().rstrip("=") + "="  # padded: not canonical
    with pytest.raises(InvalidInput):
        service.forget(alice, other_spelling)
    assert service.forget(alice, found[0]["id"]).to_dict()["status"] == "committed"
    assert hindsight.status(f"/v1/default/banks/{bank}/documents/h~abc") == 404
    service.close()


def test_an_extracting_server_is_declared_and_its_receipts_say_so(tmp_path: Path, hindsight, bank: str) -> None:
    service = SpacesService(tmp_path / "root", provider_timeout=120)
    service.thirdparty.enable("hindsight", {"endpoint": hindsight.endpoint, "extracting": "true"})
    space = service.create_space(f"X {bank}", "extracted facts", active=True, provider="hindsight").to_dict()
    assert space["capabilities"]["write"] == "async-extracting"
    receipt = service.remember("The release train leaves every second Thursday", space_id=space["id"]).to_dict()
    assert receipt["status"] == "committed" and receipt["id"].startswith("mnemon-")
    # the server here runs no language model: its one "fact" is the text itself, listed as Hindsight stored it
    assert receipt["extracted"][0]["content"] == "The release train leaves every second Thursday"
    assert "its provider extracted" in receipt["message"]
    exact = SpacesService(tmp_path / "exact", provider_timeout=120)
    exact.thirdparty.enable("hindsight", {"endpoint": hindsight.endpoint})
    plain = exact.create_space(f"Y {bank}", "as given", active=True, provider="hindsight").to_dict()
    assert plain["capabilities"]["write"] == "exact"
    given = exact.remember("The release train leaves every second Thursday", space_id=plain["id"]).to_dict()
    assert "extracted" not in given and "its provider extracted" not in given["message"]
    # a bank made on the server since this root last discovered is not taken over by a "create" here
    hindsight.call("PUT", f"/v1/default/banks/z_{bank}", {"name": "made elsewhere", "mission": "another root's"})
    with pytest.raises(InvalidInput) as taken:
        exact.create_space(f"Z {bank}", "mine", provider="hindsight")
    assert taken.value.data["field"] == "name" and f"z_{bank}" in taken.value.rule and "discover" in taken.value.rule
    listed = {b["bank_id"]: b for b in hindsight.call("GET", "/v1/default/banks?limit=1000")["banks"]}
    assert listed[f"z_{bank}"]["mission"] == "another root's"  # unchanged
    exact.close()
    service.close()


def test_a_server_that_goes_away_is_isolated_in_federated_recall(tmp_path: Path, own_hindsight, bank: str) -> None:
    check_isolated_when_gone(tmp_path / "root", "hindsight", own_hindsight, f"Team {bank}")


def test_a_server_that_never_answers_or_is_not_hindsight_is_named_and_nothing_is_enabled(tmp_path: Path,
                                                                                         embeddings) -> None:
    root = tmp_path / "root"
    service = SpacesService(root, provider_timeout=60)
    check_silent_server_named(service, "hindsight")
    other = embeddings.endpoint.rsplit("/v1", 1)[0]  # an HTTP server that is not Hindsight
    with pytest.raises(ProviderUnavailable) as wrong:
        service.thirdparty.enable("hindsight", {"endpoint": other})
    assert f"the server at {other} answered HTTP " in wrong.value.message and "/v1/version" in wrong.value.message
    assert not (root / "state" / "memory-providers.json").exists()  # nothing enabled, nothing written
    service.close()


def test_document_ids_map_to_item_ids_and_back() -> None:
    from mnemon_ls.spaces.model import validate_item_id
    from mnemon_ls_provider_hindsight.engine import document_of, item_id

    for document in ("mnemon-0123abcd", "notes/alice.md", "a..b", "with space", "b64~looks-encoded", "部署/窗口",
                     "x" * 200, " lead", "h~abc"):
        item = item_id(document)
        assert validate_item_id(item) == item and document_of(item) == document, document
    long = "notes/" + "x" * 300  # too long to carry: named by its hash, looked up when forgotten
    assert validate_item_id(item_id(long)) == item_id(long) == document_of(item_id(long))
    assert item_id("mnemon-0123abcd") == "mnemon-0123abcd"  # what mnemon-ls writes stays as it is
    assert document_of("b64~%%%") is None
    assert item_id("x" * 201).startswith("h~") and item_id("h~" + "0" * 40).startswith("b64~")


def _serve(handler_body) -> tuple[object, str]:
    """A real HTTP server on 127.0.0.1 whose GET/POST/PUT/DELETE are ``handler_body(handler)``; ``(server, url)``."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:  # quiet
            pass

        do_GET = do_POST = do_PUT = do_DELETE = handler_body

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def test_hostile_servers_never_get_the_key_nor_crash_mnemon_ls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A redirect is not followed (the bearer key would go where the server points); a broken-off answer, an answer
    too big, and a JSON list where an object belongs are each a clear ``provider-unavailable`` or an empty read."""
    import json

    from mnemon_ls.spaces.providers import rest

    seen: list[str | None] = []

    def collector(handler) -> None:
        seen.append(handler.headers.get("Authorization"))
        handler.send_response(200)
        handler.end_headers()

    collect, collect_url = _serve(collector)

    def redirecting(handler) -> None:
        handler.send_response(302)
        handler.send_header("Location", collect_url + handler.path)
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    def broken(handler) -> None:  # promises 100 bytes, sends one, hangs up
        handler.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
        handler.wfile.flush()
        handler.close_connection = True

    def bulky(handler) -> None:
        body = json.dumps({"api_version": "1.1.0", "pad": "x" * 5000}).encode()
        handler.send_response(200)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    def lists(handler) -> None:  # a version, then a JSON list for everything else
        body = json.dumps({"api_version": "1.1.0"} if handler.path == "/v1/version" else []).encode()
        handler.send_response(200)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    servers = [collect]
    try:
        service = SpacesService(tmp_path / "root", provider_timeout=60)
        redirect, url = _serve(redirecting)
        servers.append(redirect)
        with pytest.raises(ProviderUnavailable) as moved:
            service.thirdparty.enable("hindsight", {"endpoint": url, "apiKey": "sk-live-SECRET-0042"})
        assert "a redirect to" in moved.value.message and "not followed" in moved.value.message
        assert seen == [] and "sk-live-SECRET-0042" not in str(moved.value.to_dict())
        cut, url = _serve(broken)
        servers.append(cut)
        with pytest.raises(ProviderUnavailable) as broke:
            service.thirdparty.enable("hindsight", {"endpoint": url})
        assert f"the server at {url} broke off its answer to GET /v1/version" in broke.value.message
        big, url = _serve(bulky)
        servers.append(big)
        monkeypatch.setattr(rest, "MAX_ANSWER_BYTES", 1000)  # the cap, made small enough to cross
        with pytest.raises(ProviderUnavailable) as huge:
            service.thirdparty.enable("hindsight", {"endpoint": url})
        assert "with more than 1000 bytes" in huge.value.message
        monkeypatch.undo()
        odd, url = _serve(lists)
        servers.append(odd)
        with pytest.raises(ProviderUnavailable) as sick:  # a list where an object belongs: read as empty, no crash
            service.thirdparty.enable("hindsight", {"endpoint": url})
        assert "its /health did not answer healthy (status None)" in sick.value.message
        service.close()
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()


def test_a_key_that_is_not_printable_ascii_or_an_endpoint_with_a_query_is_refused_naming_it(tmp_path: Path) -> None:
    service = SpacesService(tmp_path / "root", provider_timeout=60)
    for fields, field in (({"endpoint": "http://127.0.0.1:9", "apiKey": "ключ"}, "services.apiKey"),
                          ({"endpoint": "http://127.0.0.1:9/?region=eu"}, "services.endpoint")):
        with pytest.raises(InvalidInput) as refused:
            service.thirdparty.enable("hindsight", fields)
        assert refused.value.data["field"] == field and "ключ" not in str(refused.value.to_dict())
    assert not (tmp_path / "root" / "state" / "memory-providers.json").exists()
    service.close()


def test_a_bank_deleted_outside_mnemon_ls_is_named_not_taken_for_a_server_that_is_down(tmp_path: Path, hindsight,
                                                                                       bank: str) -> None:
    service = SpacesService(tmp_path / "root", provider_timeout=120)
    service.thirdparty.enable("hindsight", {"endpoint": hindsight.endpoint})
    team = service.create_space(f"Gone {bank}", "team", active=True, provider="hindsight").record.id
    service.remember("The bank will be deleted by another client", space_id=team)
    native = service.create_space("Native", "native", active=True).record.id
    service.remember("The bank question has a native answer too", space_id=native)
    hindsight.call("DELETE", f"/v1/default/banks/gone_{bank}")
    result = service.recall("who deletes the bank").to_dict()
    assert [r["spaceId"] for r in result["results"]] == [native] and result["failed"] == [team]
    hint = {s["spaceId"]: s for s in result["sources"]}[team]["hint"]
    assert f"has no bank gone_{bank} (deleted outside mnemon-ls?)" in hint and "cannot be reached" not in hint, hint
    assert f"space deactivate {team}" in hint
    service.close()
