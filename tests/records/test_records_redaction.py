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
