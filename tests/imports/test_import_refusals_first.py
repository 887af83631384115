"""``mnemon-ls import --from PATH`` with a PATH that does not exist (a real subprocess, a real git workspace): the
import took the imports lock (a marker created and deleted under ``state/``, the directory created when it was not
there) before it checked the path, so a refused import changed the storage root's ``state/`` directory. Bad input
now changes nothing on disk: names and mtimes of every file and directory of the root are the same after it."""

from __future__ import annotations

import os
from pathlib import Path

from tests.cli.test_cli import Cli


def names_and_mtimes(root: Path) -> dict[str, int]:
    """Every file and directory under ``root`` (inclusive), relative path -> mtime in nanoseconds."""
    out = {}
    for current, _dirs, files in os.walk(root):
        out[os.path.relpath(current, root)] = os.stat(current).st_mtime_ns
        for name in files:
            full = os.path.join(current, name)
            out[os.path.relpath(full, root)] = os.lstat(full).st_mtime_ns
    return out


def test_a_from_path_that_does_not_exist_changes_nothing_on_disk(tmp_path: Path) -> None:
    cli = Cli(tmp_path)
    (cli.ws / "AGENTS.md").write_text("- Deploys go through staging first.\n")
    cli.ok("import", "agents-md", "--dry-run")  # keeps the plan's digests under state/import-plans/
    assert (cli.data / "state" / "import-plans").is_dir()
    before = names_and_mtimes(cli.data)
    missing = cli.tmp / "nowhere" / "AGENTS.md"
    result = cli.run("import", "agents-md", "--from", str(missing))
    assert result.returncode == 2
    assert f"--from: {missing} does not exist" in result.stderr
    assert names_and_mtimes(cli.data) == before


def test_a_from_path_that_does_not_exist_creates_no_state_directory(tmp_path: Path) -> None:
    cli = Cli(tmp_path)
    cli.ok("runtime", "add", "--content", "Deploys go through staging first.")
    state = cli.data / "state"
    assert not state.exists()  # nothing made it yet
    before = names_and_mtimes(cli.data)
    result = cli.run("import", "agents-md", "--from", str(cli.tmp / "nowhere"))
    assert result.returncode == 2 and "does not exist" in result.stderr
    assert names_and_mtimes(cli.data) == before and not state.exists()
