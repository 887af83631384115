"""``space delete`` of a space holding items is refused unless confirmed, and a confirmed one keeps the store
(found by h-delete49: it erased ``data/<id>/`` with no confirmation and no copy). Real CLI subprocesses with
their own storage root (``tests/cli/test_cli.py``'s :class:`Cli`); the refusal is compared with every file under
the test's directory, bytes, mtime and inode, before and after."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from tests.cli.test_cli import Cli, cli  # noqa: F401  (the fixture)
from tests.conftest import disk_state


def _two_spaces(cli: Cli) -> str:  # noqa: F811
    """``notes`` (``default``) and ``Build facts`` with two items; returns the id of ``Build facts``."""
    cli.ok("space", "create", "--name", "notes", "--description", "project notes", "--active")
    made = json.loads(cli.ok("space", "create", "--name", "Build facts", "--description", "how it builds", "--json"))
    cli.ok("remember", "--space", "Build facts", "Builds take four minutes")
    cli.ok("remember", "--space", "Build facts", "The release job runs on tags")
    return made["id"]


def test_delete_of_a_space_holding_items_exits_3_naming_confirm_and_changes_nothing(cli: Cli) -> None:  # noqa: F811
    space = _two_spaces(cli)
    store = cli.data / "data" / space
    for name in [p.name for p in store.iterdir() if p.name.startswith(".mnemon-ls-")]:
        (store / name).unlink()  # derived caches: counting the items must not build them either
    before = disk_state(cli.tmp, pin=True)
    result = cli.run("space", "delete", "Build facts")
    assert (result.returncode, result.stdout) == (3, "")
    assert result.stderr == (
        f"mnemon-ls: error: --confirm: space Build facts ({space}) holds 2 items; deleting it needs explicit "
        f"confirmation (--confirm / \"confirm\": true); its store is then moved to {cli.data / 'data' / '.deleted'}, "
        "not erased\n")
    as_json = cli.run("space", "delete", "Build facts", "--json")
    assert as_json.returncode == 3
    error = json.loads(as_json.stdout)["error"]
    assert (error["code"], error["field"], error["param"], error["spaceId"], error["spaceName"], error["items"]) == (
        "confirmation-required", "--confirm", "confirm", space, "Build facts", 2)
    assert disk_state(cli.tmp) == before
    assert [s["id"] for s in cli.ok_json("space", "list")] == ["default", space]


def test_confirmed_delete_prints_where_the_store_went(cli: Cli) -> None:  # noqa: F811
    space = _two_spaces(cli)
    for flag in ("--confirm", "--yes"):
        if flag == "--yes":  # the second spelling: a space made again, deleted again
            space = json.loads(cli.ok("space", "create", "--name", "Build facts", "--description", "again",
                                      "--json"))["id"]
            cli.ok("remember", "--space", "Build facts", "Builds take four minutes")
        out = cli.ok("space", "delete", "Build facts", flag)
        copies = sorted((cli.data / "data" / ".deleted").glob(f"*-{space}"))
        assert len(copies) == 1 and copies[0].is_dir()
        assert out == (f"Deleted space Build facts ({space}). Its store was moved to {copies[0]} (to restore it, "
                       f"move that folder back to {cli.data / 'data' / space}).\n")
        with sqlite3.connect(f"file:{copies[0] / 'mnemon.db'}?mode=ro", uri=True) as db:
            contents = {row[0] for row in db.execute("SELECT content FROM insights WHERE deleted_at IS NULL")}
        assert "Builds take four minutes" in contents
        assert not (cli.data / "data" / space).exists()
    listed = cli.run("space", "list", "--json")
    assert [s["id"] for s in json.loads(listed.stdout)] == ["default"]
    assert listed.stderr.startswith("mnemon-ls: note: 2 deleted spaces' stores (")  # named (test_space_purge_deleted)


def test_delete_of_an_empty_space_asks_nothing(cli: Cli) -> None:  # noqa: F811
    cli.ok("space", "create", "--name", "notes", "--description", "project notes", "--active")
    space = json.loads(cli.ok("space", "create", "--name", "Empty", "--description", "nothing yet", "--json"))["id"]
    data = json.loads(cli.ok("space", "delete", "Empty", "--json"))
    assert (data["deleted"], data["items"]) == (space, 0)
    assert Path(data["keptAt"]).parent == cli.data / "data" / ".deleted"
