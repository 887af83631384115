"""Issue 23 (6): every file mnemon-ls creates is 0600 and every directory 0700 (DESIGN.md invariant 6), the
SQLite databases and their ``-journal``/``-wal``/``-shm`` files included, under the usual umask 022 (with
which SQLite itself would create 0644 files). Real roots, real SQLite files, the real CLI as subprocesses
and the Sources in process while their databases are open (``-wal`` and ``-shm`` exist only then)."""

from __future__ import annotations

import os
import sqlite3
import stat
import subprocess
from pathlib import Path
from typing import Iterator

import pytest

from mnemon_ls.documents import DocumentStore
from mnemon_ls.semantic.engine import SemanticConfig, SemanticEngine
from mnemon_ls.spaces import SpacesService
from tests.gitrepo import make_repo
from tests.helpers import procs
from tests.conftest import FrozenClock
from tests.helpers.zygote import mnemon_command

CHUNKS = Path("documents") / ".semantic-chunks.sqlite3"


@pytest.fixture
def umask_022() -> Iterator[None]:
    """The process umask 022 (children inherit it) for the test, restored after."""
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def wrong_modes(root: Path) -> list[str]:
    """Every file under ``root`` that is not 0600 and every directory that is not 0700 (``root`` included)."""
    wrong = []
    for path in [root, *sorted(root.rglob("*"))]:
        info = path.lstat()
        mode = stat.S_IMODE(info.st_mode)
        if stat.S_ISDIR(info.st_mode) and mode != 0o700 or stat.S_ISREG(info.st_mode) and mode != 0o600:
            wrong.append(f"{oct(mode)} {path.relative_to(root)}")
    return wrong


def databases(root: Path) -> list[str]:
    """The SQLite files under ``root`` and their side files, relative."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")
                  if p.is_file() and (p.read_bytes()[:16] == b"SQLite format 3\x00"
                                      or p.name.endswith(("-wal", "-shm", "-journal"))))


@pytest.fixture(scope="module")
def engine() -> Iterator[SemanticEngine]:
    engine = SemanticEngine(SemanticConfig(enabled=True), env={})
    engine.embedder()
    yield engine
    engine.stop()


def test_open_databases_and_their_wal_files_are_private(tmp_path: Path, umask_022: None, engine) -> None:
    root = tmp_path / "root"
    store = DocumentStore(root, None, clock=FrozenClock())
    store.search.semantic = engine
    spaces = SpacesService(root, semantic=engine)
    try:
        store.create("Release checklist", "# Before release\n\nRun the migration script before the release.")
        assert store.search.find("database upgrade").to_dict()["total"] >= 0
        space = spaces.create_space("Project", "decisions", active=True).to_dict()["id"]
        spaces.remember("We chose SQLite FTS5 for the side index", space_id=space)
        assert engine.wait_idle(120)
        spaces.recall("side index")
        held = databases(root)  # while every connection is open: the -wal and -shm files exist
        assert {str(CHUNKS), f"{CHUNKS}-wal", f"{CHUNKS}-shm", "data/default/mnemon.db",
                "data/default/.mnemon-ls-index.db", "data/default/.mnemon-ls-index.db-wal",
                "data/default/.mnemon-ls-vectors.db", "data/default/.mnemon-ls-vectors.db-wal"} <= set(held), held
        assert wrong_modes(root) == []
    finally:
        store.close()
        spaces.close()
    assert wrong_modes(root) == []


def test_a_chunk_index_an_older_version_left_world_readable_is_narrowed(tmp_path: Path, umask_022: None,
                                                                         engine) -> None:
    root = tmp_path / "root"
    store = DocumentStore(root, None, clock=FrozenClock())
    store.create("Release checklist", "Run the migration script before the release.")
    old = sqlite3.connect(root / CHUNKS)  # as SQLite alone creates it: 0644 under umask 022
    old.execute("PRAGMA journal_mode=WAL")
    old.execute("CREATE TABLE t(x)")
    assert stat.S_IMODE((root / CHUNKS).stat().st_mode) == 0o644
    assert stat.S_IMODE(Path(f"{root / CHUNKS}-wal").stat().st_mode) == 0o644
    store.search.semantic = engine
    try:
        store.search.find("database upgrade")
        assert wrong_modes(root) == []
    finally:
        old.close()
        store.close()


def test_the_command_line_creates_only_private_files(tmp_path: Path, umask_022: None) -> None:
    ws, root, other = tmp_path / "ws", tmp_path / "root", tmp_path / "other"
    make_repo(ws)
    env = procs.child_env(HOME=str(tmp_path / "home"), MNEMON_SEMANTIC="on", OMP_NUM_THREADS="1")
    where = ["--workspace", str(ws), "--scope", "custom", "--data-dir"]

    def run(*args: str, data: Path = root) -> str:
        done = subprocess.run([*mnemon_command(), *args, *where, str(data)], cwd=ws, env=env,
                              capture_output=True, text=True, timeout=procs.WAIT_SECONDS)
        assert done.returncode == 0, (args, done.stderr)
        return done.stdout

    run("runtime", "add", "--content", "Run tests with pytest -n 2")
    run("doc", "create", "--title", "ADR 7", "--content", "We chose SQLite FTS5. The rollback threshold is 5%.")
    run("doc", "search", "rollback threshold")
    run("space", "create", "--name", "Project", "--description", "decisions", "--active")
    run("remember", "We chose SQLite FTS5 for the side index")
    run("recall", "side index")
    run("space", "embed", "default")
    pack = tmp_path / "backup.zip"
    subprocess.run([*mnemon_command(), "pack", "export", "--data-dir", str(root), "-o", str(pack)],
                   cwd=ws, env=env, check=True, capture_output=True, timeout=procs.WAIT_SECONDS)
    subprocess.run([*mnemon_command(), "pack", "import", str(pack), "--data-dir", str(other)],
                   cwd=ws, env=env, check=True, capture_output=True, timeout=procs.WAIT_SECONDS)
    run("doc", "search", "rollback threshold", data=other)
    run("redact", "--apply")
    assert {str(CHUNKS), "data/default/mnemon.db", "data/default/.mnemon-ls-vectors.db"} <= set(databases(root))
    assert str(CHUNKS) in databases(other)
    assert wrong_modes(root) == [] and wrong_modes(other) == []


def test_migrate_copies_stores_into_private_files(tmp_path: Path, umask_022: None) -> None:
    from mnemon_ls import migrate_snapshot

    source = tmp_path / "source"
    spaces = SpacesService(source)
    try:
        spaces.create_space("Project", "decisions", active=True)
        spaces.remember("We chose SQLite FTS5 for the side index")
    finally:
        spaces.close()
    snapshot = tmp_path / "snapshot"
    snapshot.mkdir(mode=0o700)
    migrate_snapshot.copy_sqlite(source / "data" / "default" / "mnemon.db", snapshot / "data" / "default" / "mnemon.db")
    assert wrong_modes(snapshot) == []  # the private snapshot migrate reads from (a temporary directory)

    ws, target = tmp_path / "ws", tmp_path / "target"
    make_repo(ws)
    env = procs.child_env(HOME=str(tmp_path / "home"))
    done = subprocess.run([*mnemon_command(), "migrate", "--from", str(source), "--workspace", str(ws),
                           "--scope", "custom", "--data-dir", str(target)], cwd=ws, env=env, capture_output=True,
                          text=True, timeout=procs.WAIT_SECONDS)
    assert done.returncode == 0, done.stderr
    assert "data/default/mnemon.db" in databases(target) and wrong_modes(target) == []
