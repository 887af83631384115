"""``mnemon-ls runtime add`` with a byte limit too small for the entry (real subprocesses, a real git workspace).
With ``--user-limit-bytes 8`` the refusal advised merging entries ("``runtime compact --merge 1 --as ...``") while
saying the entries left "may use at most 0 UTF-8 bytes": no merge could ever make room. Now a limit smaller than
the entry itself says so, naming the setting and the smallest limit that takes the entry; a limit that leaves the
compaction no byte for another entry says merging cannot help and carries no compaction plan. Nothing is written."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_cli import Cli
from tests.helpers import procs


def refused(cli: Cli, *args: str) -> tuple[str, dict]:
    """The stderr line of the refused ``runtime add ARGS`` and its ``--json`` error; asserts exit code 3 for both
    and that the storage root is unchanged."""
    before = procs.tree_snapshot(cli.data)
    done = cli.run("runtime", "add", *args)
    assert (done.returncode, done.stdout) == (3, ""), done.stderr
    scripted = cli.run("runtime", "add", *args, "--json")
    assert scripted.returncode == 3
    assert procs.tree_snapshot(cli.data) == before
    return done.stderr, json.loads(scripted.stdout)["error"]


def test_a_limit_smaller_than_the_entry_says_so_and_names_the_smallest_limit(tmp_path: Path) -> None:
    cli = Cli(tmp_path)
    cli.ok("runtime", "add", "--target", "user", "--content", "likes tea")
    cli.ok("runtime", "add", "--content", "alpha one")
    line, error = refused(cli, "--target", "user", "--content", "hello world", "--user-limit-bytes", "8")
    rule = ("user is over capacity: 24 of 8 UTF-8 bytes after this change (now 9); the limit is smaller than this "
            "one entry (11 UTF-8 bytes), so no removal or compaction makes room: shorten it, or raise "
            "runtimeMemory.userLimitBytes to at least 11 (24 to keep the entries there now)")
    assert line == f"mnemon-ls: error: {rule}\n"
    assert "at most 0" not in line and "--merge" not in line
    assert error["message"] == rule and "maintenance" not in error
    line, error = refused(cli, "--content", "hello world and more", "--memory-limit-bytes", "8")
    assert line == ("mnemon-ls: error: memory is over capacity: 33 of 8 UTF-8 bytes after this change (now 9); the "
                    "limit is smaller than this one entry (20 UTF-8 bytes), so no removal or compaction makes room: "
                    "shorten it, or raise runtimeMemory.memoryLimitBytes to at least 20 (33 to keep the entries "
                    "there now)\n")


def test_a_limit_that_leaves_a_compaction_no_room_says_merging_cannot_help(tmp_path: Path) -> None:
    cli = Cli(tmp_path)
    cli.ok("runtime", "add", "--target", "user", "--content", "likes tea")
    line, error = refused(cli, "--target", "user", "--content", "hello world!", "--user-limit-bytes", "20")
    rule = ("user is over capacity: 25 of 20 UTF-8 bytes after this change (now 9); merging entries cannot make "
            "room: a compaction keeps USER.md within 70% of its limit (14 UTF-8 bytes), and this entry alone (12 "
            "bytes) leaves none of it to another entry. Remove entries or shorten this one, or raise "
            "runtimeMemory.userLimitBytes to at least 25 to keep them all")
    assert line == f"mnemon-ls: error: {rule}\n"
    assert error["message"] == rule and "maintenance" not in error


def test_a_limit_with_room_to_merge_still_offers_the_compaction(tmp_path: Path) -> None:
    cli = Cli(tmp_path)
    cli.ok("runtime", "add", "--target", "user", "--content", "likes tea")
    line, error = refused(cli, "--target", "user", "--content", "x", "--user-limit-bytes", "12")
    assert "the entries left may use at most 3 UTF-8 bytes" in line
    assert error["maintenance"]["budgetBytes"] == 3
