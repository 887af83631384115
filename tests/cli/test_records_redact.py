"""``mnemon-ls redact`` covers the workspace memory record files (mnemon_ls/records/redaction.py): a credential another
program wrote into a record (a hand edit, a teammate's commit, an older bundle) is listed (kind and place, never the
value) and ``--apply`` rewrites only the lines that hold one, through the records lock and an atomic replace; the other
lines keep their bytes. Before, ``redact`` never looked at the record files and the value stayed on disk.

Every command is the real command line in a real git repository; the record is written by hand as another program
would (tests/cli/test_foreign_record_reads.py)."""

from __future__ import annotations

import json

from tests.cli.test_foreign_record_reads import TOKEN, hand_written_record
from tests.cli.test_foreign_secrets import SECRET, run, store, write_by_hand  # noqa: F401  (store: the fixture)
from tests.redact_samples import AWS_ID

RECORDS = ".dsh/workspace-memory/records.jsonl"


def _with_other_records(repo, root):
    """A hand-written record between two records of mnemon-ls; ``(id, path, lines before)``."""
    run(repo, root, "records", "create", "--title", "builds", "--content", "builds run on Linux", "--tag", "ci")
    record_id, path, _ = hand_written_record(repo, root)
    run(repo, root, "records", "create", "--title", "tests", "--content", "tests run with pytest -n 2")
    return record_id, path, path.read_bytes().split(b"\n")


def test_redact_lists_and_apply_scrubs_a_hand_written_credential_in_a_record(store):
    repo, root = store
    record_id, path, before = _with_other_records(repo, root)
    listed = run(repo, root, "redact", "--json", check=False)
    assert listed.returncode == 1
    found = {(f["location"], f["kind"], f["position"]) for f in json.loads(listed.stdout)["findings"]}
    assert found == {
        (f"{RECORDS} line 2 {record_id}.title", "github-token", 7),
        (f"{RECORDS} line 2 {record_id}.content", "github-token", 20),
        (f"{RECORDS} line 2 {record_id}.tags[1]", "github-token", 0),
        (f"{RECORDS} line 2 {record_id}.provenance.note", "aws-access-key-id", 20),
        (f"{RECORDS} line 2 {record_id}.governance.sourceRefs[0].id", "github-token", 12)}
    text = run(repo, root, "redact", check=False).stdout
    assert f"{RECORDS} line 2 {record_id}.content: github-token at character 20\n" in text
    assert text.endswith("5 stored value(s) look like credentials; run `mnemon-ls redact --apply`\n")
    for out in (listed.stdout, text):
        assert SECRET not in out and AWS_ID not in out
    assert path.read_bytes().split(b"\n") == before  # a dry run writes nothing

    applied = run(repo, root, "redact", "--apply", "--json")
    data = json.loads(applied.stdout)
    assert data["findings"] == [] and SECRET not in applied.stdout
    assert data["applied"]["records"] == {"records": 1, "rewritten": [RECORDS], "files": [], "skipped": []}
    after = path.read_bytes().split(b"\n")
    assert [after[0], *after[2:]] == [before[0], *before[2:]]  # every other line byte for byte
    assert SECRET.encode() not in path.read_bytes() and AWS_ID.encode() not in path.read_bytes()
    raw = json.loads(after[1])
    assert (raw["title"], raw["content"], raw["tags"]) == (f"deploy {TOKEN}", f"the deploy token is {TOKEN}",
                                                           ["ops", TOKEN])
    assert raw["governance"]["revision"] == 2  # an edit's rules: revision + 1, a content hash that holds
    shown = json.loads(run(repo, root, "records", "show", record_id, "--json", secrets="allow").stdout)["record"]
    assert shown["content"] == f"the deploy token is {TOKEN}"  # the stored text itself, and the record reads
    again = run(repo, root, "redact")
    assert again.stdout == "0 stored value(s) look like credentials\n"
    assert "workspace memory records" not in run(repo, root, "doctor").stdout


def test_a_superseded_line_and_the_compaction_copy_are_redacted_too(store):
    """The file is an append log: an edit appends the new state and the old line keeps what it held; a compaction
    keeps the whole old file in ``.bak``. Both are on disk, so both are found and redacted."""
    repo, root = store
    record_id, path, _ = hand_written_record(repo, root)
    run(repo, root, "records", "edit", record_id, "--content", "deploy with the vault", "--title", "deploy",
        "--tag", "ops")
    found = {f["location"] for f in json.loads(run(repo, root, "redact", "--json", check=False).stdout)["findings"]}
    assert f"{RECORDS} line 1 {record_id}.content" in found  # the superseded state
    assert f"{RECORDS} line 2 {record_id}.provenance.note" in found  # an edit keeps the note and the sources
    assert f"{RECORDS} line 2 {record_id}.content" not in found
    run(repo, root, "records", "compact", "--record-scope", "project")
    bak = path.with_name("records.jsonl.bak")
    assert SECRET.encode() in bak.read_bytes()
    found = json.loads(run(repo, root, "redact", "--json", check=False).stdout)["findings"]
    assert {f["location"].split(" ")[0] for f in found} == {RECORDS, f"{RECORDS}.bak"}
    data = json.loads(run(repo, root, "redact", "--apply", "--json").stdout)
    assert data["applied"]["records"]["files"] == [f"{RECORDS}.bak"] and data["findings"] == []
    for file in (path, bak):
        assert SECRET.encode() not in file.read_bytes() and AWS_ID.encode() not in file.read_bytes()


def test_under_secrets_allow_redact_covers_records_as_it_covers_runtime(store):
    """``secrets: allow`` keeps what a write stores, but ``redact`` is asked for by name: it lists and replaces a
    record's credential as it does a Runtime entry's (mnemon_ls/runtime/redaction.py ignores the setting too)."""
    repo, root = store
    record_id, path, _ = hand_written_record(repo, root)
    write_by_hand(root, f"deploy token is {SECRET}")
    listed = json.loads(run(repo, root, "redact", "--json", check=False, secrets="allow").stdout)["findings"]
    tiers = {f["location"].split(" ")[0] for f in listed}
    assert tiers == {"runtime/memories.json", RECORDS}
    data = json.loads(run(repo, root, "redact", "--apply", "--json", secrets="allow").stdout)
    assert data["findings"] == []
    assert data["applied"]["runtime"][0]["entries"] == 1 and data["applied"]["records"]["records"] == 1
    assert SECRET.encode() not in path.read_bytes()
    assert SECRET not in (root / "runtime" / "memories.json").read_text()


def test_a_damaged_record_file_is_reported_and_left_as_it_is(store):
    repo, root = store
    record_id, path, _ = _with_other_records(repo, root)
    with path.open("ab") as file:
        file.write(b'{"half a record": \n')  # a line no reader can use
    before = path.read_bytes()
    done = run(repo, root, "redact", "--apply", "--json", check=False)
    assert done.returncode == 1
    data = json.loads(done.stdout)
    [skipped] = data["applied"]["records"]["skipped"]
    assert skipped["file"] == RECORDS
    assert skipped["reason"].startswith("line 4 is not a valid record (1 damaged line(s)); nothing in the file was "
                                        "rewritten.")
    assert {f["location"] for f in data["findings"]} >= {f"{RECORDS} line 2 {record_id}.content"}
    assert path.read_bytes() == before and SECRET not in done.stdout
    text = run(repo, root, "redact", "--apply", check=False).stdout
    assert f"{RECORDS}: not rewritten: line 4 is not a valid record" in text
