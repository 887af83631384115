"""Helpers of the Mnemon Pack tests: hosts on plain roots, a seeded root, what a root holds, pack surgery."""

from __future__ import annotations

import io
import json
import sqlite3
import stat
import zipfile
from pathlib import Path
from typing import Any

from mnemon_ls.host import WorkspaceHost
from mnemon_ls.runtime import ops
from mnemon_ls.settings import load_settings


def host_on(root: Path, **settings: Any) -> WorkspaceHost:
    """A host whose storage root is ``root`` (scope custom, USER.md in the same root)."""
    return WorkspaceHost(None, load_settings({"storageScope": "custom", "dataDir": str(root),
                                              "runtimeUserScope": "storage", **settings}))


def seed(root: Path, tag: str = "") -> None:
    """Fill ``root``: two MEMORY.md entries (one critical, scoped to main), a USER.md entry, an active and an
    archived document, a space with two items (one tagged). ``tag`` makes the contents distinct."""
    host = host_on(root)
    try:
        for target, content, importance, branches in (
                ("memory", f"Run tests with pytest -n 2{tag}", None, None),
                ("memory", f"Deploys go through staging{tag}", "critical", ["main"]),
                ("user", f"Prefers short answers{tag}", None, None)):
            host.runtime.mutate(ops.validate_request("add", target, content, importance=importance, branches=branches))
        host.documents.create(f"ADR 7{tag}", f"We use SQLite FTS5{tag}.\n\n数据库迁移\n")
        old = host.documents.create(f"Old plan{tag}", f"Superseded{tag}.\n")
        host.documents.moves.archive(old.document.record.id, 1, summary="replaced by ADR 7")
        host.spaces.create_space("Project", "Decisions about this repository", active=True)
        host.spaces.remember(f"We chose SQLite FTS5 for the side index{tag}", tags=["storage"], importance=4)
        host.spaces.remember(f"Release branch is frozen{tag}")
    finally:
        host.close()


def items_of(db_path: Path) -> list[tuple[str, list[str]]]:
    """Active items of a ``mnemon.db``: sorted (content, sorted tags)."""
    with sqlite3.connect(f"file:{db_path}?mode=ro", uri=True) as db:
        rows = db.execute("SELECT content, tags FROM insights WHERE deleted_at IS NULL").fetchall()
    return sorted((content, sorted(json.loads(tags or "[]"))) for content, tags in rows)


def contents(root: Path) -> dict[str, Any]:
    """What a root holds, as a person would compare it: runtime entries, documents and space items."""
    host = host_on(root)
    try:
        state = host.runtime.read()
        entries = sorted((e.target, e.content, e.importance, e.branches, e.created_at)
                         for e in (*state.user, *state.memory))
        documents = []
        if (root / "documents" / "index.json").exists():
            for entry in host.documents.list().documents:
                view = host.documents.get(entry.record.id)
                documents.append((entry.record.id, entry.record.title, entry.record.status, view.content))
        spaces = []
        if (root / "data").is_dir():
            for record in host.spaces.state().bodies:
                spaces.append((record.id, record.name, record.active, items_of(root / "data" / record.id / "mnemon.db")))
        return {"entries": entries, "documents": sorted(documents), "spaces": sorted(spaces)}
    finally:
        host.close()


def unpack(data: bytes) -> dict[str, bytes]:
    """Every entry of a ZIP: name -> bytes."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {info.filename: archive.read(info) for info in archive.infolist()}


def repack(files: dict[str, bytes], *, checksums: bool = True, modes: dict[str, int] | None = None,
           order: list[str] | None = None) -> bytes:
    """A ZIP of ``files``; with ``checksums`` the checksums file is recomputed over the payload."""
    import hashlib

    files = dict(files)
    if checksums:
        payload = {k: v for k, v in files.items() if k not in ("manifest.json", "checksums.json")}
        files["checksums.json"] = json.dumps({"algorithm": "sha256", "files": {
            k: hashlib.sha256(v).hexdigest() for k, v in sorted(payload.items())}}).encode()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in order or list(files):
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.create_system = 3
            info.external_attr = (modes or {}).get(name, stat.S_IFREG | 0o600) << 16
            archive.writestr(info, files[name], compress_type=zipfile.ZIP_DEFLATED)
    return out.getvalue()


def edit_manifest(files: dict[str, bytes], **changes: Any) -> dict[str, bytes]:
    """``files`` with manifest keys changed."""
    manifest = json.loads(files["manifest.json"])
    manifest.update(changes)
    return {**files, "manifest.json": json.dumps(manifest).encode()}
