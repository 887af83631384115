"""Fixtures of the OpenViking provider's tests: a private HOME, one embedding endpoint and one real OpenViking
server per test session (tests/servers.py), and a function-scoped server for tests that stop it."""

from __future__ import annotations

import sys
import uuid
from pathlib import Path
from typing import Iterator

import pytest

sys.path.insert(0, str(Path(__file__).parent))
# the shared test helpers of the provider packages (tests/helpers of the repository)
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests" / "helpers"))

from embedding_server import EmbeddingServer  # noqa: E402
from provider_fixtures import engine_command, private_home  # noqa: E402
from servers import OpenVikingServer, server_command  # noqa: E402

__all__ = ["private_home"]  # an autouse fixture: imported to be collected

KEY = "sk-test-embedding-key"


def _command() -> str:
    return engine_command(server_command(), "MNEMON_REQUIRE_OPENVIKING", "openviking-server command (MNEMON_OPENVIKING_SERVER)",
                          "no OpenViking server: install openviking==0.5.2 into an environment of its own and set "
                          "MNEMON_OPENVIKING_SERVER to its openviking-server (README.md)")


@pytest.fixture(scope="session")
def embeddings() -> Iterator[EmbeddingServer]:
    server = EmbeddingServer(KEY).start()
    try:
        yield server
    finally:
        server.stop()


def _served(embeddings: EmbeddingServer, root_key: str | None = None) -> Iterator[OpenVikingServer]:
    server = OpenVikingServer(_command(), embeddings, KEY, root_key).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def openviking(embeddings: EmbeddingServer) -> Iterator[OpenVikingServer]:
    """An OpenViking server (dev mode) shared by the session (tests use folders of their own: :func:`folder`)."""
    yield from _served(embeddings)


@pytest.fixture
def own_openviking(embeddings: EmbeddingServer) -> Iterator[OpenVikingServer]:
    """An OpenViking server of this test alone (it may stop it)."""
    yield from _served(embeddings)


@pytest.fixture
def keyed_openviking(embeddings: EmbeddingServer) -> Iterator[OpenVikingServer]:
    """An OpenViking server with keys (``root_api_key``; api_key mode) of this test alone."""
    yield from _served(embeddings, root_key="root-" + uuid.uuid4().hex)


@pytest.fixture
def folder() -> str:
    """A folder name no other test uses."""
    return "t" + uuid.uuid4().hex[:12]
