"""The Documents tier through the LSP: ``mnemon/documents/*`` requests, the "Create document from file"
code action and its ``mnemon.server.createDocumentFromFile {uri, title?}`` command, and the wake cover.

Every test runs the real server (storageScope ``workspace``: the storage root is ``<repo>/.mnemon``);
results, ``index.json`` and the managed files on disk are checked exactly (ids and timestamps, which the
server chooses, are taken from the results and checked for consistency).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from lsprotocol import types

from tests.lsp.conftest import Launcher, MnemonClient, stamp_view_revision, tree_state, uri

CREATE_DOCUMENT = "mnemon.server.createDocumentFromFile"
SHOW_WAKE = "mnemon.server.showWakeSnapshot"
ISO_MS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
SHA256 = re.compile(r"[0-9a-f]{64}")
GUIDE = "# Release guide\nTag the commit, then run the release workflow.\n"
#: Fields of an ``index.json`` record (what every result repeats) in canonical order.
RECORD_KEYS = ["id", "title", "description", "status", "filename", "relativePath", "sourcePaths", "sessionIds",
               "createdAt", "updatedAt", "lastAccessedAt", "revision", "contentHash", "sizeBytes", "memoryBodyIds"]
SEARCH_LINE = ("Search before reading: these are titles only. Search the project Documents with words from a "
               "title (or the topic) and read a document only when a search points to it.")


def _index(root: Path) -> list[dict]:
    return json.loads((root / "documents" / "index.json").read_text(encoding="utf-8"))["documents"]


def _record(document: dict) -> dict:
    """A result's document without the view-only fields (``content``, ``path``, search/list extras)."""
    return {k: v for k, v in document.items() if k not in ("content", "path", "healthy", "score", "matched",
                                                           "excerpt")}


def _check_record(document: dict, *, title: str, status: str = "active", revision: int = 1,
                  source_paths: list[str] | None = None, slug: str) -> None:
    """The server-chosen values of a record are well formed and consistent with the given ones."""
    assert UUID.fullmatch(document["id"]), document
    for key in ("createdAt", "updatedAt", "lastAccessedAt"):
        assert ISO_MS.fullmatch(document[key]), (key, document)
    assert SHA256.fullmatch(document["contentHash"])
    filename = f"{slug}-{document['id'][:8]}.md"
    assert {k: document[k] for k in ("title", "description", "status", "filename", "relativePath", "sourcePaths",
                                     "sessionIds", "revision", "memoryBodyIds")} == {
        "title": title, "description": "", "status": status, "filename": filename,
        "relativePath": f"documents/{status}/{filename}", "sourcePaths": source_paths or [], "sessionIds": [],
        "revision": revision, "memoryBodyIds": []}


def _open(client: MnemonClient, path: Path, text: str) -> None:
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        types.TextDocumentItem(uri=uri(path), language_id="markdown", version=1, text=text)))


async def _actions(client: MnemonClient, path: Path) -> list[types.CodeAction]:
    caret = types.Range(types.Position(0, 0), types.Position(0, 0))
    params = types.CodeActionParams(types.TextDocumentIdentifier(uri(path)), caret,
                                    types.CodeActionContext(diagnostics=[]))
    return list(await client.text_document_code_action_async(params) or [])


def _action(title: str, command: str, argument: dict) -> types.CodeAction:
    return types.CodeAction(title=title, kind="refactor.mnemon",
                            command=types.Command(title=title, command=command, arguments=(argument,)))


@pytest.fixture(params=["visual-studio-code", "neovim@v0.7"])
async def editor(request, lsp: Launcher, repo, repo_dir: Path) -> MnemonClient:
    return await lsp.start(request.param, [repo_dir], {"mnemon": {"storageScope": "workspace"}})


# ------------------------------------------------------------------------------------------ code action


