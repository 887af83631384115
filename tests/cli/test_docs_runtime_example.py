"""docs/memory.md's runtime example works as written right after README's quick start (real ``mnemon-ls``
processes, a fresh data directory, a real git repository): its ``--old-text`` picks one entry. It used
``--old-text "pytest -n 2"``, which the quick start's own entry (``... python -m pytest -n 2``) also contains:
refused as ambiguous."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

from tests.gitrepo import make_repo
from tests.helpers import procs
from tests.helpers.zygote import mnemon_command

REPO = Path(__file__).resolve().parents[2]


def section_commands(text: str) -> list[list[str]]:
    """The ``mnemon-ls`` lines of ``text`` as argument lists: comments and ``[optional ...]`` parts left out."""
    commands = []
    for line in text.splitlines():
        if line.startswith("mnemon-ls "):
            line = re.sub(r"\s\[[^\]]*\](?:\s\.\.\.)?(?=\s|$)", "", line)
            commands.append(shlex.split(line, comments=True)[1:])
    return commands


def test_the_runtime_example_of_memory_md_runs_after_the_quick_start(tmp_path: Path) -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    quick = section_commands(readme.split("\n## Quick start\n", 1)[1].split("\n## ", 1)[0])
    guide = (REPO / "docs" / "memory.md").read_text(encoding="utf-8")
    block = guide.split("## Runtime memory (USER.md and MEMORY.md)", 1)[1].split("```", 2)[1]
    example = [words for words in section_commands(block) if words[:2] in (["runtime", "add"], ["runtime", "replace"],
                                                                          ["runtime", "remove"])]
    assert [w[1] for w in example] == ["add", "replace", "remove"]
    workspace = Path(make_repo(tmp_path / "repo").workdir)
    (tmp_path / "home").mkdir()
    env = procs.child_env(HOME=str(tmp_path / "home"), MNEMON_DATA_DIR=str(tmp_path / "data"), MNEMON_SEMANTIC="off")
    for words in [*quick, *example]:
        done = subprocess.run([*mnemon_command(), *words], capture_output=True, text=True, env=env, cwd=workspace,
                              timeout=120)
        assert done.returncode == 0, (words, done.stderr)
    listed = subprocess.run([*mnemon_command(), "runtime", "list", "--target", "memory"], capture_output=True,
                            text=True, env=env, cwd=workspace, timeout=120).stdout
    assert listed.splitlines()[1:] == ["  1. [normal; created=0d; updated=0d] Run the tests with: python -m pytest -n 2"]
