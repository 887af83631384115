"""``mnemon_recall`` runs on the MCP server's event loop in no-wait mode (:mod:`mnemon_ls.nowait`), as
``mnemon_wake`` does (tests/mcp/test_mcp_nowait.py), and is given to a worker thread, whole, where it would wait
or write; what the loop's attempt would have changed in memory (the access counts of the items it sent, the
registry's notices said once) is done once, by the run that answers. Real roots, real git repositories, real
``mnemon.db`` stores, the real server object and its operation layer (:func:`mnemon_ls.ops.execute.execute_async`,
as ``MnemonMcp._run_operation`` calls it); the worker-thread runner is anyio's, wrapped to count its calls."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any, Callable

import pytest

from mnemon_ls import nowait
from mnemon_ls.mcp.server import MnemonMcp
from mnemon_ls.mcp.workspaces import McpWorkspaces
from mnemon_ls.ops.registry import operations
from mnemon_ls.settings import load_settings
from mnemon_ls.spaces.providers.native_schema import ACCESS_FLUSH_THRESHOLD
from tests.mcp.test_mcp_nowait import run_counting_hops

RECALL = operations()["spaces.recall"]


def _server(workspace: Path, data_dir: Path) -> MnemonMcp:
    return MnemonMcp(McpWorkspaces(load_settings({"storageScope": "custom", "dataDir": str(data_dir)}),
                                   str(workspace)))


async def _recall(app: MnemonMcp, query: str,
                  before_thread: Callable[[], None] = lambda: None) -> tuple[dict[str, Any], list[str]]:
    """The recall's data and one ``"thread"`` per hop to a worker thread."""
    return await run_counting_hops(app, RECALL, {"query": query}, before_thread)


def _access_counts(db_path: Path) -> dict[str, int]:
    with sqlite3.connect(db_path) as db:
        return dict(db.execute("SELECT content, access_count FROM insights WHERE deleted_at IS NULL"))


async def test_a_warm_recall_runs_on_the_event_loop(workspace: Path, data_dir: Path) -> None:
    app = _server(workspace, data_dir)
    host = await app._resolve(None, None)
    host.spaces.create_space("Project", "facts", active=True)
    host.spaces.remember("the deploy runs nightly at two")
    await _recall(app, "deploy nightly")  # the first recall opens the store: a thread
    data, hops = await _recall(app, "deploy nightly")
    assert hops == []
    assert [r["content"] for r in data["results"]] == ["the deploy runs nightly at two"]


async def test_a_recall_while_another_thread_holds_the_space_goes_to_a_thread(workspace: Path,
                                                                             data_dir: Path) -> None:
    app = _server(workspace, data_dir)
    host = await app._resolve(None, None)
    record = host.spaces.create_space("Project", "facts", active=True).record
    host.spaces.remember("the deploy runs nightly at two")
    await _recall(app, "deploy nightly")
    provider = host.spaces.provider(record)
    held, release = threading.Event(), threading.Event()

    def writer() -> None:  # another request's write to the space, in a worker thread
        with provider._lock:
            held.set()
            release.wait(20)  # bounded: a recall that waited on the loop fails below instead of hanging

    seen: list[bool] = []
    other = threading.Thread(target=writer)
    other.start()
    held.wait()
    try:
        data, hops = await _recall(app, "deploy nightly",
                                   before_thread=lambda: (seen.append(release.is_set()), release.set()))
    finally:
        release.set()
        other.join()
    assert hops == ["thread"] and seen == [False]  # sent to a thread while the other still held the space
    assert [r["content"] for r in data["results"]] == ["the deploy runs nightly at two"]


async def test_a_recall_given_to_a_thread_midway_counts_each_access_once(workspace: Path, data_dir: Path) -> None:
    """Two spaces: the loop's attempt sends space A's items (their accesses are recorded), then space B would
    write its counters inline (no flusher to hand them to, the threshold reached): the recall goes to a thread
    and runs again. A's items are counted once, not once per attempt."""
    app = _server(workspace, data_dir)
    host = await app._resolve(None, None)
    first = host.spaces.create_space("Alpha", "facts", active=True).record
    second = host.spaces.create_space("Beta", "facts", active=True).record
    host.spaces.remember("the deploy runs nightly at two", space_id=first.id)
    host.spaces.remember("the deploy of the docs runs weekly", space_id=second.id)
    await _recall(app, "deploy")
    a, b = host.spaces.provider(first), host.spaces.provider(second)
    assert a.flush_access() and b.flush_access()
    before_a, before_b = _access_counts(a.db_path), _access_counts(b.db_path)
    b.access_flusher = None  # B writes its own counters, as a process of one command does
    b._touch(["no-such-id"] * (ACCESS_FLUSH_THRESHOLD - 1), "recall", "padding")  # one hit short of a write
    data, hops = await _recall(app, "deploy")
    assert hops == ["thread"]
    assert sorted(r["content"] for r in data["results"]) == ["the deploy of the docs runs weekly",
                                                             "the deploy runs nightly at two"]
    assert a.flush_access()
    after_a, after_b = _access_counts(a.db_path), _access_counts(b.db_path)
    assert after_a["the deploy runs nightly at two"] == before_a["the deploy runs nightly at two"] + 1
    assert after_b["the deploy of the docs runs weekly"] == before_b["the deploy of the docs runs weekly"] + 1


async def test_the_registry_notice_is_said_by_the_run_that_answers(workspace: Path, data_dir: Path) -> None:
    """A repaired registry's notice is said once per server; a recall that starts on the loop and goes to a
    thread (another thread holds the space) still says it, and the next recall does not."""
    app = _server(workspace, data_dir)
    host = await app._resolve(None, None)
    record = host.spaces.create_space("Project", "facts", active=True).record
    host.spaces.remember("the deploy runs nightly at two")
    await _recall(app, "deploy nightly")
    host.close()
    (data_dir / "data" / ".dsh-memory-bodies.json").write_text('{"broken')
    app = _server(workspace, data_dir)
    host = await app._resolve(None, None)
    host.spaces.state()  # reads the registry: repairs it, keeping the damaged copy
    provider = host.spaces.provider(record)
    held, release = threading.Event(), threading.Event()

    def writer() -> None:
        with provider._lock:
            held.set()
            release.wait(20)

    other = threading.Thread(target=writer)
    other.start()
    held.wait()
    try:
        data, hops = await _recall(app, "deploy nightly", before_thread=release.set)
    finally:
        release.set()
        other.join()
    assert hops == ["thread"]
    assert [n for n in data["notices"] if "was damaged" in n], data["notices"]
    again, _hops = await _recall(app, "deploy nightly")
    assert not [n for n in again["notices"] if "was damaged" in n]


def test_actions_put_off_in_no_wait_mode_run_once_when_the_body_succeeds() -> None:
    done: list[str] = []
    nowait.after(lambda: done.append("now"))  # outside the mode: at once
    assert done == ["now"]
    with pytest.raises(nowait.WouldWait):
        with nowait.no_wait():
            nowait.after(lambda: done.append("dropped"))
            nowait.check("a store lock")
    assert done == ["now"]  # the attempt given to a thread changed nothing
    with nowait.no_wait():
        with nowait.no_wait():  # nested: the outermost body's success runs them
            nowait.after(lambda: done.append("inner"))
        assert done == ["now"]
        nowait.after(lambda: done.append("outer"))
    assert done == ["now", "inner", "outer"]
