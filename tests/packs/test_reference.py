"""A pack exported here passes the reference's validation rules (shared/reference/dsh-mnemon.md section 9),
checked by an independent reading of those rules written in this file: it uses only ``zipfile``,
``json``, ``hashlib`` and ``re``, nothing of :mod:`mnemon_ls.packs`, so a rule our validator got wrong
in the same way as our exporter would still fail here."""

from __future__ import annotations

import hashlib
import io
import json
import re
import stat
import zipfile

import pytest

from mnemon_ls import packs
from tests.helpers.packs import host_on, seed

MiB = 1024 * 1024
ALLOWED = [
    r"payload/runtime/(memories\.json|USER\.md|MEMORY\.md)",
    r"payload/documents/index\.json",
    r"payload/documents/(active|archived)/[a-zA-Z0-9._-]+\.md",
    r"payload/data/\.dsh-memory-bodies\.json",
    r"payload/data/[a-zA-Z0-9][a-zA-Z0-9_-]*/mnemon\.db",
]
SCOPE_COMPONENTS = {"full": ["runtime", "documents", "memory-spaces"], "runtime": ["runtime"],
                    "documents": ["documents"], "memory-spaces": ["memory-spaces"]}


def reference_problems(data: bytes, file_name: str) -> list[str]:
    """Every rule of reference section 9 the pack ``data`` breaks (empty: accepted)."""
    problems: list[str] = []
    if len(data) > 48 * MiB:
        problems.append("archive over 48 MiB")
    if not re.fullmatch(r"mnemon-backup-\d{4}-\d\d-\d\d_\d\d-\d\d-\d\d-\d{3}\.zip", file_name):
        problems.append(f"file name {file_name}")
    archive = zipfile.ZipFile(io.BytesIO(data))
    infos = archive.infolist()
    if len(infos) > 4096:
        problems.append("more than 4096 files")
    if sum(i.file_size for i in infos) > 256 * MiB:
        problems.append("expanded over 256 MiB")
    files: dict[str, bytes] = {}
    for info in infos:
        name = info.orig_filename
        if info.file_size > 128 * MiB:
            problems.append(f"{name} over 128 MiB")
        if info.date_time != (1980, 1, 1, 0, 0, 0):
            problems.append(f"{name} dated {info.date_time}")
        if info.compress_type != zipfile.ZIP_DEFLATED:
            problems.append(f"{name} not deflated")
        mode = info.external_attr >> 16
        if mode and not stat.S_ISREG(mode):
            problems.append(f"{name} not a regular file")
        if (len(name) > 512 or "\\" in name or "\x00" in name or name.startswith("/") or re.match(r"^[A-Za-z]:", name)
                or any(seg in ("", ".", "..") for seg in name.split("/"))):
            problems.append(f"{name} unsafe path")
        if name not in ("manifest.json", "checksums.json") and not any(re.fullmatch(p, name) for p in ALLOWED):
            problems.append(f"{name} not allowed")
        files[name] = archive.read(info)
    manifest = json.loads(files.pop("manifest.json"))
    checksums = json.loads(files.pop("checksums.json"))
    if manifest.get("format") != "mnemonpack" or manifest.get("version") != 1:
        problems.append("manifest format/version")
    scope = manifest.get("scope")
    if scope not in SCOPE_COMPONENTS or manifest.get("components") != SCOPE_COMPONENTS[scope]:
        problems.append("components do not match the scope")
    if not re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", str(manifest.get("exportedAt"))):
        problems.append("exportedAt")
    source = manifest.get("source") or {}
    if source.get("plugin") != "dsh-mnemon" or not isinstance(source.get("pluginVersion"), str):
        problems.append("source")
    summary = manifest.get("summary")
    if not isinstance(summary, list) or [row.get("component") for row in summary] != manifest.get("components") \
            or any(set(row) != {"component", "files", "bytes", "items"} for row in summary):
        problems.append("summary")
    if checksums.get("algorithm") != "sha256" or set(checksums.get("files", {})) != set(files):
        problems.append("checksums do not cover exactly the payload")
    for name, body in files.items():
        if checksums.get("files", {}).get(name) != hashlib.sha256(body).hexdigest():
            problems.append(f"checksum of {name}")
    if "runtime" in manifest.get("components", []):
        doc = json.loads(files["payload/runtime/memories.json"])
        if doc.get("version") != 1 or not isinstance(doc.get("entries"), list):
            problems.append("memories.json version/entries")
        by_target: dict[str, list[str]] = {"user": [], "memory": []}
        for entry in doc.get("entries", []):
            keys = ["content", "created_at", "updated_at", "target", "importance"]
            if list(entry)[:5] != keys or (set(entry) - set(keys) - {"branches"}):
                problems.append(f"entry keys {list(entry)}")
            content = entry.get("content", "")
            if (not content.strip() or "§" in content or len(content.encode()) > 8192
                    or entry.get("target") not in by_target or entry.get("importance") not in ("critical", "normal", "low")):
                problems.append(f"entry {content[:20]!r}")
            if "branches" in entry and entry.get("target") != "memory":
                problems.append("branches on a user entry")
            by_target.get(entry.get("target"), []).append(content)
        for target, name in (("user", "USER.md"), ("memory", "MEMORY.md")):
            expected = ("\n§\n".join(by_target[target]) + "\n").encode() if by_target[target] else b""
            if files.get(f"payload/runtime/{name}") != expected:
                problems.append(f"{name} is not the projection of memories.json")
        used = len("\n§\n".join(by_target["memory"]).encode())
        if used > 10240:
            problems.append(f"memory over its default limit ({used})")
    if "documents" in manifest.get("components", []):
        index = json.loads(files["payload/documents/index.json"])
        ids = [d["id"] for d in index["documents"]]
        if index.get("version") != 1 or len(ids) != len(set(ids)):
            problems.append("index version / unique ids")
        listed = set()
        for d in index["documents"]:
            if not re.fullmatch(r"[a-zA-Z0-9._-]+\.md", d["filename"]) \
                    or d["relativePath"] != f"documents/{d['status']}/{d['filename']}":
                problems.append(f"document path {d['relativePath']}")
            path = f"payload/{d['relativePath']}"
            listed.add(path)
            body = files.get(path)
            if body is None:
                problems.append(f"{path} missing")
                continue
            text = body.decode()
            if len(body) != d["sizeBytes"] or f'id: "{d["id"]}"' not in text:
                problems.append(f"{path} size or frontmatter id")
            end = text.find("\n---\n", 4) if text.startswith("---\n") else -1
            content = text[end + 5:].strip() if end >= 0 else text.strip()
            if hashlib.sha256(content.encode()).hexdigest() != d["contentHash"]:
                problems.append(f"{path} body hash")
        if sum(d["sizeBytes"] for d in index["documents"] if d["status"] == "active") > 10 * MiB:
            problems.append("active documents over 10 MiB")
        if {n for n in files if n.endswith(".md") and n.startswith("payload/documents/")} != listed:
            problems.append("documents without a record")
    if "memory-spaces" in manifest.get("components", []):
        registry = json.loads(files["payload/data/.dsh-memory-bodies.json"])
        bodies = registry.get("bodies", [])
        ids = [b.get("id") for b in bodies]
        if registry.get("version") != 1 or len(ids) != len(set(ids)):
            problems.append("registry version / unique ids")
        for body in bodies:
            if not re.fullmatch(r"[a-zA-Z0-9][a-zA-Z0-9_-]*", body.get("id", "")) \
                    or not 1 <= len(body.get("name", "")) <= 100 or len(body.get("description", "")) > 1000:
                problems.append(f"space {body.get('id')}")
            db = files.get(f"payload/data/{body.get('id')}/mnemon.db", b"")
            if not db.startswith(b"SQLite format 3\x00") or len(db) < 100:
                problems.append(f"space {body.get('id')} db")
        if len([n for n in files if n.endswith("/mnemon.db")]) != len(bodies):
            problems.append("db count != body count")
    return problems


@pytest.mark.parametrize("scope", ["full", "runtime", "documents", "memory-spaces"])
def test_a_pack_exported_here_passes_the_reference_rules(tmp_path, scope):
    seed(tmp_path / "a")
    host = host_on(tmp_path / "a")
    try:
        host.spaces.create_space("Second", "Another store", active=False)
        exported = packs.export_pack(host, scope)
    finally:
        host.close()
    assert reference_problems(exported.data, exported.file_name) == []


def test_the_reference_rules_here_do_catch_a_broken_pack(tmp_path):
    """The checker above is not vacuous: a pack with a changed byte and a stray entry fails it."""
    from tests.helpers.packs import repack, unpack

    seed(tmp_path / "a")
    host = host_on(tmp_path / "a")
    try:
        exported = packs.export_pack(host)
    finally:
        host.close()
    files = unpack(exported.data)
    files["payload/runtime/USER.md"] += b"x"
    files["payload/state/memory-providers.json"] = b"{}"
    problems = reference_problems(repack(files, checksums=False), exported.file_name)
    assert "checksum of payload/runtime/USER.md" in problems
    assert "payload/state/memory-providers.json not allowed" in problems
    assert "USER.md is not the projection of memories.json" in problems
