"""SIGKILL during a pack import: the root is the old one or the new one, never a mix.

A real subprocess imports a pack and kills itself (SIGKILL, no cleanup of any kind) at a named step of
the commit protocol (:data:`mnemon_ls.packs.importer._step_hook`). Then a new host opens the root (it
finishes a decided swap) and the root's entries, documents and space items must equal either the
state before the import (killed before the swap journal) or the state an uninterrupted import gives
(killed after it)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mnemon_ls import packs
from tests.helpers import procs
from tests.helpers.packs import contents, host_on, seed

SCRIPT = r"""
import os, signal, sys
from pathlib import Path
from mnemon_ls.host import WorkspaceHost
from mnemon_ls.packs import importer
from mnemon_ls.settings import load_settings

root, pack, step, mode = sys.argv[1:5]
importer._step_hook = lambda name: os.kill(os.getpid(), signal.SIGKILL) if name == step else None
host = WorkspaceHost(None, load_settings({"storageScope": "custom", "dataDir": root, "runtimeUserScope": "storage"}))
host.import_pack(Path(pack).read_bytes(), mode=mode)
print("finished")
"""

#: (step, mode, which state the root must hold afterwards)
POINTS = [
    ("staged", "replace", "old"),
    ("journal", "replace", "new"),
    ("swap:0:moved", "replace", "new"),
    ("swap:1:placed", "replace", "new"),
    ("swap:2:moved", "replace", "new"),
    ("swapped", "replace", "new"),
    ("swap:1:moved", "merge", "new"),
]


def memory(root: Path) -> dict:
    """:func:`contents` with space ids left out (a merged space gets a fresh UUID at every import)."""
    got = contents(root)
    got["spaces"] = sorted(space[1:] for space in got["spaces"])
    return got


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    base = tmp_path_factory.mktemp("packs-crash")
    seed(base / "old")
    seed(base / "other", tag=" (new)")
    host = host_on(base / "other")
    try:
        pack = base / "pack.zip"
        pack.write_bytes(packs.export_pack(host).data)
    finally:
        host.close()
    expected = {"old": memory(base / "old")}
    for mode in ("replace", "merge"):
        shutil.copytree(base / "old", base / f"done-{mode}")
        host = host_on(base / f"done-{mode}")
        try:
            host.import_pack(pack.read_bytes(), mode=mode)
        finally:
            host.close()
        expected[mode] = memory(base / f"done-{mode}")
    assert expected["old"] != expected["replace"] != expected["merge"]
    return base, pack, expected


@pytest.mark.parametrize("step, mode, outcome", POINTS)
def test_sigkill_during_import_leaves_the_old_or_the_new_root(setup, tmp_path, step, mode, outcome):
    base, pack, expected = setup
    root = tmp_path / "root"
    shutil.copytree(base / "old", root)
    result = subprocess.run([sys.executable, "-c", SCRIPT, str(root), str(pack), step, mode],
                            capture_output=True, text=True, timeout=procs.WAIT_SECONDS)
    assert result.returncode == -9, result.stderr  # killed at the step, not finished
    assert "finished" not in result.stdout
    got = memory(root)  # a new host finishes a decided swap before anything is read
    assert got == expected["old" if outcome == "old" else mode]
    packs.recover(root)  # what the next pack operation does first: stale stage/backup folders go
    assert not [p.name for p in root.iterdir() if p.name.startswith(".dsh-pack")]
    assert memory(root) == got
    # the root takes writes again: the dead importer's locks are broken
    again = host_on(root)
    try:
        again.import_pack(pack.read_bytes(), mode=mode)
    finally:
        again.close()
    if mode == "replace":
        assert memory(root) == expected[mode]
