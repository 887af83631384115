"""Cross-process and cross-thread safety of the Runtime store (DESIGN.md invariants 2, 3 and 4).

Writers are real OS processes (``tests/helpers/writer.py``) and real threads. They start together
through a barrier: every process prints ``READY`` once its store is built and then blocks on its stdin;
the test releases them all by writing one line to each pipe (threads wait on a ``threading.Barrier``
that the test thread also joins). No sleeps are used for synchronisation; every wait is bounded.

Lock markers are ``runtime/.memories.lock`` files created exclusively. The stale-lock cases write the
markers exactly as the other parties leave them: filelock's SoftFileLock owner record
(``<pid>\\n<host>\\n[<start token>\\n]``) of a process that has exited, an ownerless empty file (what the
TypeScript plugin leaves), and a record cut short by a writer killed mid-write.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from pathlib import Path

import pytest
from filelock._soft import parse_lock_holder

from mnemon_ls.errors import StoreBusy
from mnemon_ls.runtime import ops
from mnemon_ls.runtime.model import parse_store, projection_bytes, serialize_store
from mnemon_ls.runtime.store import RuntimeStore
from mnemon_ls.settings import RuntimeMemorySettings


from tests.helpers import procs  # noqa: E402  (shared subprocess and file-tree helpers)

LIMITS = RuntimeMemorySettings(memory_limit_bytes=1_048_576)
RUNTIME_FILES = [".memories.last-good.json", ".projections-history.json", "MEMORY.md", "USER.md", "memories.json"]


def add(content: str):
    return ops.validate_request("add", "memory", content)


def assert_consistent_root(root: Path, groups: dict[str, int], before: list[str] = ()) -> list[str]:
    """The store holds ``before`` then, interleaved, ``<prefix>-0..n-1`` of every group, each exactly once and
    in its writer's order; the projections, the last-good copy and the canonical serialization all agree
    byte for byte; no lock marker and no temp file is left. Returns the stored contents."""
    runtime = root / "runtime"
    assert sorted(os.listdir(runtime)) == RUNTIME_FILES
    data = (runtime / "memories.json").read_bytes()
    entries = parse_store(data)
    contents = [e.content for e in entries]
    expected = list(before) + [f"{prefix}-{i}" for prefix, count in groups.items() for i in range(count)]
    assert len(contents) == len(expected)
    assert sorted(contents) == sorted(expected)
    assert contents[: len(before)] == list(before)
    for prefix, count in groups.items():
        assert [c for c in contents if c.startswith(prefix + "-")] == [f"{prefix}-{i}" for i in range(count)]
    assert {(e.target, e.importance, e.branches) for e in entries} == {("memory", "normal", ())}
    assert data == serialize_store(entries)
    memory_md = (runtime / "MEMORY.md").read_bytes()
    assert memory_md == projection_bytes(entries, "memory")
    assert memory_md == ("\n\u00a7\n".join(contents) + "\n").encode("utf-8")
    assert (runtime / "USER.md").read_bytes() == b""
    assert (runtime / ".memories.last-good.json").read_bytes() == data
    assert {name: os.stat(runtime / name).st_mode & 0o777 for name in RUNTIME_FILES} == dict.fromkeys(RUNTIME_FILES, 0o600)
    assert os.stat(runtime).st_mode & 0o777 == 0o700
    return contents


def interleavings(contents: list[str]) -> int:
    """How often consecutive entries come from different writers (0 would mean no real overlap)."""
    owners = [c.rsplit("-", 1)[0] for c in contents]
    return sum(1 for a, b in zip(owners, owners[1:]) if a != b)


def start_writers(root: Path, prefixes: list[str], count: int):
    writers = [procs.spawn_writer("add", str(root), prefix, str(count)) for prefix in prefixes]
    readers = [procs.LineReader(w) for w in writers]
    return writers, readers


def stop_all(writers) -> None:
    for writer in writers:
        procs.kill_hard(writer)
        procs.finish(writer)


def test_four_processes_adding_50_entries_each_lose_nothing(tmp_path, capsys):
    root = tmp_path / "root"  # does not exist yet: the writers also race to create runtime/
    prefixes = ["p0", "p1", "p2", "p3"]
    writers, readers = start_writers(root, prefixes, 50)
    try:
        for writer, reader in zip(writers, readers):
            procs.ready_pid(reader.readline(), writer)
        for writer in writers:  # barrier: every process is parked on its stdin; release them together
            writer.stdin.write(b"GO\n")
            writer.stdin.flush()
        for reader in readers:
            lines = [reader.readline() for _ in range(51)]
            assert lines == [f"ACK {i} True Entry added." for i in range(1, 51)] + ["DONE"]
        assert [w.wait(timeout=procs.WAIT_SECONDS) for w in writers] == [0, 0, 0, 0]
    finally:
        stop_all(writers)
    contents = assert_consistent_root(root, dict.fromkeys(prefixes, 50))
    with capsys.disabled():
        print(f"\n[concurrency] 4 processes x 50 adds: writer switched {interleavings(contents)} times in 199 gaps")


def test_two_threads_and_one_process_lose_nothing(tmp_path, capsys):
    root = tmp_path / "root"
    shared = RuntimeStore(root, LIMITS)  # both threads use one store object, as a server would
    writers, readers = start_writers(root, ["proc"], 50)
    barrier = threading.Barrier(3, timeout=procs.WAIT_SECONDS)
    results: dict[str, list[tuple[bool, str]]] = {}
    failures: list[BaseException] = []

    def run(prefix: str) -> None:
        try:
            barrier.wait()
            results[prefix] = [
                (r.changed, r.message) for r in (shared.mutate(add(f"{prefix}-{i}")) for i in range(50))
            ]
        except BaseException as exc:  # surfaced below
            failures.append(exc)

    threads = [threading.Thread(target=run, args=(name,)) for name in ("thA", "thB")]
    try:
        procs.ready_pid(readers[0].readline(), writers[0])
        for thread in threads:
            thread.start()
        barrier.wait()
        writers[0].stdin.write(b"GO\n")
        writers[0].stdin.flush()
        lines = [readers[0].readline() for _ in range(51)]
        for thread in threads:
            thread.join(timeout=procs.WAIT_SECONDS)
        assert [t.is_alive() for t in threads] == [False, False]
        assert failures == []
        assert lines == [f"ACK {i} True Entry added." for i in range(1, 51)] + ["DONE"]
        assert results == {name: [(True, "Entry added.")] * 50 for name in ("thA", "thB")}
        assert writers[0].wait(timeout=procs.WAIT_SECONDS) == 0
    finally:
        stop_all(writers)
    contents = assert_consistent_root(root, {"thA": 50, "thB": 50, "proc": 50})
    with capsys.disabled():
        print(f"\n[concurrency] 2 threads + 1 process x 50 adds: writer switched {interleavings(contents)} times")


# ---------------------------------------------------------------------------------------------- stale locks


@pytest.fixture
def seeded(tmp_path):
    """A root holding one committed entry ``seed``; returns (root, lock path)."""
    root = tmp_path / "root"
    RuntimeStore(root, LIMITS).mutate(add("seed"))
    return root, root / "runtime" / ".memories.lock"


def dead_owner_record() -> tuple[str, int]:
    """The owner record a SoftFileLock of a process that has since exited wrote: (record, pid)."""
    proc = procs.spawn_writer("identity", stdin=subprocess.DEVNULL)
    try:
        out, err = proc.communicate(timeout=procs.WAIT_SECONDS)
    finally:
        procs.kill_hard(proc)
    assert (proc.returncode, err) == (0, b"")
    record = json.loads(out)
    pid = int(record.split("\n")[0])  # the writer's own pid (not proc.pid when it ran through the fork server)
    assert pid == proc.pid or os.environ.get("MNEMON_TEST_NO_ZYGOTE") != "1"
    assert not os.path.exists(f"/proc/{pid}")  # its launcher ended only once it was reaped
    return record, pid


def write_marker(lock: Path, data: bytes, age_seconds: float = 0.0) -> None:
    fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
    if age_seconds:
        moment = time.time() - age_seconds
        os.utime(lock, (moment, moment))


def add_and_check(root: Path, lock: Path, content: str, lock_timeout: float) -> None:
    receipt = RuntimeStore(root, LIMITS, lock_timeout=lock_timeout).mutate(add(content))
    assert (receipt.changed, receipt.message, receipt.entry_count) == (True, "Entry added.", 2)
    assert not lock.exists()
    assert_consistent_root(root, {}, before=["seed", content])


def test_marker_of_a_dead_process_is_broken_at_once(seeded):
    root, lock = seeded
    record, pid = dead_owner_record()
    holder = parse_lock_holder(record)
    assert holder is not None and holder.pid == pid
    write_marker(lock, record.encode())
    started = time.monotonic()
    add_and_check(root, lock, "after a dead owner", lock_timeout=1.0)  # StoreBusy if it had to wait 1 s
    assert time.monotonic() - started < 1.0


def test_live_holder_blocks_and_its_marker_is_broken_once_it_is_killed(seeded):
    root, lock = seeded
    with procs.writer("hold", str(root), word="HELD") as holder:
        record = lock.read_text()
        assert parse_lock_holder(record).pid == holder.pid
        before = procs.tree_snapshot(root)
        with pytest.raises(StoreBusy) as caught:
            RuntimeStore(root, LIMITS, lock_timeout=0.3).mutate(add("while held"))
        assert caught.value.data == {"file": str(lock), "timeoutSeconds": 0.3}
        assert procs.tree_snapshot(root) == before
        assert holder.kill() == -9
    assert lock.read_text() == record  # the dead owner's marker is still there ...
    add_and_check(root, lock, "after the holder died", lock_timeout=1.0)  # ... and is broken at once


def test_live_holder_that_releases_leaves_no_marker(seeded):
    root, lock = seeded
    holder = procs.spawn_writer("hold", str(root))
    reader = procs.LineReader(holder)
    try:
        procs.ready_pid(reader.readline(), holder, "HELD")
        holder.stdin.write(b"release\n")
        holder.stdin.flush()
        assert reader.readline() == "RELEASED"
        assert holder.wait(timeout=procs.WAIT_SECONDS) == 0
    finally:
        procs.kill_hard(holder)
        procs.finish(holder)
    assert not lock.exists()
    add_and_check(root, lock, "after release", lock_timeout=0.3)


def test_ownerless_marker_older_than_30_seconds_is_broken(seeded):
    root, lock = seeded
    write_marker(lock, b"", age_seconds=31)
    add_and_check(root, lock, "after an abandoned plugin lock", lock_timeout=1.0)


@pytest.mark.parametrize("age_seconds", [0, 29], ids=["fresh", "29s-old"])
def test_young_ownerless_marker_is_respected_and_nothing_changes(seeded, age_seconds):
    root, lock = seeded
    write_marker(lock, b"", age_seconds=age_seconds)
    before = procs.tree_snapshot(root)
    store = RuntimeStore(root, LIMITS, lock_timeout=0.3)
    started = time.monotonic()
    with pytest.raises(StoreBusy) as caught:
        store.mutate(add("must not land"))
    waited = time.monotonic() - started
    assert caught.value.code == "store-busy"
    assert caught.value.message == (
        f"{lock}: lock is held by another process (waited 0.3 s); if no mnemon process is running, remove the file"
    )
    assert caught.value.data == {"file": str(lock), "timeoutSeconds": 0.3}
    assert 0.3 <= waited < 5.0
    assert procs.tree_snapshot(root) == before  # marker kept, nothing written


def test_marker_cut_short_by_a_killed_writer_is_broken(seeded):
    """A record without its final newline (the writer died inside the write) proves no owner; filelock
    reclaims it once it has stayed unchanged for 2 s (MALFORMED_LOCK_AGE_THRESHOLD)."""
    root, lock = seeded
    record, _ = dead_owner_record()
    write_marker(lock, record.encode()[:-3])
    add_and_check(root, lock, "after a torn marker", lock_timeout=5.0)


# ------------------------------------------------------------------ one reused lock object, many threads


def test_threads_sharing_the_reused_lock_object_never_overlap(tmp_path):
    """fsio.file_lock reuses one lock object per marker path; each thread must still wait for the marker."""
    import threading

    from mnemon_ls import fsio

    lock_path, counter = tmp_path / ".x.lock", tmp_path / "n"
    counter.write_text("0")
    inside, overlaps, records = [0], [0], set()

    def work() -> None:
        for _ in range(100):
            with fsio.file_lock(lock_path):
                inside[0] += 1
                overlaps[0] += inside[0] > 1
                records.add(lock_path.read_text())
                counter.write_text(str(int(counter.read_text()) + 1))
                inside[0] -= 1

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert (counter.read_text(), overlaps[0]) == ("400", 0)
    assert not lock_path.exists()
    # Every hold published the complete owner record (pid first), written once.
    assert len(records) == 1 and next(iter(records)).split("\n")[0] == str(os.getpid())
