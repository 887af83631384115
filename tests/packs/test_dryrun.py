"""``pack import --dry-run`` (``dryRun``) validates everything and says exactly what the import would do,
writing nothing: the storage root is byte-, inode- and mtime-identical (directories included: no lock
marker created and removed), no stage directory is left anywhere; and ``pack export`` without ``-o``
writes to the per-user exports folder, never into the current directory."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from mnemon_ls import packs
from mnemon_ls.errors import RuntimeCapacityError
from mnemon_ls.runtime import ops
from tests.helpers import procs
from tests.helpers.packs import host_on, seed
from tests.helpers.zygote import mnemon_command


def _strict_snapshot(path: Path) -> dict[str, tuple]:
    """Every file and directory under ``path`` with its mode, inode and mtime (directories too) and the
    bytes of files: a lock marker created and removed again changes its directory's mtime."""
    result: dict[str, tuple] = {}
    for current, _dirs, files in os.walk(path):
        info = os.stat(current)
        result[os.path.relpath(current, path)] = ("dir", info.st_mode, info.st_ino, info.st_mtime_ns)
        for name in files:
            full = os.path.join(current, name)
            info = os.stat(full)
            with open(full, "rb") as handle:
                result[os.path.relpath(full, path)] = ("file", info.st_mode, info.st_ino, info.st_mtime_ns,
                                                       handle.read())
    return result


def _cli(cwd: Path, root: Path, tmpdir: Path, *args: str) -> subprocess.CompletedProcess:
    argv = [*mnemon_command(), *args, "--scope", "custom", "--data-dir", str(root),
            "--runtime-user-scope", "storage"]
    result = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=procs.WAIT_SECONDS,
                            env=procs.child_env(HOME=str(cwd / "home"), MNEMON_SEMANTIC="off", TMPDIR=str(tmpdir)))
    assert "Traceback" not in result.stderr
    return result


def _without_run_details(receipt: dict) -> dict:
    """A receipt minus what differs between a dry run and the real import (status, the backup's time)."""
    out = {k: v for k, v in receipt.items() if k not in ("status", "dryRun", "backup")}
    backup = receipt.get("backup")
    if backup:
        out["backup"] = {k: v for k, v in backup.items() if k not in ("path", "restore", "written")}
    return out


