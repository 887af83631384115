"""The uncontended lock path (:mod:`mnemon_ls.markerlock`) behind :func:`mnemon_ls.fsio.file_lock`.

Real marker files in a temp directory; filelock's own parser reads what was published. Contention between
processes, dead owners and the 30 s rule are in ``tests/runtime/test_concurrency.py`` and
``tests/runtime/test_crash.py``.
"""

from __future__ import annotations

import os
from pathlib import Path

from filelock._identity import host_name
from filelock._soft import parse_lock_holder

from mnemon_ls import fsio


def leftovers(directory: Path) -> list[str]:
    return sorted(name for name in os.listdir(directory) if name.endswith(".publish"))


def test_uncontended_hold_publishes_filelocks_record_and_removes_it(tmp_path):
    lock = tmp_path / "d" / ".x.lock"
    with fsio.file_lock(lock) as contended:  # creates the directory too
        assert contended is False
        holder = parse_lock_holder(lock.read_text())
        assert holder is not None and (holder.pid, holder.hostname) == (os.getpid(), host_name())
        assert leftovers(lock.parent) == []
        assert (lock.stat().st_mode & 0o777) == fsio.FILE_MODE
    assert not lock.exists()
    assert leftovers(lock.parent) == []


def test_hold_is_reentrant_within_a_thread(tmp_path):
    lock = tmp_path / ".x.lock"
    with fsio.file_lock(lock, timeout=0.2):
        marker = lock.read_bytes()
        with fsio.file_lock(lock, timeout=0.2) as contended:  # would time out (StoreBusy) if not reentrant
            assert contended is False
        assert lock.read_bytes() == marker  # the inner exit leaves the outer hold's marker
    assert not lock.exists()


def test_a_marker_put_in_place_of_ours_is_not_removed(tmp_path):
    """Another process that broke our marker (the 30 s rule) and published its own keeps it when we release."""
    lock = tmp_path / ".x.lock"
    with fsio.file_lock(lock):
        lock.unlink()
        lock.write_text("4242\nelsewhere\n")
    assert lock.read_text() == "4242\nelsewhere\n"


def test_a_dead_owners_marker_is_broken_and_reported_as_contended(tmp_path):
    lock = tmp_path / ".x.lock"
    record = f"{2 ** 22 + 11}\n{host_name()}\n"  # a pid above the default pid_max: no such process
    lock.write_text(record)
    with fsio.file_lock(lock, timeout=1.0) as contended:
        assert contended is True
        holder = parse_lock_holder(lock.read_text())
        assert holder is not None and holder.pid == os.getpid()
    assert not lock.exists()


def test_a_forked_child_leaving_the_block_keeps_the_parents_marker(tmp_path):
    lock = tmp_path / ".x.lock"
    status = tmp_path / "child"

    def body() -> int:
        with fsio.file_lock(lock):
            child = os.fork()
            if child == 0:
                return 0  # the child leaves the block: its release must not touch the parent's marker
            _, code = os.waitpid(child, 0)
            assert code == 0 and status.read_text() == "left"
            assert parse_lock_holder(lock.read_text()).pid == os.getpid()
        return child

    if body() == 0:
        status.write_text("left")
        os._exit(0)
    assert not lock.exists()
