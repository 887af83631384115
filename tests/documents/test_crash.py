"""A crash in the middle of archive or restore never loses the document and never leaves an invalid index.

A child process archives and restores one document. It is killed either at a named step of the
three-step move (``os._exit`` from the store's step hook: before the copy, after the copy, after the
index commit, after the source removal) or by SIGKILL during a tight archive/restore loop, right after
it reported a randomly chosen step (the kill lands in the code that follows, wherever the scheduler
lets it). Afterwards a fresh store must: read a valid index; after its refresh, hold exactly one managed
copy of the document, in the directory its status names (the one the reported steps imply); return the
original body; leave no temp file; and archive/restore it again (the dead writer's lock is broken).
"""

from __future__ import annotations

import os
import random
import signal
import subprocess

import pytest

from mnemon_ls.documents import DocumentStore, model
from tests.helpers.procs import WAIT_SECONDS, LineReader

from tests.documents.test_support import PYTHON, child_env

BODY = "# Incident review\n\n" + "\n".join(f"Line {i}: 数据库迁移 step {i} done." for i in range(200))

CHILD = r"""
import os, sys
from mnemon_ls.documents import DocumentStore
root, mode, arg = sys.argv[1], sys.argv[2], sys.argv[3]
store = DocumentStore(root, None, freshness_seconds=3600)
doc_id = arg if mode == "loop" else sys.argv[4]

def flip():
    rec = store.read().records
    rec = next(r for r in rec if r.id == doc_id)
    if rec.status == "active":
        store.moves.archive(doc_id, rec.revision, summary="crash test")
    else:
        store.moves.restore(doc_id, document_revision=rec.revision)

if mode == "step":
    def hook(name):
        if name == arg:
            os._exit(137)
    store._step_hook = hook
    flip()
    print("NOCRASH", flush=True)
else:
    store._step_hook = lambda name: print(name, flush=True)  # every step, as it is reached
    print("READY", flush=True)
    while True:
        flip()
"""


def seed(root) -> tuple[str, str]:
    store = DocumentStore(root, None)
    target = store.create("Incident review", BODY).document.record.id
    other = store.create("Bystander", "unrelated body").document.record.id
    store.close()
    return target, other


def check(root, target: str, other: str) -> str:
    """The invariants after a crash; returns the document's status."""
    documents = root / "documents"
    store = DocumentStore(root, None)
    state = store.read()
    assert state.problem is None, state.problem
    store.freshness.refresh()
    records = {r.id: r for r in store.read().records}
    assert set(records) == {target, other}
    rec = records[target]
    active = sorted(os.listdir(documents / "active"))
    archived = sorted(os.listdir(documents / "archived"))
    mine = [(s, n) for s, names in (("active", active), ("archived", archived)) for n in names if n == rec.filename]
    assert mine == [(rec.status, rec.filename)], (mine, rec.status)
    assert records[other].filename in active
    assert not [n for n in (*active, *archived, *os.listdir(documents)) if n.endswith(".tmp")]
    doc = store.get(target)
    assert doc.content == BODY
    assert model.sha256_hex(doc.content) == doc.record.content_hash
    text = (documents / rec.status / rec.filename).read_text()
    assert text == model.render_markdown(rec, BODY)
    assert store.get(other).content == "unrelated body"
    # still usable: the dead writer's lock is broken, the move works both ways
    if rec.status == "active":
        store.moves.archive(target, rec.revision)
        store.moves.restore(target)
    else:
        store.moves.restore(target)
        store.moves.archive(target, rec.revision + 1)
    store.close()
    return rec.status


@pytest.mark.parametrize("action", ["archive", "restore"])
@pytest.mark.parametrize("step", ["start", "copied", "committed", "done"])
def test_crash_at_each_step_of_the_move(tmp_path, action, step):
    root = tmp_path / "root"
    target, other = seed(root)
    if action == "restore":
        store = DocumentStore(root, None)
        store.moves.archive(target, 1)
        store.close()
    proc = subprocess.run([PYTHON, "-c", CHILD, str(root), "step", f"{action}:{step}", target],
                          capture_output=True, text=True, env=child_env(), timeout=60)
    assert proc.returncode == 137, proc.stderr
    assert "NOCRASH" not in proc.stdout
    status = check(root, target, other)
    committed = step in ("committed", "done")
    expected = {("archive", True): "archived", ("archive", False): "active",
                ("restore", True): "active", ("restore", False): "archived"}[(action, committed)]
    assert status == expected


def expected_statuses(steps: list[str]) -> set[str]:
    """The statuses the document may have after a kill, from the steps the loop child reported: each
    ``...:committed`` flipped it (it starts active); after a last ``...:copied`` the commit may have landed
    without its report."""
    flips = sum(step.endswith(":committed") for step in steps)
    after = {("active", "archived")[flips % 2]}
    if steps and steps[-1].endswith(":copied"):
        after.add(("active", "archived")[(flips + 1) % 2])
    return after


def test_sigkill_at_random_points_of_archive_and_restore(tmp_path):
    rng = random.Random(20260915)
    statuses = []
    for run in range(20):
        root = tmp_path / f"run{run}"
        target, other = seed(root)
        proc = subprocess.Popen([PYTHON, "-c", CHILD, str(root), "loop", target], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=child_env())
        try:
            reader = LineReader(proc)
            assert reader.readline() == "READY"
            # Kill right after the child reported its n-th step (up to three moves of four steps): the event,
            # not a delay, so even a loaded machine kills on both sides of the commits.
            steps = [reader.readline() for _ in range(rng.randint(1, 12))]
            os.kill(proc.pid, signal.SIGKILL)
            assert proc.wait(timeout=WAIT_SECONDS) == -signal.SIGKILL
            steps += reader.rest()  # what it reported before the kill landed
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            proc.stdout.close()
            proc.stderr.close()
        status = check(root, target, other)
        assert status in expected_statuses(steps), (status, steps)
        statuses.append(status)
    assert set(statuses) == {"active", "archived"}  # the kills landed on both sides of the moves
