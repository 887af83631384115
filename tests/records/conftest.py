"""Fixtures of the Records tests: ``dsh_home`` (a fresh ``$DSH_HOME``), ``workspace`` (a real git
repository made with pygit2), ``source`` (a :class:`RecordsSource` on both, session ``s1``, user ``ana``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mnemon_ls.records import RecordsSource
from tests.gitrepo import make_repo


class Clock:
    """Epoch-ms clock that moves 1 ms per call (records get distinct, ordered times)."""

    def __init__(self, start: int = 1_760_000_000_000) -> None:
        self.now = start

    def __call__(self) -> int:
        self.now += 1
        return self.now


@pytest.fixture
def dsh_home(tmp_path: Path) -> Path:
    return tmp_path / "dsh-home"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    make_repo(path)
    return path


@pytest.fixture
def source(dsh_home: Path, workspace: Path) -> RecordsSource:
    return RecordsSource(workspace, session_id="s1", user_id="ana", env={"DSH_HOME": str(dsh_home)}, clock=Clock())
