"""Crash leftovers under ``documents/`` are cleaned at start, and no content is ever deleted (issue 15, 11).

A child process is killed where a crash leaves something behind: ``os._exit`` from the store's step hook
right after a create wrote its managed file (before the index commit: an orphan managed file), and
``os._exit`` inside the lock's publication step right after the real staging file was written (a stray
``documents/.index.lock.<pid>.<hex>.publish``). The first read of a fresh store (what every CLI command
and the server's first wake do) must then: adopt the orphan as a document (or, when it repeats a body
the index already has, or is not UTF-8, move it unchanged to ``documents/orphans/``), remove the dead
process' staging file (but not a live one's), and report what it did.
"""

from __future__ import annotations

import os
import subprocess

from mnemon_ls.documents import DocumentStore, diagnose, model

from tests.documents.test_support import PYTHON, child_env

CREATE_THEN_DIE = r"""
import os, sys
from mnemon_ls.documents import DocumentStore
store = DocumentStore(sys.argv[1], None, freshness_seconds=3600)
def hook(name):
    if name == "create:file-written":
        os._exit(137)
store._step_hook = hook
store.create(sys.argv[2], sys.argv[3])
print("NOCRASH", flush=True)
"""

DIE_WHILE_LOCKING = r"""
import os, sys
from mnemon_ls.documents import DocumentStore
real_link = os.link
def link(src, dst, *args, **kwargs):
    if str(src).endswith(".publish"):
        os._exit(137)  # killed after the staging file was written, before it was published as the lock
    return real_link(src, dst, *args, **kwargs)
os.link = link
DocumentStore(sys.argv[1], None).create("Never", "never committed")
print("NOCRASH", flush=True)
"""


def _run(script: str, *args: str) -> subprocess.CompletedProcess:
    proc = subprocess.run([PYTHON, "-c", script, *map(str, args)], capture_output=True, text=True, env=child_env(),
                          timeout=60)
    assert proc.returncode == 137, proc.stderr
    assert "NOCRASH" not in proc.stdout
    return proc


def _managed(root) -> list[str]:
    return sorted(f"{s}/{n}" for s in model.STATUSES for n in os.listdir(root / "documents" / s))


def test_a_create_killed_before_its_index_commit_is_adopted_at_the_next_start(tmp_path):
    root = tmp_path / "root"
    seed = DocumentStore(root, None)
    kept = seed.create("Kept", "kept body").document.record
    seed.close()
    _run(CREATE_THEN_DIE, root, "Rollout plan", "# Rollout plan\n\nCanary first, then 10%.")
    orphans = [p for p in _managed(root) if p != f"active/{kept.filename}"]
    assert len(orphans) == 1 and orphans[0].startswith("active/rollout-plan-")
    assert [r.id for r in DocumentStore(root, None).read().records] == [kept.id]
    warning = [f for f in diagnose(DocumentStore(root, None)) if "no record names" in f.message]
    assert warning and "adopts them into the index" in warning[0].advice

    store = DocumentStore(root, None)
    listing = store.list()  # the first read of a process: the start-up refresh
    records = {e.record.title: e.record for e in listing.documents}
    assert set(records) == {"Kept", "Rollout plan"}
    adopted = records["Rollout plan"]
    assert (adopted.status, adopted.revision, f"active/{adopted.filename}") == ("active", 1, orphans[0])
    assert store.get(adopted.id).content == "# Rollout plan\n\nCanary first, then 10%."
    assert [h.record.id for h in store.search.find("canary").results] == [adopted.id]
    assert store.freshness.refresh().orphans == []
    assert not (root / "documents" / "orphans").exists()
    assert _managed(root) == sorted([f"active/{kept.filename}", orphans[0]])
    store.update(adopted.id, content="Canary first, then 25%.")  # an ordinary document from now on


def test_the_report_says_what_was_adopted(tmp_path):
    root = tmp_path / "root"
    DocumentStore(root, None).create("Kept", "kept body")
    _run(CREATE_THEN_DIE, root, "Design notes", "notes body")
    report = DocumentStore(root, None).freshness.refresh()
    assert report.repair is not None and len(report.repair.adopted) == 1
    entry = report.repair.adopted[0]
    assert entry["file"].startswith("documents/active/design-notes-")
    assert any(n.startswith(f"{entry['file']}: a managed file no index record named") and entry["id"] in n
               for n in report.notices)
    assert report.repair.to_dict()["adopted"] == [entry]


