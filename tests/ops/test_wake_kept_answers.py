"""``workspace.wake`` through the operation layer on one long-lived Host (as the MCP server and the language server
hold it): what the wake keeps between calls (the repair's "nothing to do", the branch probe, the effective store
state; :mod:`mnemon_ls.statsig`) never hides a change made between two calls. A hand edit of ``MEMORY.md``, a
``git checkout`` and a write by another Host are each in the very next wake. ``RACY_NS`` is 0 so that the kept
answers are used on files written moments ago (by default a file changed less than a second ago is never
trusted to keep its signature)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mnemon_ls import gitstate, statsig
from mnemon_ls.host import WorkspaceHost
from mnemon_ls.ops import execute
from mnemon_ls.ops.registry import by_mcp_tool
from mnemon_ls.runtime.ops import validate_request
from mnemon_ls.settings import load_settings

try:
    from tests import gitrepo
except ImportError:  # tests/ on sys.path (pytest "prepend" import mode)
    import gitrepo


@pytest.fixture
def host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(statsig, "RACY_NS", 0)
    monkeypatch.setattr(gitstate, "_probes", {})
    workspace = gitrepo.cli_repo(tmp_path / "repo")
    settings = load_settings({"storageScope": "custom", "dataDir": str(tmp_path / "root")})
    made = WorkspaceHost(workspace, settings, env={"HOME": str(tmp_path / "home")})
    made.runtime.mutate(validate_request("add", "memory", "first fact"))
    yield made
    made.close()


def wake(host: WorkspaceHost) -> str:
    operation = by_mcp_tool()["mnemon_wake"]
    return operation.text(execute.call(operation, host, execute.parse(operation, {}), surface="mcp"))


def test_a_hand_edit_a_branch_switch_and_another_hosts_write_are_in_the_next_wake(host: WorkspaceHost,
                                                                                   tmp_path: Path) -> None:
    first = wake(host)
    assert "first fact" in first and "Git branch: main\n" in first
    assert wake(host) == first  # kept answers, the same text

    memory = host.runtime.memory_store.projection_path("memory")
    memory.write_bytes(memory.read_bytes().rstrip(b"\n") + "\n§\nsecond fact typed by hand\n".encode())
    edited = wake(host)
    assert "second fact typed by hand" in edited

    gitrepo.git_cli(host.workspace, "checkout", "-q", "-b", "topic")
    switched = wake(host)
    assert "Git branch: topic\n" in switched and "Git branch: main" not in switched

    other = WorkspaceHost(host.workspace, host.settings, env={"HOME": str(tmp_path / "home")})
    try:
        other.runtime.mutate(validate_request("add", "memory", "third fact from another host"))
    finally:
        other.close()
    assert "third fact from another host" in wake(host)