async def test_create_document_from_file_action(editor: MnemonClient, repo_dir: Path):
    root = repo_dir / ".mnemon"
    source = repo_dir / "docs" / "release.md"
    source.parent.mkdir()
    source.write_text(GUIDE, encoding="utf-8")
    _open(editor, source, GUIDE)
    assert await _actions(editor, source) == [
        _action("Show wake snapshot", SHOW_WAKE, {"uri": uri(source)}),
        _action("Create document from file", CREATE_DOCUMENT, {"uri": uri(source)}),
    ]

    result = await editor.command(CREATE_DOCUMENT, {"uri": uri(source)})
    document = result["document"]
    _check_record(document, title="Release guide", source_paths=["docs/release.md"], slug="release-guide")
    managed = root / document["relativePath"]
    can_show = editor.spec == "visual-studio-code"
    assert result == {
        "success": True, "action": "created", "document": document, "revision": result["revision"],
        "usage": {"activeBytes": document["sizeBytes"], "activeCount": 1, "archivedCount": 0,
                  "limitBytes": 10 * 1024 * 1024},
        "preserved": {}, "notices": [], "workspace": uri(repo_dir),
        "path": str(managed), "uri": uri(managed), "shown": can_show,
    }
    assert list(document) == [*RECORD_KEYS, "content", "path"]
    assert document["content"] == GUIDE.rstrip("\n") and document["path"] == str(managed)
    assert managed.is_file() and managed.parent == root / "documents" / "active"
    assert document["sizeBytes"] == managed.stat().st_size
    assert GUIDE.rstrip("\n") in managed.read_text(encoding="utf-8")
    assert source.read_text(encoding="utf-8") == GUIDE  # the workspace file is read, never modified
    if can_show:
        assert editor.shown_documents == [types.ShowDocumentParams(uri=uri(managed), take_focus=True)]
    else:  # Neovim 0.7 has no window/showDocument: the plugin opens the returned path itself
        assert editor.shown_documents == []
    assert editor.messages == []  # no popup on success

    # index.json holds exactly the returned record, with the source path relative to the workspace.
    assert _index(root) == [_record(document)]
    assert _index(root)[0]["sourcePaths"] == ["docs/release.md"]

    # The managed copy itself is not offered as a new document (it lives in <root>/documents/).
    text = managed.read_text(encoding="utf-8")
    _open(editor, managed, text)
    assert await _actions(editor, managed) == [_action("Show wake snapshot", SHOW_WAKE, {"uri": uri(managed)})]


async def test_create_document_from_file_title_and_missing_file(lsp: Launcher, repo, repo_dir: Path):
    editor = await lsp.start("visual-studio-code", [repo_dir], {"mnemon": {"storageScope": "workspace"}})
    missing = repo_dir / "gone.md"
    result = await editor.command(CREATE_DOCUMENT, {"uri": uri(missing)})
    assert result == {"success": False, "error": {
        "code": "invalid-input", "message": f"path: {missing} does not exist", "field": "path",
        "rule": f"{missing} does not exist"}}
    assert [(m.type, m.message) for m in editor.messages] == [
        (types.MessageType.Error, f"mnemon: no document created: path: {missing} does not exist")]
    assert editor.shown_documents == []
    assert not (repo_dir / ".mnemon" / "documents" / "index.json").exists()

    source = repo_dir / "notes.txt"
    source.write_text("plain notes\n", encoding="utf-8")
    result = await editor.command(CREATE_DOCUMENT, {"uri": uri(source), "title": "会议 记录"})
    assert result["success"] is True
    _check_record(result["document"], title="会议 记录", source_paths=["notes.txt"], slug="document")
    assert _index(repo_dir / ".mnemon") == [_record(result["document"])]


# ------------------------------------------------------------------------------------------ requests


