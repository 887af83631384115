"""A full USER.md a person can resolve from the command line (issue 23 item 9): the error says which commands
to run (not protocol terms), ``runtime list --target user`` numbers the entries as the plan does, and
``runtime compact --merge N,M --as TEXT --drop N`` makes room, checked by the Host's rules; the receipt says
what changed. Real ``mnemon-ls`` subprocesses (:class:`tests.cli.test_cli.Cli`) on a real repository.
"""

from __future__ import annotations

import json
import re

import pytest

from tests.helpers import procs
from tests.cli.test_cli import Cli

SEP = "\n\u00a7\n"
LIMIT = ("--user-limit-bytes", "160")
ENTRIES = [("prefers tabs over spaces in Go", "normal"), ("never force-push to main, ever", "critical"),
           ("likes short commit subject li", "low"), ("reads diffs before the summary", "normal")]
NEW = "works in UTC+2 hours, answers late in the day"


@pytest.fixture
def cli(tmp_path):
    return Cli(tmp_path)


def fill(cli: Cli, *extra: str) -> dict:
    """Four entries (131 of 160 bytes), then an add that does not fit; returns the error's plan."""
    for content, importance in ENTRIES:
        assert cli.run("runtime", "add", "--target", "user", "--content", content, "--importance", importance,
                       *LIMIT, *extra).returncode == 0
    failed = cli.run("runtime", "add", "--target", "user", "--content", NEW, *LIMIT, *extra, "--json")
    assert failed.returncode == 3
    return json.loads(failed.stdout)["error"]["maintenance"]


def test_a_full_user_md_says_the_commands_and_the_list_numbers_the_plan(cli):
    plan = fill(cli)
    failed = cli.run("runtime", "add", "--target", "user", "--content", NEW, *LIMIT)
    assert failed.returncode == 3 and failed.stdout == ""
    assert failed.stderr == (
        "mnemon-ls: error: USER.md is full: this change needs 180 of 160 UTF-8 bytes (now 131). Make room, then run "
        "this command again: `mnemon-ls runtime list --target user` numbers its 4 entries; `mnemon-ls runtime "
        "compact --target user --merge 1,2 --as \"one shorter text\" --drop 3` merges entries 1 and 2 into that text "
        "and drops entry 3 (the entries left may use at most 63 UTF-8 bytes for this change to fit; what leaves is "
        "kept word for word in runtime/archived/). Or remove an entry (`mnemon-ls runtime remove --target user "
        "--old-text TEXT`) or raise the limit (--user-limit-bytes, setting runtimeMemory.userLimitBytes).\n")
    # the numbers a person reads in `runtime list` are the plan's
    listed = cli.run("runtime", "list", "--target", "user", *LIMIT).stdout.splitlines()[1:]
    numbered = [re.fullmatch(r"  (\d+)\. \[[^]]*\] (.*)", line).groups() for line in listed]
    assert [(int(n), text) for n, text in numbered] == [(e["index"], e["content"]) for e in plan["entries"]]
    as_json = json.loads(cli.run("runtime", "list", "--target", "user", "--json", *LIMIT).stdout)
    assert [e["content"] for e in as_json["entries"]] == [e["content"] for e in plan["entries"]]


def test_merge_and_drop_make_room_and_the_receipt_says_what_changed(cli):
    fill(cli)
    done = cli.run("runtime", "compact", "--merge", "1,2", "--as", "Go tabs; never force-push main", "--drop", "3",
                   *LIMIT)
    assert done.returncode == 0, done.stderr
    archive = cli.runtime / "archived"
    assert done.stdout.splitlines() == [
        f"Compacted user: merged 1, 2 into one entry; dropped 3; 2 entries remain (were 4). USER.md: 2 entries, "
        f"64/160 UTF-8 bytes; revision "
        f"{json.loads(cli.run('runtime', 'list', '--json', *LIMIT).stdout)['revision'][:12]}; 3 replaced or dropped "
        f"entries kept in {archive}",
        "  merged 1, 2 into: Go tabs; never force-push main",
        "  dropped 3",
        "  unchanged: 4",
        "  USER.md: 131 -> 64 of 160 UTF-8 bytes"]
    assert (cli.runtime / "USER.md").read_text() == SEP.join(
        ["Go tabs; never force-push main", "reads diffs before the summary"]) + "\n"
    # the merged importance is the highest of its entries; what left is kept word for word
    listed = json.loads(cli.run("runtime", "list", "--target", "user", "--json", *LIMIT).stdout)["entries"]
    assert listed[0]["importance"] == "critical"
    rows = [json.loads(line) for line in (archive / "memories.jsonl").read_text().splitlines()]
    assert [(r["content"], r["importance"]) for r in rows] == [(c, i) for c, i in ENTRIES[:3]]
    # now the change fits
    assert cli.run("runtime", "add", "--target", "user", "--content", NEW, *LIMIT).returncode == 0


def test_the_receipt_counts_one_kept_entry_in_the_singular(cli):
    fill(cli)
    done = cli.run("runtime", "compact", "--drop", "3", *LIMIT)
    assert done.returncode == 0, done.stderr
    revision = json.loads(cli.run("runtime", "list", "--json", *LIMIT).stdout)["revision"][:12]
    assert done.stdout.splitlines()[0] == (
        f"Compacted user: dropped 3; 3 entries remain (were 4). USER.md: 3 entries, 98/160 UTF-8 bytes; revision "
        f"{revision}; 1 replaced or dropped entry kept in {cli.runtime / 'archived'}")


