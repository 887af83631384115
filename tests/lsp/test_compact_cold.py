"""Capacity maintenance over the language server: the USER.md plan and ``mnemon/runtime/compact``, cold
archival inside ``mnemon/documents/create``, ``$/progress`` and ``mnemon/maintenanceCompleted``.

Real servers (pytest-lsp) on a real repository, storageScope ``workspace`` (root ``<repo>/.mnemon``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.lsp.conftest import Launcher, tree_state

COMPACT = "mnemon/runtime/compact"
COMPLETED = "mnemon/maintenanceCompleted"
REQUIRED = "mnemon/maintenanceRequired"
SEP = "\n\u00a7\n"
ENTRIES = [("prefers tabs over spaces in Go", "normal"), ("never force-push to main, ever", "critical"),
           ("likes short commit subject li", "low")]
SETTINGS = {"mnemon": {"storageScope": "workspace", "runtimeUserScope": "storage",
                       "runtimeMemory": {"userLimitBytes": 120}, "documents": {"activeLimitBytes": 6000}}}


async def _full_user(client) -> tuple[dict, dict]:
    for content, importance in ENTRIES:
        await client.call("mnemon/runtime/mutate", {"action": "add", "target": "user", "content": content,
                                                    "importance": importance})
    required = client.expect(REQUIRED)
    error = await client.call_error("mnemon/runtime/mutate", {"action": "add", "target": "user",
                                                              "content": "works in UTC+2 hours"})
    assert error.data["code"] == "runtime-capacity"
    return error.data["maintenance"], await client.received(required)


@pytest.mark.parametrize("caps", ["visual-studio-code", "neovim@v0.7"])
async def test_user_plan_and_compact_round_trip(lsp: Launcher, repo, repo_dir: Path, caps):
    client = await lsp.start(caps, [repo_dir], SETTINGS)
    plan, required = await _full_user(client)
    root = repo_dir / ".mnemon"
    assert required == {"workspace": repo_dir.as_uri(), "target": "user", "file": str(root / "runtime" / "USER.md"),
                        "message": "USER.md is full: compact it with your assistant, or open it", "plan": plan}
    assert [(e["index"], e["importance"]) for e in plan["entries"]] == [(1, "normal"), (2, "critical"), (3, "low")]
    assert plan["budgetBytes"] == 60 and plan["pending"] == {"action": "add", "content": "works in UTC+2 hours"}

    completed = client.expect(COMPLETED)
    client.progress_reports["compact-1"] = []  # the client made this token (it sends it as workDoneToken)
    receipt = await client.call(COMPACT, {"revision": plan["revision"], "target": "user", "pending": plan["pending"],
                                          "workDoneToken": "compact-1", "entries": [
        {"content": "Go: tabs; never force-push main", "importance": "critical", "sourceIndexes": [1, 2]},
        {"content": "short commit subjects", "importance": "low", "sourceIndexes": [3]}]})
    note = await client.received(completed)
    assert receipt["maintenance"]["kind"] == "local-compaction" and receipt["workspace"] == repo_dir.as_uri()
    assert note == {"workspace": repo_dir.as_uri(), "kind": "local-compaction",
                    "summary": "Compacted USER.md: 2 entries replace 3 (80/120 bytes); the replaced text is kept in "
                               "runtime/archived/", "receipt": receipt["maintenance"]}
    assert (root / "runtime" / "USER.md").read_text() == SEP.join(
        ["Go: tabs; never force-push main", "short commit subjects", "works in UTC+2 hours"]) + "\n"
    reports = client.progress_reports["compact-1"]
    assert [type(r).__name__ for r in reports] == ["WorkDoneProgressBegin", "WorkDoneProgressEnd"]
    assert reports[0].title == "Compacting USER.md" and reports[1].message == note["summary"]


BAD_REQUESTS = {
    "stale-revision": ({"revision": "0" * 64}, "revision-conflict", None),
    "lowered-importance": ({"entries": [{"content": "m", "importance": "low", "sourceIndexes": [1, 2, 3]}]},
                           "invalid-input", "entries[0].importance"),
    "duplicates-pending": ({"entries": [{"content": "works in UTC+2 hours", "importance": "critical",
                                         "sourceIndexes": [1, 2, 3]}]}, "invalid-input", "entries[0].content"),
    "section-sign": ({"entries": [{"content": "a \u00a7 b", "importance": "critical", "sourceIndexes": [1, 2, 3]}]},
                     "invalid-input", "entries[0].content"),
    "over-budget": ({"entries": [{"content": "x" * 61, "importance": "critical", "sourceIndexes": [1, 2, 3]}]},
                    "invalid-input", "entries"),
    "out-of-range": ({"entries": [{"content": "m", "importance": "critical", "sourceIndexes": [1, 2, 4]}]},
                     "invalid-input", "entries[0].sourceIndexes[2]"),
    "repeated": ({"entries": [{"content": "m", "importance": "critical", "sourceIndexes": [1, 2, 2, 3]}]},
                 "invalid-input", "entries[0].sourceIndexes[2]"),
    "missing": ({"entries": [{"content": "m", "importance": "critical", "sourceIndexes": [1, 2]}]},
                "invalid-input", "entries"),
    "non-integer": ({"entries": [{"content": "m", "importance": "critical", "sourceIndexes": [1, 2, "3"]}]},
                    "invalid-input", "entries[0].sourceIndexes[2]"),
    "unknown-field": ({"entries": [], "routes": []}, "invalid-input", "routes"),
    "no-revision": ({"revision": None}, "invalid-input", "revision"),
}


@pytest.mark.parametrize("name", sorted(BAD_REQUESTS))
async def test_bad_compact_requests_change_nothing(lsp: Launcher, repo, repo_dir: Path, name):
    client = await lsp.start("visual-studio-code", [repo_dir], SETTINGS)
    plan, _ = await _full_user(client)
    change, code, field = BAD_REQUESTS[name]
    params = {"revision": plan["revision"], "target": "user", "pending": plan["pending"],
              "entries": [{"content": "m", "importance": "critical", "sourceIndexes": [1, 2, 3]}], **change}
    params = {k: v for k, v in params.items() if v is not None}
    before = tree_state(repo_dir / ".mnemon")
    mark = client.mark()
    error = await client.call_error(COMPACT, params)
    assert error.data["code"] == code
    if field is not None:
        assert error.data["field"] == field
    assert tree_state(repo_dir / ".mnemon") == before
    assert client.notes_since(mark) == []


async def test_document_create_cold_archives_and_reports(lsp: Launcher, repo, repo_dir: Path):
    client = await lsp.start("visual-studio-code", [repo_dir], SETTINGS)
    space = await client.call("mnemon/spaces/create", {"name": "Project", "description": "notes", "active": True})
    first = await client.call("mnemon/documents/create", {
        "title": "Parser design", "description": "How the Pratt parser binds operators.",
        "content": "The parser is Pratt. " * 120})
    await client.call("mnemon/documents/create", {"title": "Second", "content": "second body " * 150})
    completed = client.expect(COMPLETED)
    client.progress_reports["cold-1"] = []
    third = await client.call("mnemon/documents/create", {"title": "Third", "content": "third body " * 150,
                                                          "workDoneToken": "cold-1"})
    note = await client.received(completed)
    document = first["document"]
    receipt = third["maintenance"]
    assert receipt["kind"] == "document-cold-archive" and note["receipt"] == receipt
    assert [a["source"] for a in receipt["archived"]] == [f"document:{document['id']}:1"]
    assert receipt["destinations"] == [{"kind": "memory-space", "spaceId": space["id"], "spaceName": "Project",
                                        "count": 1}]
    reports = client.progress_reports["cold-1"]
    assert [type(r).__name__ for r in reports] == ["WorkDoneProgressBegin", "WorkDoneProgressReport",
                                                   "WorkDoneProgressEnd"]
    assert reports[0].message == "Archiving \u201cParser design\u201d into Project"
    index = json.loads((repo_dir / ".mnemon" / "documents" / "index.json").read_text())["documents"]
    archived = next(r for r in index if r["id"] == document["id"])
    assert archived["status"] == "archived" and archived["memoryBodyIds"] == [space["id"]]
    assert archived["lineage"][0]["source"] == {"layerId": "documents", "reference": f"document:{document['id']}:1",
                                                "digest": document["contentHash"]}
    expected = (f"Document: Parser design\nHow the Pratt parser binds operators.\nDocument ID: {document['id']}\n"
                f"Cold path: .mnemon/documents/archived/{document['filename']}\n"
                f"Content SHA-256: {document['contentHash']}")
    for query in ("Parser design", document["contentHash"]):
        found = await client.call("mnemon/recall", {"query": query})
        assert [r["content"] for r in found["results"]][:1] == [expected], query


async def test_progress_uses_a_server_token_when_the_request_brings_none(lsp: Launcher, repo, repo_dir: Path):
    client = await lsp.start("visual-studio-code", [repo_dir], SETTINGS)
    await client.call("mnemon/spaces/create", {"name": "Project", "description": "notes", "active": True})
    for title in ("One", "Two"):
        await client.call("mnemon/documents/create", {"title": title, "content": f"{title} body " * 200})
    assert client.progress_reports == {}  # creates that fit report nothing
    completed = client.expect(COMPLETED)
    await client.call("mnemon/documents/create", {"title": "Three", "content": "three body " * 200})
    await client.received(completed)
    (token, reports), = client.progress_reports.items()
    assert token.startswith("mnemon-maintenance-")
    assert [type(r).__name__ for r in reports][0] == "WorkDoneProgressBegin"
    assert type(reports[-1]).__name__ == "WorkDoneProgressEnd"
    assert reports[-1].message.startswith("Cold-archived 1 document into Memory Space Project")
