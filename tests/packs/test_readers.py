"""A pack import is atomic for concurrent readers and writers (issue 13, item 5; attack pass: a ``remember``
run during ``pack import`` failed with "N spaces are active").

Two real processes share one root: a writer runs ``mnemon-ls remember`` / ``mnemon-ls recall`` (the CLI's
own ``main``, a fresh host per command) in a loop, and an importer runs ``mnemon-ls pack import --replace``
several times. The importer's step hook holds each swap open, with ``data/`` moved away and the new one
not yet placed, until the writer has finished two more commands (or a bounded wait passes: a correct
writer waits for the import instead, which is the point). Outcome counts, never sleeps, decide:

- every command either succeeded or was refused with the retryable ``store-busy`` error;
- an acknowledged write is never lost: the writes still present at the end are exactly the suffix of the
  acknowledged ones after the last import (a replace removes the earlier ones), and the writer's last write
  (made after the last import) is among them.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from mnemon_ls import packs
from tests.helpers import procs
from tests.helpers.packs import contents, host_on, items_of, seed

WRITER = r"""
import contextlib, io, json, os, sys, time
from pathlib import Path
from mnemon_ls.cli import full as cli

root, log, stop = sys.argv[1:4]
common = ["--data-dir", root, "--runtime-user-scope", "storage", "--json"]
armed, marker, journal = (Path(root).parent / "armed", Path(root) / ".dsh-pack.lock",
                          Path(root) / ".dsh-pack-swap.json")
out = open(log, "a", buffering=1)
real_host = cli._host

def host_then_wait(args):
    # The command's host exists; once per import, let the import reach its swap before the command reads
    # anything (a correct import cannot: it waits for this command, and the bounded wait passes).
    host = real_host(args)
    if armed.exists():
        armed.unlink()
        for path, seconds in ((marker, 30.0), (journal, 0.5)):  # the import started; it decided its swap
            deadline = time.monotonic() + seconds
            while not path.exists() and time.monotonic() < deadline:
                time.sleep(0.002)
    return host

cli._host = host_then_wait
i = 0
while True:
    last = os.path.exists(stop)
    for op, argv in (("remember", ["remember", f"concurrent fact number {i}", *common]),
                     ("recall", ["recall", "concurrent fact", "--embed-seconds", "0", *common])):
        out.write(json.dumps({"begin": op, "i": i}) + "\n")
        stdout, stderr = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            code = cli.main(argv)
        out.write(json.dumps({"end": op, "i": i, "code": code, "out": stdout.getvalue(),
                              "err": stderr.getvalue()}) + "\n")
    i += 1
    if last:
        break
"""

IMPORTER = r"""
import contextlib, io, json, sys, time
from pathlib import Path
from mnemon_ls.cli import full as cli
from mnemon_ls.packs import swap

root, pack, log, rounds = sys.argv[1:5]
common = ["--data-dir", root, "--runtime-user-scope", "storage", "--json"]

def ends():
    with open(log) as f:
        return sum(1 for line in f if line.startswith('{"end"'))

def wait_for(count, seconds):
    deadline = time.monotonic() + seconds
    while ends() < count and time.monotonic() < deadline:
        time.sleep(0.002)

def hook(name):
    if name == "swap:0:moved":  # data/ is moved away, the new one not placed yet: the widest window
        wait_for(ends() + 1, 0.5)

swap._step_hook = hook
for _ in range(int(rounds)):
    wait_for(ends() + 1, 30.0)  # the writer made progress since the last import
    (Path(root).parent / "armed").write_text("")
    with contextlib.redirect_stdout(io.StringIO()) as out:
        code = cli.main(["pack", "import", pack, "--replace", *common])
    print(code, flush=True)
