"""Shared helpers for the Documents tests (no tests here).

- :func:`make_store` builds a :class:`DocumentStore` on a real root and workspace with a frozen clock;
- :func:`tree` reads every file under a directory as ``{relative path: (bytes, mtime_ns, inode)}`` (after
  :func:`pin` fixed every mtime, so any rewrite shows), the proof that a rejection changed nothing;
- :data:`TS_FILES` / :data:`TS_REVISION`: a root written in the TypeScript plugin's format. They were
  produced by a Node.js script that builds the records and renders them with the engine's own
  ``JSON.stringify`` following the format of reference section 5 (the same script runs live in
  ``test_documents_model.py`` when ``node`` is installed).
"""

from __future__ import annotations

import os
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

from mnemon_ls.documents import DocumentStore

REPO = Path(__file__).resolve().parents[2]
NOW = datetime(2026, 9, 15, 8, 0, 0, tzinfo=timezone.utc)
PINNED_NS = 1_000_000_000 * 1_000_000_000
UUID4 = r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"


class Clock:
    """A frozen UTC clock: ``tick(seconds)`` moves it."""

    def __init__(self, now: datetime = NOW) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def tick(self, seconds: float = 1.0) -> None:
        self.now = self.now + timedelta(seconds=seconds)


def make_store(tmp_path: Path, clock: Clock | None = None, **kwargs) -> tuple[DocumentStore, Path, Path, Clock]:
    """``(store, root, workspace, clock)`` under ``tmp_path`` (root and workspace are separate dirs)."""
    root = tmp_path / "root"
    workspace = tmp_path / "ws"
    root.mkdir(exist_ok=True)
    workspace.mkdir(exist_ok=True)
    clock = clock or Clock()
    kwargs.setdefault("freshness_seconds", 0.0)
    store = DocumentStore(root, workspace, clock=clock, **kwargs)
    return store, root, workspace, clock


def pin(base: Path) -> None:
    """Set every file's mtime under ``base`` to a fixed past instant."""
    for path in base.rglob("*"):
        if path.is_file():
            os.utime(path, ns=(PINNED_NS, PINNED_NS))


def tree(base: Path, *, skip: tuple[str, ...] = ()) -> dict[str, tuple[bytes, int, int]]:
    """Every regular file under ``base``: relative path -> (bytes, mtime_ns, inode); names starting with
    one of ``skip`` are left out."""
    out: dict[str, tuple[bytes, int, int]] = {}
    if not base.exists():
        return out
    for path in sorted(p for p in base.rglob("*") if p.is_file()):
        rel = str(path.relative_to(base))
        if any(path.name.startswith(s) for s in skip):
            continue
        info = path.stat()
        out[rel] = (path.read_bytes(), info.st_mtime_ns, info.st_ino)
    return out


def frozen(base: Path, **kwargs) -> dict[str, tuple[bytes, int, int]]:
    """:func:`pin` then :func:`tree`."""
    pin(base)
    return tree(base, **kwargs)


def write_ts_root(root: Path) -> None:
    """Write :data:`TS_FILES` under ``root`` (modes as the plugin leaves them: process default)."""
    for rel, text in TS_FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))


def child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GIT_", "MNEMON_")) or k == "MNEMON_SEMANTIC"}  # tests/conftest.py sets it
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


PYTHON = sys.executable

