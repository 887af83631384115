"""The MCP server runs ``mnemon_wake`` on its event loop in no-wait mode (:mod:`mnemon_ls.nowait`) and gives it to a
worker thread, whole, where it would wait or write: a pack import holding the gate, a hand edit to import, a
native space's lock held by another thread. Real roots, real git repositories, the real server object and its
operation layer (:func:`mnemon_ls.ops.execute.execute_async`, as ``MnemonMcp._run_operation`` calls it); the
worker-thread runner is anyio's, wrapped to count its calls."""

from __future__ import annotations

import fcntl
import os
import threading
from pathlib import Path
from typing import Any, Callable

import anyio
import pytest

from mnemon_ls import nowait
from mnemon_ls.mcp.server import MnemonMcp
from mnemon_ls.mcp.workspaces import McpWorkspaces
from mnemon_ls.ops.execute import execute_async
from mnemon_ls.ops.registry import operations
from mnemon_ls.runtime.ops import validate_request
from mnemon_ls.settings import load_settings

WAKE = operations()["workspace.wake"]


def _server(workspace: Path, data_dir: Path) -> MnemonMcp:
    return MnemonMcp(McpWorkspaces(load_settings({"storageScope": "custom", "dataDir": str(data_dir)}),
                                   str(workspace)))


async def run_counting_hops(app: MnemonMcp, operation: Any, raw: dict[str, Any],
                            before_thread: Callable[[], None] = lambda: None) -> tuple[Any, list[str]]:
    """Run ``operation`` with ``raw`` as the server does (:func:`execute_async`): its data and one ``"thread"``
    per hop to a worker thread (``before_thread()`` is called at each hop, before the thread runs)."""
    hops: list[str] = []

    async def host_for(workspace: str | None) -> Any:
        return await app._resolve(None, workspace)

    async def to_thread(fn: Callable[[], Any]) -> Any:
        hops.append("thread")
        before_thread()
        return await anyio.to_thread.run_sync(fn, abandon_on_cancel=False)

    _host, data = await execute_async(operation, raw, host_for, surface="mcp", to_thread=to_thread)
    return data, hops


async def _wake(app: MnemonMcp, before_thread: Callable[[], None] = lambda: None) -> tuple[dict[str, Any], list[str]]:
    """The wake's data and the names of the threads the operation ran on (``["thread"]`` once per hop)."""
    return await run_counting_hops(app, WAKE, {}, before_thread)


async def test_a_warm_wake_runs_on_the_event_loop(workspace: Path, data_dir: Path) -> None:
    app = _server(workspace, data_dir)
    host = await app._resolve(None, None)
    host.runtime.mutate(validate_request("add", "memory", "the build uses tox"))
    await _wake(app)  # the first wake may repair and open stores: a thread
    data, hops = await _wake(app)
    assert hops == []
    assert "the build uses tox" in data["text"]


async def test_a_wake_while_a_pack_import_holds_the_gate_goes_to_a_thread_and_waits_there(
        workspace: Path, data_dir: Path) -> None:
    app = _server(workspace, data_dir)
    host = await app._resolve(None, None)
    host.runtime.mutate(validate_request("add", "memory", "the build uses tox"))
    await _wake(app)
    gate = os.open(host.root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(gate, fcntl.LOCK_EX)  # what a pack import holds while it swaps the root
        # Released only when the wake reaches the worker thread: a wake that waited on the loop instead would
        # never get there, and fail with StoreBusy after the lock timeout.
        data, hops = await _wake(app, before_thread=lambda: fcntl.flock(gate, fcntl.LOCK_UN))
    finally:
        os.close(gate)
    assert hops == ["thread"]
    assert "the build uses tox" in data["text"]


async def test_a_hand_edit_is_imported_by_a_wake_in_a_thread(workspace: Path, data_dir: Path) -> None:
    app = _server(workspace, data_dir)
    host = await app._resolve(None, None)
    host.runtime.mutate(validate_request("add", "memory", "the build uses tox"))
    await _wake(app)
    memory = host.runtime.memory_store.projection_path("memory")
    memory.write_bytes(memory.read_bytes().rstrip(b"\n") + "\n§\ndeploys go out on Tuesdays\n".encode())
    data, hops = await _wake(app)
    assert hops == ["thread"]  # the import takes the store's lock and writes: never on the loop
    assert "deploys go out on Tuesdays" in data["text"]
    assert [name for report in data["repairs"] for name in report["repaired"]] == ["MEMORY.md"]
    assert "deploys go out on Tuesdays" in [e.content for e in host.runtime.memory_store.read().entries]


async def test_a_wake_while_a_documents_write_holds_the_store_goes_to_a_thread(workspace: Path,
                                                                               data_dir: Path) -> None:
    app = _server(workspace, data_dir)
    host = await app._resolve(None, None)
    host.documents.create("Cache design", "LRU with a 5 minute TTL")
    await _wake(app)
    held, release, done = threading.Event(), threading.Event(), threading.Event()

    def writer() -> None:  # another request's Documents write, in a worker thread
        with host.documents.mutex:
            held.set()
            release.wait(20)  # bounded: a wake that waited for the lock on the loop fails below instead of hanging
        done.set()

    def reached_thread() -> None:
        seen.append(done.is_set())
        release.set()

    seen: list[bool] = []
    other = threading.Thread(target=writer)
    other.start()
    held.wait()
    try:
        data, hops = await _wake(app, before_thread=reached_thread)
    finally:
        release.set()
        other.join()
    assert hops == ["thread"] and seen == [False]  # sent to a thread while the write still held the store
    assert "Cache design" in data["text"]


def test_a_lock_another_thread_holds_is_not_waited_for_in_no_wait_mode() -> None:
    lock = nowait.Lock("space s1")
    held, release = threading.Event(), threading.Event()

    def holder() -> None:
        with lock:
            held.set()
            release.wait()

    other = threading.Thread(target=holder)
    other.start()
    held.wait()
    try:
        with nowait.no_wait(), pytest.raises(nowait.WouldWait, match="space s1"):
            lock.acquire()
    finally:
        release.set()
        other.join()
    with nowait.no_wait(), lock:  # free now: taken without waiting
        with lock:  # and reentrant, as an RLock
            pass
    assert lock.acquire(blocking=False)
    lock.release()


def test_would_wait_passes_through_except_exception_and_only_in_no_wait_mode() -> None:
    nowait.check("outside")  # no effect outside the mode
    with pytest.raises(nowait.WouldWait, match="a store lock"):
        with nowait.no_wait():
            try:
                nowait.check("a store lock")
            except Exception:  # a cover that degrades to a notice must not swallow it
                pytest.fail("WouldWait was caught as an Exception")
    assert not nowait.active()


async def test_the_server_keeps_no_dropped_host_as_settled(workspace: Path, data_dir: Path) -> None:
    """The server settles (``gc.freeze``) after each new host, and tells new from known by the host itself, held
    weakly: a host dropped (its workspace's roots changed) is forgotten, so a new host given the same ``id()``
    is still settled. By ``id()``, the dropped host's number stayed and a new host reusing it was skipped."""
    import gc

    app = _server(workspace, data_dir)
    host = await app._host(None, None)
    assert list(app._settled) == [host]
    assert await app._host(None, None) is host and len(app._settled) == 1
    app.workspaces.close()
    del host
    gc.unfreeze()  # the frozen generation is never collected; its cycles are what a dropped host leaves
    gc.collect()
    assert len(app._settled) == 0
    again = await app._host(None, None)
    assert list(app._settled) == [again]
