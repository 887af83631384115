"""``mnemon-ls import --from PATH`` with an item a Source refuses (real subprocesses, a real git workspace, real
files): the active Documents are full, so the document of a long section is refused (``document-capacity``). The
import stopped at that item: the items before it were written, the ones after it never, and every later import
stopped at the same item again. Now that item is refused by itself, named with its field and rule, recorded in
the ledger as refused, and the rest is written; the result says ``partly-imported`` (exit code 3); the dry run
says up front that it would be refused; a re-run tries it again (refused again, saying so); once there is room
the import finishes."""

from __future__ import annotations

import json
from pathlib import Path

from mnemon_ls.imports.reading import DOCUMENT_MIN_BYTES
from tests.cli.test_cli import Cli

POLICY = " ".join(f"Fixture {i} is rebuilt from the recorded session before every release." for i in range(40))
SOURCE = (f"# Project\n\n- Use pnpm for the web client, never npm.\n\n## Fixture policy\n\n{POLICY}\n\n"
          "## Release\n\n- The release train leaves every second Tuesday at noon.\n")
LIMIT = 10 * 1024 * 1024  # documents.activeLimitBytes, the default


def import_json(cli: Cli, *args: str) -> tuple[int, dict]:
    result = cli.run("import", "agents-md", *args, "--json")
    assert result.stdout, result.stderr
    return result.returncode, json.loads(result.stdout)


def test_a_refused_item_is_named_recorded_and_the_rest_imported(tmp_path: Path) -> None:
    assert len(POLICY) > DOCUMENT_MIN_BYTES
    cli = Cli(tmp_path)
    source = cli.tmp / "elsewhere" / "AGENTS.md"
    source.parent.mkdir()
    source.write_text(SOURCE)
    big = cli.ok_json("doc", "create", "--title", "Archive of logs", "--content", "Logs.")
    big_id = big["document"]["id"] if "document" in big else big["id"]
    managed = Path(big["document"]["path"] if "document" in big else big["path"])
    managed.write_bytes(managed.read_bytes().replace(b"Logs.", b"log line\n" * (LIMIT // 9 + 1)))
    cli.ok("doc", "list")  # the refresh adopts the hand edit: the active documents are over their limit now

    code, planned = import_json(cli, "--from", str(source), "--dry-run")
    assert code == 0
    by_title = {i["title"].split(" > ")[-1]: i for i in planned["items"]}
    refusal = by_title["Fixture policy"]["refusal"]
    assert (refusal["code"], refusal["field"]) == ("document-capacity", "documents.activeLimitBytes")
    assert [i["refusal"] for t, i in by_title.items() if t != "Fixture policy"] == [None, None]
    assert planned["counts"]["refusedItems"] == 1 and planned["counts"]["document"] == 0
    said = cli.run("import", "agents-md", "--from", str(source), "--dry-run").stdout
    assert "would be refused to a Document" in said and "documents.activeLimitBytes: the active documents" in said

    code, done = import_json(cli, "--from", str(source))
    assert code == 3 and done["status"] == "partly-imported"
    assert [a["destination"] for a in done["applied"]] == ["memory", "memory"]
    [refused] = done["refusedItems"]
    assert (refused["title"].split(" > ")[-1], refused["code"], refused["field"]) == (
        "Fixture policy", "document-capacity", "documents.activeLimitBytes")
    assert "limit 10485760" in refused["rule"] and refused["refusedBefore"] is None
    assert (done["counts"]["written"], done["counts"]["refusedItems"], done["counts"]["document"]) == (2, 1, 0)
    memory_md = (cli.data / "runtime" / "MEMORY.md").read_text()
    assert "Use pnpm" in memory_md and "release train leaves every second Tuesday" in memory_md  # after it too
    ledger = [json.loads(line) for line in (cli.data / "state" / "imports.jsonl").read_text().splitlines()]
    assert sorted(row["origin"] for row in ledger) == ["imported", "imported", "refused"]
    row = next(r for r in ledger if r["origin"] == "refused")
    assert (row["field"], row["destination"], row["path"]) == ("documents.activeLimitBytes", "document", str(source))
    [listed] = cli.ok_json("doc", "list")["documents"]
    assert listed["id"] == big_id

    again = cli.run("import", "agents-md", "--from", str(source))  # tried again, refused again, and says so
    assert again.returncode == 3
    assert f"refused (refused before, {row['refusedAt']}): documents.activeLimitBytes:" in again.stdout
    assert "Nothing imported: 1 item(s) refused" in again.stdout

    cli.ok("doc", "archive", big_id, "--revision", str(listed["revision"]))  # room again: the import finishes
    code, finished = import_json(cli, "--from", str(source))
    assert code == 0 and finished["status"] == "imported" and finished["refusedItems"] == []
    assert [a["destination"] for a in finished["applied"]] == ["document"]
    assert finished["counts"]["alreadyImported"] == 2
