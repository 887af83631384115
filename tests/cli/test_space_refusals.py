"""Memory Space operations refused for an unknown space or item id change nothing on disk (found by a review:
``space forget <unknown item id>`` was refused with exit 3 but had already created the space's side index
``data/<id>/.mnemon-ls-index.db``, a derived cache, on its way to the refusal). Real CLI subprocesses with their
own storage root (``tests/cli/test_cli.py``'s :class:`Cli`); every file under the test's directory (storage root,
home, workspace) is compared, bytes, mtime and inode, before and after each refused command.

Also: an entity holding a comma is one entity, kept intact in ``mnemon.db`` (a JSON array, as the Mnemon CLI
stores it) and read back as it was given, so the remember descriptions allow it instead of forbidding it."""

from __future__ import annotations

import json
import sqlite3

from tests.cli.test_cli import Cli, cli  # noqa: F401  (the fixture)
from tests.conftest import disk_state

#: (argv, exit code, field the error names) of commands naming an unknown space or item; ``<item>`` is a real item.
REFUSED = [
    (["space", "forget", "0b6c1a9e-0000-4000-8000-000000000000", "--space", "notes"], 3, "ITEM_ID"),
    (["space", "forget", "no-such-item", "--space", "notes"], 3, "ITEM_ID"),
    (["space", "forget", "<item>", "--space", "nosuch"], 2, "--space"),
    (["space", "related", "no-such-item", "--space", "notes"], 3, "ITEM_ID"),
    (["space", "related", "<item>", "--space", "nosuch"], 2, "--space"),
    (["space", "link", "no-such-item", "<item>", "--space", "notes"], 3, "SOURCE_ID"),
    (["space", "link", "<item>", "no-such-item", "--space", "notes"], 3, "TARGET_ID"),
    (["space", "link", "<item>", "<item>", "--space", "nosuch"], 2, "--space"),
    (["remember", "Builds take four minutes", "--space", "nosuch"], 2, "--space"),
    (["recall", "deploy", "--space", "nosuch"], 2, "--space nosuch"),
    (["space", "status", "nosuch"], 2, "SPACE"),
    (["space", "reindex", "nosuch"], 2, "SPACE"),
    (["space", "merge", "nosuch", "--into", "notes"], 2, "SOURCE nosuch"),
    (["space", "merge", "notes", "--into", "nosuch"], 2, "--into"),
]


def test_refused_space_operations_create_no_side_index_and_change_nothing(cli: Cli) -> None:  # noqa: F811
    cli.ok("space", "create", "--name", "notes", "--description", "project notes")
    cli.ok("space", "activate", "notes")
    store = cli.data / "data" / "default"
    for stage in ("fresh", "remembered"):
        if stage == "remembered":  # a store with items and no side index yet (the Mnemon CLI wrote it, say)
            cli.ok("remember", "--space", "notes", "Deploy freeze on Fridays")
            (store / ".mnemon-ls-index.db").unlink()
        results = json.loads(cli.ok("recall", "Deploy", "--mode", "basic", "--json"))["results"]
        item = results[0]["id"] if results else "none"
        for name in [p.name for p in store.iterdir() if p.name.startswith(".mnemon-ls-")]:
            (store / name).unlink()  # derived caches: a refusal must not build them either
        before = disk_state(cli.tmp, pin=True)
        assert not (store / ".mnemon-ls-index.db").exists()
        for argv, code, field in REFUSED:
            argv = [item if arg == "<item>" else arg for arg in argv]
            if stage == "fresh" and argv[:2] == ["space", "link"] and field == "TARGET_ID":
                field = "SOURCE_ID"  # no item yet: the first end is unknown already
            result = cli.run(*argv)
            assert (result.returncode, result.stdout) == (code, ""), (stage, argv, result)
            assert result.stderr.startswith(f"mnemon-ls: error: {field}: "), (stage, argv, result.stderr)
            assert disk_state(cli.tmp) == before, (stage, argv)


def test_an_entity_with_a_comma_round_trips_as_one_entity(cli: Cli) -> None:  # noqa: F811
    cli.ok("space", "create", "--name", "notes", "--description", "project notes")
    receipt = json.loads(cli.ok("remember", "--space", "notes", "We buy licences from Acme",
                                "--entity", "Acme, Inc.", "--entity", "a,b", "--json"))
    assert receipt["status"] == "committed" and receipt["entities"] == ["Acme, Inc.", "a,b"]
    db = sqlite3.connect(cli.data / "data" / "default" / "mnemon.db")
    try:
        stored = db.execute("SELECT entities FROM insights WHERE id = ?", (receipt["id"],)).fetchone()[0]
    finally:
        db.close()
    assert json.loads(stored) == ["Acme, Inc.", "a,b"]  # the Mnemon CLI's format: a JSON array of strings
    cli.ok("space", "activate", "notes")
    [result] = json.loads(cli.ok("recall", "licences Acme", "--json"))["results"]
    assert result["entities"] == ["Acme, Inc.", "a,b"]
    status = json.loads(cli.ok("space", "status", "notes", "--json"))["status"]
    assert sorted(e["entity"] for e in status["top_entities"]) == ["Acme, Inc.", "a,b"]
