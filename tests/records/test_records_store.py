"""The JSONL store: modes, durable appends by four processes, quarantine, 8 MiB read-only, SIGKILL in compaction."""

from __future__ import annotations

import base64
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mnemon_ls.errors import StoreTooLarge
from mnemon_ls.records import JsonlStore, RecordsSource, content_hash, validate_record
from mnemon_ls.records.store import MAX_FILE_BYTES, encode, parse_lines

PYTHON = sys.executable
REPO = Path(__file__).resolve().parents[2]


def child_env(dsh_home: Path) -> dict[str, str]:
    return {**os.environ, "DSH_HOME": str(dsh_home), "PYTHONPATH": str(REPO)}


def test_files_0600_directories_0700_and_lines_read_back(source, dsh_home):
    source.create("user", "preference", "Tabs", "I prefer tabs")
    source.create("project", "decision", "JSONL", "Records are JSONL")
    for scope in ("user", "project"):
        path = source.location(scope).path
        assert path.stat().st_mode & 0o777 == 0o600
        assert path.parent.stat().st_mode & 0o777 == 0o700
        lines = path.read_bytes().split(b"\n")
        assert lines[-1] == b"" and all(json.loads(line)["schemaVersion"] == 1 for line in lines[:-1])
    assert (dsh_home / "workspace-memory").stat().st_mode & 0o777 == 0o700


APPENDER = r"""
import sys
from pathlib import Path
from mnemon_ls.records import RecordsSource
workspace, worker, count = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
source = RecordsSource(workspace, session_id="s", user_id="ana")
print("READY", flush=True)
sys.stdin.readline()
for n in range(count):
    source.create("project", "fact", f"w{worker} n{n}", f"worker {worker} record {n}")
"""


