"""Fixtures and helpers the provider packages' conftests share (``providers/*/tests/conftest.py``; this folder is
put on ``sys.path`` by each): a private ``HOME`` for every test, and the engine command a package's tests need,
skipped or failed with the package's install line when it is missing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def private_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty ``HOME`` of this test's own, and no ``MNEMON_DATA_DIR`` or ``OPENAI_API_KEY`` of the caller's."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ("MNEMON_DATA_DIR", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    return home


def engine_command(found: str | None, require: str, missing: str, install: str) -> str:
    """``found`` (the engine's command), else the test fails when the environment variable ``require`` is ``1``
    (CI: "``require``=1 but no ``missing``") and is skipped otherwise, saying ``install``."""
    if found is None:
        if os.environ.get(require) == "1":
            pytest.fail(f"{require}=1 but no {missing}")
        pytest.skip(install)
    return found
