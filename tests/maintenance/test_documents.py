"""Documents cold archival (mnemon_ls/maintenance/documents.py; reference 4.5 and 5.6).

Real Documents and Memory Spaces Sources (embedded mnemon.db) under tmp_path. Faults are real: a second
SQLite connection holding the space's write lock, a second store instance writing between plan and
write (called from the progress callback, which runs right before each document is archived), a space
deactivated by another SpacesService on the same root, and the Documents test seam raising ENOSPC inside
the archive.
"""

from __future__ import annotations

import errno
import json
import os
import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from mnemon_ls.documents import DocumentStore
from mnemon_ls.errors import DocumentCapacityError, MaintenanceFailed, StorageFull
from mnemon_ls.host import WorkspaceHost
from mnemon_ls.maintenance import documents as cold
from mnemon_ls.settings import Settings
from mnemon_ls.spaces import SpacesService

LIMIT = 6000


def make_host(tmp_path: Path, limit: int = LIMIT) -> WorkspaceHost:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    settings = Settings(storageScope="custom", dataDir=str(tmp_path / "root"), documents={"activeLimitBytes": limit})
    return WorkspaceHost(workspace, settings, env={})


@pytest.fixture
def host(tmp_path):
    made = make_host(tmp_path)
    yield made
    made.close()


def _space(host: WorkspaceHost, name: str = "Project") -> str:
    return host.spaces.create_space(name, "cold references", active=True).record.id


def _fill(host: WorkspaceHost) -> list:
    """Two documents of ~2.7 KB each (the limit is 6000 bytes of rendered files)."""
    first = cold.create_document(host, "Parser design", "# Parser\n\nThe parser is Pratt. It binds operators by "
                                 "power.\n\n" + "detail " * 350).result.document
    second = cold.create_document(host, "Release guide", "release steps " * 190).result.document
    return [first, second]


def _index(host: WorkspaceHost) -> dict:
    return {r["id"]: r for r in json.loads((host.root / "documents" / "index.json").read_text())["documents"]}


def _hash_hits(host: WorkspaceHost, content_hash: str) -> list[dict]:
    return [r for r in host.spaces.recall(content_hash, mode="keyword", limit=50).results
            if content_hash in r["content"]]


# ------------------------------------------------------------------ summary


def test_summary_is_the_description_else_the_first_text_paragraph():
    assert cold.summary_of("  How the  parser\nworks. ", "# Title\n\nBody.") == "How the parser works."
    assert cold.summary_of("", "# Title\n## Sub\n\nFirst  paragraph\nwraps here.\n\nSecond.") == \
        "First paragraph wraps here."
    assert cold.summary_of("", "# Only a heading", "The title") == "The title"


def test_summary_is_cut_at_a_sentence_boundary_within_1000_characters():
    body = ("A" * 600 + ". ") + ("B" * 500 + ". ") + "C"
    assert cold.summary_of("", body) == "A" * 600 + "."
    cjk = "\u4e2d" * 700 + "\u3002" + "\u6587" * 700
    assert cold.summary_of("", cjk) == "\u4e2d" * 700 + "\u3002"
    unbroken = "x" * 1500
    assert cold.summary_of("", unbroken) == "x" * 999 + "\u2026"
    assert len(cold.summary_of("", unbroken)) == 1000


# ------------------------------------------------------------------ the happy path


