"""Two OS processes remembering into one space at once lose nothing and never surface "database is locked";
a store held by another writer past the timeout is a clear ``store-busy`` error that changed nothing; a
reader process sees rows another process wrote (the side index catches up)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from mnemon_ls.errors import StoreBusy
from mnemon_ls.spaces import SpacesService
from mnemon_ls.spaces.providers.native import NativeProvider

WRITER = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from mnemon_ls.spaces import SpacesService
    root, prefix, count = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    service = SpacesService(root)
    print("READY", flush=True)
    sys.stdin.readline()
    errors = []
    for i in range(count):
        try:
            receipt = service.remember(f"{prefix} note {i} about shared sqlite writers", space_id="default",
                                       entities=["SharedEntity"])
            assert receipt.status == "committed", receipt.to_dict()
        except Exception as exc:  # reported to the test, which fails on any
            errors.append(f"{type(exc).__name__}: {exc}")
    hits = service.recall(f"{prefix} note", limit=50).to_dict()
    print(json.dumps({"errors": errors, "hits": len(hits["results"])}), flush=True)
""")


def spawn(root: Path, prefix: str, count: int) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", WRITER, str(root), prefix, str(count)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=str(Path(__file__).resolve().parents[2]))


def test_two_processes_remember_into_one_space(root: Path) -> None:
    SpacesService(root).create_space("Shared", "one space, two writers", active=True)
    count = 40
    procs = [spawn(root, prefix, count) for prefix in ("alpha", "beta")]
    for proc in procs:
        assert proc.stdout.readline().strip() == "READY"
    for proc in procs:  # release both at once
        proc.stdin.write("go\n")
        proc.stdin.flush()
    reports = []
    for proc in procs:
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        assert "locked" not in err.lower()
        reports.append(json.loads(out.strip().splitlines()[-1]))
    assert reports == [{"errors": [], "hits": 12}, {"errors": [], "hits": 12}]
    with sqlite3.connect(root / "data" / "default" / "mnemon.db") as db:
        contents = [r[0] for r in db.execute("SELECT content FROM insights WHERE deleted_at IS NULL")]
        remembers = db.execute("SELECT count(*) FROM oplog WHERE operation = 'remember'").fetchone()[0]
    db.close()
    assert len(contents) == len(set(contents)) == 2 * count and remembers == 2 * count
    service = SpacesService(root)
    status = service.space_status("default")["status"]
    assert status["total_insights"] == 2 * count and status["index"]["items"] == 2 * count
    assert status["top_entities"] == [{"entity": "SharedEntity", "count": 2 * count}]


HOLDER = textwrap.dedent("""
    import sqlite3, sys
    db = sqlite3.connect(sys.argv[1], isolation_level=None)
    db.execute("BEGIN IMMEDIATE")
    db.execute("INSERT INTO oplog(operation, insight_id, detail, created_at) VALUES('hold', '', '', 'x')")
    print("HELD", flush=True)
    sys.stdin.readline()
    db.execute("ROLLBACK")
""")


def test_a_writer_holding_the_store_past_the_timeout_is_a_clear_error(root: Path) -> None:
    service = SpacesService(root, lock_timeout=0.6)
    service.create_space("Shared", "s", active=True)
    service.remember("before the hold")
    db_path = root / "data" / "default" / "mnemon.db"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(db_path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "HELD"
        started = time.monotonic()
        with pytest.raises(StoreBusy) as busy:
            service.remember("during the hold")
        waited = time.monotonic() - started
        assert 0.6 <= waited < 5
        assert busy.value.code == "store-busy" and "locked" not in busy.value.message
        assert busy.value.data["timeoutSeconds"] == 0.6
        # a read during the hold still answers (WAL readers are not blocked)
        assert [r["content"] for r in service.recall("before the hold").results] == ["before the hold"]
    finally:
        holder.stdin.write("\n")
        holder.stdin.flush()
        holder.wait(30)
    assert service.remember("after the hold").status == "committed"
    with sqlite3.connect(db_path) as db:
        assert sorted(r[0] for r in db.execute("SELECT content FROM insights")) == ["after the hold", "before the hold"]
    db.close()


def test_a_short_hold_is_waited_out(root: Path) -> None:
    service = SpacesService(root, lock_timeout=10)
    service.create_space("Shared", "s", active=True)
    db_path = root / "data" / "default" / "mnemon.db"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(db_path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "HELD"
    import threading
    release = threading.Timer(0.4, lambda: (holder.stdin.write("\n"), holder.stdin.flush()))
    release.start()
    try:
        assert service.remember("waits for the other writer").status == "committed"
    finally:
        release.join()
        holder.wait(30)


def test_another_process_rows_reach_this_index(root: Path) -> None:
    service = SpacesService(root)
    service.create_space("Shared", "s", active=True)
    assert service.recall("quartz lamp").results == []
    proc = spawn(root, "quartz lamp", 3)
    assert proc.stdout.readline().strip() == "READY"
    proc.stdin.write("go\n")
    proc.stdin.flush()
    proc.communicate(timeout=60)
    assert len(service.recall("quartz lamp note").results) == 3
    provider = service.provider(service.get_space("default").record)
    assert isinstance(provider, NativeProvider) and provider.count() == 3
