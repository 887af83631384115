"""A shortened Memory Space item id under 8 characters is refused with the full id it starts (8 or more: the unique
start of an id names the item, as plain ``recall`` prints it: tests/cli/test_recall_short_ids.py).

Before, ``space related 4f18228e --space Ops`` answered only "no active item with this id in the space (missing or
forgotten)", so a person who shortened the id, as ``doc`` commands allow, took the item for gone. Found by a new
user. Run for real: the console script on a real ``mnemon.db``; the refusal changes nothing."""

from __future__ import annotations

from tests.cli.test_cli import Cli
from tests.helpers import procs


def test_a_shortened_item_id_is_refused_naming_the_full_one(tmp_path):
    cli = Cli(tmp_path)
    cli.ok("space", "create", "--name", "Ops", "--description", "deploys", "--active")
    first = cli.ok_json("remember", "The staging database is rebuilt every night")["id"]
    second = cli.ok_json("remember", "The nightly rebuild wipes the test fixtures")["id"]
    before = procs.tree_snapshot(cli.data)
    hint = f"; a short item id needs at least 8 characters: {first} starts with it (got {first[:7]})"
    for args, name, rule in [
            (("space", "related", first[:7]), "ITEM_ID", "(missing or forgotten)"),
            (("space", "link", first[:7], second), "SOURCE_ID", "(missing or forgotten)"),
            (("space", "forget", first[:7]), "ITEM_ID", "(unknown or already forgotten)")]:
        result = cli.run(*args, "--space", "Ops")
        assert result.returncode == 3, result.stderr
        assert result.stderr == (f"mnemon-ls: error: {name}: no active item with this id in the space {rule}{hint}\n")
    assert procs.tree_snapshot(cli.data) == before
    # an id that starts no item is refused as before, with nothing added
    result = cli.run("space", "related", "zzz", "--space", "Ops")
    assert result.stderr == "mnemon-ls: error: ITEM_ID: no active item with this id in the space (missing or " \
                            "forgotten) (got zzz)\n"
