"""``mnemon-ls runtime add --routes`` and ``mnemon-ls runtime archived [--json]`` (issue 9), as processes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.helpers.procs import child_env

from tests.gitrepo import make_repo
from tests.helpers.zygote import mnemon_command


def run(workspace: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*mnemon_command(), *args, "--workspace", str(workspace), "--scope",
                           "workspace", "--runtime-user-scope", "storage", "--memory-limit-bytes", "400"],
                          capture_output=True, text=True, env=child_env(), timeout=120)


def fact(n: int) -> str:
    return f"Fact {n:03d}: the build cache lives in .cache/build-{n} and is safe to delete"


def test_archived_lists_what_left_and_where_in_text_and_json(tmp_path: Path) -> None:
    workspace = tmp_path / "repo"
    make_repo(workspace)
    empty = run(workspace, "runtime", "archived")
    assert empty.returncode == 0 and empty.stdout.startswith("Nothing has been archived out of MEMORY.md")
    outputs = [run(workspace, "runtime", "add", "--content", fact(n)) for n in range(7)]
    assert all(o.returncode == 0 for o in outputs), [o.stderr for o in outputs]
    archival = next(o.stdout for o in outputs if "Archived" in o.stdout)
    assert "into the local archive runtime/archived/MEMORY.md" in archival
    listing = run(workspace, "runtime", "archived", "--json")
    data = json.loads(listing.stdout)
    assert data["count"] == len(data["records"]) > 0
    assert data["path"].endswith("runtime/archived/lineage.jsonl")
    first = data["records"][0]
    assert first["destination"]["reference"] == "runtime/archived/memories.jsonl"
    assert first["stillInHotMemory"] is False and first["summary"].startswith("Fact ")
    text = run(workspace, "runtime", "archived").stdout.splitlines()
    assert text[0] == f"{data['count']} facts left MEMORY.md (lineage: {data['path']}):"
    assert text[1] == f"- {first['archivedAt']}  -> local archive runtime/archived/memories.jsonl"
    assert text[2] == f"    {first['summary']}"
    doctor = run(workspace, "doctor")
    assert f"{data['count']} archived {'fact' if data['count'] == 1 else 'facts'}, every destination found" in doctor.stdout


def test_bad_routes_json_is_refused_naming_the_flag(tmp_path: Path) -> None:
    workspace = tmp_path / "repo"
    make_repo(workspace)
    result = run(workspace, "runtime", "add", "--content", "x", "--routes", "[{")
    assert result.returncode == 2 and result.stderr.startswith("mnemon-ls: error: --routes: must be JSON like")
    result = run(workspace, "runtime", "add", "--content", "x", "--routes", '{"sourceIndexes": [1]}')
    assert (result.returncode, result.stderr) == (
        2, "mnemon-ls: error: --routes: must be a non-empty list of {sourceIndexes, spaceId} objects\n")
    assert not (workspace / ".mnemon").exists() or not (workspace / ".mnemon" / "runtime" / "memories.json").exists()


def test_one_archived_fact_is_singular() -> None:
    """Doctor's lineage lines count facts in English: "1 archived fact", "2 archived facts" (it said
    "1 archived facts")."""
    from mnemon_ls.maintenance.lineage import _facts

    assert (_facts(1), _facts(2), _facts(0)) == ("1 archived fact", "2 archived facts", "0 archived facts")
