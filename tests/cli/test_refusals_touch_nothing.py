"""A refusal or a no-op leaves the storage directories as they were, their mtimes included: a no-op ``doc update``
(the same text), a ``doc update`` of an unknown 8-character id and ``runtime compact --drop 5`` of an entry that
does not exist are answered from a reading without the lock, so they create (and remove) no lock marker (each
did, and the directory's mtime moved though nothing changed). The real CLI (:class:`tests.cli.test_cli.Cli`) on a
real git repository; the directories' mtimes are pinned to a past instant first, so a change cannot hide in the
file system's timestamp granularity."""

from __future__ import annotations

import os
from pathlib import Path

from tests.cli.test_cli import Cli

PAST_NS = 1_000_000_000 * 1_000_000_000  # 2001-09-09


def pinned_directories(root: Path) -> dict[str, tuple[list[str], int]]:
    """Pin every directory under ``root`` (inclusive) to :data:`PAST_NS`, then: relative path -> (sorted names,
    mtime_ns)."""
    for current, _dirs, _files in os.walk(root):
        os.utime(current, ns=(PAST_NS, PAST_NS))
    return directories(root)


def directories(root: Path) -> dict[str, tuple[list[str], int]]:
    """Every directory under ``root`` (inclusive): relative path -> (sorted names, mtime_ns)."""
    return {os.path.relpath(current, root): (sorted(os.listdir(current)), os.stat(current).st_mtime_ns)
            for current, _dirs, _files in os.walk(root)}


def test_doc_update_no_op_and_unknown_id_leave_the_directories_alone(tmp_path: Path) -> None:
    cli = Cli(tmp_path)
    doc_id = cli.ok_json("doc", "create", "--title", "Release plan", "--content", "Tag, build.", "--json")[
        "document"]["id"]
    before = pinned_directories(cli.data)
    assert cli.ok("doc", "update", doc_id, "--content", "Tag, build.") == (
        f"Document unchanged: Release plan ({doc_id}): no change; revision 1 kept\n")
    assert directories(cli.data) == before
    unknown = "0123abcd" if not doc_id.startswith("0123abcd") else "fedc9876"
    done = cli.run("doc", "update", unknown, "--content", "Tag, build, publish.")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f'mnemon-ls: error: id: document "{unknown}" does not exist\n'
    assert directories(cli.data) == before
    # the write still happens (under the lock) when something changes
    assert cli.ok("doc", "update", doc_id[:8], "--content", "Tag, build, publish.").startswith(
        f"Document updated: Release plan ({doc_id}), revision 2, ")
    assert directories(cli.data) != before


def test_compact_drop_of_a_missing_entry_leaves_the_directories_alone(tmp_path: Path) -> None:
    cli = Cli(tmp_path)
    for n in (1, 2):
        cli.ok("runtime", "add", "--target", "memory", "--content", f"fact number {n}")
    before = pinned_directories(cli.data)
    done = cli.run("runtime", "compact", "--target", "memory", "--drop", "5")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == "mnemon-ls: error: --drop 5: entry 5 does not exist: MEMORY.md has entries 1..2\n"
    assert directories(cli.data) == before
    assert cli.ok("runtime", "compact", "--target", "memory", "--drop", "2").startswith(
        "Compacted memory: dropped 2; 1 entry remains (were 2).")
    assert directories(cli.data) != before