def test_four_processes_appending_to_one_scope_file_lose_nothing(workspace, dsh_home):
    count = 25
    procs = [subprocess.Popen([PYTHON, "-c", APPENDER, str(workspace), str(w), str(count)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=child_env(dsh_home))
             for w in range(4)]
    for proc in procs:
        assert proc.stdout.readline().strip() == "READY", proc.stderr.read()
    for proc in procs:  # released together: the appends interleave
        proc.stdin.write("go\n")
        proc.stdin.flush()
    for proc in procs:
        assert proc.wait(timeout=120) == 0, proc.stderr.read()
    source = RecordsSource(workspace, user_id="ana", env={"DSH_HOME": str(dsh_home)})
    data = source.location("project").path.read_bytes()
    records, valid, corrupt = parse_lines(data)
    assert corrupt == [] and valid == 4 * count
    assert sorted(r.content for r in records.values()) == sorted(
        f"worker {w} record {n}" for w in range(4) for n in range(count))


def test_corrupt_line_in_the_middle_is_moved_with_its_line_number(source):
    for n in range(3):
        source.create("project", "fact", f"t{n}", f"content {n}")
    path = source.location("project").path
    lines = path.read_bytes().split(b"\n")
    lines.insert(1, b'{"schemaVersion": 1, "id": broken')
    path.write_bytes(b"\n".join(lines))
    records = source.read("project")
    assert sorted(r.content for r in records.values()) == ["content 0", "content 1", "content 2"]
    moved = [json.loads(line) for line in path.with_name(path.name + ".corrupt").read_text().splitlines()]
    assert [(m["line"], m["text"]) for m in moved] == [(2, '{"schemaVersion": 1, "id": broken')]
    assert "not JSON" in moved[0]["reason"]
    assert b"broken" not in path.read_bytes()
    assert path.with_name(path.name + ".corrupt").stat().st_mode & 0o777 == 0o600


def test_a_line_that_is_not_utf8_is_moved_byte_for_byte(source):
    """A record another tool wrote in GBK (or any non-UTF-8 bytes) leaves the file only with its exact
    bytes in ``.corrupt`` (``base64``); the lenient ``text`` alone (U+FFFD, or a UTF-16 reading of a line
    starting 0xff 0xfe) would lose them."""
    source.create("project", "fact", "a", "first")
    path = source.location("project").path
    gbk = '{"schemaVersion":1,"title":"\u4e2d\u6587"}'.encode("gbk")
    bom_like = b"\xff\xfe garbage \xc3\x28"
    path.write_bytes(path.read_bytes() + gbk + b"\n" + bom_like + b"\n")
    assert [r.content for r in source.read("project").values()] == ["first"]
    moved = [json.loads(line) for line in path.with_name(path.name + ".corrupt").read_text().splitlines()]
    assert [(m["line"], m["reason"]) for m in moved] == [(2, "not UTF-8"), (3, "not UTF-8")]
    assert [base64.b64decode(m["base64"]) for m in moved] == [gbk, bom_like]
    assert gbk not in path.read_bytes() and bom_like not in path.read_bytes()


def test_cut_last_line_gets_a_newline_before_the_next_append(source):
    source.create("project", "fact", "a", "first")
    path = source.location("project").path
    path.write_bytes(path.read_bytes() + b'{"schemaVersion":1,"id":"cut')
    source.create("project", "fact", "b", "second")
    assert sorted(r.content for r in source.read("project").values()) == ["first", "second"]
    assert "cut" in path.with_name(path.name + ".corrupt").read_text()


def test_file_over_8_mib_is_read_only_and_unchanged(source):
    receipt = source.create("project", "fact", "keep", "a record that must stay readable")
    path = source.location("project").path
    big = receipt.record.to_json()
    with open(path, "ab") as handle:  # 9 MiB of valid records: a valid file, just too large
        for n in range(150):
            text = f"{n} " + "z" * 63_000
            handle.write(encode(validate_record(big | {"id": f"memory:user:fact:big{n}", "content": text,
                                                       "contentHash": content_hash(text)})))
    before = path.read_bytes()
    assert len(before) > MAX_FILE_BYTES
    assert receipt.record.id in source.read("project")
    for write in (lambda: source.create("project", "fact", "x", "y"), lambda: source.verify(receipt.record.id),
                  lambda: source.forget(receipt.record.id)):
        with pytest.raises(StoreTooLarge) as caught:
            write()
        assert caught.value.data["reason"] == "STORE_TOO_LARGE" and caught.value.code == "store-too-large"
    assert path.read_bytes() == before
    assert not path.with_name(path.name + ".corrupt").exists()


def test_append_that_would_cross_the_limit_is_refused(tmp_path):
    store = JsonlStore(tmp_path / "r.jsonl", max_bytes=600)
    source = RecordsSource(None, user_id="u", env={"DSH_HOME": str(tmp_path)})
    source._stores["user"] = store
    source.create("user", "fact", "a", "x")
    before = store.path.read_bytes()
    with pytest.raises(StoreTooLarge):
        source.create("user", "fact", "b", "y" * 500)
    assert store.path.read_bytes() == before


def test_compaction_keeps_one_line_per_record_and_a_bak(source):
    ids = [source.create("project", "fact", f"t{n}", f"c{n}").record.id for n in range(3)]
    source.verify(ids[0])
    source.forget(ids[1])
    path = source.location("project").path
    before = path.read_bytes()
    result = source.compact("project")
    assert result["linesBefore"] == 5 and result["linesAfter"] == 3
    assert path.with_name(path.name + ".bak").read_bytes() == before
    records = source.read("project")
    assert [records[i].status for i in ids] == ["active", "forgotten", "active"]
    assert records[ids[0]].governance.verification == "verified"


COMPACTOR = r"""
import sys
from pathlib import Path
from mnemon_ls.records import RecordsSource
source = RecordsSource(Path(sys.argv[1]), session_id="s", user_id="ana")
ids = sys.argv[2].split(",")
print("READY", flush=True)
n = 0
while True:
    n += 1
    source.edit(ids[n % len(ids)], title=f"edit {n}")
    source.compact("project")
"""


def test_sigkill_during_compaction_file_and_bak_together_hold_every_record(workspace, dsh_home):
    rng = random.Random(20261201)
    source = RecordsSource(workspace, user_id="ana", env={"DSH_HOME": str(dsh_home)})
    ids = [source.create("project", "fact", f"t{n}", f"content {n} " + "x" * 2000).record.id for n in range(30)]
    path = source.location("project").path
    bak = path.with_name(path.name + ".bak")
    for run in range(8):
        proc = subprocess.Popen([PYTHON, "-c", COMPACTOR, str(workspace), ",".join(ids)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=child_env(dsh_home))
        try:
            assert proc.stdout.readline().strip() == "READY", proc.stderr.read() if proc.poll() is not None else ""
            time.sleep(rng.uniform(0.01, 0.3))  # where the kill lands (not synchronisation)
            assert proc.poll() is None, proc.stderr.read()
            os.kill(proc.pid, signal.SIGKILL)
            assert proc.wait(timeout=60) == -signal.SIGKILL
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        found: set[str] = set()
        for candidate in (path, bak):
            if candidate.exists():
                records, _, _ = parse_lines(candidate.read_bytes())
                found |= set(records)
        assert set(ids) <= found, f"run {run}: lost {set(ids) - found}"
        records, _, corrupt = parse_lines(path.read_bytes())
        assert set(ids) <= set(records)  # the file itself is never a half-written replacement
        # the lock of the killed process is broken by the next writer (dead owner)
        source.edit(ids[0], title=f"after run {run}")