def test_create_that_does_not_fit_cold_archives_the_lru_document(host):
    space_id = _space(host)
    first, second = _fill(host)
    progress: list[tuple[str, int | None]] = []
    made = cold.create_document(host, "Third", "third body " * 200, progress=lambda m, p: progress.append((m, p)))
    receipt = made.maintenance
    assert receipt is not None and made.result.action == "created"
    assert [a.source for a in receipt.archived] == [f"document:{first.record.id}:1"]
    item_id = receipt.archived[0].destination.item_id
    assert receipt.archived[0].destination.reference == f"memory-space:{space_id}/item:{item_id}"
    assert progress[0] == ("Archiving \u201cParser design\u201d into Project", 0)
    assert progress[-1][1] == 100 and progress[-1][0].startswith("Cold-archived 1 document into Memory Space Project")
    record = _index(host)[first.record.id]
    assert (record["status"], record["revision"], record["memoryBodyIds"]) == ("archived", 2, [space_id])
    assert record["archiveSummary"] == "The parser is Pratt. It binds operators by power."
    lineage = record["lineage"]
    assert len(lineage) == 1 and lineage[0]["kind"] == "document-cold-archive"
    assert lineage[0]["source"] == {"layerId": "documents", "reference": f"document:{first.record.id}:1",
                                    "digest": first.record.content_hash}
    assert lineage[0]["destination"]["reference"] == f"memory-space:{space_id}/item:{item_id}"
    text = (f"Document: Parser design\nThe parser is Pratt. It binds operators by power.\nDocument ID: "
            f"{first.record.id}\nCold path: {os.path.realpath(host.root)}/documents/archived/{first.record.filename}\n"
            f"Content SHA-256: {first.record.content_hash}")
    by_title = host.spaces.recall("Parser design").results
    assert by_title[0]["id"] == item_id and by_title[0]["content"] == text
    assert [r["id"] for r in _hash_hits(host, first.record.content_hash)] == [item_id]
    assert _index(host)[second.record.id]["status"] == "active"


def test_lru_order_and_several_archives_until_it_fits(host):
    _space(host)
    first, second = _fill(host)
    # the access a second after both were made: in the same millisecond as the release guide's creation the two
    # tied, and ties keep index order (the CI-like run of stop 45 met that once)
    later = datetime.now(timezone.utc) + timedelta(seconds=1)
    host.documents.clock = lambda: later
    host.documents.get(first.record.id)  # an access: the release guide is now the least recently accessed
    host.flush()
    made = cold.create_document(host, "Big", "big body " * 560)  # needs both gone
    assert [a.source.split(":")[1] for a in made.maintenance.archived] == [second.record.id, first.record.id]
    assert made.maintenance.bytes_freed == first.record.size_bytes + second.record.size_bytes


def test_update_that_does_not_fit_never_archives_itself(host):
    _space(host)
    first, second = _fill(host)
    made = cold.update_document(host, second.record.id, content="release steps " * 300)
    assert made.result.action == "updated"
    assert [a.source for a in made.maintenance.archived] == [f"document:{first.record.id}:1"]


def test_no_eligible_space_keeps_the_capacity_error_with_candidates(host, disk):
    first, second = _fill(host)
    before = disk.freeze(host.root)
    with pytest.raises(DocumentCapacityError) as info:
        cold.create_document(host, "Third", "third body " * 200)
    assert [c["id"] for c in info.value.candidates] == [first.record.id, second.record.id]
    assert disk.state(host.root) == before


def test_an_inactive_space_is_not_eligible(host):
    space_id = _space(host)
    host.spaces.deactivate(space_id)
    _fill(host)
    with pytest.raises(DocumentCapacityError):
        cold.create_document(host, "Third", "third body " * 200)


def test_an_existing_reference_is_reused_not_duplicated(host):
    space_id = _space(host)
    first, _ = _fill(host)
    record = first.record
    text = cold.reference_text(record.title, "The parser is Pratt. It binds operators by power.", record.id,
                               record.filename, record.content_hash)
    existing = host.spaces.remember(text, space_id=space_id, category="context", source="agent")
    made = cold.create_document(host, "Third", "third body " * 200)
    assert made.maintenance.archived[0].evidence == "duplicate"
    assert made.maintenance.archived[0].destination.item_id == existing.id
    assert [r["id"] for r in _hash_hits(host, record.content_hash)] == [existing.id]


def test_restore_of_a_cold_document_leaves_the_reference(host):
    _space(host)
    first, _ = _fill(host)
    made = cold.create_document(host, "Third", "third body " * 200)
    item_id = made.maintenance.archived[0].destination.item_id
    host.documents.moves.archive(made.result.document.record.id, None)  # make room by hand
    restored = host.documents.moves.restore(first.record.id)
    assert restored.document.record.status == "active"
    assert _index(host)[first.record.id]["memoryBodyIds"] == list(restored.document.record.memory_body_ids) != []
    assert [r["id"] for r in _hash_hits(host, first.record.content_hash)] == [item_id]


# ------------------------------------------------------------------ faults