def test_the_receipt_as_json_carries_the_changes(cli):
    fill(cli)
    done = cli.run("runtime", "compact", "--merge", "2,4", "--as", "no force-push; diffs first", "--importance",
                   "critical", "--merge", "1", "--as", "Go: tabs", "--json", *LIMIT)
    assert done.returncode == 0, done.stderr
    maintenance = json.loads(done.stdout)["maintenance"]
    assert maintenance["entries"] == [
        {"content": "Go: tabs", "importance": "normal", "sourceIndexes": [1]},
        {"content": "no force-push; diffs first", "importance": "critical", "sourceIndexes": [2, 4]},
        {"content": "likes short commit subject li", "importance": "low", "sourceIndexes": [3]}]
    assert (maintenance["dropped"], maintenance["bytesBefore"], maintenance["bytesAfter"]) == ([], 131, 71)


def test_a_revision_from_runtime_list_fences_the_compaction_with_user_md_in_the_global_root(cli):
    split = ("--scope", "workspaces", "--runtime-user-scope", "global")  # USER.md and MEMORY.md in two stores
    assert cli.run("runtime", "add", "--content", "a MEMORY.md fact", *LIMIT, *split).returncode == 0
    plan = fill(cli, *split)
    listed = json.loads(cli.run("runtime", "list", "--json", *LIMIT, *split).stdout)
    assert listed["revision"] != plan["revision"]  # the list's revision covers both stores, the plan's USER.md's
    done = cli.run("runtime", "compact", "--drop", "3", "--revision", listed["revision"], *LIMIT, *split)
    assert done.returncode == 0, done.stderr
    assert "  dropped 3" in done.stdout.splitlines()
    # a change of USER.md since that listing: the numbers may mean other entries now
    assert cli.run("runtime", "remove", "--target", "user", "--old-text", "reads diffs", *LIMIT, *split).returncode == 0
    before = procs.tree_snapshot(cli.tmp)
    stale = cli.run("runtime", "compact", "--drop", "1", "--revision", listed["revision"], *LIMIT, *split)
    assert (stale.returncode, stale.stdout) == (3, "")
    assert stale.stderr.startswith("mnemon-ls: error: --revision: runtime memory changed since revision ")
    assert procs.tree_snapshot(cli.tmp) == before


REFUSED = {
    "as before merge": (["--as", "x", "--merge", "1,2"], "--as must follow --merge (it belongs to the --merge before "
                                                         "it) (see `mnemon-ls runtime compact --help`)"),
    "merge without as": (["--merge", "1,2"], "--as: each --merge needs one --as after it (missing after --merge 1,2)"),
    "two as for one merge": (["--merge", "1,2", "--as", "x", "--as", "y"],
                             "--as was given twice for one --merge (see `mnemon-ls runtime compact --help`)"),
    "not numbers": (["--merge", "1,two", "--as", "x"], "--merge: must be entry numbers like 2,3 (as `mnemon-ls "
                                                       "runtime list` prints them; got '1,two')"),
    "out of range": (["--merge", "1,7", "--as", "x"], "--merge 1,7: entry 7 does not exist: USER.md has entries 1..4"),
    "drop out of range": (["--drop", "2,9"], "--drop 2,9: entry 9 does not exist: USER.md has entries 1..4"),
    "merged and dropped": (["--merge", "1,2", "--as", "x", "--drop", "2"],
                           "--drop 2: entry 2 is both merged and dropped; each entry is merged or dropped once"),
    "lowers importance": (["--merge", "1,2", "--as", "x", "--importance", "low"],
                          "--importance of --merge 1,2: lowers importance: entry 2 is critical, this merge low"),
    "section sign": (["--merge", "1,2", "--as", "a \u00a7 b"],
                     "--as of --merge 1,2: must not contain '\u00a7' (U+00A7), the reserved entry delimiter"),
    "over the budget": (["--merge", "1,2", "--as", "x" * 60],
                        "entries: USER.md would still use 127 UTF-8 bytes for its entries, over the budget of 112 "
                        "(70% of the 160-byte limit, minus the pending change); merge, shorten or drop more entries"),
    "nothing": ([], "nothing to compact: give --merge N,M --as TEXT and/or --drop N (entry numbers as `mnemon-ls "
                    "runtime list --target user` prints them), or an assistant's rewrite with --plan FILE or --entries "
                    "FILE --revision REVISION"),
    "with entries": (["--drop", "1", "--entries", "-", "--revision", "r"],
                     "--drop: cannot be combined with entries (entries rewrites the whole plan; merge and drop name "
                     "only the changes)"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_refused_compaction_names_the_option_and_changes_nothing(cli, name):
    fill(cli)
    argv, message = REFUSED[name]
    before = procs.tree_snapshot(cli.tmp)
    done = cli.run("runtime", "compact", *argv, *LIMIT, stdin="[]")
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"mnemon-ls: error: {message}\n")
    assert procs.tree_snapshot(cli.tmp) == before
