"""The labels the Mnemon CLI stores as given (an item's ``category``, ``source`` and entities) and the tables another
program adds to a space's ``mnemon.db`` are covered by the redaction passes like an item's content: ``pack export``
(its staged copy, :mod:`mnemon_ls.packs.exportredact`), ``redact`` (listing and ``--apply``,
:mod:`mnemon_ls.spaces.redaction`) and ``space status`` (:func:`mnemon_ls.spaces.foreign.redact_status`).

Every value is written with raw SQLite as another writer would; every command is the real command line in a real git
repository (the fixtures of :mod:`tests.cli.test_foreign_secrets`).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from tests.cli.test_foreign_exports import pack_entries
from tests.cli.test_foreign_secrets import SECRET, STORED, run, space  # noqa: F401  (space: fixture)
from tests.redact_samples import AWS_ID

LABELLED = "c0ffee00-0000-4000-8000-0000000000c1"


def insert_labelled(db_path: Path) -> None:
    """An item whose category is an AWS key id, whose source is a GitHub token and whose entity is the token too,
    inserted as the Mnemon CLI inserts one (the row, its oplog row without the values)."""
    now = "2026-12-01T10:00:00Z"
    with sqlite3.connect(db_path) as db:
        db.execute("INSERT INTO insights(id, content, category, importance, tags, entities, source, access_count, "
                   "created_at, updated_at) VALUES(?, 'the staging notes', ?, 3, '[]', ?, ?, 0, ?, ?)",
                   (LABELLED, AWS_ID, json.dumps([SECRET]), SECRET, now, now))
        db.execute("INSERT INTO oplog(operation, insight_id, detail, created_at) VALUES('remember', ?, 'x', ?)",
                   (LABELLED, now))
        db.execute("UPDATE insights SET content = 'the staging deploy runs make deploy' WHERE content LIKE "
                   "'%' || ? || '%'", (SECRET,))  # the fixture's own foreign value: only the labels are left
        db.execute("DELETE FROM oplog WHERE detail LIKE '%' || ? || '%'", (SECRET,))
    db.close()


def pack_store(tmp_path: Path, entries: dict[str, bytes]) -> sqlite3.Connection:
    path = tmp_path / "packed.db"
    path.write_bytes(entries["payload/data/default/mnemon.db"])
    return sqlite3.connect(path)


def test_pack_export_redacts_category_source_and_entities(space, tmp_path):
    repo, root, db_path = space
    insert_labelled(db_path)
    stored = sqlite3.connect(db_path).execute(STORED).fetchall()
    pack = tmp_path / "out.zip"
    data = json.loads(run(repo, root, "pack", "export", "--pack-scope", "memory-spaces", "-o", str(pack),
                          "--json").stdout)
    assert data["redacted"] == {"count": 3, "kinds": {"aws-access-key-id": 1, "github-token": 2}}
    entries = pack_entries(pack)
    assert not any(SECRET.encode() in body or AWS_ID.encode() in body for body in entries.values())
    db = pack_store(tmp_path, entries)
    row = db.execute("SELECT category, source, entities FROM insights WHERE id = ?", (LABELLED,)).fetchone()
    db.close()
    assert row == ("[redacted:aws-access-key-id]", "[redacted:github-token]", '["[redacted:github-token]"]')
    assert sqlite3.connect(db_path).execute(STORED).fetchall() == stored  # the store is as it was
    raw = tmp_path / "raw.zip"
    run(repo, root, "pack", "export", "--pack-scope", "memory-spaces", "-o", str(raw), secrets="allow")
    raw_text = b"".join(pack_entries(raw).values())
    assert SECRET.encode() in raw_text and AWS_ID.encode() in raw_text


def test_redact_lists_and_applies_category_and_source(space):
    repo, root, db_path = space
    insert_labelled(db_path)
    listed = json.loads(run(repo, root, "redact", "--json", check=False).stdout)  # exit 1: found some
    where = f"data/default/mnemon.db insights[{LABELLED}]"
    assert {(f["location"], f["kind"]) for f in listed["findings"]} == {
        (f"{where}.category", "aws-access-key-id"), (f"{where}.source", "github-token"),
        (f"{where}.entities", "github-token")}
    applied = json.loads(run(repo, root, "redact", "--apply", "--json").stdout)
    assert applied["findings"] == [], applied  # nothing left, and nothing reported as raw pages
    with sqlite3.connect(db_path) as db:
        row = db.execute("SELECT category, source, entities FROM insights WHERE id = ?", (LABELLED,)).fetchone()
    db.close()
    assert row == ("[redacted:aws-access-key-id]", "[redacted:github-token]", '["[redacted:github-token]"]')
    assert SECRET.encode() not in db_path.read_bytes() and AWS_ID.encode() not in db_path.read_bytes()


def test_space_status_shows_categories_and_entities_redacted(space):
    repo, root, db_path = space
    insert_labelled(db_path)
    out = run(repo, root, "space", "status", "default").stdout
    assert SECRET not in out and AWS_ID not in out, out
    assert "[redacted:aws-access-key-id] 1" in out
    assert ("space Project (default) holds categories or entities that look like a credential (aws-access-key-id, "
            "github-token) that another program stored; shown redacted, the store is unchanged") in out
    data = json.loads(run(repo, root, "space", "status", "default", "--json").stdout)
    assert SECRET not in json.dumps(data) and AWS_ID not in json.dumps(data)
    assert {"entity": "[redacted:github-token]", "count": 1} in data["status"]["top_entities"]
    allowed = run(repo, root, "space", "status", "default", "--json", secrets="allow").stdout
    assert AWS_ID in allowed and SECRET in allowed


def test_pack_export_leaves_out_tables_the_mnemon_format_does_not_define(space, tmp_path):
    repo, root, db_path = space
    insert_labelled(db_path)
    with sqlite3.connect(db_path) as db:
        db.execute("CREATE TABLE notes(body TEXT)")
        db.execute("INSERT INTO notes VALUES(?)", (f"the deploy password is {SECRET}",))
        db.execute("CREATE VIEW note_bodies AS SELECT body FROM notes")
    db.close()
    pack = tmp_path / "out.zip"
    data = json.loads(run(repo, root, "pack", "export", "--pack-scope", "memory-spaces", "-o", str(pack),
                          "--json").stdout)
    assert data["foreignTables"] == {"leftOut": [{"space": "default", "table": "note_bodies"},
                                                 {"space": "default", "table": "notes"}]}
    entries = pack_entries(pack)
    assert not any(SECRET.encode() in body for body in entries.values())
    db = pack_store(tmp_path, entries)
    names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
    db.close()
    assert names == {"insights", "edges", "oplog", "sqlite_sequence"}
    with sqlite3.connect(db_path) as db:
        assert db.execute("SELECT count(*) FROM notes").fetchone()[0] == 1  # the store keeps them
    db.close()
    human = run(repo, root, "pack", "export", "--pack-scope", "memory-spaces", "-o", str(tmp_path / "again.zip"))
    assert ("  memory-spaces: table 'notes' of space default left out: the Mnemon format does not define it, so it "
            "was not scanned for credentials (--secrets allow exports the store as stored)") in human.stdout
    other = tmp_path / "other"
    run(repo, other, "pack", "import", str(pack))  # the pack imports elsewhere
    assert "the staging deploy runs make release" in run(repo, other, "recall", "make release").stdout
    with sqlite3.connect(db_path) as db:  # (a pack never carries a view: pack.validate refuses the store)
        db.execute("DROP VIEW note_bodies")
    db.close()
    raw = tmp_path / "raw.zip"
    data = json.loads(run(repo, root, "pack", "export", "--pack-scope", "memory-spaces", "-o", str(raw), "--json",
                          secrets="allow").stdout)
    assert "foreignTables" not in data and SECRET.encode() in b"".join(pack_entries(raw).values())