TS_REVISION = '4021749e9962f74273ff5c537e81b4b17720bfd4b24b8fa2a3c3f53e6a1fbd55'
TS_ACTIVE = "documents/active/release-runbook-v2-3f1c2a9e.md"
TS_ARCHIVED = "documents/archived/document-8a7b6c5d.md"
TS_FILES = {
    'documents/active/release-runbook-v2-3f1c2a9e.md': (
        '---\n'
        'id: "3f1c2a9e-5b7d-4e2f-9a10-2b3c4d5e6f70"\n'
        'title: "Release runbook \\"v2\\" — 发布手册 🚀"\n'
        'description: "Steps\\tand checks; line\u2028separator"\n'
        'status: "active"\n'
        'created_at: "2026-09-01T08:00:00.000Z"\n'
        'updated_at: "2026-09-13T08:00:00.000Z"\n'
        'content_hash: "618088fbefbe20f3cfc1efdf0f502cdbb197c46411022fd4bb539e0df87aaf08"\n'
        'source_paths:\n'
        '  - "docs/RELEASE.md"\n'
        '  - "."\n'
        'session_ids:\n'
        '  - "s-1"\n'
        '  - "s-2"\n'
        'memory_body_ids:\n'
        '  []\n'
        '---\n'
        '\n'
        '# Release runbook\n'
        '\n'
        '1. 数据库迁移后灰度阶段顺序\n'
        '2. Roll back when error rate > 2%\n'
    ),
    'documents/archived/document-8a7b6c5d.md': (
        '---\n'
        'id: "8a7b6c5d-4e3f-4a1b-8c9d-0e1f2a3b4c5d"\n'
        'title: "事故复盘"\n'
        'description: ""\n'
        'status: "archived"\n'
        'created_at: "2026-08-01T00:00:00.000Z"\n'
        'updated_at: "2026-08-20T00:00:00.000Z"\n'
        'content_hash: "93eb21a3f11babe967f8a4589e70e25ed4dc8180f58748885cac407b4708b7b4"\n'
        'source_paths:\n'
        '  []\n'
        'session_ids:\n'
        '  []\n'
        'memory_body_ids:\n'
        '  - "default"\n'
        '---\n'
        '\n'
        '步2 重跑gen-itgc后50条悬空引用清零\n'
        'Control: \x01 end\n'
    ),
    'documents/index.json': (
        '{\n'
        '  "version": 1,\n'
        '  "documents": [\n'
        '    {\n'
        '      "id": "3f1c2a9e-5b7d-4e2f-9a10-2b3c4d5e6f70",\n'
        '      "title": "Release runbook \\"v2\\" — 发布手册 🚀",\n'
        '      "description": "Steps\\tand checks; line\u2028separator",\n'
        '      "status": "active",\n'
        '      "filename": "release-runbook-v2-3f1c2a9e.md",\n'
        '      "relativePath": "documents/active/release-runbook-v2-3f1c2a9e.md",\n'
        '      "sourcePaths": [\n'
        '        "docs/RELEASE.md",\n'
        '        "."\n'
        '      ],\n'
        '      "sessionIds": [\n'
        '        "s-1",\n'
        '        "s-2"\n'
        '      ],\n'
        '      "createdAt": "2026-09-01T08:00:00.000Z",\n'
        '      "updatedAt": "2026-09-13T08:00:00.000Z",\n'
        '      "lastAccessedAt": "2026-09-14T09:30:00.125Z",\n'
        '      "revision": 3,\n'
        '      "contentHash": "618088fbefbe20f3cfc1efdf0f502cdbb197c46411022fd4bb539e0df87aaf08",\n'
        '      "sizeBytes": 525,\n'
        '      "memoryBodyIds": []\n'
        '    },\n'
        '    {\n'
        '      "id": "8a7b6c5d-4e3f-4a1b-8c9d-0e1f2a3b4c5d",\n'
        '      "title": "事故复盘",\n'
        '      "description": "",\n'
        '      "status": "archived",\n'
        '      "filename": "document-8a7b6c5d.md",\n'
        '      "relativePath": "documents/archived/document-8a7b6c5d.md",\n'
        '      "sourcePaths": [],\n'
        '      "sessionIds": [],\n'
        '      "createdAt": "2026-08-01T00:00:00.000Z",\n'
        '      "updatedAt": "2026-08-20T00:00:00.000Z",\n'
        '      "lastAccessedAt": "2026-08-20T00:00:00.000Z",\n'
        '      "revision": 2,\n'
        '      "contentHash": "93eb21a3f11babe967f8a4589e70e25ed4dc8180f58748885cac407b4708b7b4",\n'
        '      "sizeBytes": 397,\n'
        '      "archivedAt": "2026-08-20T00:00:00.000Z",\n'
        '      "archiveSummary": "Archived locally by the user.",\n'
        '      "memoryBodyIds": [\n'
        '        "default"\n'
        '      ]\n'
        '    }\n'
        '  ]\n'
        '}\n'
    ),
}

#: The Node.js script that wrote :data:`TS_FILES` (argv[2]: JSON list of document inputs; stdout: JSON
#: ``{files, records, revision}``). Written for these tests from the documented format.
NODE_RENDER = r"""
import { createHash } from 'node:crypto'
const q = JSON.stringify
const list = a => a.length === 0 ? '  []' : a.map(v => `  - ${q(v)}`).join('\n')
const md = (r, content) => `---\nid: ${q(r.id)}\ntitle: ${q(r.title)}\ndescription: ${q(r.description)}\nstatus: ${q(r.status)}\ncreated_at: ${q(r.createdAt)}\nupdated_at: ${q(r.updatedAt)}\ncontent_hash: ${q(r.contentHash)}\nsource_paths:\n${list(r.sourcePaths)}\nsession_ids:\n${list(r.sessionIds)}\nmemory_body_ids:\n${list(r.memoryBodyIds)}\n---\n\n${content.trim()}\n`
const sha = s => createHash('sha256').update(s).digest('hex')
const docs = JSON.parse(process.argv[2])
const out = { files: {}, records: [] }
for (const d of docs) {
  const content = d.content.replace(/\0/g, '').trim()
  const r = { id: d.id, title: d.title, description: d.description, status: d.status, filename: d.filename,
    relativePath: `documents/${d.status}/${d.filename}`, sourcePaths: d.sourcePaths, sessionIds: d.sessionIds,
    createdAt: d.createdAt, updatedAt: d.updatedAt, lastAccessedAt: d.lastAccessedAt, revision: d.revision,
    contentHash: sha(content), sizeBytes: 0,
    ...(d.archivedAt ? { archivedAt: d.archivedAt } : {}), ...(d.archiveSummary ? { archiveSummary: d.archiveSummary } : {}),
    memoryBodyIds: d.memoryBodyIds }
  const text = md(r, content)
  r.sizeBytes = Buffer.byteLength(text, 'utf8')
  out.files[r.relativePath] = text
  out.records.push(r)
}
const index = { version: 1, documents: out.records }
out.files['documents/index.json'] = `${JSON.stringify(index, null, 2)}\n`
out.revision = sha(JSON.stringify(index))
process.stdout.write(JSON.stringify(out))
"""
