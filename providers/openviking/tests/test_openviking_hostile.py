"""Hostile input to OpenViking spaces on a real OpenViking server: item ids and hand-edited ``targetUri`` values
that OpenViking refuses as unsafe paths (HTTP 403, which must not read as a refused key), and what a write
keeps of its fields."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from mnemon_ls.errors import ConfirmationRequired, InvalidInput
from mnemon_ls.spaces import SpacesService


def _b64(name: str) -> str:
    return "b64~" + base64.urlsafe_b64encode(name.encode()).decode().rstrip("=")


def test_ids_openviking_calls_unsafe_are_not_items_and_nothing_is_deleted(tmp_path: Path, openviking,
                                                                          folder: str) -> None:
    service = SpacesService(tmp_path / "root", provider_timeout=120)
    service.thirdparty.enable("openviking", {"endpoint": openviking.endpoint})
    space = service.create_space(f"Hostile {folder}", "attacks", provider="openviking").to_dict()["id"]
    kept = service.remember("The staging database is refreshed every night", space_id=space).to_dict()["id"]
    victim = f"viking://user/default/memories/victim_{folder}.md"
    assert openviking.call("POST", "/api/v1/content/write", {"uri": victim, "content": "outside the space",
                                                             "wait": True, "processing_mode": "vectors_only"}
                           )["status"] == "ok"
    # valid mnemon-ls item ids (no '/', no '..') that OpenViking refuses with HTTP 403 as paths
    for junk in ("c:x.md", "C:victim.md", _b64("x\\..\\..\\victim.md"), _b64(f"..\\victim_{folder}.md"),
                 _b64("sub/d:\\x.md")):
        with pytest.raises(InvalidInput) as refused:
            service.forget(space, junk)
        assert refused.value.data["field"] == "id", (junk, refused.value.to_dict())
        assert "apiKey" not in str(refused.value.to_dict())
    assert openviking.call("GET", f"/api/v1/fs/stat?uri={victim}")["status"] == "ok"
    assert service.space_status(space)["status"]["total_insights"] == 1
    assert service.forget(space, kept).to_dict()["status"] == "committed"
    service.close()


def test_a_hand_edited_target_uri_openviking_calls_unsafe_is_refused_naming_the_field(tmp_path: Path, openviking,
                                                                                      folder: str) -> None:
    root = tmp_path / "root"
    service = SpacesService(root, provider_timeout=120)
    service.thirdparty.enable("openviking", {"endpoint": openviking.endpoint})
    space = service.create_space(f"Edited {folder}", "hand edits", provider="openviking").to_dict()["id"]
    service.close()
    registry = root / "state" / "memory-providers.json"
    for bad in (f"viking://user/default/memories/{folder}\\..\\..", "viking://user/default/memories/c:x",
                "viking://user/default/memories\n"):
        data = json.loads(registry.read_text())
        for body in data["bodies"]:
            if body["id"] == space:
                body["connection"]["targetUri"] = body["externalId"] = bad
        registry.write_text(json.dumps(data))
        service = SpacesService(root, provider_timeout=120)
        with pytest.raises(InvalidInput) as refused:
            service.remember("Never written anywhere", space_id=space)
        assert refused.value.data["field"].endswith("targetUri"), (bad, refused.value.to_dict())
        service.close()


def test_a_source_comes_back_as_it_was_given(tmp_path: Path, openviking, folder: str) -> None:
    service = SpacesService(tmp_path / "root", provider_timeout=120)
    service.thirdparty.enable("openviking", {"endpoint": openviking.endpoint})
    space = service.create_space(f"Sources {folder}", "sources", provider="openviking").to_dict()["id"]
    texts = {"Claude Code": "The linter runs before every commit in this repository",
             "ci=nightly,main": "Nightly builds publish the documentation site",
             "助手": "数据库备份每天凌晨三点进行",
             "agent": "The release branch is cut on the first Monday of the month"}
    ids = {source: service.remember(text, space_id=space, source=source).to_dict()["id"]
           for source, text in texts.items()}
    for source, text in texts.items():
        found = {r["id"]: r for r in service.recall(text, spaces=[space], limit=10).to_dict()["results"]}
        assert found[ids[source]]["source"] == source, (source, found[ids[source]])
    only = service.recall("release branch", spaces=[space], source="agent").to_dict()["results"]
    assert [r["id"] for r in only] == [ids["agent"]]
    service.close()


def test_users_openviking_accepts_are_discovered_and_can_be_configured(tmp_path: Path, openviking,
                                                                      folder: str) -> None:
    users = (f"{folder}@acme.com", f"_{folder}", f".{folder}")
    for user in users:
        assert openviking.call("POST", "/api/v1/content/write", {
            "uri": f"viking://user/{user}/memories/note.md", "content": f"Notes of {user} about the build",
            "wait": True, "processing_mode": "vectors_only"}, user=user)["status"] == "ok"
    service = SpacesService(tmp_path / "root", provider_timeout=120)
    service.thirdparty.enable("openviking", {"endpoint": openviking.endpoint, "user": users[0]})
    found = {v.record.external_id: v.record.id for v in service.list_spaces()}
    for user in users:
        assert f"viking://user/{user}/memories" in found, (user, sorted(found))
    space = service.create_space(f"Mail {folder}", "a user named by mail", provider="openviking").to_dict()
    assert space["location"]["externalId"] == f"viking://user/{users[0]}/memories/mail_{folder}"
    mine = service.remember("The build cache lives on the shared volume", space_id=space["id"]).to_dict()["id"]
    hit = service.recall("where is the build cache", spaces=[space["id"]]).to_dict()["results"]
    assert hit[0]["id"] == mine
    for bad in ("a@b@c", "..", "a b"):
        with pytest.raises(InvalidInput) as refused:
            service.thirdparty.configure("openviking", {"user": bad})
        assert refused.value.data["field"] == "services.user"
    service.close()


def test_a_server_whose_paging_never_ends_is_named_not_looped_on(tmp_path: Path, openviking, folder: str) -> None:
    """A proxy in front of the real server answers every ``fs/ls`` as if ``offset`` were 0 and more followed (a
    server that ignores ``offset``): counting, a forget by a hashed id and discovery end with an error naming the
    server instead of asking it for ever."""
    import threading
    import urllib.error
    import urllib.parse
    import urllib.request
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from mnemon_ls.errors import ProviderUnavailable

    class Endless(BaseHTTPRequestHandler):
        def _forward(self) -> None:
            url = urllib.parse.urlsplit(self.path)
            query = urllib.parse.parse_qsl(url.query)
            endless = url.path == "/api/v1/fs/ls"
            if endless:
                query = [(k, v) for k, v in query if k != "offset"]
            length = int(self.headers.get("Content-Length") or 0)
            request = urllib.request.Request(
                openviking.endpoint + url.path + ("?" + urllib.parse.urlencode(query) if query else ""),
                data=self.rfile.read(length) if length else None, method=self.command,
                headers={k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")})
            try:
                with urllib.request.urlopen(request, timeout=120) as answer:
                    status, body = answer.status, answer.read()
            except urllib.error.HTTPError as exc:
                status, body = exc.code, exc.read()
            if endless and status == 200:
                body = json.dumps({**json.loads(body), "has_more": True}).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_DELETE = _forward

        def log_message(self, *args) -> None:
            pass

    service = SpacesService(tmp_path / "root", provider_timeout=120)
    service.thirdparty.enable("openviking", {"endpoint": openviking.endpoint})
    space = service.create_space(f"Paging {folder}", "paging", provider="openviking").to_dict()["id"]
    service.remember("The paging test item", space_id=space)
    service.close()
    registry = tmp_path / "root" / "state" / "memory-providers.json"
    proxy = ThreadingHTTPServer(("127.0.0.1", 0), Endless)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    try:
        data = json.loads(registry.read_text())
        data["services"]["openviking"]["endpoint"] = f"http://127.0.0.1:{proxy.server_address[1]}"
        registry.write_text(json.dumps(data))
        service = SpacesService(tmp_path / "root", provider_timeout=120)
        for attempt in (lambda: service.space_status(space), lambda: service.forget(space, "h~" + "0" * 40)):
            with pytest.raises(ProviderUnavailable) as endless:
                attempt()
            assert "paging does not end" in endless.value.message, endless.value.message
        service.close()
    finally:
        proxy.shutdown()
        proxy.server_close()


def test_a_folder_named_like_an_item_is_not_an_item_to_forget(tmp_path: Path, openviking, folder: str) -> None:
    service = SpacesService(tmp_path / "root", provider_timeout=120)
    service.thirdparty.enable("openviking", {"endpoint": openviking.endpoint})
    space = service.create_space(f"Dirs {folder}", "folders", provider="openviking").to_dict()
    base = space["location"]["externalId"]
    assert openviking.call("POST", "/api/v1/fs/mkdir", {"uri": f"{base}/notes.md"})["status"] == "ok"
    assert openviking.call("POST", "/api/v1/content/write", {
        "uri": f"{base}/notes.md/inner.md", "content": "A memory inside a folder named notes.md", "wait": True,
        "processing_mode": "vectors_only"})["status"] == "ok"
    with pytest.raises(InvalidInput) as refused:
        service.forget(space["id"], "notes.md")
    assert refused.value.data["field"] == "id", refused.value.to_dict()
    assert service.space_status(space["id"])["status"]["total_insights"] == 1
    service.close()


def test_a_deleted_folder_space_can_be_discovered_again_with_its_memories(tmp_path: Path, openviking,
                                                                         folder: str) -> None:
    """``space delete`` keeps the folder and its memories on the server; ``space create`` with the same name is
    refused (the folder exists) and points at discovery, which must then find it."""
    service = SpacesService(tmp_path / "root", provider_timeout=120)
    service.thirdparty.enable("openviking", {"endpoint": openviking.endpoint})
    space = service.create_space(f"Gone {folder}", "deleted later", provider="openviking").to_dict()
    target = space["location"]["externalId"]
    kept = service.remember("The on-call rotation changes every Friday at noon", space_id=space["id"]).to_dict()
    with pytest.raises(ConfirmationRequired) as unconfirmed:  # it holds an item: a delete is confirmed
        service.delete_space(space["id"])
    assert (unconfirmed.value.data["field"], unconfirmed.value.data["items"]) == ("confirm", 1)
    service.delete_space(space["id"], confirm=True)
    with pytest.raises(InvalidInput) as taken:
        service.create_space(f"Gone {folder}", "again", provider="openviking")
    assert "discover" in taken.value.rule
    found = {r.external_id: r for r in service.thirdparty.discover("openviking")}
    assert target in found, sorted(found)
    assert found[target].name == f"OpenViking default/gone_{folder}"
    assert sum(1 for v in service.list_spaces() if v.record.external_id == target) == 1
    again = found[target].id
    service.activate(again)
    hit = service.recall("when does the on-call rotation change", spaces=[again]).to_dict()["results"]
    assert hit[0]["id"] == kept["id"]
    service.thirdparty.discover("openviking")  # a second discovery adds nothing twice
    assert sum(1 for v in service.list_spaces() if v.record.external_id == target) == 1
    service.close()


def test_a_write_whose_answer_is_lost_leaves_nothing_on_the_server(tmp_path: Path, openviking, folder: str) -> None:
    """A proxy in front of the real server passes the write on and cuts the connection instead of answering
    (as a timeout or a network cut after the server stored the file): the file is taken back and the error says
    nothing is stored, so remembering again makes one copy, not two."""
    import threading
    import urllib.error
    import urllib.request
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from mnemon_ls.errors import ProviderUnavailable

    class Cutting(BaseHTTPRequestHandler):
        def _forward(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            request = urllib.request.Request(
                openviking.endpoint + self.path, data=self.rfile.read(length) if length else None,
                method=self.command,
                headers={k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")})
            try:
                with urllib.request.urlopen(request, timeout=120) as answer:
                    status, body = answer.status, answer.read()
            except urllib.error.HTTPError as exc:
                status, body = exc.code, exc.read()
            if self.path.startswith("/api/v1/content/write"):
                self.close_connection = True  # the server has stored it; its answer never arrives
                return
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_DELETE = _forward

        def log_message(self, *args) -> None:
            pass

    proxy = ThreadingHTTPServer(("127.0.0.1", 0), Cutting)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    try:
        service = SpacesService(tmp_path / "root", provider_timeout=120)
        service.thirdparty.enable("openviking", {"endpoint": f"http://127.0.0.1:{proxy.server_address[1]}"})
        space = service.create_space(f"Cut {folder}", "cut answers", provider="openviking").to_dict()
        with pytest.raises(ProviderUnavailable) as lost:
            service.remember("The cut-off write still lands on the server", space_id=space["id"])
        assert "the file it had begun (mnemon-" in lost.value.message and "nothing is stored" in lost.value.message, \
            lost.value.to_dict()
        item = lost.value.message.split("(mnemon-", 1)[1].split(")", 1)[0]
        assert openviking.call("GET", f"/api/v1/fs/stat?uri={space['location']['externalId']}/mnemon-{item}.md")[
            "status"] == "error"  # the write that failed left nothing: remembering again makes one copy
        assert service.space_status(space["id"])["status"]["total_insights"] == 0
        service.close()
    finally:
        proxy.shutdown()
        proxy.server_close()


def test_a_space_is_never_made_in_a_folder_openviking_writes_itself(tmp_path: Path, openviking, folder: str) -> None:
    """OpenViking's memory extraction writes, merges and rewrites files in ``preferences/``, ``entities/``...
    of a user's root: a new space there would mix its memories with OpenViking's (and see them rewritten)."""
    service = SpacesService(tmp_path / "root", provider_timeout=120)
    service.thirdparty.enable("openviking", {"endpoint": openviking.endpoint, "user": folder})
    before = (tmp_path / "root" / "state" / "memory-providers.json").read_bytes()
    for name in ("Preferences", "entities", "Events!"):
        with pytest.raises(InvalidInput) as refused:
            service.create_space(name, "clashes with OpenViking", provider="openviking")
        assert refused.value.data["field"] == "name" and "OpenViking's own" in refused.value.rule
    assert openviking.call("GET", f"/api/v1/fs/stat?uri=viking://user/{folder}/memories/preferences",
                           user=folder)["status"] == "error"
    assert (tmp_path / "root" / "state" / "memory-providers.json").read_bytes() == before
    service.close()


def test_a_key_names_its_user_when_user_is_not_set_and_a_clash_is_named(tmp_path: Path, keyed_openviking) -> None:
    """With a key, ``user`` left at its default used to make ``space create`` go under ``default`` and fail as a
    refused key (HTTP 403), though the key is right: the key's user is taken, and another ``user`` is refused
    naming ``services.user``."""
    server = keyed_openviking
    made = server.call("POST", "/api/v1/admin/accounts", {"account_id": "acme", "admin_user_id": "alice"},
                       key=server.root_key)["result"]
    bob_key = server.call("POST", "/api/v1/admin/accounts/acme/users", {"user_id": "bob", "role": "user"},
                          key=server.root_key)["result"]["user_key"]
    alice = SpacesService(tmp_path / "alice", provider_timeout=120)
    alice.thirdparty.enable("openviking", {"endpoint": server.endpoint, "apiKey": made["user_key"]})
    space = alice.create_space("Notes", "alice's", provider="openviking").to_dict()
    assert space["location"]["externalId"] == "viking://user/alice/memories/notes"
    alice.close()
    bob = SpacesService(tmp_path / "bob", provider_timeout=120)
    with pytest.raises(InvalidInput) as clash:
        bob.thirdparty.enable("openviking", {"endpoint": server.endpoint, "apiKey": bob_key, "user": "alice"})
    assert clash.value.data["field"] == "services.user" and "(bob)" in clash.value.rule
    assert bob_key not in str(clash.value.to_dict())
    assert not (tmp_path / "bob" / "state" / "memory-providers.json").exists()
    bob.close()


def test_a_write_the_server_could_not_embed_leaves_no_file(tmp_path: Path, folder: str) -> None:
    """The server's embedding endpoint goes away: OpenViking stores the file, then answers HTTP 500 ("Failed to
    generate embedding"). The file, which recall could never find, is taken back: the count is unchanged and
    remembering again later makes one copy."""
    from conftest import KEY, _command
    from embedding_server import EmbeddingServer
    from servers import OpenVikingServer

    from mnemon_ls.errors import ProviderUnavailable

    embeddings = EmbeddingServer(KEY).start()
    server = OpenVikingServer(_command(), embeddings, KEY).start()
    try:
        service = SpacesService(tmp_path / "root", provider_timeout=120)
        service.thirdparty.enable("openviking", {"endpoint": server.endpoint})
        space = service.create_space(f"Embed {folder}", "embedding goes away", provider="openviking").to_dict()
        service.remember("The first write is embedded", space_id=space["id"])
        embeddings.stop()
        with pytest.raises(ProviderUnavailable) as failed:
            service.remember("The second write cannot be embedded", space_id=space["id"])
        assert "nothing is stored" in failed.value.message, failed.value.to_dict()
        assert service.space_status(space["id"])["status"]["total_insights"] == 1
        service.close()
    finally:
        server.stop()
        embeddings.stop()


def test_a_score_that_is_not_a_cosine_is_not_taken_as_one() -> None:
    """A server answering a score of 1e308, -5 or NaN: the item is unscored (never ranked or tiered by it); a
    cosine in [-1, 1] is kept."""
    from mnemon_ls_provider_openviking.engine import OpenVikingSpace

    space = OpenVikingSpace.__new__(OpenVikingSpace)  # _item reads nothing of the space's server
    for raw, kept in ((1e308, None), (-5, None), (float("nan"), None), (float("inf"), None), ("0.9", None),
                      (True, None), (0.91, 0.91), (-0.2, -0.2)):
        item = space._item({"uri": "viking://user/u/memories/x.md", "abstract": "text", "score": raw}, "x")
        assert item.score == kept, (raw, item.score)