async def test_documents_round_trip(client: MnemonClient, repo_dir: Path):
    root = repo_dir / ".mnemon"
    ws = uri(repo_dir)
    created = await client.call("mnemon/documents/create", {"title": "成语接龙 规则", "content": "游戏规则：首尾相接。"})
    document = created["document"]
    _check_record(document, title="成语接龙 规则", slug="document")
    doc_id = document["id"]
    managed = root / document["relativePath"]
    assert created == {
        "success": True, "action": "created", "document": document, "revision": created["revision"],
        "usage": {"activeBytes": document["sizeBytes"], "activeCount": 1, "archivedCount": 0,
                  "limitBytes": 10 * 1024 * 1024},
        "preserved": {}, "notices": [], "workspace": ws,
    }
    assert document["content"] == "游戏规则：首尾相接。" and document["path"] == str(managed)
    assert managed.is_file() and document["sizeBytes"] == managed.stat().st_size
    assert _index(root) == [_record(document)]

    # search: a CJK word inside the title finds it; the hit carries the managed file's absolute path.
    found = await client.call("mnemon/documents/search", {"query": "接龙"})
    [hit] = found["results"]
    assert {k: found[k] for k in ("query", "includeArchived", "limit", "total", "matches", "notices", "workspace")} == {
        "query": "接龙", "includeArchived": False, "limit": 20, "total": 1, "matches": 1, "notices": [],
        "workspace": ws}
    assert hit["id"] == doc_id and hit["matched"] == "title" and hit["path"] == str(managed)
    assert Path(hit["path"]).is_absolute() and Path(hit["path"]).is_file()
    assert hit["excerpt"] == "游戏规则：首尾相接。" and "content" not in hit

    got = await client.call("mnemon/documents/get", {"id": doc_id})
    assert ISO_MS.fullmatch(got["lastAccessedAt"])
    assert got == {**document, "lastAccessedAt": got["lastAccessedAt"], "workspace": ws}

    listed = await client.call("mnemon/documents/list", {})
    [entry] = listed["documents"]
    assert {k: v for k, v in listed.items() if k not in ("revision", "generatedAt", "documents")} == {
        "activeBytes": document["sizeBytes"], "activeCount": 1, "archivedCount": 0, "limitBytes": 10 * 1024 * 1024,
        "total": 1, "problem": None, "notices": [], "workspace": ws}
    assert entry == {**_record(document), "lastAccessedAt": entry["lastAccessedAt"], "healthy": True,
                     "path": str(managed)}

    updated = await client.call("mnemon/documents/update", {"id": doc_id, "content": "新的规则。", "documentRevision": 1})
    assert updated["action"] == "updated" and updated["success"] is True
    assert updated["document"]["revision"] == 2 and updated["document"]["content"] == "新的规则。"
    assert updated["document"]["createdAt"] == document["createdAt"]
    assert updated["revision"] != created["revision"]
    assert _index(root) == [_record(updated["document"])]

    # archive with a stale documentRevision: revision-conflict, nothing changes on disk.
    before = tree_state(root / "documents")
    stale = await client.call_error("mnemon/documents/archive", {"id": doc_id, "documentRevision": 1})
    assert (stale.code, stale.data) == (-32011, {"code": "revision-conflict", "field": "documentRevision", "id": doc_id,
                                                 "expected": 1, "actual": 2})
    assert stale.message.startswith("documentRevision: expected revision 1, the document is at 2 ")
    assert _index(root) == [_record(updated["document"])]
    assert {k: v for k, v in tree_state(root / "documents").items() if not k.startswith(".")} == {
        k: v for k, v in before.items() if not k.startswith(".")}

    archived = await client.call("mnemon/documents/archive", {"id": doc_id, "documentRevision": 2})
    a_doc = archived["document"]
    _check_record(a_doc, title="成语接龙 规则", status="archived", revision=3, slug="document")
    assert archived["action"] == "archived"
    assert archived["usage"] == {"activeBytes": 0, "activeCount": 0, "archivedCount": 1,
                                 "limitBytes": 10 * 1024 * 1024}
    assert a_doc["path"] == str(root / "documents" / "archived" / a_doc["filename"])
    assert Path(a_doc["path"]).is_file() and not managed.exists()
    assert ISO_MS.fullmatch(a_doc["archivedAt"]) and a_doc["archiveSummary"] == "Archived locally by the user."
    assert (await client.call("mnemon/documents/search", {"query": "接龙"}))["results"] == []
    with_archived = await client.call("mnemon/documents/search", {"query": "接龙", "includeArchived": True})
    assert [(h["id"], h["status"], h["path"]) for h in with_archived["results"]] == [
        (doc_id, "archived", a_doc["path"])]

    refused = await client.call_error("mnemon/documents/update", {"id": doc_id, "content": "x"})
    assert (refused.code, refused.data) == (-32019, {"code": "document-status", "id": doc_id, "status": "archived",
                                                     "required": "active"})

    restored = await client.call("mnemon/documents/restore", {"id": doc_id, "documentRevision": 3})
    r_doc = restored["document"]
    _check_record(r_doc, title="成语接龙 规则", revision=4, slug="document")
    assert restored["action"] == "restored" and r_doc["content"] == "新的规则。"
    assert "archivedAt" not in r_doc and r_doc["path"] == str(managed) and managed.is_file()
    assert not (root / "documents" / "archived" / a_doc["filename"]).exists()
    assert _index(root) == [_record(r_doc)]
    assert [h["id"] for h in (await client.call("mnemon/documents/search", {"query": "接龙"}))["results"]] == [doc_id]


