"""Control characters in Memory Space content: ``remember`` refuses them (but newline and tab) with the rule
Runtime entries follow (``errors.control_rule``); a document id typed with one is echoed escaped. Real CLI
subprocesses in a temporary git repository."""

from __future__ import annotations

import json

import pytest

from tests.cli.test_cli import Cli, cli  # noqa: F401  (the fixture)


@pytest.mark.parametrize("content, code", [("red \x1b[31malert", "001B"), ("over\rwrite", "000D"), ("n\x85el", "0085")])
def test_remember_refuses_a_control_character(cli: Cli, content: str, code: str) -> None:  # noqa: F811
    cli.ok("space", "create", "--name", "notes", "--description", "project notes")
    done = cli.run("remember", "--space", "notes", content)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == ("mnemon-ls: error: content: must not contain control characters other than newline and "
                           f"tab (found U+{code}); they would reach the terminal raw when recalled\n")
    if content.startswith("red"):  # the same rule, worded for Runtime (which makes a CR one space first)
        runtime = cli.run("runtime", "add", "--content", content)
        assert runtime.returncode == 2
        assert runtime.stderr == ("mnemon-ls: error: --content: must not contain control characters (found U+001B); "
                                  "they would be written raw into USER.md / MEMORY.md and the wake snapshot\n")


def test_remember_keeps_newline_and_tab(cli: Cli) -> None:  # noqa: F811
    # old data holding control characters reaches a terminal escaped: tests/cli/test_text.py (a pseudo-terminal);
    # a content's further lines follow an indent and "| " (tests/cli/test_recall_line_forgery.py)
    cli.ok("space", "create", "--name", "notes", "--description", "project notes")
    cli.ok("remember", "--space", "notes", "Deploy freeze\non\tFridays")
    data = json.loads(cli.ok("recall", "Deploy", "--mode", "basic", "--json"))
    assert cli.ok("recall", "Deploy", "--mode", "basic").splitlines() == [
        f"   - unknown {data['results'][0]['id'][:8]} notes: Deploy freeze", "      | on\tFridays", "1 result(s)"]
    assert data["results"][0]["content"] == "Deploy freeze\non\tFridays"


def test_a_document_id_with_a_control_character_is_echoed_escaped(cli: Cli) -> None:  # noqa: F811
    done = cli.run("doc", "get", "abc\x1b[31mred")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == 'mnemon-ls: error: id: document "abc\\x1b[31mred" does not exist\n'
    error = json.loads(cli.run("doc", "get", "abc\x1b[31mred", "--json").stdout)["error"]
    assert (error["id"], error["message"]) == ("abc\\x1b[31mred", 'id: document "abc\\x1b[31mred" does not exist')
