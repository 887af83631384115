"""The reads every tool call makes, with few system calls: a store file through
:func:`mnemon_ls.fsio.read_bytes_or_none`, the git files of a branch probe through
:func:`mnemon_ls.gitfiles.read_small`, and the records' files and user, resolved once per value of what they
depend on (:mod:`mnemon_ls.records.paths`). Each gives exactly what the plain read gave, for every size, and
follows a change of what it depends on."""

from __future__ import annotations

import getpass
import os
from pathlib import Path

import pytest

from mnemon_ls import fsio, gitfiles
from mnemon_ls.errors import InvalidInput, StorageUnreadable, StorageUnsafe
from mnemon_ls.records import paths

SIZES = (0, 1, 4095, 4096, 4097, 65535, 65536, 65537, 300_001)


@pytest.mark.parametrize("size", SIZES)
def test_a_store_file_reads_whole_at_every_size(tmp_path: Path, size: int) -> None:
    data = os.urandom(size)
    path = tmp_path / "memories.json"
    path.write_bytes(data)
    assert fsio.read_bytes_or_none(path) == data
    assert fsio.read_bytes_or_none(tmp_path / "missing.json") is None
    assert fsio.read_bytes_if_present(path) == data
    assert fsio.read_bytes_if_present(tmp_path / "missing.json") is None


def test_a_store_file_that_is_a_directory_is_unreadable_and_named(tmp_path: Path) -> None:
    fsio.confine(tmp_path)
    (tmp_path / "memories.json").mkdir()
    with pytest.raises(StorageUnreadable) as caught:
        fsio.read_bytes_or_none(tmp_path / "memories.json")
    assert caught.value.data["file"] == str(tmp_path / "memories.json") and caught.value.data["errno"] == "EISDIR"


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("limit", (1, 4096, 1 << 20))
def test_a_git_file_reads_up_to_its_limit(tmp_path: Path, size: int, limit: int) -> None:
    data = os.urandom(size)
    path = tmp_path / "HEAD"
    path.write_bytes(data)
    with open(path, "rb") as fh:
        expected = fh.read(limit)  # what the probe read before
    assert gitfiles.read_small(str(path), limit) == expected


def test_a_git_file_read_raises_what_open_raised(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        gitfiles.read_small(str(tmp_path / "missing"))
    with pytest.raises(IsADirectoryError):
        gitfiles.read_small(str(tmp_path))
    (tmp_path / "file").write_bytes(b"x")
    with pytest.raises(NotADirectoryError):
        gitfiles.read_small(str(tmp_path / "file" / "HEAD"))


def test_the_records_user_follows_the_login_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DSH_USER_ID", raising=False)
    for name in ("LOGNAME", "USER", "LNAME", "USERNAME"):
        monkeypatch.delenv(name, raising=False)
    plain = getpass.getuser()
    assert paths.default_user_id() == plain
    monkeypatch.setenv("USER", "ada")
    assert paths.default_user_id() == "ada" == getpass.getuser()
    monkeypatch.setenv("LOGNAME", "grace")
    assert paths.default_user_id() == "grace"
    monkeypatch.setenv("DSH_USER_ID", "team-7")
    assert paths.default_user_id() == "team-7"
    monkeypatch.delenv("DSH_USER_ID")
    monkeypatch.delenv("LOGNAME")
    monkeypatch.delenv("USER")
    assert paths.default_user_id() == plain


def test_records_files_are_seen_where_the_environment_says_now(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    first, second = tmp_path / "home-a", tmp_path / "home-b"
    monkeypatch.delenv("MNEMON_DATA_DIR", raising=False)
    monkeypatch.setenv("DSH_HOME", str(first))
    assert not paths.any_file(workspace)
    user_file = second / "workspace-memory" / "user.jsonl"
    user_file.parent.mkdir(parents=True)
    user_file.write_text("")
    assert not paths.any_file(workspace)  # another home's file
    monkeypatch.setenv("DSH_HOME", str(second))
    assert paths.any_file(workspace)
    assert paths.any_file(workspace, env={"DSH_HOME": str(second)})
    assert not paths.any_file(workspace, env={"DSH_HOME": str(first)})
    user_file.unlink()
    assert not paths.any_file(workspace)  # looked at every time, not kept
    project = workspace / ".dsh" / "workspace-memory" / "records.jsonl"
    project.parent.mkdir(parents=True)
    project.write_text("")
    assert paths.any_file(workspace)
    with pytest.raises(InvalidInput) as caught:  # not kept either: refused every time, naming the variable
        paths.any_file(workspace, env={"DSH_HOME": "bad\x00home"})
    assert caught.value.field == "DSH_HOME"


def test_a_relative_records_home_follows_the_working_directory(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """``DSH_HOME=rel`` is made absolute from the working directory of the moment: the kept paths follow it."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    first, second = tmp_path / "a", tmp_path / "b"
    user_file = second / "rel" / "workspace-memory" / "user.jsonl"
    user_file.parent.mkdir(parents=True)
    user_file.write_text("")
    first.mkdir()
    monkeypatch.delenv("MNEMON_DATA_DIR", raising=False)
    monkeypatch.setenv("DSH_HOME", "rel")
    monkeypatch.chdir(first)
    assert not paths.any_file(workspace)
    monkeypatch.chdir(second)
    assert paths.any_file(workspace)
    monkeypatch.chdir(first)
    assert not paths.any_file(workspace)


def test_a_fifo_in_a_store_file_s_place_is_refused_not_waited_on(tmp_path: Path) -> None:
    """A named pipe where a store file belongs (``memories.json``, ``reviewed.json``): the read used to block in
    ``open`` until a writer came, so a wake hung; now it is refused at once, naming the file."""
    import threading

    fifo = tmp_path / "memories.json"
    os.mkfifo(fifo)
    outcome: dict = {}

    def read() -> None:
        try:
            outcome["data"] = fsio.read_bytes_or_none(fifo)
        except Exception as exc:  # noqa: BLE001 (checked below)
            outcome["error"] = exc

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(30)
    if reader.is_alive():  # the blocked open of before: give it a writer so that the thread ends
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(30)
    error = outcome.get("error")
    assert isinstance(error, StorageUnreadable) and str(fifo) in error.message and "not a regular file" in \
        error.message, outcome


def test_a_side_file_under_a_linked_directory_is_refused_when_present_and_none_when_missing(tmp_path: Path) -> None:
    """read_bytes_if_present (the citation, lineage and confirmation files of every recall) skips the directory
    walk only for a missing file; a file that exists under a linked directory, or a linked file, is refused
    with the same storage-unsafe error as read_bytes_or_none, its bytes never returned."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "state").mkdir(parents=True)
    outside.mkdir()
    (outside / "lineage.json").write_bytes(b"secret")
    (root / "state" / "citations").symlink_to(outside, target_is_directory=True)
    (root / "state" / "reviewed.json").symlink_to(outside / "lineage.json")
    fsio.confine(root)
    link = root / "state" / "citations"
    assert fsio.read_bytes_if_present(link / "missing.json") is None
    for read in (fsio.read_bytes_if_present, fsio.read_bytes_or_none):
        with pytest.raises(StorageUnsafe) as caught:
            read(link / "lineage.json")
        assert caught.value.data["file"] == str(link)
        with pytest.raises(StorageUnsafe) as caught:
            read(root / "state" / "reviewed.json")
        assert caught.value.data["file"] == str(root / "state" / "reviewed.json")
    with pytest.raises(StorageUnsafe):  # the walk-first read refuses even a missing file there
        fsio.read_bytes_or_none(link / "missing.json")
