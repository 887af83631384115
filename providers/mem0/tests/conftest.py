"""Fixtures of the Mem0 provider's tests: a private HOME, one PostgreSQL + pgvector server per test session
(started in a temporary directory from the pgserver wheel's binaries, stopped at the end) with a fresh
database per test, and OpenAI-compatible embedding endpoints (tests/servers.py)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Iterator

import pytest

sys.path.insert(0, str(Path(__file__).parent))
# the shared CLI wrapper of the provider packages' tests (tests/helpers/provider_cli.py of the repository)
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests" / "helpers"))

from postgres_server import fresh_database, session_server  # noqa: E402
from servers import EmbeddingServer, PostgresServer  # noqa: E402


@pytest.fixture(autouse=True)
def private_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ("MEM0_DIR", "MNEMON_DATA_DIR", "OPENAI_API_KEY", "OPENAI_BASE_URL", "PGPASSWORD", "PGHOST"):
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PostgresServer]:
    """PostgreSQL 16 + pgvector on 127.0.0.1 (skipped, saying why, when the pgserver wheel is missing)."""
    yield from session_server("PostgreSQL with pgvector", "pip install 'mnemon-ls-provider-mem0[test]' (brings "
                                                          "pgserver==0.1.4, whose wheel ships PostgreSQL 16 and pgvector)")


@pytest.fixture
def pg_database(pg_server: PostgresServer) -> Iterator[str]:
    """A new, empty database of :func:`pg_server` (dropped afterwards)."""
    yield from fresh_database(pg_server)


@pytest.fixture
def embedding_server() -> Iterator[EmbeddingServer]:
    """An OpenAI-compatible endpoint with key ``sk-test-endpoint-key`` and 384-dimension vectors."""
    server = EmbeddingServer("sk-test-endpoint-key").start()
    try:
        yield server
    finally:
        server.stop()
