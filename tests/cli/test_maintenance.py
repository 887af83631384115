"""``mnemon-ls runtime compact``: the USER.md plan of a failed add and its compaction, in a subprocess.

Uses :class:`tests.cli.test_cli.Cli` (HOME and MNEMON_DATA_DIR inside tmp_path, a real repository as cwd).
"""

from __future__ import annotations

import json

import pytest

from tests.helpers import procs
from tests.cli.test_cli import Cli

SEP = "\n\u00a7\n"
LIMIT = ("--user-limit-bytes", "120")
ENTRIES = [("prefers tabs over spaces in Go", "normal"), ("never force-push to main, ever", "critical"),
           ("likes short commit subject li", "low")]


@pytest.fixture
def cli(tmp_path):
    return Cli(tmp_path)


def _fill(cli: Cli) -> dict:
    for content, importance in ENTRIES:
        assert cli.run("runtime", "add", "--target", "user", "--content", content, "--importance", importance,
                       *LIMIT).returncode == 0
    failed = cli.run("runtime", "add", "--target", "user", "--content", "works in UTC+2 hours", *LIMIT, "--json")
    assert failed.returncode == 3
    error = json.loads(failed.stdout)["error"]
    assert error["code"] == "runtime-capacity"
    assert "compact USER.md: data.maintenance holds the plan (3 numbered entries, budget 60 bytes)" in error["message"]
    assert failed.stderr.startswith("mnemon-ls: error: USER.md is full: this change needs 121 of 120 UTF-8 bytes "
                                    "(now 97). Make room, then run this command again: `mnemon-ls runtime list "
                                    "--target user` numbers its 3 entries; `mnemon-ls runtime compact --target user "
                                    "--merge 1,2 --as \"one shorter text\" --drop 3` merges entries 1 and 2 into that "
                                    "text and drops entry 3 (the entries left may use at most 60 UTF-8 bytes")
    assert "data.maintenance" not in failed.stderr and "mnemon/runtime/compact" not in failed.stderr
    return error["maintenance"]


def test_plan_then_compact_with_a_plan_file(cli, tmp_path):
    plan = _fill(cli)
    assert [e["index"] for e in plan["entries"]] == [1, 2, 3] and plan["budgetBytes"] == 60
    request = {"revision": plan["revision"], "target": "user", "pending": plan["pending"], "entries": [
        {"content": "Go: tabs; never force-push main", "importance": "critical", "sourceIndexes": [1, 2]},
        {"content": "short commit subjects", "importance": "low", "sourceIndexes": [3]}]}
    (tmp_path / "plan.json").write_text(json.dumps(request))
    done = cli.run("runtime", "compact", "--plan", str(tmp_path / "plan.json"), *LIMIT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Entry added. Compacted user: merged 1, 2 into one entry; rewrote 3; 2 entries remain "
                                  "(were 3). USER.md: 3 entries, ")
    assert (cli.runtime / "USER.md").read_text() == SEP.join(
        ["Go: tabs; never force-push main", "short commit subjects", "works in UTC+2 hours"]) + "\n"


def test_compact_entries_from_stdin(cli):
    plan = _fill(cli)
    entries = [{"content": "Go tabs, no force-push, short subjects", "importance": "critical",
                "sourceIndexes": [1, 2, 3]}]
    done = cli.run("runtime", "compact", "--entries", "-", "--revision", plan["revision"], "--pending",
                   json.dumps(plan["pending"]), *LIMIT, "--json", stdin=json.dumps(entries))
    assert done.returncode == 0, done.stderr
    receipt = json.loads(done.stdout)
    assert receipt["maintenance"]["kind"] == "local-compaction" and len(receipt["maintenance"]["archived"]) == 3
    assert receipt["entryCount"] == 2


def test_bad_compaction_exits_2_names_the_entry_and_changes_nothing(cli):
    plan = _fill(cli)
    before = procs.tree_snapshot(cli.tmp)
    entries = [{"content": "merged", "importance": "normal", "sourceIndexes": [1, 2]},
               {"content": "low one", "importance": "low", "sourceIndexes": [3]}]
    done = cli.run("runtime", "compact", "--entries", "-", "--revision", plan["revision"], "--pending",
                   json.dumps(plan["pending"]), *LIMIT, stdin=json.dumps(entries))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == ("mnemon-ls: error: --entries (entries[0].importance): lowers importance: source index 2 is "
                           "critical, this entry normal\n")
    assert procs.tree_snapshot(cli.tmp) == before


def test_stale_plan_exits_3(cli):
    plan = _fill(cli)
    assert cli.run("runtime", "remove", "--target", "user", "--old-text", "short commit", *LIMIT).returncode == 0
    entries = [{"content": "all three", "importance": "critical", "sourceIndexes": [1, 2, 3]}]
    before = procs.tree_snapshot(cli.tmp)
    done = cli.run("runtime", "compact", "--entries", "-", "--revision", plan["revision"], *LIMIT,
                   stdin=json.dumps(entries))
    assert done.returncode == 3 and "runtime memory changed since revision" in done.stderr
    assert procs.tree_snapshot(cli.tmp) == before


def test_entries_without_revision_is_refused(cli):
    done = cli.run("runtime", "compact", "--entries", "-", stdin="[]")
    assert (done.returncode, done.stderr) == (2, "mnemon-ls: error: --revision: is required with entries (the "
                                                 "plan's revision: data.maintenance.revision)\n")