def test_provider_failure_leaves_the_document_active_and_the_space_unchanged(tmp_path, host):
    space_id = _space(host)
    first, _ = _fill(host)
    host.__dict__["spaces"] = SpacesService(host.root, lock_timeout=0.3)  # a short wait for the writer below
    blocker = sqlite3.connect(host.root / "data" / space_id / "mnemon.db", isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # another writer holds mnemon.db
    try:
        with pytest.raises(MaintenanceFailed) as info:
            cold.create_document(host, "Third", "third body " * 200)
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert info.value.data["reason"] == "provider-failed" and info.value.data["spaceId"] == space_id
    assert "the document stays active" in info.value.message
    index = _index(host)
    assert index[first.record.id]["status"] == "active" and len(index) == 2
    assert _hash_hits(host, first.record.content_hash) == []


def test_space_deactivated_between_plan_and_write(tmp_path, host):
    space_id = _space(host)
    first, _ = _fill(host)
    other = SpacesService(host.root)  # another process on the same root
    with pytest.raises(MaintenanceFailed) as info:
        cold.create_document(host, "Third", "third body " * 200, progress=lambda m, p: other.deactivate(space_id))
    assert info.value.data["reason"] == "space-ineligible"
    assert _index(host)[first.record.id]["status"] == "active" and len(_index(host)) == 2
    other.activate(space_id)
    assert _hash_hits(host, first.record.content_hash) == []


def test_a_second_writer_changing_the_candidate_skips_it(tmp_path, host):
    _space(host)
    first, second = _fill(host)
    other = DocumentStore(host.root, host.workspace, active_limit_bytes=LIMIT)
    changed: list[str] = []

    def second_writer(message: str, _percentage) -> None:
        if not changed:
            changed.append(message)
            other.update(first.record.id, description="edited meanwhile")
    made = cold.create_document(host, "Third", "third body " * 200, progress=second_writer)
    assert made.maintenance.to_dict()["skipped"] == [first.record.id]
    assert [a.source for a in made.maintenance.archived] == [f"document:{second.record.id}:1"]
    index = _index(host)
    assert (index[first.record.id]["status"], index[first.record.id]["revision"]) == ("active", 2)
    assert _hash_hits(host, first.record.content_hash) == []
    other.close()


def test_a_fresh_reference_is_forgotten_when_the_archive_fails(host):
    _space(host)
    first, _ = _fill(host)

    def full_disk(step: str) -> None:
        if step == "archive:start":
            raise OSError(errno.ENOSPC, "No space left on device")
    host.documents._step_hook = full_disk
    with pytest.raises(OSError) as info:
        cold.create_document(host, "Third", "third body " * 200)
    assert info.value.errno == errno.ENOSPC or isinstance(info.value, StorageFull)
    host.documents._step_hook = None
    assert _index(host)[first.record.id]["status"] == "active" and len(_index(host)) == 2
    assert _hash_hits(host, first.record.content_hash) == []


@pytest.mark.parametrize("scope", ["workspaces", "workspace", "custom"])
def test_the_cold_path_line_names_the_archived_file_wherever_the_root_is(tmp_path, scope):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    settings = Settings(storageScope=scope, dataDir=str(tmp_path / "data"), documents={"activeLimitBytes": LIMIT})
    host = WorkspaceHost(workspace, settings, env={"HOME": str(tmp_path / "home")})
    try:
        _space(host)
        first, _ = _fill(host)
        made = cold.create_document(host, "Third", "third body " * 200)
        item_id = made.maintenance.archived[0].destination.item_id
        content = next(r["content"] for r in host.spaces.recall("Parser design").results if r["id"] == item_id)
        line = next(line for line in content.splitlines() if line.startswith("Cold path: "))
        path = line[len("Cold path: "):]
        archived = host.root / "documents" / "archived" / first.record.filename
        if scope == "workspace":  # inside the workspace: relative to it, the reference's own text
            assert path == f".mnemon/documents/archived/{first.record.filename}"
            assert (workspace / path).is_file()
        else:  # a root outside the repository (workspaces: under the data directory): the absolute path
            assert path == os.path.realpath(archived) and os.path.isabs(path)
        assert Path(os.path.realpath(archived)).is_file() and "The parser is Pratt." in archived.read_text()
    finally:
        host.close()
