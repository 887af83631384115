"""A duplicate ``remember`` says what it did (real subprocesses, a real ``mnemon.db``, a real git repository).

1. It answered "nothing was written", yet the embedded store logs the duplicate as an oplog row
   (``diff-skip``, as the Mnemon CLI does: reference mnemon-cli.md 7.1 step 4), so the database changed. The
   row stays (``mnemon log`` parity); the answer now says only what is true: no new item was stored.
2. ``remember --for-branch`` of a fact already stored without a branch answered "Already remembered", and
   the branch asked for was dropped without a word. The fact is recalled on every branch (recall filters only
   items scoped to other branches), so nothing is needed, and the answer says so; the other way round (a fact
   stored for one branch, remembered for every branch) it says the wider scope was not stored.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pygit2
import pytest

from tests.cli.test_cli import Cli

FACT = "The staging cluster runs on Fridays"


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    made = Cli(tmp_path)
    made.ok("space", "create", "--name", "Project", "--description", "Decisions", "--active")
    return made


def oplog(cli: Cli) -> list[tuple[str, str]]:
    with sqlite3.connect(cli.data / "data" / "default" / "mnemon.db") as db:
        return db.execute("SELECT operation, detail FROM oplog ORDER BY id").fetchall()


def test_a_duplicate_says_no_new_item_was_stored_and_the_oplog_row_is_the_clis(cli: Cli) -> None:
    first = cli.ok_json("remember", FACT)
    again = cli.ok_json("remember", FACT)
    assert (again["status"], again["id"], again["duplicateOf"]) == ("skipped", first["id"], first["id"])
    assert again["message"] == f"Already remembered in Project as {first['id']}; no new item was stored."
    assert "branchScope" not in again  # same scope as asked: nothing to say about it
    assert oplog(cli) == [("remember", FACT), ("diff-skip", f"duplicate of {first['id']}")]
    text = cli.ok("remember", FACT)
    assert text == f"Already remembered in Project as {first['id']}; no new item was stored.\n"  # one verb, one id


def test_for_branch_of_a_fact_stored_for_every_branch_says_so(cli: Cli) -> None:
    first = cli.ok_json("remember", FACT)
    again = cli.ok_json("remember", FACT, "--for-branch")
    assert (again["status"], again["id"], again["branchScope"]) == ("skipped", first["id"], [])
    assert again["message"] == (f"Already remembered in Project as {first['id']} for every branch (it has no "
                                "branch scope, so branch main recalls it too); no new item was stored.")
    [hit] = cli.ok_json("recall", "staging cluster")["results"]
    assert hit["id"] == first["id"]


def test_a_fact_scoped_to_one_branch_is_not_widened_silently(cli: Cli) -> None:
    first = cli.ok_json("remember", FACT, "--for-branch")
    same = cli.ok_json("remember", FACT, "--for-branch")
    assert same["message"] == f"Already remembered in Project as {first['id']}; no new item was stored."
    wider = cli.ok_json("remember", FACT)
    assert (wider["status"], wider["branchScope"]) == ("skipped", ["main"])
    assert wider["message"] == (
        f"Already remembered in Project as {first['id']}, scoped to branch main only: it was not stored for "
        f"every branch (recall on other branches filters it out; forget {first['id']} and remember it again to "
        "widen it); no new item was stored.")
    repo = pygit2.Repository(str(cli.ws))
    repo.branches.local.create("other", repo.head.peel(pygit2.Commit))
    repo.checkout("refs/heads/other")
    other = cli.ok_json("remember", FACT, "--for-branch")
    assert other["message"] == (
        f"Already remembered in Project as {first['id']}, scoped to branch main: it was not stored for branch "
        f"other (recall there filters it out; forget {first['id']} and remember it again to change its scope); "
        "no new item was stored.")
    assert cli.ok_json("recall", "staging cluster")["hidden"]["otherBranch"] == 1  # what the message said
