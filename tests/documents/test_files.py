"""What a Documents store reads: only regular files, bounded, and never a lossy decoding written back.

Issue 15 defect 3: "Create document from file" (and any read of a managed file) on a FIFO, a device, a
socket or a ``/proc`` file must answer at once with a clear error instead of blocking a thread forever.
Each call that could block runs in a thread joined with a bound; when it is still blocked the test opens
the FIFO's other end itself (releasing the thread) and fails.

Issue 15 defect 7: a managed file re-saved outside the tool in GBK must stay byte for byte as it is
through ``get``, ``search``, ``list``, ``cover``, ``refresh`` and ``doctor`` (before the fix a plain
``get`` rewrote it with U+FFFD), be reported (doctor problem, unhealthy entry, notice, ``get`` refusing
with ``unreadable-store`` / ``reason: not-utf-8``) and be saved byte-exact before an update replaces it.
"""

from __future__ import annotations

import errno
import json
import os
import socket
import threading
from pathlib import Path

import pytest

from mnemon_ls.documents import DocumentStore, diagnose
from mnemon_ls.documents.files import FileTooLarge, SpecialFile, read_regular_file
from mnemon_ls.errors import InvalidInput, UnreadableStore

from tests.documents.test_support import Clock, make_store, tree
from tests.helpers.zygote import mnemon_command

#: How long a call may take before it counts as blocked (a healthy one takes milliseconds).
BOUND_SECONDS = 20.0


def bounded(call, fifo: Path | None = None):
    """Run ``call()`` in a thread; return its result or raise its exception. When it is still running
    after :data:`BOUND_SECONDS`, release a reader blocked on ``fifo`` (by opening its writing end) and fail."""
    outcome: dict[str, object] = {}

    def run() -> None:
        try:
            outcome["value"] = call()
        except BaseException as exc:  # handed to the test thread
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(BOUND_SECONDS)
    if thread.is_alive():
        if fifo is not None:
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass
            thread.join(BOUND_SECONDS)
        pytest.fail(f"the call blocked for more than {BOUND_SECONDS} s")
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome.get("value")


@pytest.fixture
def env(tmp_path):
    return make_store(tmp_path)


@pytest.fixture
def unix_socket(tmp_path):
    sockets = []

    def make(path: Path) -> Path:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(str(path))
        sockets.append(sock)
        return path

    yield make
    for sock in sockets:
        sock.close()


# ------------------------------------------------------------------------------------------ the reader


def test_reader_refuses_every_kind_of_special_file_without_blocking(tmp_path, unix_socket):
    fifo = tmp_path / "pipe.md"
    os.mkfifo(fifo)
    sock = unix_socket(tmp_path / "s.sock")
    cases = [(fifo, "is a FIFO (named pipe), not a regular file"),
             (Path("/dev/zero"), "is a character device, not a regular file"),
             (Path("/dev/null"), "is a character device, not a regular file"),
             (sock, "is a socket, not a regular file"),
             (tmp_path, "is a directory, not a regular file"),
             (Path("/proc/self/status"), "is a pseudo-file (its size is 0 but it has content, as under /proc or "
                                         "/sys), not a stored file")]
    for path, message in cases:
        with pytest.raises(SpecialFile) as info:
            bounded(lambda: read_regular_file(path, 1000), fifo)
        assert (info.value.errno, info.value.strerror, info.value.filename) == (errno.EINVAL, message, str(path))


def test_reader_bounds_what_it_reads(tmp_path):
    path = tmp_path / "f.md"
    path.write_bytes(b"x" * 10)
    assert read_regular_file(path, 10) == b"x" * 10
    assert read_regular_file(path) == b"x" * 10
    with pytest.raises(FileTooLarge) as info:
        read_regular_file(path, 9)
    assert (info.value.size, info.value.limit, info.value.strerror) == (10, 9, "is 10 bytes; at most 9 bytes are read")
    (tmp_path / "empty").write_bytes(b"")
    assert read_regular_file(tmp_path / "empty", 5) == b""


