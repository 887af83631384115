"""Small wording defects a new user met, each checked on the real console script (subprocesses through
:class:`tests.cli.test_cli.Cli`, real stores and a real git repository): the agreement of the wake's records
cover with its count, the ``--branch`` refusal, the Memory Spaces cover's "more active spaces" line, the
refusal of an id prefix shorter than the documented minimum, and the hint of a recall whose only match branch
scope hid."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_cli import Cli
from tests.cli.test_text import remember_on_main_then_leave


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path)


def test_records_cover_agrees_with_its_count(cli: Cli) -> None:
    cli.ok("records", "propose", "--title", "Tests", "--content", "Run pytest -n 2", "--source-ref", "session:s-1")
    assert ("Workspace memory records: 1 proposal waits for a person to verify or reject "
            "(mnemon-ls records list --proposals).") in cli.ok("wake").splitlines()
    cli.ok("records", "propose", "--title", "Port", "--content", "8080", "--source-ref", "session:s-1")
    assert ("Workspace memory records: 2 proposals wait for a person to verify or reject "
            "(mnemon-ls records list --proposals).") in cli.ok("wake").splitlines()


def test_an_empty_repeated_option_is_named_without_a_stray_space(cli: Cli) -> None:
    for given in (("--branch", ""), ("--branch", "main", "--branch", " ")):
        result = cli.run("runtime", "add", "--target", "memory", "--content", "x", *given)
        assert result.returncode == 2
        rule = "must not be empty (got '')" if given[-1] == "" else "must not be empty (got ' ')"
        assert result.stderr == f"mnemon-ls: error: --branch: {rule}\n", result.stderr
    assert not cli.memories.exists()


def test_spaces_cover_counts_one_hidden_space_in_the_singular(cli: Cli) -> None:
    for name in ("One", "Two", "Three"):
        cli.ok("space", "create", "--name", name, "--description", "d" * 100, "--active")
    # Runtime memory near its limits: a budget that the whole snapshot does not fit in cuts the covers
    # (a budget the whole snapshot fits in prints it all: tests/cli/test_wake_budget_covers.py)
    cli.ok("runtime", "add", "--target", "user", "--content", "The user prefers terse answers. " * 110)
    for n in range(2):
        cli.ok("runtime", "add", "--target", "memory", "--content", f"Fact {n}: the deploy runs nightly. " * 130)
    full = cli.ok("wake", "--budget", "100000")
    block = full[full.index("MNEMON MEMORY SPACES"):].split("\n\n")[0]
    lines = block.strip("\n").split("\n")
    assert [line.split(" (id ")[0] for line in lines[2:]] == ["- One", "- Two", "- Three"], block
    # the wake's covers get a twentieth of its budget: room for the first two spaces and the closing line
    # ("(1 more active space not shown)"), not for the third even without its description
    cover = len("\n".join(lines[:4])) + 1 + len("(1 more active space not shown)\n") + 5
    assert len(full) > 20 * cover  # the whole snapshot does not fit: the covers are cut to a twentieth
    tight = cli.ok("wake", "--budget", str(20 * cover))
    assert "(1 more active space not shown)" in tight.splitlines(), tight
    assert "more active spaces not shown" not in tight


def test_an_id_prefix_shorter_than_the_minimum_says_the_rule(cli: Cli) -> None:
    made = cli.ok_json("doc", "create", "--title", "Cache", "--content", "The cache keeps 128 entries.")
    full = made.get("id") or made["document"]["id"]
    assert cli.ok("doc", "get", full[:8]).startswith("The cache keeps 128 entries.")
    for given in (full[:7], "a3b9de5"):
        result = cli.run("doc", "get", given)
        assert result.returncode == 2
        assert result.stderr == (f'mnemon-ls: error: id: document "{given}" does not exist (an id prefix needs at '
                                 'least 8 characters)\n'), result.stderr
    data = json.loads(cli.run("doc", "get", "a3b9de5", "--json").stdout)["error"]
    assert (data["code"], data["field"]) == ("not-found", "id")
    # a full id that names no document keeps the plain message
    result = cli.run("doc", "get", "00000000-0000-4000-8000-000000000000")
    assert result.stderr.endswith('does not exist\n') and "prefix" not in result.stderr


def test_a_recall_whose_only_match_branch_scope_hid_says_so(cli: Cli) -> None:
    remember_on_main_then_leave(cli)
    out = cli.ok("recall", "staging cluster").splitlines()
    assert out == ["hidden: 1 item scoped to another git branch",
                   "0 result(s); its only match is scoped to another git branch (branchRecall: label lists it)"]
    data = cli.ok_json("recall", "staging cluster")
    assert data["hidden"] == {"otherBranch": 1, "detachedHead": 0} and "quality" not in data["hint"]
    # nothing hidden, nothing found: the plain hint
    assert cli.ok("recall", "kubernetes helm chart").splitlines() == ["0 result(s); nothing matched"]
