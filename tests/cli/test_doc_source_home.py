"""``mnemon-ls doc create --source PATH`` with a PATH starting ``~`` (real subprocesses, a real git workspace).
``--source ~nosuchuser/x`` (another user's home, which the shell leaves unexpanded when there is no such user) was
stored literally, as the workspace path ``~nosuchuser/x``, and ``~/x`` sent by a tool as the workspace path
``~/x``. A source path now takes the rule of every path argument (``settings.own_home_path``): ``~name`` is refused
naming the field and the rule, with nothing written; ``~/...`` is your home, then must be inside the workspace."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_cli import Cli
from tests.helpers import procs

SOURCE_RULE = ("must not start with ~name (another user's home): only ~ or ~/ (your own home) is expanded; give a "
               "path relative to the workspace (or an absolute one inside it) instead (got '~nosuchuser/x')")


def test_a_source_path_of_another_users_home_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    cli = Cli(tmp_path)
    cli.ok("doc", "create", "--title", "Notes", "--content", "A first document.")
    before = procs.tree_snapshot(cli.data)
    result = cli.run("doc", "create", "--title", "Deploy", "--content", "Deploy notes.", "--source", "~nosuchuser/x",
                     "--json")
    assert result.returncode == 2
    error = json.loads(result.stdout)["error"]
    assert (error["field"], error["param"], error["value"]) == ("--source", "sourcePaths[0]", "~nosuchuser/x")
    assert error["rule"] == SOURCE_RULE
    assert procs.tree_snapshot(cli.data) == before
    assert [d["title"] for d in cli.ok_json("doc", "list")["documents"]] == ["Notes"]


def test_the_refusal_of_another_users_home_says_what_a_source_path_may_be(tmp_path: Path) -> None:
    """The ``~name`` rule ended "give an absolute path instead", odd for a source path, which is a workspace path
    (relative, or absolute inside the workspace); it now names those (``settings.own_home_rule``), on create and
    update alike, with nothing written."""
    cli = Cli(tmp_path)
    made = cli.ok_json("doc", "create", "--title", "Notes", "--content", "A first document.")
    doc_id = (made.get("document") or made)["id"]
    before = procs.tree_snapshot(cli.data)
    for command in (("create", "--title", "Deploy", "--content", "Deploy notes."), ("update", doc_id)):
        result = cli.run("doc", *command, "--source", "~nosuchuser/x")
        assert result.returncode == 2, result.stdout
        assert result.stderr == f"mnemon-ls: error: --source ~nosuchuser/x: {SOURCE_RULE}\n", command
    assert procs.tree_snapshot(cli.data) == before


def test_a_source_path_under_your_home_is_the_workspace_file_it_names(tmp_path: Path) -> None:
    cli = Cli(tmp_path)
    home = {"HOME": str(cli.tmp)}  # the workspace is ~/ws
    made = cli.run("doc", "create", "--title", "Deploy", "--content", "Deploy notes.", "--source", "~/ws/deploy.md",
                   "--json", env=home)
    assert made.returncode == 0, made.stderr
    document = json.loads(made.stdout)
    assert (document.get("document") or document)["sourcePaths"] == ["deploy.md"]
    outside = cli.run("doc", "create", "--title", "Other", "--content", "Other notes.", "--source", "~/x.md", env=home)
    assert outside.returncode == 2 and "must stay inside the workspace" in outside.stderr
    assert "(got '~/x.md'" in outside.stderr
