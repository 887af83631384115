"""A pack whose document file holds a body starting with a line indented as a Markdown code block (a pack
written by another tool or edited by hand; mnemon-ls writes bodies trimmed). A document body may not start with
such a line when it is written through ``doc create/update`` (:func:`mnemon_ls.documents.model.validate_content`),
but a pack import takes a document's file as packed: it is not refused, the other documents import with it,
and its bytes, indentation included, are kept; one that comes in under a new id (its id taken here by another
content) keeps them too."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from mnemon_ls import packs
from tests.helpers.packs import host_on, repack, seed, unpack

CODE = "    def main():\n        pass\n"


def indented_pack(data: bytes) -> tuple[bytes, str, bytes]:
    """``data`` (a pack) with its active document's body replaced by :data:`CODE`: ``(pack, id, file bytes)``."""
    files = unpack(data)
    index = json.loads(files["payload/documents/index.json"])
    record = next(r for r in index["documents"] if r["status"] == "active")
    name = f"payload/documents/active/{record['filename']}"
    text = files[name].decode()
    front = text[:text.index("\n---\n") + 5]
    digest = hashlib.sha256(CODE.strip().encode()).hexdigest()
    front = front.replace(record["contentHash"], digest)
    files[name] = (front + "\n" + CODE).encode()
    record["contentHash"], record["sizeBytes"] = digest, len(files[name])
    files["payload/documents/index.json"] = (json.dumps(index, indent=2, ensure_ascii=False) + "\n").encode()
    return repack(files), record["id"], files[name]


def body_on_disk(root: Path, doc_id: str) -> bytes:
    host = host_on(root)
    try:
        view = host.documents.get(doc_id)
        return Path(view.path).read_bytes()
    finally:
        host.close()


def test_an_indented_body_imports_with_the_other_documents_and_keeps_its_bytes(tmp_path: Path) -> None:
    seed(tmp_path / "source")
    host = host_on(tmp_path / "source")
    try:
        pack, doc_id, data = indented_pack(packs.export_pack(host).data)
    finally:
        host.close()
    seed(tmp_path / "target", tag=" (target)")
    target = host_on(tmp_path / "target")
    try:
        receipt = target.import_pack(pack)
        assert receipt["documents"]["added"] == 2, receipt["documents"]
        assert body_on_disk(tmp_path / "target", doc_id) == data
        assert target.documents.get(doc_id).content == CODE.strip()
        # the same id with another content here: it comes in under a new id, its body's bytes kept
        target.documents.update(doc_id, content="# Changed here")
        again = target.import_pack(pack)
        [renamed] = again["documents"]["renamed"]
        copy = Path(target.documents.get(renamed["to"]).path).read_bytes()
        assert copy.endswith(b"\n---\n\n" + CODE.encode()), copy
    finally:
        target.close()
