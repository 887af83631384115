"""A hand edit a refresh does not adopt that holds a credential (real files, a real store, the real SQLite search
index): its first line indented as a code block (under ``secrets: redact``), or any body under ``secrets: reject``.
The search index took in the file's text as it was, credential and all, and search showed it in excerpts; now
search keeps and shows that text with a placeholder in place of the credential (only an adopted body is taken as
it is). The file keeps the credential until the person fixes it, and the refresh notice and ``doctor`` say so,
naming the kind of credential, never its value."""

from __future__ import annotations

from pathlib import Path

from mnemon_ls.documents import diagnose

from tests.documents.test_indented_hand_edit import hand_edit
from tests.documents.test_support import make_store

TOKEN = "ghp_" + "Zq8mW2xR7tK4pL9vB3nH6cJ1dF5gS0aY2eU8"


def derived_bytes(root: Path) -> bytes:
    """Every byte of the search index's files (the database, its WAL and shared memory)."""
    return b"".join(p.read_bytes() for p in sorted((root / "documents").glob(".search.sqlite3*")))


def check_searched_without_the_credential(store, root: Path, doc_id: str) -> None:
    [hit] = store.search.find("zebraword", include_content=True).results
    assert hit.record.id == doc_id and TOKEN not in hit.excerpt and TOKEN not in hit.content
    assert "[redacted:github-token]" in hit.content
    assert store.search.find(TOKEN).results == ()
    store.search.close()
    assert TOKEN.lower().encode() not in derived_bytes(root).lower()


def test_an_indented_hand_edit_with_a_credential_is_searched_with_a_placeholder(tmp_path: Path) -> None:
    store, root, _, clock = make_store(tmp_path, secrets="redact")
    created = store.create("Deploy notes", "# Deploy\nRun the script.")
    doc_id, path = created.document.record.id, Path(created.document.path)
    clock.tick()
    edited = hand_edit(path, f"    export GITHUB_TOKEN={TOKEN}\n    ./deploy.sh zebraword\n")

    report = store.freshness.refresh()
    assert report.adopted == [] and path.read_bytes() == edited  # the file keeps it until the person fixes it
    check_searched_without_the_credential(store, root, doc_id)
    [notice] = report.notices
    assert "first line is indented (4 spaces)" in notice and TOKEN not in notice
    assert "holds what looks like a GitHub token" in notice and "the file keeps it as typed" in notice
    finding = next(f for f in diagnose(store) if f.subject == str(path))
    assert "holds what looks like a GitHub token" in finding.advice and TOKEN not in finding.advice + finding.message
    assert path.read_bytes() == edited


def test_a_credential_a_reject_refresh_leaves_in_the_file_is_not_searched_and_doctor_says_why(tmp_path: Path) -> None:
    store, root, _, clock = make_store(tmp_path, secrets="reject")
    created = store.create("Deploy notes", "Run the script.")
    doc_id, path = created.document.record.id, Path(created.document.path)
    clock.tick()
    edited = hand_edit(path, f"Run ./deploy.sh zebraword with GITHUB_TOKEN={TOKEN}\n")

    report = store.freshness.refresh()
    assert report.adopted == [] and path.read_bytes() == edited
    [notice] = report.notices
    assert "not adopted (secrets is reject)" in notice and "the file keeps it as typed" in notice
    assert TOKEN not in notice
    finding = next(f for f in diagnose(store) if f.subject == str(path))
    assert finding.advice.startswith("refreshes do not adopt a body holding a credential under secrets: reject")
    assert "GitHub token" in finding.advice and TOKEN not in finding.advice + finding.message
    check_searched_without_the_credential(store, root, doc_id)
