"""A Memory Space registry that a repair rebuilt says so to an assistant as the command line says it to a person
(tests/cli/test_registry_notice.py): ``mnemon_status`` and ``mnemon_memory_spaces`` (list) name the kept copy
on every call (the operations' notes, the lines ``space list`` prints on stderr), ``mnemon_recall`` once per
server process, and again when another copy is kept. The real ``mnemon-ls mcp`` through the SDK's stdio client."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.helpers.zygote import mnemon_command
from tests.mcp.conftest import answer, mcp_session


def notes(text: str, copy: Path) -> list[str]:
    """The ``note:`` lines of ``text`` that name ``copy``."""
    return [line for line in text.splitlines() if line.startswith("note: ") and str(copy) in line]


async def test_status_and_space_list_name_the_kept_copy_and_recall_says_it_once(workspace: Path,
                                                                              data_dir: Path) -> None:
    env = dict(os.environ) | {"HOME": str(workspace.parent / "home"), "MNEMON_SEMANTIC": "off"}
    for args in (("space", "create", "--name", "Project", "--description", "facts", "--active"),
                 ("remember", "the deploy runs nightly at two")):
        done = subprocess.run([*mnemon_command(), *args, "--scope", "custom", "--data-dir", str(data_dir)],
                              capture_output=True, text=True, env=env, cwd=workspace, timeout=60)
        assert done.returncode == 0, done.stderr
    catalog = data_dir / "data" / ".dsh-memory-bodies.json"
    catalog.write_text('{"broken')
    quarantine = data_dir / "data" / ".quarantine"
    args = ["--workspace", str(workspace), "--scope", "custom", "--data-dir", str(data_dir)]
    async with mcp_session(args) as session:
        listed = await answer(session, "mnemon_memory_spaces", {"action": "list"})  # the call that repairs it
        [copy] = sorted(quarantine.iterdir())
        assert listed.startswith("- default: Project (active, mnemon-native)")
        [line] = notes(listed, copy)
        assert "data/.dsh-memory-bodies.json was damaged (not valid JSON" in line and "rebuilt with 1" in line
        for _ in range(2):  # every call: it describes the registry, as `space list` does
            assert notes(await answer(session, "mnemon_memory_spaces", {}), copy) == [line]
            assert notes(await answer(session, "mnemon_status", {}), copy) == [line]
        first = await answer(session, "mnemon_recall", {"query": "deploy nightly"})
        assert "deploy runs nightly" in first and notes(first, copy) == [line]
        for _ in range(2):  # said once: not on every recall of the session
            again = await answer(session, "mnemon_recall", {"query": "deploy nightly"})
            assert "deploy runs nightly" in again and "damaged" not in again
        # another repair keeps another copy: a new thing to say, once
        catalog.write_text('{"broken again')
        assert notes(await answer(session, "mnemon_memory_spaces", {}), copy) == [line]
        [newer] = [p for p in sorted(quarantine.iterdir()) if p != copy]
        told = await answer(session, "mnemon_recall", {"query": "deploy nightly"})
        assert "deploy runs nightly" in told and str(newer) in told and str(copy) not in told
        assert str(newer) not in await answer(session, "mnemon_recall", {"query": "deploy nightly"})
        copy.unlink()
        newer.unlink()  # checked and deleted: nothing more to say
        assert "note:" not in await answer(session, "mnemon_memory_spaces", {})
        assert "note:" not in await answer(session, "mnemon_status", {})


async def test_status_of_a_linked_storage_root_answers_its_problem_without_a_note(workspace: Path,
                                                                                 tmp_path: Path) -> None:
    # the notes look at the registry; a root they may not read is the status's problem to report, not an error
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace / ".mnemon").symlink_to(outside, target_is_directory=True)
    args = ["--workspace", str(workspace), "--scope", "workspace"]
    async with mcp_session(args) as session:
        status = await answer(session, "mnemon_status", {})
    assert "must not be a symbolic link" in status and "note:" not in status
    assert os.listdir(outside) == []
