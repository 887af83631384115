"""A credential another program wrote into a workspace memory record (title, content, tags, ``provenance.note``,
``governance.sourceRefs[].id``) is shown redacted by ``records list`` (which MCP ``mnemon_records_search`` runs too),
``records show`` and ``records export`` unless ``secrets: allow`` (mnemon_ls/records/service.py ``shown_json``); the
record file stays as it is. And an add's receipt shows the similar Runtime entries it names redacted.

The record is written by hand into the project scope's ``records.jsonl``, as the plugin, a script or a person's editor
would; every command is the real command line in a real git repository.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from tests.cli.test_foreign_runtime_reads import write_by_hand
from tests.cli.test_foreign_secrets import SECRET, run, store  # noqa: F401  (store: the fixture)
from tests.redact_samples import AWS_ID

TOKEN = "[redacted:github-token]"


def hand_written_record(repo: Path, root: Path) -> tuple[str, Path, bytes]:
    """A record created through mnemon-ls, then given credentials by hand in every text field the file holds.
    Returns its id, the file and the file's bytes."""
    created = json.loads(run(repo, root, "records", "create", "--title", "deploy", "--content", "how we deploy",
                             "--json").stdout)
    path = repo / ".dsh" / "workspace-memory" / "records.jsonl"
    lines = path.read_text().splitlines()
    record = json.loads(lines[-1])
    content = f"the deploy token is {SECRET}"
    record.update(title=f"deploy {SECRET}", content=content, tags=["ops", SECRET],
                  contentHash="sha256:" + hashlib.sha256(content.encode()).hexdigest())
    record["provenance"]["note"] = f"from the AWS key id {AWS_ID}"
    record["governance"]["sourceRefs"] = [{"kind": "url", "id": f"https://bot:{SECRET}@git.example.invalid/x"},
                                          {"kind": "file", "id": "docs/deploy.md"}]
    path.write_text("\n".join([*lines[:-1], json.dumps(record)]) + "\n")
    return created["id"], path, path.read_bytes()


def redacted(record: dict) -> None:
    """Assert ``record`` shows every hand-written value redacted and the rest as stored."""
    assert record["title"] == f"deploy {TOKEN}"
    assert record["content"] == f"the deploy token is {TOKEN}"
    assert record["tags"] == ["ops", TOKEN]
    assert record["provenance"]["note"] == "from the AWS key id [redacted:aws-access-key-id]"
    assert record["governance"]["sourceRefs"] == [
        {"kind": "url", "id": "https://bot:[redacted:github-token]@git.example.invalid/x"},
        {"kind": "file", "id": "docs/deploy.md"}]


def test_records_list_show_and_export_redact_what_another_program_wrote(store):
    repo, root = store
    record_id, path, before = hand_written_record(repo, root)
    listed = json.loads(run(repo, root, "records", "list", "--json").stdout)
    redacted(next(r for r in listed["records"] if r["id"] == record_id))
    shown = run(repo, root, "records", "show", record_id, "--json")
    redacted(json.loads(shown.stdout)["record"])
    text = run(repo, root, "records", "show", record_id).stdout
    assert f"  title: deploy {TOKEN}\n" in text
    assert "  sources: url:https://bot:[redacted:github-token]@git.example.invalid/x, file:docs/deploy.md\n" in text
    assert text.endswith(f"\nthe deploy token is {TOKEN}\n")
    lines = run(repo, root, "records", "list").stdout
    assert f"{record_id}  [project fact; unverified]  deploy {TOKEN}\n" in lines
    exported = run(repo, root, "records", "export")
    redacted(next(r for r in json.loads(exported.stdout)["records"] if r["id"] == record_id))
    assert exported.stderr == ("mnemon-ls: warning: 5 values that looked like credentials redacted in the bundle (the "
                               "record files are unchanged; `--secrets allow` exports them as stored)\n")
    for out in (listed, shown.stdout, text, lines, exported.stdout):
        assert SECRET not in json.dumps(out) and AWS_ID not in json.dumps(out)
    assert path.read_bytes() == before  # no read rewrote the record file
    raw = json.loads(run(repo, root, "records", "show", record_id, "--json", secrets="allow").stdout)["record"]
    assert raw["governance"]["sourceRefs"][0]["id"] == f"https://bot:{SECRET}@git.example.invalid/x"
    assert (raw["title"], raw["tags"], raw["provenance"]["note"]) == (f"deploy {SECRET}", ["ops", SECRET],
                                                                     f"from the AWS key id {AWS_ID}")
    bundle = json.loads(run(repo, root, "records", "export", secrets="allow").stdout)
    assert next(r for r in bundle["records"] if r["id"] == record_id)["governance"]["sourceRefs"][0]["id"] == (
        f"https://bot:{SECRET}@git.example.invalid/x")
    assert path.read_bytes() == before


def test_an_add_receipt_shows_the_similar_entries_it_names_redacted(store):
    repo, root = store
    write_by_hand(root, f"Password: {SECRET}.")  # another program's entry
    memories = root / "runtime" / "memories.json"
    run(repo, root, "runtime", "list")  # the projections rebuilt from it first
    # differs from the stored entry only in case and punctuation, and holds no value the pass finds itself
    done = json.loads(run(repo, root, "runtime", "add", "--content", f"password {SECRET.upper()}", "--json",
                          secrets="allow").stdout)
    assert done["similar"] == [f"Password: {SECRET}."]  # allow: as stored
    run(repo, root, "runtime", "remove", "--old-text", f"password {SECRET.upper()}", secrets="allow")
    before = json.loads(memories.read_text())["entries"]
    done = json.loads(run(repo, root, "runtime", "add", "--content", f"password {SECRET.upper()}", "--json").stdout)
    assert done["similar"] == [f"Password: {TOKEN}."]
    assert done["message"] == ("Entry added. It differs only in case, whitespace or punctuation from "
                               f"'Password: {TOKEN}.'; remove one if they say the same.")
    assert SECRET not in json.dumps(done)
    entries = json.loads(memories.read_text())["entries"]
    assert entries[:-1] == before  # the stored entry is left as it is: only the new one was added
    assert entries[-1]["content"] == f"password {SECRET.upper()}"
