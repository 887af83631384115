"""Defects an attack pass and a new user found in Mnemon Packs: an export written into the storage root
over a store's own file, a packed store carrying a trigger, and an export refused as a zip bomb."""

from __future__ import annotations

import io
import sqlite3
import subprocess
import zipfile
from pathlib import Path

import pytest

from mnemon_ls.errors import InvalidInput, PackInvalid
from mnemon_ls.host import WorkspaceHost
from mnemon_ls.packs import write_pack_file
from mnemon_ls.settings import load_settings
from tests.gitrepo import make_repo
from tests.helpers.zygote import mnemon_command


@pytest.fixture
def host(tmp_path: Path):
    make_repo(tmp_path / "ws")
    settings = load_settings({"storageScope": "custom", "dataDir": str(tmp_path / "root"),
                              "runtimeUserScope": "storage"})
    h = WorkspaceHost(tmp_path / "ws", settings, env={"HOME": str(tmp_path / "home"), "MNEMON_SEMANTIC": "off"})
    space = h.spaces.create_space("Project", "decisions", active=True).record.id
    h.spaces.remember("we chose sqlite for the side index", space_id=space)
    yield h
    h.close()


def test_an_export_is_never_written_inside_the_storage_root(host: WorkspaceHost, tmp_path: Path) -> None:
    db = host.root / "data" / "default" / "mnemon.db"
    exported = host.export_pack("full")  # (checkpoints the store's WAL into mnemon.db first)
    before = db.read_bytes()
    from mnemon_ls.packs.export import pack_roots

    for target in (db, host.root / "runtime" / "memories.json", host.root / "new.zip"):
        with pytest.raises(InvalidInput) as info:
            write_pack_file(target, exported.data, pack_roots(host))
        assert info.value.field == "output" and "inside the storage root" in info.value.rule
    assert db.read_bytes() == before and not (host.root / "new.zip").exists()
    with pytest.raises(InvalidInput, match="does not exist"):
        write_pack_file(tmp_path / "missing" / "x.zip", exported.data)
    with pytest.raises(InvalidInput, match="is a directory"):
        write_pack_file(tmp_path, exported.data)


def test_an_export_never_replaces_a_file_that_is_not_a_pack(host: WorkspaceHost, tmp_path: Path) -> None:
    """The attack pass: ``pack export -o`` replaced a FIFO, a read-only notes file and (as root) /dev/full."""
    import os

    exported = host.export_pack("full")
    notes = tmp_path / "notes.txt"
    notes.write_text("precious\n")
    readonly = tmp_path / "old.mnemonpack"
    readonly.write_bytes(exported.data)
    readonly.chmod(0o444)
    fifo = tmp_path / "f.zip"
    os.mkfifo(fifo)
    for target, rule in ((notes, "is not a Mnemon Pack"), (readonly, "is read-only"),
                         (fifo, "is not a regular file")):
        with pytest.raises(InvalidInput) as info:
            write_pack_file(target, exported.data)
        assert info.value.field == "output" and rule in info.value.rule
    assert notes.read_text() == "precious\n" and fifo.is_fifo() and readonly.read_bytes() == exported.data
    earlier = tmp_path / "earlier.mnemonpack"  # an earlier pack is replaced: exporting again to one name
    earlier.write_bytes(host.export_pack("runtime").data)
    write_pack_file(earlier, exported.data)
    assert earlier.read_bytes() == exported.data