# ------------------------------------------------------------------------------ create document from file


def test_create_from_a_fifo_answers_at_once_and_writes_nothing(env):
    store, root, workspace, clock = env
    fifo = workspace / "notes.md"
    os.mkfifo(fifo)
    for _ in range(3):
        with pytest.raises(InvalidInput) as info:
            bounded(lambda: store.create_from_file(fifo), fifo)
        assert info.value.field == "path"
        assert info.value.message == (f"path: {fifo} is a FIFO (named pipe), not a regular file; only regular "
                                      "files are read")
    assert not (root / "documents").exists()


def test_create_from_a_socket_and_a_directory(env, unix_socket):
    store, root, workspace, clock = env
    sock = unix_socket(workspace / "agent.sock")
    with pytest.raises(InvalidInput) as info:
        bounded(lambda: store.create_from_file(sock))
    assert info.value.message == f"path: {sock} is a socket, not a regular file; only regular files are read"
    with pytest.raises(InvalidInput) as info:
        store.create_from_file(workspace)
    assert info.value.message == f"path: {workspace} is a directory, not a file"
    assert not (root / "documents").exists()


@pytest.mark.parametrize("path, rule", [
    ("/dev/zero", "is a character device, not a regular file; only regular files are read"),
    ("/dev/urandom", "is a character device, not a regular file; only regular files are read"),
    ("/proc/self/status", "is a pseudo-file (its size is 0 but it has content, as under /proc or /sys), not a "
                          "stored file; only regular files are read"),
])
def test_create_from_devices_and_proc_files_inside_the_workspace(tmp_path, path, rule):
    # The workspace is "/" so that the file type (not the workspace rule) is what refuses them.
    store = DocumentStore(tmp_path / "root", "/", clock=Clock())
    with pytest.raises(InvalidInput) as info:
        bounded(lambda: store.create_from_file(path))
    assert (info.value.field, info.value.message) == ("path", f"path: {path} {rule}")
    assert not (tmp_path / "root" / "documents").exists()


def test_a_file_outside_the_workspace_is_refused_before_it_is_opened(env, tmp_path):
    store, root, workspace, clock = env
    fifo = tmp_path / "outside.md"
    os.mkfifo(fifo)
    (workspace / "zero").symlink_to("/dev/zero")
    for path in (fifo, workspace / "zero", Path("/dev/zero")):
        with pytest.raises(InvalidInput) as info:
            bounded(lambda: store.create_from_file(path), fifo)
        assert info.value.field == "sourcePaths[0]"
    assert not (root / "documents").exists()


def test_a_file_over_the_body_limit_is_refused_unread(tmp_path):
    store, root, workspace, clock = make_store(tmp_path, max_body_bytes=100)
    (workspace / "big.md").write_bytes(b"y" * 104)
    with pytest.raises(InvalidInput) as info:
        store.create_from_file(workspace / "big.md")
    assert info.value.field == "path"
    assert info.value.message == f"path: {workspace / 'big.md'} is 104 bytes; a document body is at most 100 bytes"
    assert info.value.data["bytes"] == 104 and info.value.data["limit"] == 100
    # exactly the limit, plus a byte-order mark, still fits
    (workspace / "ok.md").write_bytes("\ufeff".encode() + b"z" * 100)
    assert store.create_from_file(workspace / "ok.md").document.content == "z" * 100


def test_source_paths_naming_a_fifo_are_never_opened(env):
    store, root, workspace, clock = env
    fifo = workspace / "live.pipe"
    os.mkfifo(fifo)
    result = bounded(lambda: store.create("Pipe notes", "body", source_paths=["live.pipe"]), fifo)
    assert result.document.record.source_paths == ("live.pipe",)