def test_an_orphan_repeating_a_committed_body_is_set_aside_unchanged(tmp_path):
    root = tmp_path / "root"
    DocumentStore(root, None).create("Kept", "kept body")
    _run(CREATE_THEN_DIE, root, "Runbook", "step one")
    orphan = next(root / "documents" / p for p in _managed(root) if "runbook" in p)
    data = orphan.read_bytes()
    retried = DocumentStore(root, None).create("Runbook", "step one").document.record  # the client retried
    store = DocumentStore(root, None)
    report = store.freshness.refresh()
    assert report.repair is not None and report.repair.adopted == []
    [aside] = report.repair.set_aside
    assert aside["reason"] == f"repeats the body of document {retried.id} (a create retried after a crash)"
    moved = root / "documents" / "orphans" / os.path.basename(aside["to"])
    assert moved.read_bytes() == data and not orphan.exists()
    assert sorted(r.title for r in store.read().records) == ["Kept", "Runbook"]
    assert any("orphan managed files set aside" in f.message for f in diagnose(store))


def test_a_non_utf8_orphan_is_set_aside_byte_for_byte(tmp_path):
    root = tmp_path / "root"
    store = DocumentStore(root, None)
    store.create("Kept", "kept body")
    stray = root / "documents" / "active" / "gbk-notes.md"
    data = "# 会议记录\n\n决定：先迁移。".encode("gbk")
    stray.write_bytes(data)
    report = store.freshness.refresh()
    [aside] = report.repair.set_aside
    assert aside["file"] == "documents/active/gbk-notes.md"
    assert aside["reason"].startswith("is not UTF-8 text (invalid byte at offset ")
    assert open(aside["to"], "rb").read() == data
    assert [r.title for r in store.read().records] == ["Kept"]


def test_a_stray_lock_staging_file_of_a_killed_writer_is_removed_at_start(tmp_path):
    root = tmp_path / "root"
    DocumentStore(root, None).create("Kept", "kept body")
    _run(DIE_WHILE_LOCKING, root)
    documents = root / "documents"
    stray = [n for n in os.listdir(documents) if n.startswith(".index.lock.") and n.endswith(".publish")]
    assert len(stray) == 1
    # a live process' staging file (pid 1 is always alive) is left alone
    live = documents / ".index.lock.1.0123456789ab.publish"
    live.write_text("1\n")
    assert any("lock staging file" in f.message for f in diagnose(DocumentStore(root, None)))
    store = DocumentStore(root, None)
    assert [e.record.title for e in store.list().documents] == ["Kept"]
    assert not (documents / stray[0]).exists()
    assert live.exists()
    assert store.create("After", "the lock works").document.record.title == "After"


def test_an_orphan_is_not_touched_while_the_index_is_damaged(tmp_path):
    root = tmp_path / "root"
    DocumentStore(root, None).create("Kept", "kept body")
    _run(CREATE_THEN_DIE, root, "Later", "later body")
    index = root / "documents" / "index.json"
    index.write_bytes(index.read_bytes()[:-20])
    before = _managed(root)
    store = DocumentStore(root, None)
    report = store.freshness.refresh()
    assert report.problem and report.repair is None
    assert _managed(root) == before
    assert store.recovery.recover()["documents"] == 2


def test_two_orphans_with_one_file_name_become_one_document_and_one_set_aside(tmp_path):
    root = tmp_path / "root"
    store = DocumentStore(root, None)
    store.create("Kept", "kept body")
    for status, body in (("active", "first copy"), ("archived", "second copy")):
        (root / "documents" / status / "twin.md").write_text(f"# Twin\n\n{body}\n")
    report = store.freshness.refresh()
    assert [a["file"] for a in report.repair.adopted] == ["documents/active/twin.md"]
    assert [(s["file"], s["reason"]) for s in report.repair.set_aside] == [
        ("documents/archived/twin.md", "has the file name of another orphan just adopted (one name, one document)")]
    assert open(report.repair.set_aside[0]["to"]).read() == "# Twin\n\nsecond copy\n"
    assert sorted(r.filename for r in store.read().records)[1:] == ["twin.md"]


def test_reads_go_on_when_an_orphan_cannot_be_set_aside(tmp_path):
    root = tmp_path / "root"
    store = DocumentStore(root, None)
    kept = store.create("Kept", "kept body").document.record
    (root / "documents" / "orphans").write_text("a file where the orphans directory belongs\n")
    stray = root / "documents" / "active" / "empty.md"
    stray.write_text("   \n")
    listing = store.list()
    assert [e.record.id for e in listing.documents] == [kept.id]
    assert any(n.startswith("the repair of documents/ could not run") for n in store.freshness.refresh().notices)
    assert stray.read_text() == "   \n"
    assert store.get(kept.id).content == "kept body"
