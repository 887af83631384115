"""pytest-lsp fixtures: the real server as a subprocess, driven with VS Code and Neovim capability sets."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from tests.gitrepo import make_repo  # real repositories made with pygit2

CLIENTS = ["visual-studio-code", "neovim@v0.7", "neovim"]


def as_dict(value: Any) -> Any:
    """Recursively turn pygls' namedtuple results into plain dicts/lists."""
    if hasattr(value, "_asdict"):
        return {k: as_dict(v) for k, v in value._asdict().items()}
    if isinstance(value, list):
        return [as_dict(v) for v in value]
    return value


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A real git repository on branch ``main`` with one commit."""
    repo_dir = tmp_path / "repo"
    make_repo(repo_dir, "main")
    return repo_dir


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


def server_env(data_dir: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["MNEMON_DATA_DIR"] = str(data_dir)
    env["HOME"] = str(data_dir.parent / "home")
    return env


def make_client() -> LanguageClient:
    """A test client that answers applyEdit and registerCapability (lsp-anchors 2.4)."""
    client = pytest_lsp.make_test_lsp_client()

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def _apply(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        return types.ApplyWorkspaceEditResult(applied=True)

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def _register(params: types.RegistrationParams) -> None:
        return None

    return client


def server_config(data_dir: Path) -> ClientServerConfig:
    return ClientServerConfig(server_command=[sys.executable, "-m", "mnemon_ls", "serve"],
                              server_env=server_env(data_dir), client_factory=make_client)
