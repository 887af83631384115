"""Workspace memory records through a real language server: the auto-writer fed by file events,
``mnemon/records/*`` with ``mnemon/recordProposed``, and the idle review suggestion.

Waits are on notifications (``mnemon/records/autoWritten``, ``mnemon/reviewSuggested``), armed before
the trigger; no sleep is used as synchronisation.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from lsprotocol import types

from mnemon_ls.records.paths import root_id
from tests.gitrepo import make_repo
from tests.lsp.conftest import RECORDS_AUTO_WRITTEN, RECORD_PROPOSED, REVIEW_SUGGESTED, Launcher, MnemonClient, uri

INIT = {"storageScope": "workspace", "runtimeUserScope": "storage"}


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


async def session_of(client: MnemonClient) -> str:
    status = await client.status()
    return status["workspaces"][0]["records"]["sessionId"]


def session_file(data_dir: Path, session_id: str, workspace: Path) -> tuple[str, Path]:
    """The session scope's file: under ``$MNEMON_DATA_DIR`` (the launcher sets it; ``DSH_HOME`` is unset)."""
    key = f"{session_id}|{root_id(workspace)}"
    return key, data_dir / "workspace-memory" / "sessions" / f"{sha(key)}.jsonl"


def created(client: MnemonClient, *paths: Path) -> None:
    client.workspace_did_create_files(types.CreateFilesParams(files=[types.FileCreate(uri=uri(p)) for p in paths]))


def saved(client: MnemonClient, path: Path) -> None:
    client.text_document_did_save(types.DidSaveTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=uri(path))))


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = Path(tmp_path.resolve()) / "ws"
    make_repo(path)
    return path


async def test_auto_writer_stable_id_merge_and_seventh_archives_the_oldest(lsp: Launcher, ws: Path):
    client = await lsp.start(folders=[ws], init=INIT)
    session = await session_of(client)
    key, path = session_file(lsp.data_dir, session, ws)
    armed = client.expect(RECORDS_AUTO_WRITTEN)
    # Ignored: inside .git/, inside the storage root, outside the workspace.
    saved(client, ws / ".git" / "config")
    saved(client, ws / ".mnemon" / "runtime" / "MEMORY.md")
    saved(client, ws.parent / "elsewhere.txt")
    created(client, ws / "out" / "report.md", ws / "out" / "data.json")
    saved(client, ws / "src" / "util.ts")
    written = await client.received(armed)
    digest_key = sha("2/1/0/2")[:24]
    expected_id = f"memory:auto:fact:{sha(key)[:16]}:{digest_key}"
    assert written == {"workspace": uri(ws), "status": "committed", "id": expected_id, "archived": []}
    lines = path.read_text().splitlines()
    assert len(lines) == 1
    record = json.loads(lines[0])
    assert record["content"] == ("Files touched: 3 (2 created, 1 modified, 0 deleted)\n"
                                 "Created: out/report.md, out/data.json\nModified: src/util.ts\n"
                                 "Artifacts: 2 — out/report.md, out/data.json")
    assert record["scope"] == "session" and record["scopeKey"] == key and record["type"] == "fact"
    assert record["provenance"] == {"kind": "tool", "sessionId": session, "eventSeq": 3, "note": "workspace auto-writer"}
    assert record["governance"] == {"origin": "derived", "sourceRefs": [{"kind": "session", "id": session},
                                                                        {"kind": "event", "id": "3"}],
                                    "verification": "unverified", "revision": 1, "retention": "session-end"}
    assert record["contentHash"] == "sha256:" + sha(record["content"])

    armed = client.expect(RECORDS_AUTO_WRITTEN)
    saved(client, ws / "src" / "util.ts")  # the same digest again: merged, no new line
    merged = await client.received(armed)
    assert merged["status"] == "merged" and merged["id"] == expected_id
    assert path.read_text().splitlines() == lines

    ids = [expected_id]
    for n in range(6):  # six more digests: the seventh distinct one archives the oldest
        armed = client.expect(RECORDS_AUTO_WRITTEN)
        created(client, ws / f"new{n}.txt")
        result = await client.received(armed)
        assert result["status"] == "committed"
        ids.append(result["id"])
        assert result["archived"] == ([expected_id] if n == 5 else [])
    assert len(set(ids)) == 7
    listed = await client.call("mnemon/records/list", {"scopes": ["session"]})
    active = [r["id"] for r in listed["records"] if r["status"] == "active"]
    assert sorted(active) == sorted(ids[1:])
    archived = await client.call("mnemon/records/list", {"scopes": ["session"], "status": "archived"})
    assert [r["id"] for r in archived["records"]] == [expected_id]
    status = (await client.status())["workspaces"][0]["records"]
    assert status["autoWriter"]["lastError"] is None and status["autoWriter"]["last"]["id"] == ids[-1]


