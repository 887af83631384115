"""Fixtures of the PostgreSQL provider's tests: a private HOME, one real PostgreSQL 16 server per test session
(started in a temporary directory from the pgserver wheel's binaries, stopped at the end; the repository's
tests/helpers/postgres_server.py) with a fresh database per test."""

from __future__ import annotations

import glob
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

sys.path.insert(0, str(Path(__file__).parent))
# the shared helpers of the provider packages' tests (tests/helpers of the repository)
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests" / "helpers"))

from postgres_server import PostgresServer, fresh_database, session_server  # noqa: E402

ENV_NAMES = ("MNEMON_DATA_DIR", "MNEMON_POSTGRES_DSN", "PGPASSWORD", "PGHOST", "PGPORT", "PGUSER", "PGDATABASE",
             "PGPASSFILE", "PGSERVICE")


@pytest.fixture(autouse=True)
def private_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ENV_NAMES:
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PostgresServer]:
    """PostgreSQL 16 on 127.0.0.1 (skipped, saying why, when the pgserver wheel is missing)."""
    yield from session_server("PostgreSQL", "pip install 'mnemon-ls-provider-postgres[test]' (brings pgserver==0.1.4, "
                                            "whose wheel ships PostgreSQL 16)")


@pytest.fixture
def pg_database(pg_server: PostgresServer) -> Iterator[str]:
    """A new, empty database of :func:`pg_server` (dropped afterwards)."""
    yield from fresh_database(pg_server)


@pytest.fixture
def service(pg_server: PostgresServer, pg_database: str) -> dict[str, Any]:
    """The provider's service fields for the test's database, as the admin role (keyword recall only: the
    semantic tests turn it on)."""
    return {"host": pg_server.host, "port": pg_server.port, "database": pg_database, "user": pg_server.user,
            "password": pg_server.password, "semantic": "false"}


def _system_bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(found[-1]).parent if found else None


@pytest.fixture
def system_server() -> Iterator[PostgresServer]:
    """The machine's own PostgreSQL (Debian's ``postgresql`` package: contrib's ``pg_trgm``, no pgvector) in a
    temporary cluster, when it has one (skipped, saying so, when not)."""
    bin_dir = _system_bin()
    if bin_dir is None:
        pytest.skip("no system PostgreSQL (/usr/lib/postgresql/*/bin) on this machine")
    server = PostgresServer(bin_dir).start()
    try:
        yield server
    finally:
        server.stop()
