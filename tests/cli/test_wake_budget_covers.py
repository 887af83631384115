"""A wake budget at or above the snapshot's size prints all of it: below the default budget each cover
(Documents, Memory Spaces) was cut to 1/20 of the budget even when the whole snapshot fitted (``wake --budget
4000`` of a 1,550-character snapshot printed 1,454 characters, the Documents guidance cut mid-sentence and the
space named only as "1 more active spaces not shown"). Runtime memory keeps its priority: when the covers uncut
would leave out an entry, they are cut as before. Real CLI subprocesses on a real git repository."""

from __future__ import annotations

from pathlib import Path

from tests.cli.test_error_fields import cli, workspace


def seeded(tmp_path: Path) -> Path:
    """A workspace with a MEMORY.md entry, a Document and an active space of one item (the README's quick start)."""
    ws = workspace(tmp_path)
    for args in (("runtime", "add", "--content", "Run tests with pytest -n 2 before pushing", "--target", "memory"),
                 ("doc", "create", "--title", "Release plan", "--content", "Ship 1.0 after the migration script "
                  "runs; rollback steps are in docs/rollback.md."),
                 ("space", "create", "--name", "Project", "--description", "Build facts", "--active"),
                 ("remember", "We chose SQLite FTS5 for the side index")):
        done = cli(ws, tmp_path, *args)
        assert done.returncode == 0, (args, done.stderr)
    return ws


def test_a_budget_the_whole_snapshot_fits_in_prints_all_of_it(tmp_path: Path) -> None:
    ws = seeded(tmp_path)
    full = cli(ws, tmp_path, "wake").stdout
    assert "Release plan" in full and "Project (id default, 1 item)" in full, full
    for budget in (len(full) + 1, len(full) + 500, 4000):
        assert cli(ws, tmp_path, "wake", "--budget", str(budget)).stdout == full, budget


def test_a_budget_too_small_for_the_covers_still_cuts_them_and_keeps_runtime_memory(tmp_path: Path) -> None:
    ws = seeded(tmp_path)
    full = cli(ws, tmp_path, "wake").stdout
    small = cli(ws, tmp_path, "wake", "--budget", "1024").stdout
    assert len(small) <= 1024 < len(full)
    assert "Run tests with pytest -n 2 before pushing" in small, small
