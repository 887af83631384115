"""Shared fixtures for the Runtime, snapshot and settings/roots tests.

- ``root``: an empty storage root (a real directory under ``tmp_path``; nothing created inside it).
- ``clock``: a :class:`FrozenClock` (callable returning one fixed UTC time until moved).
- ``disk``: :class:`Disk`; ``disk.freeze(base)`` pins every file's mtime to a fixed past instant and
  returns ``{relative path: (bytes, mtime_ns, inode)}``; ``disk.state(base)`` reads the same map without
  pinning, so comparing the two shows any rewrite, rename, new or deleted file.
"""

from __future__ import annotations

import os
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

# Only the semantic tests (tests/semantic/) load the embedding model: every other test, and the
# servers and CLIs they start (which inherit the environment), keep keyword-only recall.
os.environ.setdefault("MNEMON_SEMANTIC", "off")


def pytest_configure(config: pytest.Config) -> None:
    """Write the bytecode of ``mnemon_ls`` once, before any test starts a process.

    The suite starts about 1,600 Python processes (language servers, MCP servers, the command line). An
    editable install in an environment with ``PYTHONDONTWRITEBYTECODE=1`` (this sandbox's default) has no
    ``__pycache__`` for the package, so every one of them compiled every module it imported from source:
    0.1-0.2 s of CPU per process. A wheel install compiles at install time; this does the same for the
    checkout under test (``compileall`` writes even when ``sys.dont_write_bytecode`` is set; an up-to-date
    file is skipped). Only the controlling process does it (``-n 2`` workers start after it)."""
    if hasattr(config, "workerinput"):  # an xdist worker: the controller has done it
        return
    import compileall

    import mnemon_ls

    compileall.compile_dir(str(Path(mnemon_ls.__file__).parent), quiet=2, workers=1)


#: 2026-09-15T08:00:00.000Z
DEFAULT_NOW = datetime(2026, 9, 15, 8, 0, 0, tzinfo=timezone.utc)
#: mtime every file is pinned to by disk_state (2001-09-09T01:46:40Z), far from "now".
PINNED_MTIME_NS = 1_000_000_000 * 1_000_000_000


class FrozenClock:
    """A clock for ``RuntimeStore(clock=...)``: returns ``now`` until ``set``/``advance`` moves it."""

    def __init__(self, now: datetime = DEFAULT_NOW) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def set(self, iso: str) -> None:
        """Move to an ISO time (``Z`` allowed)."""
        self.now = datetime.fromisoformat(iso.replace("Z", "+00:00"))

    def advance(self, **delta: float) -> None:
        """Move forward by a ``timedelta(**delta)``."""
        self.now = self.now + timedelta(**delta)


def disk_state(base: Path, *, pin: bool = False) -> dict[str, tuple[bytes, int, int]]:
    """Every regular file under ``base``: relative path -> (bytes, mtime_ns, inode); a file gone between the
    listing and its read (a lock staging file another process removes) is left out.

    With ``pin`` each file's mtime is first set to :data:`PINNED_MTIME_NS`, so any later rewrite
    (in place or by rename) shows up as a different mtime even within the filesystem's clock tick.
    """
    state: dict[str, tuple[bytes, int, int]] = {}
    if not base.exists():
        return state
    for path in sorted(p for p in base.rglob("*") if p.is_file()):
        try:
            if pin:
                os.utime(path, ns=(PINNED_MTIME_NS, PINNED_MTIME_NS))
            info = path.stat()
            state[str(path.relative_to(base))] = (path.read_bytes(), info.st_mtime_ns, info.st_ino)
        except FileNotFoundError:
            continue  # gone between the listing and the read (a lock's staging file): not in the state
    return state


@pytest.fixture(autouse=True)
def _private_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test (and every process it starts) gets an empty ``HOME`` of its own and no ``MNEMON_*`` or
    ``DSH_HOME`` of the developer: the default scopes put USER.md and the global root under ``~``, and no
    test may read or write the real one. (Kept: where CI's test tools are, such as ``MNEMON_HINDSIGHT_API``.)"""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    for name in [k for k in os.environ if k.startswith("MNEMON_") and k not in ("MNEMON_MCP_INSPECTOR", "MNEMON_LSP_TEST_SERVER", "MNEMON_TEST_NO_ZYGOTE",
                                                                               "MNEMON_SEMANTIC", "MNEMON_HINDSIGHT_API",
                                                                               "MNEMON_OPENVIKING_SERVER", "MNEMON_BYTEROVER_BRV")] + [
            "DSH_HOME", "XDG_CONFIG_HOME"]:
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """An existing, empty storage root directory."""
    path = tmp_path / "root"
    path.mkdir()
    return path


@pytest.fixture
def clock() -> FrozenClock:
    """A clock frozen at 2026-09-15T08:00:00.000Z."""
    return FrozenClock()


class Disk:
    """``freeze(base)``: pin mtimes then read; ``state(base)``: read only (see :func:`disk_state`)."""

    @staticmethod
    def freeze(base: Path) -> dict[str, tuple[bytes, int, int]]:
        return disk_state(base, pin=True)

    @staticmethod
    def state(base: Path) -> dict[str, tuple[bytes, int, int]]:
        return disk_state(base, pin=False)


@pytest.fixture
def disk() -> Disk:
    """A :class:`Disk`."""
    return Disk()
