"""An archive (or a restore) whose source copy cannot be removed fails and leaves the store as it was.

The move writes the copy in the target directory, commits ``index.json``, then removes the source copy. When that
removal failed (``active/`` read-only), the error was swallowed: the archive reported success, the index named
the archived copy and a stale active copy stayed behind until a later repair. Now the commit and the copy are
undone and the move raises a ``StorageError`` naming the source file and the reason: ``documents/`` holds the same
bytes as before (no archived copy left), the document reads as before, and once the directory is writable again
the archive works.

The directory is made unwritable for real: ``chmod 0500`` for a normal user; as root (who ignores the mode) the
immutable attribute (``chattr +i``), which the kernel enforces for root too. Skipped when neither takes effect (a
file system without the attribute, no ``CAP_LINUX_IMMUTABLE``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

from mnemon_ls.documents import DocumentStore
from mnemon_ls.errors import StorageError

from tests.documents.test_support import frozen, make_store, tree


def _writable(directory: Path) -> bool:
    probe = directory / ".probe"
    try:
        probe.write_bytes(b"")
    except OSError:
        return False
    probe.unlink()
    return True


@contextmanager
def unwritable(directory: Path) -> Iterator[None]:
    """``directory`` refuses every entry created, renamed or removed in it, for root too (module doc)."""
    if os.geteuid() == 0:
        if shutil.which("chattr") is None:
            pytest.skip("running as root without chattr: no real way to make a directory read-only")
        made = subprocess.run(["chattr", "+i", str(directory)], capture_output=True, text=True)
        if made.returncode != 0:
            pytest.skip(f"chattr +i is not available here: {made.stderr.strip()}")
        undo = ["chattr", "-i", str(directory)]
    else:
        mode = directory.stat().st_mode & 0o7777
        directory.chmod(0o500)
        undo = None
    try:
        if _writable(directory):
            pytest.skip(f"{directory} is still writable")
        yield
    finally:
        if undo:
            subprocess.run(undo, check=True)
        else:
            directory.chmod(mode)


def _bytes(base: Path) -> dict[str, bytes]:
    return {k: v[0] for k, v in tree(base).items()}


def test_an_archive_that_cannot_remove_the_active_copy_fails_and_changes_nothing(tmp_path):
    store, root, _workspace, _clock = make_store(tmp_path)
    other = store.create("Other", "stays as it is").document.record
    rec = store.create("Runbook", "step one\nstep two").document.record
    docs = root / "documents"
    revision = store.read().revision
    before = frozen(docs)
    source = docs / "active" / rec.filename
    with unwritable(docs / "active"):
        with pytest.raises(StorageError) as info:
            store.moves.archive(rec.id, rec.revision, summary="done")
        assert _bytes(docs) == {k: v[0] for k, v in before.items()}  # the index bytes too: no archived copy left
    error = info.value
    assert error.code == "storage-denied"
    assert str(error) == (f"{source} cannot be removed: permission denied (check the owner and mode of this path) "
                          f"({error.data['reason']}); the archive was undone: documents/active/{rec.filename} stays "
                          "active")
    assert error.data["reason"] in ("Operation not permitted", "Permission denied")
    assert (error.data["file"], error.data["id"], error.data["action"]) == (str(source), rec.id, "archive")
    assert os.listdir(docs / "archived") == []
    fresh = DocumentStore(root, None, freshness_seconds=0.0)  # another process reads it as before
    assert fresh.read().revision == revision
    doc = fresh.get(rec.id)
    assert (doc.record.status, doc.record.revision, doc.content) == ("active", 1, "step one\nstep two")
    assert fresh.get(other.id).content == "stays as it is"
    report = fresh.moves.repair()
    assert (report.completed, report.moved, report.preserved) == ([], [], {})
    archived = store.moves.archive(rec.id, rec.revision, summary="done").document.record  # writable again: it works
    assert (archived.status, archived.revision) == ("archived", 2)
    assert sorted(os.listdir(docs / "active")) == [other.filename] and os.listdir(docs / "archived") == [rec.filename]


def test_a_restore_that_cannot_remove_the_archived_copy_fails_and_changes_nothing(tmp_path):
    store, root, _workspace, _clock = make_store(tmp_path)
    rec = store.create("Runbook", "body").document.record
    store.moves.archive(rec.id, rec.revision)
    docs = root / "documents"
    before = frozen(docs)
    with unwritable(docs / "archived"):
        with pytest.raises(StorageError) as info:
            store.moves.restore(rec.id, document_revision=2)
        assert _bytes(docs) == {k: v[0] for k, v in before.items()}
    assert str(info.value).startswith(f"{docs / 'archived' / rec.filename} cannot be removed: ")
    assert str(info.value).endswith(f"; the restore was undone: documents/archived/{rec.filename} stays archived")
    assert store.get(rec.id).record.status == "archived" and os.listdir(docs / "active") == []


def test_the_cli_names_the_file_and_the_reason_and_the_document_stays_active(tmp_path):
    from tests.cli.test_cli import Cli

    cli = Cli(tmp_path)
    created = cli.ok_json("doc", "create", "--title", "Runbook", "--content", "step one")
    doc_id = created["document"]["id"] if "document" in created else created["id"]
    listing = cli.ok_json("doc", "list")
    [doc] = listing["documents"]
    active = cli.data / "documents" / "active"
    with unwritable(active):
        result = cli.run("doc", "archive", doc_id, "--revision", "1")
    assert result.returncode == 4, result.stderr
    assert f"{active / doc['filename']} cannot be removed: permission denied" in result.stderr
    assert "the archive was undone" in result.stderr
    [after] = cli.ok_json("doc", "list")["documents"]
    assert (after["status"], after["revision"]) == ("active", 1)
    assert os.listdir(cli.data / "documents" / "archived") == []
    assert json.loads(cli.ok("doc", "get", doc_id, "--json"))["content"] == "step one"
