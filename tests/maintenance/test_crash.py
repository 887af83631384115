"""SIGKILL during MEMORY.md archival (issue 9, invariant 11): 30 kills at random steps of archival, into an
embedded Memory Space (20) and into the local archive (10). Each child (``tests/helpers/writer.py
archive``) adds facts through ``WorkspaceHost.mutate_runtime`` and parks at a breakpoint (the N-th call of
one archival step, drawn from a seeded generator), where it is SIGKILLed. After every kill: each
acknowledged fact is in hot memory, in the space (read from its SQLite file) or in the local archive;
memories.json is valid; every lineage destination exists; a torn line can only be the last. Finally a
child runs to the end on the same roots (no lock or half-written state is left in the way)."""

from __future__ import annotations

import json
import os
import random
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from mnemon_ls.host import WorkspaceHost
from mnemon_ls.maintenance import read_lineage, verify_lineage
from mnemon_ls.settings import load_settings
from tests.helpers.procs import WRITER, LineReader, child_env, finish, kill_hard, running
from tests.helpers.zygote import script_command

from tests.gitrepo import make_repo

sys.path.insert(0, str(WRITER.parent))
from writer import archive_fact  # noqa: E402

LIMIT = 1024
#: Steps of an archival a kill lands in, and the largest N drawn for each (calls per run vary).
STEPS = {
    "plan_maintenance": 2, "eligible_spaces": 1, "remember": 8, "_insert": 8, "_check_still_eligible": 2,
    "compact_and_mutate": 1, "_before_commit": 1, "append_lineage": 1, "commit": 1, "os.fsync": 4,
    "os.replace": 4, "_rename_watching": 2, "_archive_locally": 1, "append_file_durably": 3,
}
LOCAL_STEPS = ("plan_maintenance", "compact_and_mutate", "_before_commit", "append_lineage", "commit", "os.fsync",
               "os.replace", "_rename_watching", "_archive_locally", "append_file_durably")
SEED = 20261201


def host_for(workspace: Path) -> WorkspaceHost:
    settings = load_settings({"storageScope": "workspace", "runtimeUserScope": "storage",
                              "runtimeMemory": {"memoryLimitBytes": LIMIT}})
    return WorkspaceHost(workspace, settings)


def spawn(workspace: Path, start: int, count: int, pause: str | None) -> subprocess.Popen[bytes]:
    args = ["archive", str(workspace), str(start), str(count), "--limit", str(LIMIT)]
    if pause:
        args += ["--pause-at", pause]
    return subprocess.Popen(script_command(str(WRITER), *args), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=child_env())


def everywhere(host: WorkspaceHost) -> set[str]:
    """Contents in hot memory, in every space (straight from mnemon.db) and in the local archive."""
    state = host.runtime.read()
    assert state.problems == ()
    found = {e.content for e in state.memory}
    for db_path in (host.root / "data").glob("*/mnemon.db"):
        db = sqlite3.connect(db_path)
        try:
            found |= {row[0] for row in db.execute("SELECT content FROM insights WHERE deleted_at IS NULL")}
        finally:
            db.close()
    local = host.root / "runtime" / "archived" / "memories.jsonl"
    if local.exists():
        for line in local.read_bytes().split(b"\n"):
            try:
                found.add(json.loads(line)["content"])
            except (ValueError, KeyError):
                pass  # a torn last line of a killed append (its fact is still in hot memory)
    return found


def check(workspace: Path, acknowledged: set[int]) -> None:
    host = host_for(workspace)
    try:
        found = everywhere(host)
        missing = sorted(n for n in acknowledged if archive_fact(n) not in found)
        assert not missing, f"acknowledged facts in neither tier: {missing}"
        read_lineage(host.root)  # parses; a torn line of a killed append is skipped (its fact stayed in hot memory)
        spaces = host.spaces if (host.root / "data").is_dir() else None
        problems = [f for f in verify_lineage(host.root, spaces) if f.level == "problem"]
        assert not problems, problems
    finally:
        host.close()


@pytest.mark.parametrize("with_space,kills", [(True, 20), (False, 10)], ids=["space", "local-archive"])
def test_sigkill_at_random_steps_of_archival_loses_no_fact(tmp_path: Path, with_space: bool, kills: int) -> None:
    workspace = tmp_path / "repo"
    make_repo(workspace, "main")
    if with_space:
        host = host_for(workspace)
        host.spaces.create_space("Project", "Build facts", active=True)
        host.close()
    rng = random.Random(SEED + with_space)
    steps = list(STEPS) if with_space else list(LOCAL_STEPS)
    acknowledged: set[int] = set()
    start = 0
    done = 0
    attempts = 0
    while done < kills:
        attempts += 1
        assert attempts < kills * 4, "the breakpoints are not reached"
        step = rng.choice(steps)
        pause = f"{step}:{rng.randint(1, STEPS[step])}"
        with running(spawn(workspace, start, 25, pause)) as child:
            while True:
                line = child.reader.readline()
                if line.startswith("ACK "):
                    acknowledged.add(int(line.split()[1]))
                    continue
                assert line.startswith(("PAUSED", "DONE")), (pause, line)
                break
            if line.startswith("PAUSED"):
                assert child.kill() == -9
                done += 1
            else:
                child.proc.wait(timeout=60)
        start += 26  # the fact in flight (never acknowledged) is skipped, the next child starts fresh
        check(workspace, acknowledged)
    # after the kills, an uninterrupted child still archives and commits on the same root
    proc = spawn(workspace, start, 15, None)
    reader = LineReader(proc)
    try:
        lines = [reader.readline() for _ in range(17)]
        assert lines[0].startswith("READY") and lines[-1] == "DONE", lines
        kinds = {line.split()[2] for line in lines[1:-1]}
        assert ("mnemon-archive" if with_space else "local-archive") in kinds
        acknowledged |= {int(line.split()[1]) for line in lines[1:-1]}
    finally:
        kill_hard(proc)
        finish(proc)
    check(workspace, acknowledged)
    host = host_for(workspace)
    assert len(read_lineage(host.root).records) > kills  # the kills were spread over many archivals
    host.close()


def test_every_breakpoint_names_a_function_of_the_package() -> None:
    """A step the archival code no longer has never pauses, and its kills silently become clean runs (``_commit`` was
    renamed ``commit`` and the random kills stopped landing there): each must name a ``def`` of mnemon_ls."""
    import mnemon_ls

    package = Path(mnemon_ls.__file__).parent  # what an archival runs: Runtime, maintenance, spaces, fsio
    files = [package / "fsio.py", *(p for d in ("runtime", "maintenance", "spaces") for p in (package / d).rglob("*.py"))]
    source = "\n".join(p.read_text("utf-8") for p in files)
    for step in STEPS:
        if step.startswith("os."):
            assert hasattr(os, step[3:]), step
        else:
            assert f"def {step}(" in source, f"{step}: no function of that name in mnemon_ls"
