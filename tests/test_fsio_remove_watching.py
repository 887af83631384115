""":func:`mnemon_ls.fsio.remove_watching` when something other than the file its caller read stands at the path
(put there after the read, before the removal): never left at a hidden temp name, never removed with what it holds."""

from __future__ import annotations

from pathlib import Path

import pytest

from mnemon_ls import fsio


def _keep(kept: list[bytes]):
    def keep(displaced: fsio.Displaced) -> str:
        kept.append(bytes(displaced))
        return "kept"
    return keep


def test_a_directory_put_at_the_path_stays_there_whole(tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.mkdir()
    (path / "inner.txt").write_text("a person's text\n")
    kept: list[bytes] = []
    with pytest.raises(IsADirectoryError):
        fsio.remove_watching(path, b"what the caller read\n", _keep(kept))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.md"]  # no hidden temp name left behind
    assert (path / "inner.txt").read_text() == "a person's text\n" and kept == []


def test_a_file_with_the_bytes_read_is_removed_and_another_save_kept(tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.write_bytes(b"read\n")
    kept: list[bytes] = []
    assert fsio.remove_watching(path, b"read\n", _keep(kept)) is None
    assert list(tmp_path.iterdir()) == [] and kept == []
    path.write_bytes(b"saved since\n")
    assert fsio.remove_watching(path, b"read\n", _keep(kept)) == "kept"
    assert kept == [b"saved since\n"]


def test_a_watched_replace_leaves_a_directory_put_at_the_path_there_whole(tmp_path: Path) -> None:
    """The swap (``renameat2(RENAME_EXCHANGE)``) takes a directory as well as a file: it is swapped back, and the
    write fails naming the path, with nothing of ours left."""
    path = tmp_path / "notes.md"
    path.mkdir()
    (path / "inner.txt").write_text("a person's text\n")
    with pytest.raises(OSError) as caught:
        fsio.replace_watching(path, b"our new version\n", b"what the caller read\n")
    assert str(path) in str(caught.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.md"]
    assert (path / "inner.txt").read_text() == "a person's text\n"