def _refused_with_hostile_store(host: WorkspaceHost, tmp_path: Path, statements: list[str], mode: str | None) -> str:
    """Export ``host``'s spaces, run ``statements`` on the packed ``mnemon.db``, import the pack into a fresh
    root in ``mode``: the refusal's message (asserting that the fresh root got no store)."""
    exported = host.export_pack("memory-spaces")
    source = zipfile.ZipFile(io.BytesIO(exported.data))
    db_name = next(n for n in source.namelist() if n.endswith("mnemon.db"))
    hostile = tmp_path / "hostile.db"
    hostile.write_bytes(source.read(db_name))
    with sqlite3.connect(hostile) as connection:
        for statement in statements:
            connection.execute(statement)
    connection.close()
    data = _replace_entry(exported.data, db_name, hostile.read_bytes())
    make_repo(tmp_path / "other")
    other = WorkspaceHost(tmp_path / "other", load_settings({"storageScope": "custom", "dataDir": str(tmp_path / "r2"),
                                                             "runtimeUserScope": "storage"}),
                          env={"HOME": str(tmp_path / "home"), "MNEMON_SEMANTIC": "off"})
    try:
        with pytest.raises(PackInvalid) as info:
            other.import_pack(data, mode=mode)
        assert not (tmp_path / "r2" / "data").exists() or not any((tmp_path / "r2" / "data").iterdir())
        return info.value.message
    finally:
        other.close()


def test_a_packed_store_with_a_trigger_is_refused(host: WorkspaceHost, tmp_path: Path) -> None:
    message = _refused_with_hostile_store(
        host, tmp_path, ["CREATE TRIGGER zz_wipe AFTER INSERT ON insights BEGIN DELETE FROM insights; END"], None)
    assert "trigger zz_wipe" in message


@pytest.mark.parametrize("body", [
    "BEGIN DELETE FROM insights WHERE id != NEW.id; END",
    "WHEN NEW.stored_at IS NULL OR NEW.stored_at = '' BEGIN UPDATE insights SET stored_at = "
    "strftime('%Y-%m-%dT%H:%M:%SZ', 'now') WHERE id = NEW.id; DELETE FROM edges; END",
])
def test_a_trigger_disguised_under_the_schemas_name_is_refused(host: WorkspaceHost, tmp_path: Path, body: str) -> None:
    """The attack pass replaced ``set_insight_stored_at`` by a trigger of the same name that deleted every other
    insight on the next remember: only the name was checked, and the import succeeded."""
    message = _refused_with_hostile_store(host, tmp_path, [
        "DROP TRIGGER set_insight_stored_at",
        f"CREATE TRIGGER set_insight_stored_at AFTER INSERT ON insights {body}"], "replace")
    assert "trigger set_insight_stored_at" in message


def test_a_highly_compressible_document_exports(tmp_path: Path) -> None:
    """A 1.9 MiB document of repeated text expands 388 times: the export refused it as a zip bomb."""
    make_repo(tmp_path / "ws")
    env = {"HOME": str(tmp_path / "home"), "MNEMON_SEMANTIC": "off"}
    host = WorkspaceHost(tmp_path / "ws", load_settings({"storageScope": "custom", "dataDir": str(tmp_path / "root")}),
                         env=env)
    try:
        host.documents.create("Big", "lorem ipsum dolor " * 110_000)
        exported = host.export_pack("documents")
        assert host.inspect_pack(exported.data)
    finally:
        host.close()


def _replace_entry(data: bytes, name: str, content: bytes) -> bytes:
    """The pack with one payload entry replaced and its checksum updated (a well-formed hostile pack)."""
    import hashlib
    import json

    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            body = source.read(info.filename)
            if info.filename == name:
                body = content
            elif info.filename == "checksums.json":
                sums = json.loads(body)
                relative = name.removeprefix("payload/")
                files = sums.get("files", sums)
                for key in list(files):
                    if key in (name, relative):
                        entry = files[key]
                        digest = hashlib.sha256(content).hexdigest()
                        if isinstance(entry, dict):
                            entry.update({"sha256": digest, "size": len(content)})
                        else:
                            files[key] = digest
                body = json.dumps(sums).encode()
            target.writestr(info, body)
    return out.getvalue()


def test_cli_deeply_nested_json_is_invalid_input(tmp_path: Path) -> None:
    proc = subprocess.run([*mnemon_command(), "runtime", "add", "--content", "x", "--scope", "custom",
                           "--data-dir", str(tmp_path / "root"), "--routes", "[" * 20000 + "]" * 20000],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path,
                          env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "MNEMON_SEMANTIC": "off"})
    assert proc.returncode == 2 and "nested too deeply" in proc.stderr and "Traceback" not in proc.stderr