@pytest.mark.parametrize("mode", ["merge", "replace"])
def test_a_dry_run_writes_nothing_and_says_exactly_what_the_import_does(tmp_path: Path, mode: str) -> None:
    seed(tmp_path / "a")
    root = tmp_path / "b"
    source = host_on(tmp_path / "a")
    try:
        host = host_on(root)
        try:  # b holds all of a, and then something of its own
            host.import_pack(packs.export_pack(source, "full", include_user_profile=True).data)
            host.runtime.mutate(ops.validate_request("add", "memory", "Only in b"))
            host.spaces.create_space("Local", "b's own", active=False)
        finally:
            host.close()
        source.runtime.mutate(ops.validate_request("add", "memory", "Only in a"))
        source.documents.create("New in a", "fresh\n")
        pack = tmp_path / "p.zip"
        pack.write_bytes(packs.export_pack(source, "full", include_user_profile=True).data)
    finally:
        source.close()
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    flags = ["--replace"] if mode == "replace" else []
    assert _cli(tmp_path, root, tmpdir, "doctor").returncode in (0, 1)  # any first-run work of a command is done
    before = _strict_snapshot(root)

    dry = _cli(tmp_path, root, tmpdir, "pack", "import", str(pack), *flags, "--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr
    assert _strict_snapshot(root) == before
    assert os.listdir(tmpdir) == []  # the stage outside the root is gone too
    text = _cli(tmp_path, root, tmpdir, "pack", "import", str(pack), *flags, "--dry-run")
    assert text.returncode == 0, text.stderr
    assert text.stdout.startswith(f"dry run: importing {pack} into {root} ({mode}: runtime, documents, "
                                  "memory-spaces) would do this; nothing was written\n"), text.stdout
    assert _strict_snapshot(root) == before

    would = json.loads(dry.stdout)
    assert (would["status"], would["dryRun"]) == ("dry-run", True)
    real = json.loads(_cli(tmp_path, root, tmpdir, "pack", "import", str(pack), *flags, "--json").stdout)
    assert (real["status"], real["dryRun"]) == ("committed", False)
    assert _without_run_details(would) == _without_run_details(real)
    removed = 1 if mode == "replace" else 0
    assert [would["runtime"][k] for k in ("added", "skipped", "removed")] == [1, 3, removed]
    assert would["documents"] == {"added": 1, "skipped": 2, "renamed": [], "removed": 0, "pendingHandEdits": []}
    assert [would["spaces"][k] for k in ("added", "skipped", "renamed", "removed")] == [0, 1, [], removed]
    if mode == "replace":
        assert would["backup"]["written"] is False and real["backup"]["written"] is True
        assert Path(would["backup"]["path"]).parent == Path(real["backup"]["path"]).parent
    else:
        assert would["backup"] is None and real["backup"] is None


def test_a_dry_run_refuses_what_the_import_refuses(tmp_path: Path) -> None:
    seed(tmp_path / "a")
    source = host_on(tmp_path / "a")
    try:
        data = packs.export_pack(source, "runtime").data
    finally:
        source.close()
    root = tmp_path / "b"
    host = host_on(root, runtimeMemory={"memoryLimitBytes": 60})
    try:
        host.runtime.mutate(ops.validate_request("add", "memory", "x" * 40))
        before = _strict_snapshot(root)
        with pytest.raises(RuntimeCapacityError):
            host.import_pack(data, dry_run=True)
    finally:
        host.close()
    assert _strict_snapshot(root) == before


def test_dry_run_must_be_a_boolean(tmp_path: Path) -> None:
    from mnemon_ls.errors import InvalidInput

    seed(tmp_path / "a")
    host = host_on(tmp_path / "a")
    try:
        data = packs.export_pack(host, "documents").data
        before = _strict_snapshot(tmp_path / "a")
        with pytest.raises(InvalidInput) as info:
            host.import_pack(data, dry_run="yes")
    finally:
        host.close()
    assert info.value.data["field"] == "dryRun"
    assert _strict_snapshot(tmp_path / "a") == before


def test_export_without_output_goes_to_the_exports_folder_not_the_work_tree(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True, timeout=procs.WAIT_SECONDS)
    home = tmp_path / "home"
    env = procs.child_env(HOME=str(home), MNEMON_SEMANTIC="off")
    run = mnemon_command()
    added = subprocess.run([*run, "runtime", "add", "--content", "Fact A"], cwd=project, env=env,
                           capture_output=True, text=True, timeout=procs.WAIT_SECONDS)
    assert added.returncode == 0, added.stderr
    listed = sorted(os.listdir(project))
    result = subprocess.run([*run, "pack", "export", "--json"], cwd=project, env=env, capture_output=True, text=True,
                            timeout=procs.WAIT_SECONDS)
    assert result.returncode == 0, result.stderr
    path = Path(json.loads(result.stdout)["path"])
    folder = home / ".mnemon" / "state" / "pack-exports"
    assert path.parent == folder and path.is_absolute()
    assert (stat.S_IMODE(folder.stat().st_mode), stat.S_IMODE(path.stat().st_mode)) == (0o700, 0o600)
    assert sorted(os.listdir(project)) == listed  # nothing written into the work tree
    assert packs.inspect_pack(path.read_bytes())["runtime"] == {"user": 0, "memory": 1}
    text = subprocess.run([*run, "pack", "export"], cwd=project, env=env, capture_output=True, text=True,
                          timeout=procs.WAIT_SECONDS)
    assert text.returncode == 0, text.stderr
    [line] = [l for l in text.stdout.splitlines() if l.startswith("exported ")]
    assert f" to {folder}{os.sep}mnemon-backup-" in line  # the full path, printed
    named = subprocess.run([*run, "pack", "export", "-o", "mine.zip"], cwd=project, env=env, capture_output=True,
                           text=True, timeout=procs.WAIT_SECONDS)
    assert named.returncode == 0, named.stderr
    [line] = [l for l in named.stdout.splitlines() if l.startswith("exported ")]
    assert f" to {project / 'mine.zip'} (" in line  # a relative -o is printed in full too

    elsewhere = tmp_path / "data"
    env["MNEMON_DATA_DIR"] = str(elsewhere)
    moved = subprocess.run([*run, "pack", "export", "--json"], cwd=project, env=env, capture_output=True, text=True,
                           timeout=procs.WAIT_SECONDS)
    assert moved.returncode == 0, moved.stderr
    assert Path(json.loads(moved.stdout)["path"]).parent == elsewhere / "state" / "pack-exports"