def test_a_fifo_in_place_of_a_managed_file_never_blocks_a_read(env):
    store, root, workspace, clock = env
    rec = store.create("Runbook", "release steps").document.record
    other = store.create("Other", "release notes").document.record
    path = root / rec.relative_path
    path.unlink()
    os.mkfifo(path)
    with pytest.raises(UnreadableStore) as info:
        bounded(lambda: store.get(rec.id), path)
    assert info.value.data["reason"] == "not-a-regular-file"
    result = bounded(lambda: store.search.find("release"), path)
    assert [h.record.id for h in result.results] == [other.id]
    assert any("is a FIFO (named pipe), not a regular file" in n for n in result.notices)
    entry = {e.record.id: e for e in bounded(lambda: store.list(), path).documents}[rec.id]
    assert entry.healthy is False
    for attempt in (lambda: store.update(rec.id, title="New"), lambda: store.moves.archive(rec.id, 1)):
        with pytest.raises(UnreadableStore):
            bounded(attempt, path)
    findings = bounded(lambda: diagnose(store), path)
    assert [f.level for f in findings if f.subject == str(path)] == ["problem"]
    assert bounded(lambda: DocumentStore(root, workspace).freshness.refresh(), path).missing[rec.id].startswith(
        "the managed file cannot be read (is a FIFO")


# ---------------------------------------------------------------------------------- non-UTF-8 (GBK) files


BODY = "# 数据库迁移手册\n\n先备份，再迁移。回滚阈值为百分之五。"


def _gbk_document(store: DocumentStore, root: Path):
    """A document whose managed file an editor re-saved in GBK (same text, other encoding)."""
    rec = store.create("数据库迁移手册", BODY, description="migration runbook").document.record
    path = root / rec.relative_path
    data = path.read_text(encoding="utf-8").encode("gbk")
    with pytest.raises(UnicodeDecodeError):
        data.decode("utf-8")
    path.write_bytes(data)
    return rec, path, data


def test_a_gbk_managed_file_is_kept_byte_for_byte_and_reported(env):
    store, root, workspace, clock = env
    rec, path, data = _gbk_document(store, root)
    other = store.create("Migration notes", "migration checklist").document.record
    index = (root / "documents" / "index.json").read_bytes()
    for reader in (store, DocumentStore(root, workspace, clock=clock, freshness_seconds=0)):
        with pytest.raises(UnreadableStore) as info:
            reader.get(rec.id)
        assert info.value.code == "unreadable-store"
        assert (info.value.data["reason"], info.value.data["file"], info.value.data["id"]) == (
            "not-utf-8", str(path), rec.id)
        assert info.value.message.startswith(f"{rec.relative_path}: the managed file is not UTF-8 text (invalid "
                                             "byte at offset ")
        result = reader.search.find("migration")
        assert [h.record.id for h in result.results] == [other.id]
        assert any(n.startswith(f"{rec.relative_path} (数据库迁移手册): the managed file is not UTF-8 text")
                   for n in result.notices)
        assert reader.search.find("数据库").results == ()
        entry = {e.record.id: e for e in reader.list(excerpts=True).documents}[rec.id]
        assert (entry.healthy, entry.problem.startswith("the managed file is not UTF-8 text")) == (False, True)
        assert "1 document(s) have a missing or unreadable file" in reader.cover(4000).text
        report = reader.freshness.refresh()
        assert report.adopted == [] and report.missing[rec.id].startswith("the managed file is not UTF-8 text")
        findings = [f for f in diagnose(reader) if f.subject == str(path)]
        assert [f.level for f in findings] == ["problem"]
        assert findings[0].message.startswith("is not UTF-8 text (invalid byte at offset ")
        assert "iconv -f GBK -t UTF-8" in findings[0].advice
        reader.close()
    assert path.read_bytes() == data
    assert (root / "documents" / "index.json").read_bytes() == index
    assert not (root / "documents" / "edits").exists()


