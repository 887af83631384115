"""A person's ``recall`` with no active Memory Space says how to get one: before, it printed only "0 result(s); no
active space" and a new user did not know what to run. ``--json`` keeps the hint as it was. Run for real."""

from __future__ import annotations

import json

from tests.cli.test_cli import Cli


def test_recall_without_an_active_space_names_the_commands(tmp_path):
    cli = Cli(tmp_path)
    assert cli.ok("recall", "anything") == (
        "0 result(s); no active space (`mnemon-ls space create --name NAME --active` makes one; "
        "`mnemon-ls space activate SPACE` reads one)\n")
    assert json.loads(cli.ok("recall", "anything", "--json"))["hint"] == "no active space"