async def test_rename_storm_gives_one_bounded_record(lsp: Launcher, ws: Path):
    client = await lsp.start(folders=[ws], init=INIT)
    armed = client.expect(RECORDS_AUTO_WRITTEN)
    client.workspace_did_rename_files(types.RenameFilesParams(files=[
        types.FileRename(old_uri=uri(ws / "a" / f"f{n}.py"), new_uri=uri(ws / "b" / f"f{n}.py")) for n in range(10_000)]))
    result = await client.received(armed)
    assert result["status"] == "committed"
    record = (await client.call("mnemon/records/get", {"id": result["id"], "recordScope": "session"}))["record"]
    assert record["content"].startswith("Files touched: 20000 (10000 created, 0 modified, 10000 deleted)\n")
    assert "… and 9980 more" in record["content"]
    assert len(record["content"]) < 4000
    listed = await client.call("mnemon/records/list", {"scopes": ["session"]})
    assert listed["count"] == 1


async def test_auto_writer_off_writes_nothing_and_errors_are_reported_not_raised(lsp: Launcher, ws: Path, tmp_path):
    client = await lsp.start(folders=[ws], init=INIT | {"records": {"autoWriter": False}})
    created(client, ws / "x.txt")
    status = (await client.status())["workspaces"][0]["records"]
    assert status["autoWriter"] == {"enabled": False, "last": None, "lastError": None, "pending": False}
    assert not (lsp.data_dir / "workspace-memory").exists() and not (lsp.home / ".dsh").exists()

    # A DSH_HOME that cannot be a directory: the write fails, the session goes on, status reports it.
    blocker = tmp_path / "dsh-file"
    blocker.write_text("not a directory")
    env = lsp.env
    lsp.env = lambda: env() | {"DSH_HOME": str(blocker)}  # type: ignore[method-assign]
    other = await lsp.start(folders=[ws], init=INIT)
    created(other, ws / "y.txt")

    def failed(result):
        return result["workspaces"][0]["records"]["autoWriter"]["lastError"] is not None

    result = await other.eventually("mnemon/status", {}, failed)
    error = result["workspaces"][0]["records"]["autoWriter"]["lastError"]
    assert error["message"]
    assert (await other.call("mnemon/wake", {}))["text"]  # the server still serves


async def test_propose_notifies_and_a_person_verifies_or_rejects(lsp: Launcher, ws: Path):
    client = await lsp.start(folders=[ws], init=INIT)
    armed = client.expect(RECORD_PROPOSED)
    first = await client.call("mnemon/records/propose", {"title": "Tests", "content": "Run pytest -n 2",
                                                         "type": "convention"})
    note = await client.received(armed)
    assert note == {"workspace": uri(ws), "id": first["id"], "scope": "project", "title": "Tests", "pending": 1}
    second = await client.call("mnemon/records/propose", {"title": "Port", "content": "8080"})
    listed = await client.call("mnemon/records/list", {"proposals": True})
    assert [r["id"] for r in listed["records"]] == [second["id"], first["id"]]
    assert all(r["proposal"] for r in listed["records"])
    assert (await client.status())["workspaces"][0]["records"]["pendingProposals"] == 2
    wake = await client.call("mnemon/wake", {})
    assert "2 proposals wait for a person to verify or reject" in wake["text"]
    verified = await client.call("mnemon/records/verify", {"id": first["id"]})
    assert verified["record"]["governance"]["verification"] == "verified"
    rejected = await client.call("mnemon/records/reject", {"id": second["id"]})
    assert rejected["record"]["governance"]["verification"] == "rejected"
    assert (await client.call("mnemon/records/list", {"proposals": True}))["count"] == 0
    error = await client.call_error("mnemon/records/create", {"title": "t", "content": "c",
                                                              "recordScope": "shared-project"})
    assert error.data["code"] == "confirmation-required"
    error = await client.call_error("mnemon/records/create", {"title": "t", "content": "c", "type": "note"})
    assert (error.data["code"], error.data["field"]) == ("invalid-input", "type")
    bundle = (await client.call("mnemon/records/export", {}))["bundle"]
    assert {r["id"] for r in bundle["records"]} == {first["id"], second["id"]}


ACTIVE = {"userTextLength": 400, "toolCallCount": 5, "toolNames": ["shell", "edit", "mnemon_recall"]}