"""


def test_remember_and_recall_during_pack_import_see_the_old_or_the_new_root(tmp_path):
    root, other = tmp_path / "root", tmp_path / "other"
    seed(root)
    seed(other, tag=" (new)")
    host = host_on(other)
    try:
        pack = tmp_path / "spaces.zip"
        pack.write_bytes(packs.export_pack(host, "memory-spaces").data)
    finally:
        host.close()
    log, stop = tmp_path / "writer.log", tmp_path / "stop"
    log.write_text("")
    env = procs.child_env()
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(root), str(log), str(stop)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        imported = subprocess.run([sys.executable, "-c", IMPORTER, str(root), str(pack), str(log), "2"], env=env,
                                  capture_output=True, text=True, timeout=procs.WAIT_SECONDS)
    finally:
        stop.write_text("")
        _, writer_err = writer.communicate(timeout=procs.WAIT_SECONDS)
    assert writer.returncode == 0, writer_err
    assert imported.stdout.split() == ["0", "0"], imported.stdout + imported.stderr

    ends = [json.loads(line) for line in log.read_text().splitlines() if line.startswith('{"end"')]
    refused = []
    acknowledged = []
    for end in ends:
        if end["code"] == 0:
            if end["end"] == "remember":
                acknowledged.append(f"concurrent fact number {end['i']}")
            continue
        error = json.loads(end["out"].splitlines()[-1])["error"]
        refused.append((end["end"], error["code"], error["message"]))
    assert all(code == "store-busy" for _, code, _ in refused), refused
    assert acknowledged, ends

    present = {content for content, _ in items_of(root / "data" / "default" / "mnemon.db")}
    kept = [content in present for content in acknowledged]
    assert kept[-1], "the write made after the last import is missing"
    first = kept.index(True)
    assert all(kept[first:]), [c for c, k in zip(acknowledged, kept) if not k and acknowledged.index(c) > first]
    assert "Release branch is frozen (new)" in present  # the pack's store is the one in place


class _Killed(BaseException):
    """Stands for the process dying at a step (nothing of the import's own error handling runs)."""


def _intruding_import(tmp_path, then_die: bool):
    """Import a memory-spaces pack (replace) into a seeded root while "another program" (one that does not
    take the pack gate: an older mnemon-ls, the TypeScript plugin) creates ``data/`` with its lock in the
    moment the old ``data/`` is moved away."""
    from mnemon_ls.packs import swap

    root, other = tmp_path / "root", tmp_path / "other"
    seed(root)
    seed(other, tag=" (new)")
    host = host_on(other)
    try:
        data = packs.export_pack(host, "memory-spaces").data
    finally:
        host.close()

    def intrude(name):
        if name == "swap:0:moved":
            (root / "data").mkdir()
            (root / "data" / ".dsh-memory-bodies.lock").write_text("foreign")
            if then_die:
                raise _Killed

    host = host_on(root)
    swap._step_hook = intrude
    try:
        host.import_pack(data, mode="replace")
    finally:
        swap._step_hook = None
        host.close()
    return root


def _displaced(root):
    kept = [p for p in root.iterdir() if p.name.startswith(".dsh-pack-displaced-")]
    assert len(kept) == 1
    return (kept[0] / "data" / ".dsh-memory-bodies.lock").read_text()


def test_a_directory_another_program_creates_during_the_swap_is_kept_and_the_swap_rolls_back(tmp_path):
    from mnemon_ls.errors import PackRefused

    seed(tmp_path / "seeded")  # what the root holds before (seeded the same way)
    before = contents(tmp_path / "seeded")
    with pytest.raises(PackRefused) as refused:
        _intruding_import(tmp_path, then_die=False)
    root = tmp_path / "root"
    assert refused.value.data["reason"] == "swap-failed" and refused.value.data["displaced"]
    assert [s[1:] for s in contents(root)["spaces"]] == [s[1:] for s in before["spaces"]]  # the old root, usable
    assert _displaced(root) == "foreign"
    assert not (root / ".dsh-pack-swap.json").exists()


def test_recovery_after_a_crash_moves_what_another_program_created_aside_and_finishes_the_swap(tmp_path):
    with pytest.raises(_Killed):
        _intruding_import(tmp_path, then_die=True)
    root = tmp_path / "root"
    assert (root / ".dsh-pack-swap.json").exists()
    got = contents(root)  # a new host finishes the decided swap (it used to fail: "Directory not empty")
    assert [s[1] for s in got["spaces"]] == ["Project"]
    assert "Release branch is frozen (new)" in [c for c, _ in got["spaces"][0][3]]
    assert _displaced(root) == "foreign" and not (root / ".dsh-pack-swap.json").exists()

