"""``mnemon-ls recall --mode basic`` (found by a new-user pass: the CLI formatted the unranked items' ``null``
score and crashed with a traceback, in text and ``--json`` alike). Real CLI subprocess, real git repo."""

from __future__ import annotations

import json

from tests.cli.test_cli import Cli, cli  # noqa: F401  (the fixture)


def test_basic_recall_lists_unranked_items_without_a_score(cli: Cli) -> None:  # noqa: F811
    cli.ok("space", "create", "--name", "notes", "--description", "project notes")
    cli.ok("remember", "--space", "notes", "Deploy freeze on Fridays")
    text = cli.ok("recall", "Deploy", "--mode", "basic").splitlines()
    data = json.loads(cli.ok("recall", "Deploy", "--mode", "basic", "--json"))
    assert text == [f"   - unknown {data['results'][0]['id'][:8]} notes: Deploy freeze on Fridays", "1 result(s)"]
    assert [(r["content"], r["score"]) for r in data["results"]] == [("Deploy freeze on Fridays", None)]