async def test_review_score_and_bad_activity(lsp: Launcher, ws: Path):
    client = await lsp.start(folders=[ws], init=INIT)
    view = (await client.call("mnemon/turn/begin", {}))["viewId"]
    for bad, field in (({"userTextLength": -1}, "activity.userTextLength"),
                       ({"toolCallCount": 2.5}, "activity.toolCallCount"),
                       ({"uniqueToolCount": 10**12}, "activity.uniqueToolCount"),
                       ({"toolCallCount": True}, "activity.toolCallCount"),
                       ({"extra": 1}, "activity.extra")):
        error = await client.call_error("mnemon/turn/end", {"viewId": view, "activity": bad})
        assert (error.data["code"], error.data["field"]) == ("invalid-input", field)
    ended = await client.call("mnemon/turn/end", {"viewId": view, "activity": {"userTextLength": 150}})
    assert ended["review"]["score"] == 4 and ended["review"]["eligible"] is False and not ended["review"]["armed"]
    activity = next((ws / ".mnemon" / "state").glob("review-activity-*.json"))
    assert json.loads(activity.read_text())["turnCount"] == 1

    # A restart keeps the accumulation: one more turn reaches 5 ({150 chars, 2 turns}).
    again = await lsp.start(folders=[ws], init=INIT)
    view = (await again.call("mnemon/turn/begin", {}))["viewId"]
    ended = await again.call("mnemon/turn/end", {"viewId": view, "activity": {"userTextLength": 0,
                                                                              "toolNames": ["shell"],
                                                                              "toolCallCount": 1}})
    assert ended["review"]["score"] == 5 and ended["review"]["eligible"] and ended["review"]["admitted"]
    assert ended["review"]["armed"]
    assert (await again.status())["workspaces"][0]["records"]["review"] == {"armed": True}
    await again.call("mnemon/turn/begin", {})
    assert (await again.status())["workspaces"][0]["records"]["review"] == {"armed": False}


async def test_dont_remember_suppresses_and_writeback_off_disables(lsp: Launcher, ws: Path):
    client = await lsp.start(folders=[ws], init=INIT)
    view = (await client.call("mnemon/turn/begin", {}))["viewId"]
    ended = await client.call("mnemon/turn/end", {"viewId": view, "activity": ACTIVE | {
        "userText": "请不要记住这个，只是临时的"}})
    assert ended["review"]["eligible"] and not ended["review"]["admitted"] and not ended["review"]["armed"]
    off = await lsp.start(folders=[ws], init=INIT | {"writebackMode": "off"})
    view = (await off.call("mnemon/turn/begin", {}))["viewId"]
    assert (await off.call("mnemon/turn/end", {"viewId": view, "activity": ACTIVE}))["review"] == {"enabled": False}


async def test_idle_review_is_suggested_and_a_new_turn_cancels_it(lsp: Launcher, tmp_path: Path):
    first, second = Path(tmp_path.resolve()) / "first", Path(tmp_path.resolve()) / "second"
    make_repo(first)
    make_repo(second)
    client = await lsp.start(folders=[first, second], init=INIT | {"idleReviewMs": 5000})
    # first: an eligible turn arms the timer, then a new turn cancels it.
    view = (await client.call("mnemon/turn/begin", {"workspace": uri(first)}))["viewId"]
    ended = await client.call("mnemon/turn/end", {"viewId": view, "activity": ACTIVE})
    assert ended["review"]["armed"] and ended["review"]["score"] == 3 + 1 + 1 + 1
    await client.call("mnemon/turn/begin", {"workspace": uri(first)})
    # second: armed after first's timer would have fired, so its suggestion arriving first proves the cancel.
    armed = client.expect(REVIEW_SUGGESTED)
    view = (await client.call("mnemon/turn/begin", {"workspace": uri(second)}))["viewId"]
    await client.call("mnemon/turn/end", {"viewId": view, "activity": ACTIVE | {"userText": "Remember this: use uv"}})
    mark_before = len(client.notes)
    suggested = await client.received(armed)
    assert suggested["workspace"] == uri(second)
    assert suggested["score"] == 6 and suggested["eligible"] and suggested["admitted"]
    assert suggested["parts"] == {"textLength": 3, "turns": 1, "toolCalls": 1, "toolDiversity": 1}
    assert suggested["signals"]["rememberCue"] and suggested["signals"]["longUserText"]
    assert suggested["signals"]["nonMnemonToolCall"]
    assert [n for n in client.notes_since(0, REVIEW_SUGGESTED) if n["workspace"] == uri(first)] == []
    assert mark_before <= len(client.notes)
    # The accumulation starts again after a suggestion.
    view = (await client.call("mnemon/turn/begin", {"workspace": uri(second)}))["viewId"]
    ended = await client.call("mnemon/turn/end", {"viewId": view, "activity": {}})
    assert ended["review"]["score"] == 1


async def test_a_proposal_written_by_another_process_is_announced(lsp: Launcher, ws: Path):
    from mnemon_ls.records import RecordsSource

    before = RecordsSource(ws, env=lsp.env())  # another process in the server's environment
    old = before.propose("project", "fact", "Old", "pending before the server started", session_id="mcp-x").record
    client = await lsp.start(folders=[ws], init=INIT)
    # The server read what is pending now (the first status round trip runs after that read).
    await client.eventually("mnemon/status", {}, lambda r: r["workspaces"][0]["records"]["pendingProposals"] == 1)
    armed = client.expect(RECORD_PROPOSED)
    new = before.propose("project", "convention", "From MCP", "proposed by another process", session_id="mcp-x").record
    note = await client.received(armed)
    assert note == {"workspace": uri(ws), "id": new.id, "scope": "project", "title": "From MCP", "pending": 2}
    assert [n["id"] for n in client.notes_since(0, RECORD_PROPOSED)] == [new.id]
    assert old.id != new.id