async def test_title_hit_ranks_above_body_hit(lsp: Launcher, repo, repo_dir: Path):
    client = await lsp.start("neovim", [repo_dir], {"mnemon": {"storageScope": "workspace"}})
    body = await client.call("mnemon/documents/create", {
        "title": "Team notes", "content": "The deployment pipeline runs nightly after the tests."})
    title = await client.call("mnemon/documents/create", {"title": "Deployment pipeline", "content": "Steps."})
    found = await client.call("mnemon/documents/search", {"query": "deployment pipeline"})
    assert [(h["id"], h["matched"]) for h in found["results"]] == [
        (title["document"]["id"], "title"), (body["document"]["id"], "terms")]
    assert found["results"][0]["score"] > found["results"][1]["score"]
    assert [h["path"] for h in found["results"]] == [title["document"]["path"], body["document"]["path"]]
    assert (found["total"], found["matches"]) == (2, 2)
    limited = await client.call("mnemon/documents/search", {"query": "deployment pipeline", "limit": 1})
    assert [h["id"] for h in limited["results"]] == [title["document"]["id"]]
    assert (limited["total"], limited["matches"], limited["limit"]) == (1, 2, 1)


async def test_invalid_requests(lsp: Launcher, repo, repo_dir: Path):
    client = await lsp.start("neovim@v0.7", [repo_dir], {"mnemon": {"storageScope": "workspace"}})
    root = repo_dir / ".mnemon"
    await client.call("mnemon/documents/create", {"title": "Existing", "content": "Kept as it is."})
    before = tree_state(root)
    index_before = (root / "documents" / "index.json").read_bytes()

    error = await client.call_error("mnemon/documents/search", {"query": "kept", "limit": 0})
    assert (error.code, error.message, error.data) == (-32602, "limit: must be an integer in 1..50 (got 0)", {
        "code": "invalid-input", "field": "limit", "rule": "must be an integer in 1..50 (got 0)"})
    error = await client.call_error("mnemon/documents/search", {"query": "kept", "limit": 51})
    assert (error.code, error.data["code"], error.data["field"]) == (-32602, "invalid-input", "limit")

    error = await client.call_error("mnemon/documents/create", {"title": "Outside", "content": "c",
                                                                "sourcePaths": ["../x"]})
    outside = repo_dir.parent / "x"
    rule = f"must stay inside the workspace {repo_dir} (got '../x', which resolves to {outside})"
    assert (error.code, error.message, error.data) == (-32602, f"sourcePaths[0]: {rule}", {
        "code": "invalid-input", "field": "sourcePaths[0]", "rule": rule})

    error = await client.call_error("mnemon/documents/get", {"id": 7})
    assert (error.code, error.data["code"], error.data["field"]) == (-32602, "invalid-input", "id")
    error = await client.call_error("mnemon/documents/create", {"title": "No body"})
    assert (error.code, error.data["code"], error.data["field"]) == (-32602, "invalid-input", "content")

    assert (root / "documents" / "index.json").read_bytes() == index_before
    # The access side file (lastAccessedAt batching) may be flushed by the server's timer at any time.
    assert {k: v for k, v in tree_state(root).items() if k != "documents/.access.json"} == {
        k: v for k, v in before.items() if k != "documents/.access.json"}
    assert not outside.exists()


# ------------------------------------------------------------------------------------------ wake cover


async def test_wake_gains_documents_cover(lsp: Launcher, repo, repo_dir: Path):
    client = await lsp.start("visual-studio-code", [repo_dir], {"mnemon": {"storageScope": "workspace"}})
    plain = (await client.call("mnemon/wake", {}))["text"]
    assert "MNEMON PROJECT DOCUMENTS" not in plain
    created = await client.call("mnemon/documents/create", {
        "title": "Architecture overview", "content": "Layers and boundaries.", "description": "How the parts fit"})
    size = created["document"]["sizeBytes"]
    wake = await client.call("mnemon/wake", {})
    cover = "\n".join([
        "MNEMON PROJECT DOCUMENTS",
        f"Active: 1 document, {size} of 10485760 UTF-8 bytes; archived: 0",
        SEARCH_LINE,
        "Recently accessed:",
        "- Architecture overview — How the parts fit",
    ])
    assert wake["text"] == stamp_view_revision(plain + "\n\n" + cover)
    assert wake["chars"] == len(wake["text"])
    status = await client.status()
    assert status["workspaces"][0]["documents"] == {"active": 1, "archived": 0, "activeBytes": size,
                                                    "limitBytes": 10485760, "problem": None}
    archived = await client.call("mnemon/documents/archive", {"id": created["document"]["id"], "documentRevision": 1})
    assert archived["action"] == "archived"
    assert (await client.call("mnemon/wake", {}))["text"] == stamp_view_revision(plain + "\n\n" + "\n".join([
        "MNEMON PROJECT DOCUMENTS", "Active: 0 documents, 0 of 10485760 UTF-8 bytes; archived: 1", SEARCH_LINE]))


