"""A native store with a damaged page (bytes overwritten inside ``mnemon.db``: the header and the size look whole,
every query reading the page fails with ``SQLITE_CORRUPT``).

Before: recall, remember and ``space status`` ended in a Python traceback (``sqlite3.DatabaseError: database disk
image is malformed``) and ``doctor`` said "no problems found". Now each is a stable ``unreadable-store`` error
naming the file (a recall of several spaces answers from the others and says which failed), nothing on disk
changes, and doctor names the store as damaged.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.gitrepo import make_repo
from tests.helpers import procs
from tests.helpers.procs import tree_snapshot
from tests.helpers.zygote import mnemon_command


def cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``mnemon-ls ARGS`` in the workspace ``tmp_path/ws`` with its memory in ``tmp_path/root``; never a traceback."""
    result = subprocess.run(mnemon_command(*args, "--scope", "custom", "--data-dir", str(tmp_path / "root")),
                            cwd=tmp_path / "ws", capture_output=True, text=True, timeout=procs.WAIT_SECONDS,
                            env=procs.child_env(HOME=str(tmp_path / "home"), MNEMON_SEMANTIC="off"))
    assert "Traceback" not in result.stderr, result.stderr
    return result


def damage_pages(db: Path) -> None:
    """Overwrite every page after the first (the schema) with ``A`` bytes, keeping the file's size."""
    data = bytearray(db.read_bytes())
    page = int.from_bytes(data[16:18], "big") or 65536
    data[page:] = b"A" * (len(data) - page)
    db.write_bytes(bytes(data))


def test_a_damaged_page_is_a_named_error_and_a_doctor_problem_not_a_traceback(tmp_path: Path) -> None:
    make_repo(tmp_path / "ws")
    root = tmp_path / "root"
    assert cli(tmp_path, "space", "create", "--name", "main", "--description", "facts").returncode == 0
    assert cli(tmp_path, "space", "create", "--name", "other", "--description", "more").returncode == 0
    assert cli(tmp_path, "remember", "the build uses meson", "--space", "main").returncode == 0
    assert cli(tmp_path, "remember", "the build runs on meson 1.4", "--space", "other").returncode == 0
    for name in ("main", "other"):
        assert cli(tmp_path, "space", "activate", name).returncode == 0
    db = root / "data" / "default" / "mnemon.db"
    assert not list(db.parent.glob("mnemon.db-*"))  # checkpointed: mnemon.db holds it all
    damage_pages(db)
    before = tree_snapshot(tmp_path)

    for args in (("remember", "a second fact", "--space", "main"), ("space", "status", "main")):
        result = cli(tmp_path, *args, "--json")
        assert result.returncode == 1, (args, result.stdout, result.stderr)
        error = json.loads(result.stdout)["error"]
        assert error["code"] == "unreadable-store" and error["file"] == str(db), (args, error)
        assert "is damaged (database disk image is malformed); nothing was changed" in error["message"], error
    assert tree_snapshot(tmp_path) == before
    damaged = tree_snapshot(db.parent)
    recalled = cli(tmp_path, "recall", "meson", "--json")
    assert recalled.returncode == 0, recalled.stderr
    answer = json.loads(recalled.stdout)
    assert [r["content"] for r in answer["results"]] == ["the build runs on meson 1.4"]
    failed = [s for s in answer["sources"] if s["status"] != "ready"]
    assert [(s["spaceId"], s["status"]) for s in failed] == [("default", "unavailable")], answer["sources"]
    assert f"{db} is damaged" in failed[0]["hint"]
    assert tree_snapshot(db.parent) == damaged  # the other space counted the recall; this one is untouched
    before = tree_snapshot(tmp_path)

    report = cli(tmp_path, "doctor", "--json")
    assert report.returncode == 1
    finding = {f["subject"]: f for f in json.loads(report.stdout)["findings"]}[str(db)]
    assert finding["level"] == "problem", finding
    assert finding["message"].startswith("the store of space 'main' (default) is damaged: SQLite's quick_check says")
    assert tree_snapshot(tmp_path) == before
