"""Bad Mnemon Packs: each one gets a clear error naming the entry or field and the rule, and the root it
was imported into stays exactly as it was (files, bytes, inodes, mtimes, modes)."""

from __future__ import annotations

import io
import json
import os
import shutil
import stat
import struct
import zipfile
from pathlib import Path

import pytest

from mnemon_ls import packs
from mnemon_ls.errors import PackInvalid, PackRefused
from mnemon_ls.packs import swap
from tests.helpers import procs
from tests.helpers.packs import edit_manifest, host_on, repack, seed, unpack


@pytest.fixture(scope="module")
def good(tmp_path_factory) -> tuple[bytes, Path]:
    """(a valid full pack, a seeded root to copy)."""
    base = tmp_path_factory.mktemp("packs-bad")
    seed(base / "source")
    seed(base / "target", tag=" (target)")
    host = host_on(base / "source")
    try:
        return packs.export_pack(host).data, base / "target"
    finally:
        host.close()


@pytest.fixture
def target(good, tmp_path) -> Path:
    root = tmp_path / "root"
    shutil.copytree(good[1], root)
    return root


def refused(root: Path, data: bytes, error=PackInvalid, **options) -> Exception:
    before = procs.tree_snapshot(root)
    host = host_on(root)
    try:
        with pytest.raises(error) as info:
            host.import_pack(data, **options)
        # inspect applies the same rules (and never writes)
        if error is PackInvalid and not options:
            with pytest.raises(PackInvalid):
                host.inspect_pack(data)
    finally:
        host.close()
    assert procs.tree_snapshot(root) == before
    return info.value


@pytest.mark.parametrize("name, rule", [
    ("payload/documents/active/../../../evil.md", "unsafe path"),
    ("/etc/passwd", "unsafe path: is absolute"),
    ("payload\\runtime\\memories.json", "unsafe path: holds a backslash"),
    ("payload/runtime/USER.md\x00.txt", "unsafe path: holds NUL"),
    ("C:/payload/x", "unsafe path: starts with a drive letter"),
    ("payload//runtime/USER.md", "unsafe path: has an empty segment"),
    ("payload/state/memory-providers.json", "not an allowed pack path"),
])
def test_unsafe_or_unlisted_entry_paths(good, target, name, rule):
    files = unpack(good[0])
    # zipfile cuts a name at NUL when it writes one: write a stand-in of the same length, then patch the bytes
    stand_in = name.replace("\x00", "#")
    files[stand_in] = b"x"
    data = repack(files, checksums=False)
    if stand_in != name:
        data = data.replace(stand_in.encode(), name.encode())
    error = refused(target, data)
    assert isinstance(error, PackInvalid) and rule in error.rule
    assert error.field == "entry:" + name.replace("\x00", "\\x00")  # the whole name, NUL shown (not cut there)


def test_a_symlink_entry(good, target):
    files = unpack(good[0])
    files["payload/runtime/USER.md"] = b"/etc/passwd"
    error = refused(target, repack(files, modes={"payload/runtime/USER.md": stat.S_IFLNK | 0o777}))
    assert error.field == "entry:payload/runtime/USER.md" and "symbolic link" in error.rule


def test_a_zip_bomb_by_ratio(good, target):
    files = unpack(good[0])
    files["payload/documents/active/bomb.md"] = b"\x00" * (20 * 1024 * 1024)
    error = refused(target, repack(files))
    assert error.field == "entry:payload/documents/active/bomb.md" and "zip bomb" in error.rule


def _declare_sizes(data: bytes, sizes: dict[str, int]) -> bytes:
    """``data`` (a ZIP) with the uncompressed sizes its central directory declares for ``sizes`` changed."""
    buf = bytearray(data)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        offset = archive.start_dir
    while buf[offset:offset + 4] == b"PK\x01\x02":
        name_len, extra_len, comment_len = struct.unpack_from("<HHH", buf, offset + 28)
        name = bytes(buf[offset + 46:offset + 46 + name_len]).decode()
        if name in sizes:
            struct.pack_into("<I", buf, offset + 24, sizes[name])
        offset += 46 + name_len + extra_len + comment_len
    return bytes(buf)


def test_a_zip_bomb_by_total_expanded_size(good, target):
    files = unpack(good[0])
    names = [f"payload/documents/active/part{i}.md" for i in range(3)]
    for name in names:
        files[name] = os.urandom(700 * 1024)  # incompressible: the ratio rule is not what trips
    data = _declare_sizes(repack(files), {name: 100 * 1024 * 1024 for name in names})
    error = refused(target, data)
    assert error.field == "pack" and "256 MiB" in error.rule


