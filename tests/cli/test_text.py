"""The CLI prints text a person reads unless ``--json``: ``space status|reindex|merge``, ``recall`` with
branch-hidden items, ``doctor`` without a workspace. Each is checked line by line against the data the
same command prints with ``--json`` (real subprocesses, real SQLite stores, a real git repository)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pygit2
import pytest

from tests.cli.test_cli import Cli


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path)


def no_data_syntax(text: str) -> None:
    """Neither JSON nor a Python repr: no braces, no quoted keys."""
    assert "{" not in text and "}" not in text and not re.search(r"['\"]\w+['\"]:", text), text


def test_space_status_reindex_and_merge_print_text(cli: Cli) -> None:
    cli.ok("space", "create", "--name", "Project", "--description", "Decisions", "--active")
    cli.ok("remember", "We chose SQLite for the side index")
    target = cli.ok_json("space", "create", "--name", "Archive", "--description", "Old", "--active")["id"]

    status = cli.ok("space", "status", "default")
    data = cli.ok_json("space", "status", "default")
    no_data_syntax(status)
    lines = status.splitlines()
    # The provider as `space list`, `provider list` and `--provider` name it (was "Mnemon" here, the id there).
    assert lines[:4] == ["default  Project  (active, mnemon-native)", "  Decisions", "  items: 1 (0 deleted), links: 0",
                         "  categories: general 1"]
    assert lines[4] == f"  store: {data['status']['db_path']} ({data['status']['db_size_bytes']} bytes)"
    assert lines[5].startswith(f"  index: {data['status']['index']['path']} (1 item, ")
    # The semantic block of the JSON has its line too (the suite runs with MNEMON_SEMANTIC=off).
    # The actual reason, not a list of three possible ones.
    assert data["status"]["semantic"] == {"state": "off", "reason": "MNEMON_SEMANTIC=off is set"}
    assert lines[6] == "  semantic: off, recall is keyword-only (MNEMON_SEMANTIC=off is set)"
    listed = cli.ok("space", "list").splitlines()
    assert listed[0] == "* default  Project  (mnemon-native)" and listed[-1] == "2 spaces, 2 active (* marks them)"

    reindexed = cli.ok("space", "reindex", "default")
    assert re.fullmatch(r"reindexed: 1 item in \d+(\.\d+)? s\n", reindexed), reindexed

    merged = cli.ok("space", "merge", "default", "--into", target)
    assert merged.splitlines() == [f"merge into {target}: committed",
                                   "  default: 1 item imported, 0 already there, of 1; committed (deactivated)"]


def remember_on_main_then_leave(cli: Cli) -> None:
    """A space with one fact scoped to ``main`` (``The staging cluster runs on Fridays``), then a checkout of a
    new branch ``other``, where branch scope hides it."""
    cli.ok("space", "create", "--name", "Project", "--description", "Decisions", "--active")
    cli.ok("remember", "The staging cluster runs on Fridays", "--for-branch")
    repo = pygit2.Repository(str(cli.ws))
    repo.branches.local.create("other", repo.head.peel(pygit2.Commit))
    repo.checkout("refs/heads/other")


def test_recall_says_what_branch_scope_hid(cli: Cli) -> None:
    remember_on_main_then_leave(cli)
    out = cli.ok("recall", "staging cluster")
    no_data_syntax(out)
    assert "hidden: 1 item scoped to another git branch" in out.splitlines()
    assert json.loads(cli.ok("recall", "staging cluster", "--json"))["hidden"] == {"otherBranch": 1, "detachedHead": 0}


def test_doctor_outside_a_workspace_says_none(cli: Cli, tmp_path: Path) -> None:
    outside = tmp_path / "plain"
    outside.mkdir()
    result = cli.run("doctor", cwd=outside)
    assert "workspace: none" in result.stdout.splitlines() and "None" not in result.stdout


def test_a_terminal_gets_stored_control_characters_as_escapes(cli: Cli) -> None:
    """The attack pass stored ``ESC[31m`` and a right-to-left override through MCP; ``recall`` printed them raw
    into the terminal. ``remember`` now refuses control characters (``errors.control_rule``), so the content is
    stored as older versions let it be (written into the space's database). On a terminal (a real
    pseudo-terminal here) it is printed with its escapes; a pipe gets the stored text unchanged."""
    import os
    import pty
    import sqlite3
    import subprocess

    from tests.cli.test_cli import MNEMON_LS

    stored = "\x1b[31mred alert\x1b[0m \u202e reversed\rover"
    cli.ok("space", "create", "--name", "Project", "--description", "Decisions", "--active")
    cli.ok("remember", "red alert reversed")
    with sqlite3.connect(next(cli.data.glob("data/*/mnemon.db"))) as connection:  # old data
        connection.execute("UPDATE insights SET content = ?", (stored,))
    piped = cli.ok("recall", "red alert")  # a pipe: unchanged (scripts read what was stored) but for the line break:
    # CR ends a line (text mode reads it as LF), so what follows it is a further line of the content, after "| "
    assert "\x1b[31mred alert\x1b[0m \u202e reversed\n      | over\n" in piped
    master, slave = pty.openpty()
    try:
        child = subprocess.Popen([MNEMON_LS, "recall", "red alert", *Cli.SCOPE], cwd=cli.ws, env=cli.env,
                                 stdin=subprocess.DEVNULL, stdout=slave, stderr=slave)
        os.close(slave)
        slave = -1
        chunks = []
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
        assert child.wait(timeout=60) == 0
    finally:
        os.close(master)
        if slave != -1:
            os.close(slave)
    shown = b"".join(chunks).decode("utf-8")
    assert "\\x1b[31mred alert\\x1b[0m \\u202e reversed\r\n      | over\r\n" in shown
    assert "\x1b" not in shown and "\u202e" not in shown and "\r" not in shown.replace("\r\n", "")


def test_generated_counts_and_capability_lists_read_as_english() -> None:
    from mnemon_ls.ops.providers import provider_line as _line
    from mnemon_ls.ops.humantext import semantic_status_line

    view = {"providerId": "holographic", "enabled": True, "configured": True, "installed": True, "spaces": 1,
            "capabilities": {"related": False, "link": False, "merge": False, "graph": True}}
    assert _line(view).endswith("; 1 space; cannot walk related items, link items or merge spaces")
    one = {"state": "ready", "total": 2, "embedded": 1, "model": "m"}
    assert semantic_status_line(one, "default") == (
        "  semantic: 1 of 2 items embedded with m; the other one is found by keyword only "
        "(`mnemon-ls space embed default` embeds it now)")
    three = {"state": "ready", "total": 4, "embedded": 1, "model": "m"}
    assert "; the other 3 are found by keyword only (`mnemon-ls space embed default` embeds them now)" in (
        semantic_status_line(three, "default"))


def test_off_reason_names_the_switch_that_turned_semantic_recall_off() -> None:
    from mnemon_ls.semantic import off_reason
    from mnemon_ls.settings import load_settings

    auto = load_settings({}).semantic
    assert off_reason(auto, {"MNEMON_SEMANTIC": "off"}) == "MNEMON_SEMANTIC=off is set"
    assert off_reason(auto, {}) is None
    assert off_reason(load_settings({"semantic": {"enabled": False}}).semantic, {}) == "semantic.enabled is false"


def test_a_remember_that_activates_its_space_says_what_that_changed_and_how_to_undo_it(cli: Cli) -> None:
    cli.ok("space", "create", "--name", "Default", "--description", "General facts", "--active")
    cli.ok("space", "create", "--name", "Team", "--description", "What the team agreed")
    out = cli.ok("remember", "--space", "Team", "We deploy on Fridays").splitlines()
    # one verb: the status is not put before the message ("committed: Remembered in Team." said it twice)
    assert re.fullmatch(r"Remembered in Team \(id [0-9a-f-]{36}\)\.", out[0]), out[0]
    assert out[1:] == [
        "Team was inactive: this write made it active. 2 spaces are active now (Default, Team), so `mnemon-ls "
        "remember` without --space is refused until only one is: name the space (--space Team), or make Team "
        "inactive again with `mnemon-ls space deactivate Team`."]
    # What it said: a plain remember is refused now ...
    refused = cli.run("remember", "A plain fact")
    assert refused.returncode == 2 and "2 spaces are active (Default, Team)" in refused.stderr, refused.stderr
    # ... and the command it named makes it work again, into the one active space.
    cli.ok("space", "deactivate", "Team")
    assert cli.ok("remember", "A plain fact").startswith("Remembered in Default (id ")
    again = cli.ok("remember", "A plain fact").strip()
    assert re.fullmatch(r"Already remembered in Default as [0-9a-f-]{36}; no new item was stored\.", again), again
    # A name with a space is quoted for the shell; the only active space is said to take plain writes.
    cli.ok("space", "deactivate", "Default")
    cli.ok("space", "create", "--name", "Ops notes", "--description", "Runbooks")
    out = cli.ok("remember", "--space", "Ops notes", "Restart the queue first").splitlines()
    assert out[1:] == [
        "Ops notes was inactive: this write made it active. It is the only active space, so `mnemon-ls remember` "
        "without --space now writes into it; `mnemon-ls space deactivate 'Ops notes'` makes it inactive again."]
    data = cli.ok_json("remember", "--space", "Team", "We ship on Mondays")
    assert data["activated"] is True and [s["name"] for s in data["activeSpaces"]] == ["Team", "Ops notes"]
