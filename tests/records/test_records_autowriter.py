"""The auto-writer's digest (seed 002 section 4) without a server: classification, ignores, bounds, ids."""

from __future__ import annotations

import hashlib

from mnemon_ls.records.autowriter import MAX_PER_SESSION, SessionFiles, auto_id, write_digest


def test_classification_of_events(workspace):
    files = SessionFiles(workspace, ignored=[workspace / ".mnemon"])
    assert files.observe("created", workspace / "a.txt")
    files.observe("modified", workspace / "a.txt")  # still created
    files.observe("created", workspace / "tmp.txt")
    files.observe("deleted", workspace / "tmp.txt")  # created and deleted: neither
    files.observe("modified", workspace / "file.txt")
    files.observe("deleted", workspace / "gone.txt")
    files.observe("created", workspace / "gone.txt")  # came back: modified
    assert not files.observe("modified", workspace / ".git" / "HEAD")
    assert not files.observe("modified", workspace / ".mnemon" / "runtime" / "MEMORY.md")
    assert not files.observe("modified", workspace.parent / "outside.txt")
    assert not files.observe("modified", workspace)
    content, key = files.digest()
    assert content == ("Files touched: 3 (1 created, 2 modified, 0 deleted)\nCreated: a.txt\n"
                       "Modified: file.txt, gone.txt\nArtifacts: 1 — a.txt")
    assert key == hashlib.sha256(b"1/2/0/1").hexdigest()[:24]


def test_nothing_touched_writes_nothing(source, workspace):
    assert write_digest(source, SessionFiles(workspace)) is None
    assert not source.location("session").path.exists()


def test_merge_update_and_cap(source, workspace):
    files = SessionFiles(workspace)
    files.observe("modified", workspace / "file.txt")
    first = write_digest(source, files)
    key = source.location("session").scope_key
    assert first["id"] == auto_id(key, hashlib.sha256(b"0/1/0/0").hexdigest())
    assert first["id"].startswith(f"memory:auto:fact:{hashlib.sha256(key.encode()).hexdigest()[:16]}:")
    assert write_digest(source, files)["status"] == "merged"
    lines = source.location("session").path.read_bytes().count(b"\n")
    assert lines == 1
    files.observe("deleted", workspace / "file.txt")  # same counts (0/0/1/0 is new), so a new record
    ids = [first["id"], write_digest(source, files)["id"]]
    for n in range(MAX_PER_SESSION):
        files.observe("created", workspace / f"n{n}.txt")
        result = write_digest(source, files)
        ids.append(result["id"])
    active = [r for r in source.read("session").values() if r.status == "active"]
    assert len(active) == MAX_PER_SESSION
    archived = {r.id for r in source.read("session").values() if r.status == "archived"}
    assert archived == set(ids[:2])


def test_a_changed_digest_with_the_same_counts_is_the_next_revision_of_its_record(source, workspace):
    """Seed 002: the id hashes the counts only, so other files with the same counts keep the id; the
    record is appended again as revision 2 (ids are unique in a scope file), never a second record."""
    first_files = SessionFiles(workspace)
    first_files.observe("modified", workspace / "a.txt")
    first = write_digest(source, first_files)
    other = SessionFiles(workspace)
    other.observe("modified", workspace / "b.txt")
    second = write_digest(source, other)
    assert second["id"] == first["id"] and second["status"] == "committed"
    records = source.read("session")
    assert len(records) == 1
    record = records[first["id"]]
    assert record.governance.revision == 2 and record.content.endswith("\nModified: b.txt")
    assert source.location("session").path.read_bytes().count(b"\n") == 2  # appended, the first line kept
