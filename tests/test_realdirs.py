"""mnemon_ls.realdirs: the real path of a directory from the kernel gives exactly ``os.path.realpath``'s answer or
none at all; the branch probe's start (:func:`mnemon_ls.gitstate._start`) and the pack gate
(:func:`mnemon_ls.packgate.hold`) use it and answer as before."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest

from mnemon_ls import gitstate, packgate, realdirs

pytestmark = pytest.mark.skipif(not realdirs._HAS_PROC, reason="no /proc/self/fd: realpath is used as before")


def layout(tmp_path: Path) -> dict[str, str]:
    real = tmp_path / "real" / "deep"
    real.mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "real")
    (tmp_path / "file").write_text("x")
    (tmp_path / "to-file").symlink_to(tmp_path / "file")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    return {"plain": str(real), "through a link": str(tmp_path / "link" / "deep"),
            "dot-dot after a link": str(tmp_path / "link" / "deep" / ".."), "link itself": str(tmp_path / "link"),
            "trailing slash": str(real) + "/"}


def test_a_directory_gets_realpaths_answer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, path in layout(tmp_path).items():
        assert realdirs.real_directory(path) == os.path.realpath(path), name
    monkeypatch.chdir(tmp_path / "link")
    assert realdirs.real_directory("deep") == os.path.realpath("deep") == str(tmp_path / "real" / "deep")


def test_anything_else_gets_no_answer(tmp_path: Path) -> None:
    layout(tmp_path)
    for path in ("file", "to-file", "missing", "loop", "file/below"):
        assert realdirs.real_directory(str(tmp_path / path)) is None, path
    assert realdirs.real_directory("bad\x00path") is None
    gone = tmp_path / "gone"
    gone.mkdir()
    fd = os.open(gone, os.O_RDONLY | os.O_DIRECTORY)
    try:
        gone.rmdir()
        assert realdirs.fd_path(fd) is None  # Linux says "... (deleted)": no answer rather than a wrong one
    finally:
        os.close(fd)


def test_the_branch_probe_starts_where_it_did(tmp_path: Path) -> None:
    paths = layout(tmp_path)
    for name, path in paths.items():
        assert gitstate._start(path) == os.path.realpath(path), name
    assert gitstate._start(str(tmp_path / "to-file")) == str(tmp_path)  # a file: its directory
    for path in ("missing", "loop"):
        with pytest.raises(gitstate._Problem):
            gitstate._start(str(tmp_path / path))


def test_the_pack_gate_holds_each_real_root_once_and_excludes(tmp_path: Path) -> None:
    paths = layout(tmp_path)
    roots = [paths["through a link"], paths["plain"], str(tmp_path / "missing")]
    with packgate.hold(roots, exclusive=True, timeout=0.2):  # one directory under two names: held once
        fd = os.open(paths["plain"], os.O_RDONLY | os.O_DIRECTORY)
        try:
            with pytest.raises(BlockingIOError):
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)  # another holder is kept out
        finally:
            os.close(fd)
    with packgate.hold(roots, exclusive=False):
        with packgate.hold([paths["plain"]], exclusive=False):  # shared with shared
            pass
