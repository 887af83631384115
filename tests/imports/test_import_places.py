"""``mnemon-ls import --help`` names every place each source is read from, as the code reads them.

The help's SOURCE text was written by hand and listed fewer places than the code read and docs/import.md
showed (no ``.claude/CLAUDE.md``; ``.claude/rules/`` without saying subdirectories count; ``.cursor/rules/*.mdc``
and ``.github/instructions/*.instructions.md`` though the code reads them in subdirectories too). The help now
comes from the formats' one list of places (``imports.sources.PLACES``); this test holds that list to the code
(a file at each place is found; a place written without ``**/`` does not reach into subdirectories) and to the
help a person reads (a real subprocess)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from mnemon_ls.imports import sources
from mnemon_ls.imports.claude_code import project_dir_name
from tests.helpers import procs
from tests.helpers.zygote import mnemon_command


def place_path(place: str, ws: Path, home: Path, deep: bool) -> Path:
    """The file a place names: ``~`` is ``home``, ``<project>`` the workspace's project directory, ``*`` a name;
    ``**/`` (and, when ``deep``, the directory before a ``*`` name) a subdirectory."""
    path = place.replace("<project>", project_dir_name(ws)).replace("**/", "sub/")
    if deep and "*" in path.rsplit("/", 1)[-1]:
        head, name = path.rsplit("/", 1)
        path = f"{head}/deeper/{name}"
    path = path.replace("*", "x")
    return home / path[2:] if path.startswith("~/") else ws / path


@pytest.mark.parametrize("name", sources.SOURCE_NAMES)
def test_each_place_the_help_names_is_where_the_code_reads(tmp_path: Path, name: str) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    fmt = sources.get(name)
    wanted = {place_path(p, ws, home, False) for p in fmt.defaults}
    for path in wanted:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("- A fact.\n")
    located = {loc.path for loc in fmt.locate(ws, {"HOME": str(home)})}
    assert located == wanted
    deeper = {place_path(p, ws, home, True) for p in fmt.defaults if "*" in p} - wanted
    for path in deeper:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("- A fact.\n")
    located = {loc.path for loc in fmt.locate(ws, {"HOME": str(home)})}
    reached = {p for p in deeper if p in located}
    # a place with **/ reaches into subdirectories (the help says so); one without does not
    assert reached == {place_path(p, ws, home, True) for p in fmt.defaults if "**/" in p}


def test_the_help_lists_every_place_the_code_reads(tmp_path: Path) -> None:
    env = procs.child_env(HOME=str(tmp_path))
    result = subprocess.run(mnemon_command("import", "--help"), capture_output=True, text=True, env=env,
                            cwd=tmp_path, timeout=procs.WAIT_SECONDS, encoding="utf-8")
    assert result.returncode == 0, result.stderr
    said = " ".join(result.stdout.split()).replace("- ", "-")  # argparse wraps at hyphens and spaces
    for name in sources.SOURCE_NAMES:
        for place in sources.get(name).defaults:
            assert place in said, (name, place)
