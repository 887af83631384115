"""The command line words its errors as its ``--help`` does (real CLI subprocesses): a positional argument by its
name in the usage line (``SPACE``, ``SOURCE_ID``), never the operation's field (``spaceId``); a number out of
its range one way whoever checks it (``--limit: must be an integer in 1..50 (got 0)``); an item id that names
no item ``no-match``, exit 3, for ``space forget``, ``space related`` and ``space link`` alike; a stale or
malformed ``runtime compact --revision`` names ``--revision`` (exit 3 stale, exit 2 malformed); an argument no
command takes points at that command's ``--help``. Nothing refused changes a byte under the root."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.cli.test_error_fields import cli, workspace
from tests.helpers import procs


def project(tmp_path: Path) -> Path:
    """A workspace (:func:`workspace`) whose root has one active Memory Space, ``Project`` (id ``default``)."""
    ws = workspace(tmp_path)
    made = cli(ws, tmp_path, "space", "create", "--name", "Project", "--description", "facts", "--active")
    assert made.returncode == 0, made.stderr
    return ws


def test_a_positional_argument_is_named_as_the_help_shows_it(tmp_path: Path) -> None:
    ws = project(tmp_path)
    assert "SPACE" in cli(ws, tmp_path, "space", "update", "--help").stdout
    before = procs.tree_snapshot(tmp_path)
    update = cli(ws, tmp_path, "space", "update", "nosuch", "--name", "x")
    assert (update.returncode, update.stderr) == (2, "mnemon-ls: error: SPACE: is not a registered space id or name\n")
    scripted = json.loads(cli(ws, tmp_path, "space", "update", "nosuch", "--name", "x", "--json").stdout)["error"]
    assert (scripted["field"], scripted["param"]) == ("SPACE", "spaceId")  # param: the operation's field name
    merge = cli(ws, tmp_path, "space", "merge", "elsewhere", "--into", "Project")
    assert merge.stderr == "mnemon-ls: error: SOURCE elsewhere: is not a registered space id or name\n", merge.stderr
    assert procs.tree_snapshot(tmp_path) == before


def test_a_number_out_of_range_reads_the_same_whoever_checks_it(tmp_path: Path) -> None:
    ws = project(tmp_path)
    before = procs.tree_snapshot(tmp_path)
    for args, line in (
            (("recall", "deploy", "--limit", "0"), "--limit: must be an integer in 1..50 (got 0)"),
            (("doc", "search", "deploy", "--limit", "51"), "--limit: must be an integer in 1..50 (got 51)"),
            (("remember", "a fact", "--importance", "9"), "--importance: must be an integer in 1..5 (got 9)"),
            (("space", "related", "0123", "--space", "Project", "--depth", "6"),
             "--depth: must be an integer in 1..5 (got 6)"),
            (("runtime", "add", "--content", "parse splits", "--cite", "src/lib.py:0"),
             "--cite src/lib.py:0 (startLine): must be an integer in 1..1000000000 (got 0)")):
        done = cli(ws, tmp_path, *args)
        assert (done.returncode, done.stderr) == (2, f"mnemon-ls: error: {line}\n"), args
    assert procs.tree_snapshot(tmp_path) == before


def test_an_item_id_that_names_no_item_is_a_missing_match_for_every_command(tmp_path: Path) -> None:
    ws = project(tmp_path)
    made = cli(ws, tmp_path, "remember", "deploys go through staging", "--json")
    item = json.loads(made.stdout)["id"]
    before = procs.tree_snapshot(tmp_path)
    for args, line in (
            (("space", "forget", "nosuch", "--space", "Project"),
             "ITEM_ID: no active item with this id in the space (unknown or already forgotten) (got nosuch)"),
            (("space", "related", "nosuch", "--space", "Project"),
             "ITEM_ID: no active item with this id in the space (missing or forgotten) (got nosuch)"),
            (("space", "link", item, "nosuch", "--space", "Project"),
             "TARGET_ID: no active item with this id in the space (missing or forgotten) (got nosuch)"),
            (("space", "link", "nosuch", item, "--space", "Project"),
             "SOURCE_ID: no active item with this id in the space (missing or forgotten) (got nosuch)")):
        done = cli(ws, tmp_path, *args)
        assert (done.returncode, done.stderr) == (3, f"mnemon-ls: error: {line}\n"), args
        error = json.loads(cli(ws, tmp_path, *args, "--json").stdout)["error"]
        assert error["code"] == "no-match", args
    # an id holding a terminal escape, a bell and a right-to-left override is repeated escaped, on one line
    hostile = "bad\x1b[2J\x07id\u202e"
    done = cli(ws, tmp_path, "space", "forget", hostile, "--space", "Project")
    assert (done.returncode, done.stderr) == (3, "mnemon-ls: error: ITEM_ID: no active item with this id in the space "
                                                 "(unknown or already forgotten) (got bad\\x1b[2J\\x07id\\u202e)\n")
    assert procs.tree_snapshot(tmp_path) == before


def test_a_stale_or_malformed_runtime_revision_names_the_option(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    for content in ("deploys go through staging", "tests run in CI"):
        added = cli(ws, tmp_path, "runtime", "add", "--target", "user", "--content", content)
        assert added.returncode == 0, added.stderr
    [printed] = re.findall(r"revision ([0-9a-f]{12})\b", added.stdout)  # what a person is shown
    before = procs.tree_snapshot(tmp_path)
    for malformed_value in ("abc", printed[:11], printed.upper()):
        malformed = cli(ws, tmp_path, "runtime", "compact", "--drop", "1", "--revision", malformed_value)
        assert (malformed.returncode, malformed.stdout) == (2, "")
        assert malformed.stderr.startswith("mnemon-ls: error: --revision: must be a revision: 12 to 64 lowercase "
                                           "hex digits"), malformed.stderr
    short_stale = cli(ws, tmp_path, "runtime", "compact", "--drop", "1", "--revision", "0" * 12)
    assert (short_stale.returncode, short_stale.stderr) == (3, "mnemon-ls: error: --revision: runtime memory "
                                                               "changed since revision 000000000000; re-read and "
                                                               "retry\n")
    stale = cli(ws, tmp_path, "runtime", "compact", "--drop", "1", "--revision", "0" * 64)
    assert (stale.returncode, stale.stderr) == (3, "mnemon-ls: error: --revision: runtime memory changed since "
                                                   "revision 000000000000; re-read and retry\n")
    error = json.loads(cli(ws, tmp_path, "runtime", "compact", "--drop", "1", "--revision", "0" * 64,
                           "--json").stdout)["error"]
    assert (error["code"], error["field"], error["param"], error["expected"]) == (
        "revision-conflict", "--revision", "revision", "0" * 64)
    assert procs.tree_snapshot(tmp_path) == before
    # the 12 digits `runtime add` printed stand for the revision they begin: the compaction is fenced by it
    dropped = cli(ws, tmp_path, "runtime", "compact", "--target", "user", "--drop", "1", "--revision", printed)
    assert dropped.returncode == 0, dropped.stderr
    listed = json.loads(cli(ws, tmp_path, "runtime", "list", "--json").stdout)
    assert [e["content"] for e in listed["entries"] if e["target"] == "user"] == ["tests run in CI"]


def test_an_unrecognized_argument_points_at_the_help_of_its_command(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    for args, command in ((("space", "list", "--bogus"), "mnemon-ls space list"),
                          (("recall", "deploy", "--bogus", "x"), "mnemon-ls recall"),
                          (("wake", "--bogus"), "mnemon-ls wake")):
        done = cli(ws, tmp_path, *args)
        assert done.returncode == 2, args
        assert done.stderr.endswith(f"(see `{command} --help`)\n"), done.stderr
        assert "unrecognized arguments: --bogus" in done.stderr


def test_what_argparse_refuses_is_repeated_escaped_and_short(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    stray = cli(ws, tmp_path, "recall", "build", "a\x1b[2Jb\nline2")
    assert stray.returncode == 2 and stray.stderr.count("\n") == 1 and "\x1b" not in stray.stderr
    assert "unrecognized arguments: a\\x1b[2Jb\\nline2 (see `mnemon-ls recall --help`)" in stray.stderr
    huge = cli(ws, tmp_path, "recall", "build", "--limit", "9" * 100_000, "--json")
    assert huge.returncode == 2 and len(huge.stderr) < 700 and len(huge.stdout) < 700
    assert json.loads(huge.stdout)["error"]["code"] == "invalid-input"
