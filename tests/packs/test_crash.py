"""SIGKILL during a pack import: the root is the old one or the new one, never a mix.

A real subprocess imports a pack and kills itself (SIGKILL, no cleanup of any kind) at a named step of
the commit protocol (:data:`mnemon_ls.packs.swap._step_hook`). Then a new host opens the root (it
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
from tests.helpers.zygote import mnemon_command

SCRIPT = r"""
import os, signal, sys
from pathlib import Path
from mnemon_ls.host import WorkspaceHost
from mnemon_ls.packs import swap
from mnemon_ls.settings import load_settings

root, pack, step, mode = sys.argv[1:5]
swap._step_hook = lambda name: os.kill(os.getpid(), signal.SIGKILL) if name == step else None
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


SHARED_SCRIPT = r"""
import os, signal, sys
from pathlib import Path
from mnemon_ls.host import WorkspaceHost
from mnemon_ls.packs import swap
from mnemon_ls.settings import load_settings

workspace, pack, step = sys.argv[1:4]
swap._step_hook = lambda name: os.kill(os.getpid(), signal.SIGKILL) if name == step else None
host = WorkspaceHost(Path(workspace), load_settings({"storageScope": "workspace", "runtimeUserScope": "global"}))
host.import_pack(Path(pack).read_bytes(), mode="replace", components=["runtime"], replace_user_profile=True)
print("finished")
"""


def _user_entries(global_root: Path) -> list[str]:
    import json

    data = json.loads((global_root / "runtime" / "memories.json").read_text(encoding="utf-8"))
    return [e["content"] for e in data["entries"] if e["target"] == "user"]


@pytest.mark.parametrize("step", ["swap:0:moved", "swap:1:moved", "swapped"])
def test_a_killed_replace_of_the_shared_user_profile_is_finished_by_another_workspace(tmp_path, step):
    """The attack pass: an import replacing the shared USER.md was killed right after moving the global
    root's runtime/ away; another workspace then saw USER.md empty, its acknowledged add was later moved
    aside into a displaced folder by the importer's roll forward, and doctor said nothing. The global root
    now holds a copy of the swap journal: the other workspace's next command finishes the swap first, then
    reads the pack's profile and its add lands on it."""
    from tests.gitrepo import make_repo

    data = tmp_path / "data"
    env = procs.child_env(HOME=str(tmp_path / "home"), MNEMON_DATA_DIR=str(data), MNEMON_SEMANTIC="off")
    one, two = tmp_path / "one", tmp_path / "two"
    make_repo(one, "main")
    make_repo(two, "main")

    def cli(where: Path, *args: str) -> subprocess.CompletedProcess:
        done = subprocess.run(mnemon_command(*args, "--scope", "workspace"), cwd=where,
                              env=env, capture_output=True, text=True, timeout=procs.WAIT_SECONDS)
        assert "Traceback" not in done.stderr, done.stderr
        return done

    assert cli(one, "runtime", "add", "--target", "user", "--content", "Uses vim").returncode == 0
    assert cli(one, "runtime", "add", "--target", "memory", "--content", "one's fact").returncode == 0
    pack = tmp_path / "p.zip"
    assert cli(one, "pack", "export", "--pack-scope", "runtime", "--include-user-profile", "-o", str(pack)).returncode == 0
    assert cli(one, "runtime", "add", "--target", "user", "--content", "Likes tea").returncode == 0
    killed = subprocess.run([sys.executable, "-c", SHARED_SCRIPT, str(one), str(pack), step], env=env, cwd=one,
                            capture_output=True, text=True, timeout=procs.WAIT_SECONDS)
    assert killed.returncode == -9, killed.stderr
    # another workspace, first thing: its wake shows the pack's profile (never an empty one) ...
    wake = cli(two, "wake")
    assert wake.returncode == 0 and "Uses vim" in wake.stdout and "Likes tea" not in wake.stdout, wake.stdout
    # ... and its add is kept, on that profile
    assert cli(two, "runtime", "add", "--target", "user", "--content", "Answers in English").returncode == 0
    assert cli(one, "wake").returncode == 0  # the importing workspace's next command changes nothing more
    assert _user_entries(data) == ["Uses vim", "Answers in English"]
    leftovers = [p for p in [*data.rglob(".dsh-pack*"), *one.rglob(".dsh-pack*")] if "lock" not in p.name]
    assert leftovers == []
