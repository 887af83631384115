"""``pack export`` and ``records export`` redact what another program stored (unless ``secrets: allow``) and say how
many values they redacted; the stores are left as they are.

The values are stored the ways another program stores them: ``memories.json`` written by hand, a row inserted into a
space's ``mnemon.db`` as the Mnemon CLI inserts it, and (for the Sources whose files are not meant for hand edits: a
document, a record) through mnemon-ls itself with ``--secrets allow``, which stores them as given, as the plugin or a
script would. Every command is the real command line in a real git repository.
"""

from __future__ import annotations

import io
import json
import sqlite3
import zipfile
from pathlib import Path

from tests.cli.test_foreign_secrets import SECRET, STORED, cli_remember, run, space  # noqa: F401  (space: fixture)
from tests.cli.test_foreign_runtime_reads import write_by_hand
from tests.redact_samples import AWS_ID


def pack_entries(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(path.read_bytes())) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def rows(db_path: Path) -> list[tuple]:
    with sqlite3.connect(db_path) as db:
        found = db.execute(STORED).fetchall()
    db.close()
    return found


def test_pack_export_redacts_every_component_and_counts_the_values(space, tmp_path):
    repo, root, db_path = space
    run(repo, root, "runtime", "add", "--content", "the suite runs with pytest -n 2")
    write_by_hand(root, f"deploy token is {SECRET} for the staging box")
    run(repo, root, "doc", "create", "--title", "Staging access", "--content", f"the key id is {AWS_ID}\n",
        secrets="allow")
    memories = (root / "runtime" / "memories.json").read_bytes()
    stored_rows = rows(db_path)
    documents = {p: p.read_bytes() for p in (root / "documents").rglob("*") if p.is_file() and "." != p.name[0]}
    assert any(AWS_ID.encode() in data for data in documents.values())
    pack = tmp_path / "out.zip"
    done = run(repo, root, "pack", "export", "-o", str(pack), "--json")
    data = json.loads(done.stdout)
    # the Runtime entry, the document body, the space item's content and the CLI's oplog row of it
    assert data["redacted"] == {"count": 4, "kinds": {"aws-access-key-id": 1, "github-token": 3}}
    entries = pack_entries(pack)
    for name, body in entries.items():
        assert SECRET.encode() not in body and AWS_ID.encode() not in body, name
    text = b"".join(entries.values())
    assert b"deploy token is [redacted:github-token] for the staging box" in entries[
        "payload/runtime/memories.json"]
    assert b"deploy token is [redacted:github-token] for the staging box" in entries["payload/runtime/MEMORY.md"]
    assert b"the key id is [redacted:aws-access-key-id]" in text
    human = run(repo, root, "pack", "export", "-o", str(tmp_path / "again.zip"))
    assert human.stdout.endswith("  credentials another program stored are redacted in the pack, the stores are "
                                 "unchanged (--secrets allow exports them as stored)\nRedacted 4 values that looked "
                                 "like credentials (aws-access-key-id, github-token x3).\n"), human.stdout
    # the stores are as they were
    assert (root / "runtime" / "memories.json").read_bytes() == memories
    assert rows(db_path) == stored_rows
    assert {p: p.read_bytes() for p in documents} == documents
    # the pack imports elsewhere
    other = tmp_path / "other"
    run(repo, other, "pack", "import", str(pack))
    assert "deploy token is [redacted:github-token] for the staging box" in run(repo, other, "wake").stdout
    # secrets: allow exports what is stored, and counts nothing
    raw = tmp_path / "raw.zip"
    data = json.loads(run(repo, root, "pack", "export", "-o", str(raw), "--json", secrets="allow").stdout)
    assert "redacted" not in data
    raw_text = b"".join(pack_entries(raw).values())
    assert SECRET.encode() in raw_text and AWS_ID.encode() in raw_text


def test_records_export_redacts_and_says_how_many(space, tmp_path):
    repo, root, _ = space
    run(repo, root, "records", "create", "--title", f"token {SECRET}", "--content", f"the AWS key id is {AWS_ID}",
        "--tag", "ops", secrets="allow")
    run(repo, root, "records", "create", "--title", "plain", "--content", "releases are tagged from main")
    files = {p: p.read_bytes() for p in repo.rglob("*.jsonl")}
    assert any(SECRET.encode() in data for data in files.values())
    done = run(repo, root, "records", "export")
    assert SECRET not in done.stdout and AWS_ID not in done.stdout
    assert done.stderr == ("mnemon-ls: warning: 2 values that looked like credentials redacted in the bundle (the "
                           "record files are unchanged; `--secrets allow` exports them as stored)\n")
    bundle = json.loads(done.stdout)
    by_title = {r["title"]: r for r in bundle["records"]}
    record = by_title["token [redacted:github-token]"]
    assert record["content"] == "the AWS key id is [redacted:aws-access-key-id]"
    assert by_title["plain"]["content"] == "releases are tagged from main"
    as_json = json.loads(run(repo, root, "records", "export", "--json").stdout)
    assert as_json["redactedCount"] == 2 and SECRET not in json.dumps(as_json)
    assert {p: p.read_bytes() for p in repo.rglob("*.jsonl")} == files  # the record files are unchanged
    # the redacted bundle imports (its contentHash was made again)
    out = tmp_path / "bundle.json"
    out.write_text(done.stdout)
    imported = json.loads(run(repo, root, "records", "import", str(out), "--record-scope", "user", "--json").stdout)
    assert (imported["total"], imported["imported"]) == (2, 2)
    raw = run(repo, root, "records", "export", secrets="allow")
    assert SECRET in raw.stdout and AWS_ID in raw.stdout and raw.stderr == ""
