"""Fixtures: a private HOME, a Hermes Holographic database made by the engine itself (banks ``project`` and
``user_pref``, as Hermes' ``fact_store`` tool writes them), and a storage root."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import pytest

from mnemon_ls_provider_holographic.engine import load_engine

# the shared CLI wrapper of the provider packages' tests (tests/helpers/provider_cli.py of the repository)
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests" / "helpers"))


@pytest.fixture(autouse=True)
def private_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("HERMES_HOME", raising=False)
    monkeypatch.delenv("MNEMON_DATA_DIR", raising=False)
    return home


@pytest.fixture
def hermes_db(tmp_path: Path) -> Path:
    """A database written by Hermes' own MemoryStore (three facts in two banks)."""
    path = tmp_path / "hermes" / "memory_store.db"
    modules = load_engine()
    store = modules.store.MemoryStore(db_path=str(path))
    store.add_fact("The user prefers tabs over spaces in Makefiles", category="user_pref")
    store.add_fact("Project Atlas deploys with Blue Green switching", category="project", tags="deploy")
    store.add_fact("Project Atlas stores sessions in Redis", category="project")
    store.close()
    return path


def facts(path: Path) -> list[tuple[int, str, str]]:
    """``(fact_id, content, category)`` straight from the file (what a Hermes Agent reads)."""
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT fact_id, content, category FROM facts ORDER BY fact_id").fetchall()