def test_too_many_entries(good, target):
    files = unpack(good[0])
    for i in range(4100):
        files[f"payload/documents/active/n{i}.md"] = b""
    error = refused(target, repack(files, checksums=False))
    assert error.field == "pack" and "at most 4096" in error.rule


def test_a_checksum_mismatch(good, target):
    files = unpack(good[0])
    memories = bytearray(files["payload/runtime/memories.json"])
    memories[-3] ^= 0x01
    files["payload/runtime/memories.json"] = bytes(memories)
    error = refused(target, repack(files, checksums=False))
    assert error.field == "checksums.files.payload/runtime/memories.json" and "mismatch" in error.rule


def test_a_manifest_of_format_version_2(good, target):
    error = refused(target, repack(edit_manifest(unpack(good[0]), version=2)))
    assert error.field == "manifest.version" and "newer format" in error.rule


@pytest.mark.parametrize("changes", [
    {"scope": "runtime"},  # full payload, runtime scope and components
    {"components": ["runtime", "documents"]},  # scope full needs all three
    {"scope": "documents", "components": ["runtime"]},
])
def test_components_that_do_not_match_the_scope(good, target, changes):
    error = refused(target, repack(edit_manifest(unpack(good[0]), **changes)))
    assert error.field in ("manifest.components",) or error.field.startswith("entry:payload/")


def test_a_document_whose_frontmatter_id_differs(good, target):
    files = unpack(good[0])
    name = next(n for n in files if n.startswith("payload/documents/active/"))
    text = files[name].decode()
    index = json.loads(files["payload/documents/index.json"])
    record = next(r for r in index["documents"] if r["filename"] == name.rsplit("/", 1)[1])
    other = record["id"][:-4] + ("0000" if not record["id"].endswith("0000") else "1111")
    files[name] = text.replace(f'id: "{record["id"]}"', f'id: "{other}"').encode()
    error = refused(target, repack(files))
    assert error.field == f"entry:{name}" and "frontmatter id" in error.rule


def test_a_mnemon_db_that_is_not_sqlite(good, target):
    files = unpack(good[0])
    files["payload/data/default/mnemon.db"] = b"definitely not a database" * 10
    error = refused(target, repack(files))
    assert error.field == "entry:payload/data/default/mnemon.db" and "not a SQLite database" in error.rule


def test_a_sqlite_file_that_is_not_a_mnemon_store(good, target, tmp_path):
    import sqlite3

    other = tmp_path / "other.db"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE unrelated (x)")
    files = unpack(good[0])
    files["payload/data/default/mnemon.db"] = other.read_bytes()
    error = refused(target, repack(files), mode="replace")
    assert error.field == "entry:payload/data/default/mnemon.db" and "not a Mnemon store" in error.rule


def test_a_runtime_entry_that_breaks_a_rule(good, target):
    files = unpack(good[0])
    doc = json.loads(files["payload/runtime/memories.json"])
    doc["entries"][0]["content"] = "a § b"
    files["payload/runtime/memories.json"] = json.dumps(doc).encode()
    error = refused(target, repack(files))
    assert error.field.startswith("payload/runtime/memories.json:entries[0]")


def test_a_pack_that_would_empty_an_initialized_store_set(good, target, tmp_path):
    files = unpack(good[0])
    files = {k: v for k, v in files.items() if not k.startswith("payload/data/") or k.endswith("bodies.json")}
    files["payload/data/.dsh-memory-bodies.json"] = b'{"version": 1, "bodies": []}\n'
    error = refused(target, repack(files), PackRefused, mode="replace")
    assert error.data["reason"] == "would-empty"


def test_not_a_zip_at_all(target):
    error = refused(target, b"PK\x03\x04 but nothing more")
    assert error.field == "pack" and "not a ZIP" in error.rule


@pytest.mark.parametrize("step", ["swap:0:moved", "swap:1:placed", "swap:2:moved"])
def test_a_crash_during_the_swap_rolls_every_component_back(good, target, monkeypatch, step):
    def fail(name: str) -> None:
        if name == step:
            raise OSError(28, "No space left on device")

    monkeypatch.setattr(swap, "_step_hook", fail)
    error = refused(target, good[0], PackRefused, mode="replace")
    assert error.data["reason"] == "swap-failed" and "rolled back" in error.message
    assert not [p for p in target.iterdir() if p.name.startswith(".dsh-pack")]
