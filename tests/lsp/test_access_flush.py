"""The access counters of recalls through the language server (issue 27 items 2 and 5): written by a thread of
the server beside the requests, never inside a recall, and all of them in ``mnemon.db`` after a clean shutdown.

Real server subprocesses, real SQLite. The second test runs the server through a small launcher that sets
the test seam :data:`mnemon_ls.spaces.accessflush._step_hook` (events appended to a file; the first write
held inside its transaction, before ``COMMIT``, until the test writes to a FIFO), so the test sees the
write under way and sends recalls meanwhile. No sleep: every wait is for an answer or for an event in the
file (:func:`wait_for_line`, a condition poll with a safety bound).
"""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import sqlite3
import sys
import time
from pathlib import Path

import pygit2
import pytest

from mnemon_ls.spaces.providers.native_schema import ACCESS_FLUSH_THRESHOLD
from tests.lsp.conftest import NOTIFY_TIMEOUT, REQUEST_TIMEOUT, Launcher, MnemonClient

SETTINGS = {"mnemon": {"storageScope": "workspace", "runtimeUserScope": "storage"}}

#: Runs ``mnemon-ls serve`` with the flusher's seam set: ``$FLUSH_EVENTS`` gets one line per step, and the
#: first ``commit`` step waits until the FIFO ``$FLUSH_GATE`` is written to.
LAUNCHER = r'''
import os, sys
from mnemon_ls.spaces import accessflush
held = []
def hook(name):
    with open(os.environ["FLUSH_EVENTS"], "a") as out:
        out.write(name + "\n")
    if name == "commit" and not held:
        held.append(name)
        with open(os.environ["FLUSH_GATE"]) as gate:
            gate.read(1)
accessflush._step_hook = hook
from mnemon_ls.cli import main
sys.exit(main(["serve"]))
'''


async def _fill(client: MnemonClient, count: int = 40) -> None:
    await client.call("mnemon/spaces/create", {"name": "Project", "description": "Orbit facts", "active": True})
    for n in range(count):
        await client.call("mnemon/remember", {"content": f"orbit fact number {n}: the relay {n} uses port {9000 + n}"})


def _counts(db_path: Path) -> tuple[int, int, int]:
    """``(sum of access_count, recall oplog rows, sum of their hits)`` as committed in ``mnemon.db``."""
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        total = db.execute("SELECT coalesce(sum(access_count), 0) FROM insights").fetchone()[0]
        details = [r[0] for r in db.execute("SELECT detail FROM oplog WHERE operation = 'recall'")]
    finally:
        db.close()
    hits = sum(int(re.search(r"hits=(\d+)$", d).group(1)) for d in details)
    return total, len(details), hits


async def wait_for_line(path: Path, line: str, timeout: float = NOTIFY_TIMEOUT) -> None:
    """Poll ``path`` until it holds the line ``line`` (``timeout``: a safety bound)."""
    deadline = time.monotonic() + timeout
    while not (path.exists() and line in path.read_text().splitlines()):
        if time.monotonic() > deadline:
            raise AssertionError(f"{path} never held {line!r}: {path.read_text() if path.exists() else None!r}")
        await asyncio.sleep(0.02)


async def test_every_count_is_in_mnemon_db_after_a_clean_shutdown(lsp: Launcher, repo: pygit2.Repository,
                                                                  repo_dir: Path) -> None:
    client = await lsp.start("visual-studio-code", [repo_dir], SETTINGS)
    await _fill(client)
    returned: dict[str, int] = {}
    recalls = sent = 0
    while sent < 2 * ACCESS_FLUSH_THRESHOLD + 300:  # (hits >= items sent) the threshold crossed twice, some left
        result = await client.call("mnemon/recall", {"query": "orbit relay port", "limit": 30})
        assert result["results"]
        for item in result["results"]:
            returned[item["id"]] = returned.get(item["id"], 0) + 1
        recalls += 1
        sent += len(result["results"])
    await asyncio.wait_for(client.shutdown_session(), REQUEST_TIMEOUT)
    client.exited = True
    total, rows, logged = _counts(repo_dir / ".mnemon" / "data" / "default" / "mnemon.db")
    assert rows == recalls  # one oplog row per recall, none lost and none twice
    assert total == logged  # every hit of every recall counted once
    db = sqlite3.connect(f"file:{repo_dir / '.mnemon' / 'data' / 'default' / 'mnemon.db'}?mode=ro", uri=True)
    counted = dict(db.execute("SELECT id, access_count FROM insights"))
    db.close()
    assert all(counted[ident] >= n for ident, n in returned.items())  # each sent item counted each time at least


async def test_a_recall_is_answered_while_the_counters_are_being_written(
        lsp: Launcher, repo: pygit2.Repository, repo_dir: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    events, gate = tmp_path / "flush-events", tmp_path / "flush-gate"
    os.mkfifo(gate)
    monkeypatch.setenv("FLUSH_EVENTS", str(events))
    monkeypatch.setenv("FLUSH_GATE", str(gate))
    monkeypatch.setenv("MNEMON_LSP_TEST_SERVER", shlex.join([sys.executable, "-c", LAUNCHER]))
    client = await lsp.start("visual-studio-code", [repo_dir], SETTINGS)
    await _fill(client)
    db_path = repo_dir / ".mnemon" / "data" / "default" / "mnemon.db"
    recalls = 0
    while not (events.exists() and "commit" in events.read_text().splitlines()):
        # each answer arrives: the recall that made the counters due did not write them
        assert (await client.call("mnemon/recall", {"query": "orbit relay port", "limit": 30}))["results"]
        recalls += 1
        if recalls * 40 > 3 * ACCESS_FLUSH_THRESHOLD:  # (a safety bound: far more hits than one batch)
            await wait_for_line(events, "commit")
    # the first write is inside its transaction now, held before COMMIT: recalls are answered meanwhile
    for _ in range(3):
        assert (await client.call("mnemon/recall", {"query": "orbit relay port", "limit": 30}))["results"]
    assert _counts(db_path) == (0, 0, 0)  # nothing of it committed yet
    with open(gate, "w") as release:
        release.write("x")
    await wait_for_line(events, "done")
    total, rows, logged = _counts(db_path)
    assert rows >= 1 and total == logged > 0  # the batch, whole
    await asyncio.wait_for(client.shutdown_session(), REQUEST_TIMEOUT)
    client.exited = True
    total, rows, logged = _counts(db_path)
    assert rows == recalls + 3 and total == logged
