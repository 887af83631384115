"""``space purge-deleted`` read the ``data/.deleted/`` listing twice under the lock (once to size the kept stores,
once to remove them), so what it counted and what it removed came from two listings. It now lists the folder once:
the count and bytes it reports are those of the stores it removed. A real registry lock and real folders; the
listing is counted by wrapping the real ``os.listdir``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mnemon_ls.spaces import deleted
from mnemon_ls.spaces.registry import SpaceRegistry


def _keep(folder: Path, name: str, body: bytes) -> int:
    """A kept store ``folder/name`` holding ``body`` with its ``.json`` beside it; returns their bytes."""
    (folder / name).mkdir(parents=True)
    (folder / name / "mnemon.db").write_bytes(body)
    Path(f"{folder / name}.json").write_text('{"id": "x"}\n')
    return len(body) + len('{"id": "x"}\n')


def test_purge_lists_the_deleted_folder_once_and_reports_what_it_removed(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    registry = SpaceRegistry(tmp_path / "root")
    folder = registry.data_dir / deleted.DELETED_DIR
    size = _keep(folder, "20261207T091500.123Z-work", b"a" * 300) + _keep(folder, "20261207T091501.456Z-notes",
                                                                             b"b" * 50)
    (folder / "mine.txt").write_text("not a kept store")
    listings: list[str] = []
    real = os.listdir

    def counted(path: object = ".") -> list[str]:
        if os.path.realpath(str(path)) == os.path.realpath(folder):
            listings.append(str(path))
        return real(path)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "listdir", counted)
    done = deleted.purge(registry)
    monkeypatch.undo()
    assert len(listings) == 1, listings
    assert (done["removed"], done["bytes"]) == (2, size)
    assert sorted(p.name for p in folder.iterdir()) == ["mine.txt"]
    assert deleted.purge(registry)["removed"] == 0
