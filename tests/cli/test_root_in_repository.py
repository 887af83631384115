"""A storage root given as ``--data-dir`` inside the repository never puts memory in front of ``git add``: the
workspace itself and its ``.git`` are refused naming the option, nothing written; a folder of the repository
that already exists gets a ``.gitignore`` in each area mnemon-ls creates in it (before, ``runtime/`` showed up
in ``git status`` as untracked, ready to be committed); a new folder is ignored as a whole, as before."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.cli.test_error_fields import workspace
from tests.cli.test_root_values import run
from tests.helpers import procs


def _untracked(ws: Path) -> list[str]:
    done = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=ws, capture_output=True,
                          text=True, check=True)
    return sorted(line[3:] for line in done.stdout.splitlines())


@pytest.mark.parametrize("scope", [(), ("--scope", "global")])
def test_the_workspace_itself_is_refused_as_a_data_dir(tmp_path: Path, scope: tuple[str, ...]) -> None:
    ws = workspace(tmp_path)
    before = procs.tree_snapshot(tmp_path)
    done = run(ws, tmp_path, "runtime", "add", "--content", "the build uses tox", *scope, "--data-dir", str(ws))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (f"mnemon-ls: error: --data-dir: {ws} is the workspace itself: memory stored there would "
                           "be mixed with the repository's files and committed with them; give a directory outside "
                           "the repository, or a new one inside it (it is kept out of git)\n")
    assert procs.tree_snapshot(tmp_path) == before


def test_a_data_dir_inside_dot_git_is_refused(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    before = procs.tree_snapshot(tmp_path)
    done = run(ws, tmp_path, "runtime", "add", "--content", "x", "--data-dir", str(ws / ".git" / "memory"))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (f"mnemon-ls: error: --data-dir: {ws / '.git' / 'memory'} is inside the workspace's .git "
                           "directory, which belongs to git; give a directory outside the repository, or a new one "
                           "inside it (it is kept out of git)\n")
    assert procs.tree_snapshot(tmp_path) == before


@pytest.mark.parametrize("existing", [True, False])
def test_a_folder_of_the_repository_keeps_memory_out_of_git(tmp_path: Path, existing: bool) -> None:
    ws = workspace(tmp_path)
    folder = ws / "notes"
    if existing:
        folder.mkdir()
        (folder / "todo.md").write_text("- ship it\n", encoding="utf-8")
    for command in (("runtime", "add", "--content", "the build uses tox"),
                    ("doc", "create", "--title", "Design", "--content", "The cache is per branch.")):
        done = run(ws, tmp_path, *command, "--data-dir", str(folder))
        assert done.returncode == 0, done.stderr
    assert "the build uses tox" in run(ws, tmp_path, "wake", "--data-dir", str(folder)).stdout
    assert _untracked(ws) == (["notes/todo.md"] if existing else [])
    assert (folder / ".gitignore").exists() is not existing  # a folder of the user's is not ignored as a whole
