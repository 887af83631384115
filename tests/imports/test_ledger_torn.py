"""``state/imports.jsonl`` after an append a kill tore (its last line without a newline): the ledger skips that
line, but the next append was glued onto it, so the first row of the next import was lost too (an imported item
counted as never imported: a re-run imports it again). Now an append closes the torn line first (as the lineage
and the archive's memories.jsonl do)."""

from __future__ import annotations

import json
from pathlib import Path

from mnemon_ls.imports import ledger


def _row(key: str, origin: str = "imported") -> dict:
    return {"key": key, "origin": origin, "source": "agents-md", "path": "/x/AGENTS.md", "sha256": "0" * 64,
            "title": key, "destination": "memory", "ref": f"runtime:memory:{key}", "importedAt": "2026-12-07T00:00:00Z"}


def test_an_append_after_a_torn_line_keeps_every_new_row(tmp_path: Path) -> None:
    ledger.append(tmp_path, [_row("a" * 32)])
    path = ledger.ledger_path(tmp_path)
    with open(path, "ab") as f:
        f.write(b'{"key":"torn","origin":"imp')  # a kill in the middle of an append
    ledger.append(tmp_path, [_row("b" * 32), _row("c" * 32, "refused")])
    assert ledger.read_keys(tmp_path) == {"a" * 32, "b" * 32}
    assert set(ledger.read_refused(tmp_path)) == {"c" * 32}
    lines = path.read_bytes().split(b"\n")
    assert lines[1] == b'{"key":"torn","origin":"imp'  # the torn line is kept as it was, closed
    assert [json.loads(line)["key"] for line in lines[2:] if line] == ["b" * 32, "c" * 32]


def test_an_append_to_a_whole_ledger_adds_no_blank_line(tmp_path: Path) -> None:
    ledger.append(tmp_path, [_row("a" * 32)])
    ledger.append(tmp_path, [_row("b" * 32)])
    assert ledger.ledger_path(tmp_path).read_bytes().count(b"\n") == 2
    assert b"\n\n" not in ledger.ledger_path(tmp_path).read_bytes()
