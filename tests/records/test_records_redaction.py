"""A records file another program saves while ``redact --apply`` rewrites it (mnemon_ls/records/redaction.py): that
program takes no lock, so the save can land between the read and the rename. The file is put back as it was saved,
and the file is reported, not overwritten. The save is made at a real point of the rewrite (real files)."""

from __future__ import annotations

import hashlib
import json
import os

from mnemon_ls.records import redaction
from tests.redact_samples import GITHUB


def test_a_file_saved_during_the_rewrite_is_put_back_and_reported(source, monkeypatch):
    source.create("project", "fact", "one", "builds run on Linux")
    source.create("project", "fact", "two", "tests run on CI")
    path = source.store("project").path
    lines = path.read_text().splitlines()
    record = json.loads(lines[0])
    content = f"push with {GITHUB['ghp']}"
    record.update(content=content, contentHash="sha256:" + hashlib.sha256(content.encode()).hexdigest())
    path.write_text("\n".join([json.dumps(record), lines[1]]) + "\n")
    saved = path.read_bytes() + b'{"an editor": "saved this"}\n'
    redact = redaction._redacted_record

    def redact_while_a_person_saves(*args):
        tmp = path.with_name(".editor-save")
        tmp.write_bytes(saved)
        os.replace(tmp, path)  # the person holds no lock
        return redact(*args)

    monkeypatch.setattr(redaction, "_redacted_record", redact_while_a_person_saves)
    result = redaction.apply(source)
    monkeypatch.undo()
    assert path.read_bytes() == saved
    assert result["records"] == 0 and result["rewritten"] == []
    assert result["skipped"] == [{"file": ".dsh/workspace-memory/records.jsonl", "reason": (
        "another program saved the file while it was being redacted; it was put back as that program saved it: run "
        "`mnemon-ls redact --apply` again")}]
    assert [f["location"] for f in redaction.scan(source)] == [
        f".dsh/workspace-memory/records.jsonl line 1 {record['id']}.content"]


def _hand_written(path, content: str) -> None:
    """Give the last record of ``path`` ``content`` (with its hash), as another program would."""
    lines = path.read_text().splitlines()
    record = json.loads(lines[-1])
    record.update(content=content, contentHash="sha256:" + hashlib.sha256(content.encode()).hexdigest())
    path.write_text("\n".join([*lines[:-1], json.dumps(record)]) + "\n")


def test_a_session_file_of_this_workspace_is_covered_and_another_workspaces_is_not(source, workspace, dsh_home,
                                                                                 tmp_path):
    from mnemon_ls.records import RecordsSource
    from tests.gitrepo import make_repo

    source.create("session", "fact", "one", "builds run on Linux")
    mine = source.store("session").path
    _hand_written(mine, f"push with {GITHUB['ghp']}")
    other_repo = tmp_path / "other"
    make_repo(other_repo)
    other = RecordsSource(other_repo, session_id="s9", user_id="ana", env={"DSH_HOME": str(dsh_home)})
    other.create("session", "fact", "two", "tests run on CI")
    theirs = other.store("session").path
    _hand_written(theirs, f"push with {GITHUB['gho']}")
    kept = theirs.read_bytes()
    # the host's source has no session id: the session files are found by the workspace their records name
    host_source = RecordsSource(workspace, user_id="ana", env={"DSH_HOME": str(dsh_home)})
    assert [(f["location"], f["kind"]) for f in redaction.scan(host_source)] == [
        (f"{mine} line 1 {json.loads(mine.read_text())['id']}.content", "github-token")]
    result = redaction.apply(host_source)
    assert result["rewritten"] == [str(mine)] and GITHUB["ghp"] not in mine.read_text()
    assert theirs.read_bytes() == kept and redaction.scan(host_source) == []


def test_a_quarantined_line_is_found_and_redacted_in_the_corrupt_copy(source):
    source.create("project", "fact", "one", "builds run on Linux")
    store = source.store("project")
    with store.path.open("ab") as file:
        file.write(f'{{"content": "push with {GITHUB["ghp"]}", \n'.encode())  # a damaged line
    source.read("project")  # a read moves it to records.jsonl.corrupt
    assert GITHUB["ghp"].encode() in store.corrupt_path.read_bytes()
    assert [f["location"] for f in redaction.scan(source)] == [".dsh/workspace-memory/records.jsonl.corrupt line 1 "
                                                               "text"]
    result = redaction.apply(source)
    assert result["files"] == [".dsh/workspace-memory/records.jsonl.corrupt"]
    entry = json.loads(store.corrupt_path.read_text())
    assert entry["text"] == '{"content": "push with [redacted:github-token]", '
    assert redaction.scan(source) == []