def test_a_gbk_managed_file_refuses_what_would_rewrite_it_and_is_saved_before_an_update(env):
    store, root, workspace, clock = env
    rec, path, data = _gbk_document(store, root)
    before = tree(root / "documents", skip=(".access", ".search"))
    for attempt in (lambda: store.update(rec.id, title="Renamed"), lambda: store.moves.archive(rec.id, 1),
                    lambda: store.capacity.plan(document_id=rec.id, title="Renamed")):
        with pytest.raises(UnreadableStore) as info:
            attempt()
        assert info.value.data["reason"] == "not-utf-8"
    assert tree(root / "documents", skip=(".access", ".search")) == before
    result = store.update(rec.id, content="# 数据库迁移手册\n\n已转为 UTF-8。")
    saved = Path(result.preserved[rec.relative_path])
    assert saved.parent == root / "documents" / "edits" and saved.read_bytes() == data
    assert store.get(rec.id).content == "# 数据库迁移手册\n\n已转为 UTF-8。"
    assert [h.record.id for h in store.search.find("数据库").results] == [rec.id]


def test_re_saving_as_utf8_makes_the_document_readable_again(env):
    store, root, workspace, clock = env
    rec, path, data = _gbk_document(store, root)
    with pytest.raises(UnreadableStore):
        store.get(rec.id)
    path.write_bytes(data.decode("gbk").encode("utf-8"))
    assert store.get(rec.id).content == BODY
    assert store.freshness.refresh().missing == {}


def test_cli_get_search_list_doctor_leave_a_gbk_file_unchanged(tmp_path):
    import subprocess

    from tests.documents.test_support import child_env

    root = tmp_path / "root"
    store = DocumentStore(root, None)
    rec, path, data = _gbk_document(store, root)
    store.close()
    base = mnemon_command()
    common = ["--data-dir", str(root), "--json"]
    env = child_env() | {"HOME": str(tmp_path), "MNEMON_DATA_DIR": str(tmp_path / "global")}
    runs = {name: subprocess.run(base + args + common, capture_output=True, text=True, env=env, cwd=tmp_path,
                                 timeout=60)
            for name, args in (("get", ["doc", "get", rec.id]), ("search", ["doc", "search", "数据库"]),
                               ("list", ["doc", "list"]), ("doctor", ["doctor"]))}
    assert runs["get"].returncode == 1 and "is not UTF-8 text" in runs["get"].stderr
    assert json.loads(runs["search"].stdout)["results"] == []
    assert runs["list"].returncode == 0 and runs["search"].returncode == 0
    assert "is not UTF-8 text" in runs["doctor"].stdout
    assert path.read_bytes() == data


def test_cli_list_of_a_damaged_index_says_so_and_changes_nothing(tmp_path):
    """``doc list`` of an unreadable ``index.json`` printed only "0 active ..., 0 archived", as if every document
    were gone; like ``doc search`` it names the damage and the command that rebuilds the index."""
    import subprocess

    from tests.documents.test_support import child_env

    root = tmp_path / "root"
    store = DocumentStore(root, None)
    store.create("Kept", "a body that is still on disk")
    store.close()
    index = root / "documents" / "index.json"
    index.write_bytes(b"{not json")
    before = tree(root)
    env = child_env() | {"HOME": str(tmp_path), "MNEMON_DATA_DIR": str(tmp_path / "global")}
    result = subprocess.run(mnemon_command("doc", "list", "--data-dir", str(root)), capture_output=True, text=True,
                            env=env, cwd=tmp_path, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "index.json" in result.stdout and "mnemon-ls doc recover" in result.stdout, result.stdout
    assert tree(root) == before


def test_a_symbolic_link_in_place_of_a_managed_file_is_never_read_through(tmp_path: Path) -> None:
    """Invariant 10: a managed file that is a link (a repository could commit one) is refused unread."""
    from mnemon_ls.documents.files import SpecialFile, read_managed_or_none

    secret = tmp_path / "outside.txt"
    secret.write_text("not yours")
    link = tmp_path / "managed.md"
    link.symlink_to(secret)
    with pytest.raises(SpecialFile, match="is a symbolic link"):
        read_managed_or_none(link)
    assert read_managed_or_none(tmp_path / "missing.md") is None
