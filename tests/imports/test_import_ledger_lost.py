"""``mnemon-ls import`` after its ledger (``state/imports.jsonl``) was emptied or cut short (a hand edit, a restore
of an older ``state/``): runtime entries were skipped as exact duplicates of MEMORY.md, but a section routed to a
Document was written again, one more copy of the same Document per import. Now a body an existing Document
(active or archived) already has is an exact duplicate of that Document, named in the plan and skipped (real
subprocesses, a real git workspace)."""

from __future__ import annotations

import json
from pathlib import Path

from mnemon_ls.imports.reading import DOCUMENT_MIN_BYTES
from tests.cli.test_cli import Cli

POLICY = " ".join(f"Fixture {i} is rebuilt from the recorded session before every release." for i in range(40))
SOURCE = f"# Project\n\n- Use pnpm for the web client, never npm.\n\n## Fixture policy\n\n{POLICY}\n"


def documents(cli: Cli) -> list[dict]:
    return cli.ok_json("doc", "list")["documents"]


def test_a_lost_ledger_does_not_import_a_document_twice(tmp_path: Path) -> None:
    assert len(POLICY) > DOCUMENT_MIN_BYTES
    cli = Cli(tmp_path)
    source = cli.ws / "AGENTS.md"
    source.write_text(SOURCE)
    first = json.loads(cli.run("import", "agents-md", "--json").stdout)
    assert sorted(a["destination"] for a in first["applied"]) == ["document", "memory"]
    [doc] = documents(cli)
    ledger = cli.data / "state" / "imports.jsonl"
    for cut in (b"", ledger.read_bytes()[:40]):  # emptied, then cut inside its first row
        ledger.write_bytes(cut)
        planned = json.loads(cli.run("import", "agents-md", "--dry-run", "--json").stdout)
        assert planned["items"] == [] and planned["counts"]["exactDuplicates"] == 2, planned
        of = {s["title"].split(" > ")[-1]: s["of"] for s in planned["skipped"]}
        assert of == {"Project": "MEMORY.md", "Fixture policy": f"Document {doc['id']} (Fixture policy)"}
        again = json.loads(cli.run("import", "agents-md", "--json").stdout)
        assert again["applied"] == [] and [d["id"] for d in documents(cli)] == [doc["id"]]
    # an archived Document holds the body too: it is not brought back as a new one
    cli.ok("doc", "archive", doc["id"], "--revision", str(doc["revision"]))
    ledger.write_bytes(b"")
    assert json.loads(cli.run("import", "agents-md", "--json").stdout)["applied"] == []
    assert [(d["id"], d["status"]) for d in documents(cli)] == [(doc["id"], "archived")]
