"""Fixtures of the ByteRover provider's tests: a private HOME per test; per session a stand-in of ByteRover's login
service, a scripted model and one private ByteRover state (tests/servers.py) selected through the environment, so
the mnemon-ls services of the tests and the CLI, language server and MCP server they start all run the real
``brv`` on it; a state of its own for a test that takes the engine down. Every ByteRover process is ended at
teardown."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable, Iterator

import pytest

sys.path.insert(0, str(Path(__file__).parent))
# the shared test helpers of the provider packages (tests/helpers of the repository)
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests" / "helpers"))

from provider_fixtures import engine_command, private_home  # noqa: E402
from servers import ByteRoverHome, FakeModel, LoginStub, brv_command  # noqa: E402

__all__ = ["private_home"]  # an autouse fixture: imported to be collected


def _command() -> str:
    return engine_command(brv_command(), "MNEMON_REQUIRE_BYTEROVER", "brv command (MNEMON_BYTEROVER_BRV, or brv on PATH)",
                          "no ByteRover: npm install byterover-cli@3.14.0 and set MNEMON_BYTEROVER_BRV to its "
                          "node_modules/.bin/brv (README.md)")


@pytest.fixture(scope="session")
def brv() -> str:
    """The ``brv`` command (skips or fails without one: module doc)."""
    return _command()


@pytest.fixture(scope="session")
def stub() -> Iterator[LoginStub]:
    server = LoginStub().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def model() -> Iterator[FakeModel]:
    server = FakeModel().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def byterover(brv: str, stub: LoginStub) -> Iterator[ByteRoverHome]:
    """The session's ByteRover state, selected in this process's environment (and so in every process the tests
    start) for the whole session."""
    home = ByteRoverHome(brv, stub)
    with pytest.MonkeyPatch.context() as patch:
        for name, value in home.env.items():
            patch.setenv(name, value)
        try:
            yield home
        finally:
            home.stop()


@pytest.fixture
def own_byterover(brv: str, byterover: ByteRoverHome, monkeypatch: pytest.MonkeyPatch) -> Iterator[ByteRoverHome]:
    """A ByteRover state of this test alone, with a login stand-in of its own (the test may stop both)."""
    stub = LoginStub().start()
    home = ByteRoverHome(brv, stub)
    for name, value in home.env.items():
        monkeypatch.setenv(name, value)
    try:
        yield home
    finally:
        home.stop()
        stub.stop()


@pytest.fixture
def project(tmp_path: Path, byterover: ByteRoverHome) -> Callable[[str], Path]:
    """``project(name)``: a new initialised ByteRover project ``tmp_path/name`` of the session's state."""
    return lambda name: byterover.init_project(tmp_path / name)