# ------------------------------------------------------------------------------------------ bugs


async def test_managed_file_through_symlinked_folder_is_not_offered(lsp: Launcher, tmp_path: Path):
    from tests.gitrepo import make_repo

    real = tmp_path / "real"
    make_repo(real, "main")
    linked = tmp_path / "linked"
    linked.symlink_to(real, target_is_directory=True)
    client = await lsp.start("visual-studio-code", [linked], {"mnemon": {"storageScope": "workspace"}})
    source = linked / "notes.md"
    source.write_text(GUIDE, encoding="utf-8")
    result = await client.command(CREATE_DOCUMENT, {"uri": uri(source)})
    assert result["success"] is True
    # The same managed file as the editor's explorer shows it: under the workspace folder's own path.
    managed = linked / ".mnemon" / result["document"]["relativePath"]
    assert managed.resolve() == Path(result["path"]).resolve()
    _open(client, managed, managed.read_text(encoding="utf-8"))
    assert await _actions(client, managed) == [_action("Show wake snapshot", SHOW_WAKE, {"uri": uri(managed)})]


# ------------------------------------------------------------------------------------------ hostile files


async def test_forty_fifo_creates_never_starve_the_server(lsp: Launcher, repo, repo_dir: Path):
    """Issue 15 defect 3: each call on a FIFO used to block a worker thread forever (40 starved the server)."""
    import asyncio
    import os

    client = await lsp.start("visual-studio-code", [repo_dir], {"mnemon": {"storageScope": "workspace"}})
    fifo = repo_dir / "pipe.md"
    os.mkfifo(fifo)
    try:
        results = await asyncio.gather(*(client.command(CREATE_DOCUMENT, {"uri": uri(fifo)}) for _ in range(40)))
        rule = f"{fifo} is a FIFO (named pipe), not a regular file; only regular files are read"
        assert results == [{"success": False, "error": {"code": "invalid-input", "message": f"path: {rule}",
                                                        "field": "path", "rule": rule}}] * 40
        status = await client.status()
        assert [w["path"] for w in status["workspaces"]] == [str(repo_dir)]
        created = await client.call("mnemon/documents/create", {"title": "After", "content": "still answering"})
        assert created["success"] is True
    finally:
        try:  # release any reader a broken server left blocked, so its shutdown cannot hang
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass


async def test_a_gbk_managed_file_is_reported_not_rewritten(lsp: Launcher, repo, repo_dir: Path):
    """Issue 15 defect 7: a managed file re-saved in GBK survives get/search/list byte for byte."""
    client = await lsp.start("neovim", [repo_dir], {"mnemon": {"storageScope": "workspace"}})
    root = repo_dir / ".mnemon"
    created = await client.call("mnemon/documents/create", {"title": "迁移手册", "content": "先备份，再迁移。"})
    managed = root / created["document"]["relativePath"]
    data = managed.read_text(encoding="utf-8").encode("gbk")
    managed.write_bytes(data)
    error = await client.call_error("mnemon/documents/get", {"id": created["document"]["id"]})
    assert (error.data["code"], error.data["reason"], error.data["file"]) == ("unreadable-store", "not-utf-8",
                                                                                str(managed))
    found = await client.call("mnemon/documents/search", {"query": "迁移"})
    assert found["results"] == [] and any("is not UTF-8 text" in n for n in found["notices"])
    listed = await client.call("mnemon/documents/list", {})
    assert [d["healthy"] for d in listed["documents"]] == [False]
    assert managed.read_bytes() == data
    assert _index(root) == [_record(created["document"])]
