"""A separate OS process that writes to one storage root's Runtime memory (for concurrency/crash tests).

Every line it prints is flushed at once, so a test reading the pipe sees it as soon as it happens.

Commands::

    writer.py add ROOT PREFIX COUNT [--limit BYTES] [--no-wait] [--lock-timeout SECONDS] [--pause-at NAME:N]
        Build a RuntimeStore on ROOT, print ``READY <pid>``, then (unless --no-wait) block until one line
        arrives on stdin (the start barrier). Add COUNT entries ``<PREFIX>-<i>`` (i = 0..COUNT-1, memory
        target) one by one; after each ``mutate`` returns print ``ACK <i+1> <changed> <message>``. Finally
        print ``DONE``. Any exception is printed as ``ERROR <class> <message>`` and exits 1.

        ``--pause-at NAME:N`` is a breakpoint, as a debugger would set one: a profile hook stops the
        process when the N-th call (counted from the first add) of a function named NAME begins (a Python
        function's ``co_name`` such as ``_write_lock_info`` or ``_fsync_dir``, or ``os.<name>`` for that very
        builtin, e.g. ``os.replace``); it prints ``PAUSED <NAME> <N>`` and blocks on stdin
        forever, so the test can SIGKILL it at exactly that point. The code under test runs unchanged.

    writer.py archive WORKSPACE START COUNT --limit BYTES [--pause-at NAME:N]
        Build a WorkspaceHost on WORKSPACE (storageScope workspace, runtimeUserScope storage, MEMORY.md
        limit BYTES), print ``READY <pid>``, then add COUNT facts ``Fact <n>: ...`` (n = START..) through
        ``WorkspaceHost.mutate_runtime`` (capacity maintenance archives the overflow); after each print
        ``ACK <n> <maintenance kind or ->``. ``--pause-at`` as for ``add``, counting only calls made inside
        an archival (``archive_and_mutate`` on the stack).

    writer.py hold ROOT
        Take the Runtime lock (``ROOT/runtime/.memories.lock``) exactly as the store does, print
        ``HELD <pid>``, block until a line arrives on stdin (or stdin closes), release it and print
        ``RELEASED``. Killing it while it holds leaves the marker of a dead owner.

    writer.py import-space DB COUNT BATCH [--pause-at NAME:N]
        Open a native Memory Space store at DB (``NativeProvider``), remember one note (so the side index
        exists), print ``READY <pid>`` and import COUNT items
        ``service <i> ...`` in batches of BATCH (``import_items``); print ``DONE``. ``--pause-at`` as for ``add``
        (e.g. ``optimize:1``: stopped right before the side index's merge, to be killed there).

    writer.py gate ROOT [ROOT...]
        Hold the pack gate of the ROOTs shared (:func:`mnemon_ls.packgate.hold`, as every command holds its
        storage root and the global root for its whole run), print ``HELD <pid>``, block until a line
        arrives on stdin (or stdin closes), release it and print ``RELEASED``: a long command of one root.

    writer.py identity
        Print the lock-owner record filelock's SoftFileLock writes for this process
        (``<pid>\\n<host>\\n[<start token>\\n]``) as one JSON string, then exit 0.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _add(argv: list[str]) -> int:
    from mnemon_ls.runtime import ops
    from mnemon_ls.runtime.store import RuntimeStore
    from mnemon_ls.settings import RuntimeMemorySettings

    root, prefix, count = Path(argv[0]), argv[1], int(argv[2])
    limit = 1_048_576
    wait = True
    lock_timeout = 10.0
    pause: tuple[str, int] | None = None
    rest = argv[3:]
    while rest:
        flag = rest.pop(0)
        if flag == "--limit":
            limit = int(rest.pop(0))
        elif flag == "--no-wait":
            wait = False
        elif flag == "--lock-timeout":
            lock_timeout = float(rest.pop(0))
        elif flag == "--pause-at":
            name, _, nth = rest.pop(0).partition(":")
            pause = (name, int(nth or 1))
        else:
            raise SystemExit(f"unknown flag {flag}")
    store = RuntimeStore(root, RuntimeMemorySettings(memory_limit_bytes=limit), lock_timeout=lock_timeout)
    requests = [ops.validate_request("add", "memory", f"{prefix}-{i}") for i in range(count)]
    _say(f"READY {os.getpid()}")
    if wait and not sys.stdin.readline():
        _say("ERROR EOFError stdin closed before the start signal")
        return 1
    if pause is not None:
        sys.setprofile(_breakpoint(*pause))
    try:
        for i, request in enumerate(requests):
            receipt = store.mutate(request)
            _say(f"ACK {i + 1} {receipt.changed} {receipt.message}")
    except Exception as exc:  # report, so the test can show what went wrong
        _say(f"ERROR {type(exc).__name__} {exc}")
        return 1
    _say("DONE")
    return 0


def archive_fact(n: int) -> str:
    """The text of fact ``n`` the ``archive`` command adds."""
    return f"Fact {n:05d}: the build cache for target {n} lives in .cache/build-{n} and is safe to delete"


def _archive(argv: list[str]) -> int:
    from mnemon_ls.host import WorkspaceHost
    from mnemon_ls.runtime import ops
    from mnemon_ls.settings import load_settings

    workspace, start, count = Path(argv[0]), int(argv[1]), int(argv[2])
    rest = argv[3:]
    limit, pause = 1024, None
    while rest:
        flag = rest.pop(0)
        if flag == "--limit":
            limit = int(rest.pop(0))
        elif flag == "--pause-at":
            name, _, nth = rest.pop(0).partition(":")
            pause = (name, int(nth or 1))
        else:
            raise SystemExit(f"unknown flag {flag}")
    settings = load_settings({"storageScope": "workspace", "runtimeUserScope": "storage",
                              "runtimeMemory": {"memoryLimitBytes": limit}})
    host = WorkspaceHost(workspace, settings)
    requests = [(n, ops.validate_request("add", "memory", archive_fact(n))) for n in range(start, start + count)]
    _say(f"READY {os.getpid()}")
    if pause is not None:
        sys.setprofile(_breakpoint(*pause, within="archive_and_mutate"))
    try:
        for n, request in requests:
            receipt = host.mutate_runtime(request)
            _say(f"ACK {n} {receipt.detail.get('maintenance', {}).get('kind', '-')}")
    except Exception as exc:
        _say(f"ERROR {type(exc).__name__} {exc}")
        return 1
    _say("DONE")
    return 0


def _inside(frame, function: str) -> bool:
    while frame is not None:
        if frame.f_code.co_name == function:
            return True
        frame = frame.f_back
    return False


def _breakpoint(name: str, nth: int, within: str | None = None):
    """The profile hook of ``--pause-at NAME:N``; with ``within`` only calls made while a function of that
    name is on the stack count (``archive`` uses ``archive_and_mutate``: a kill lands inside archival)."""
    seen = 0
    builtin = getattr(os, name[3:]) if name.startswith("os.") else None

    def hook(frame, event, arg):
        nonlocal seen
        if builtin is not None:
            if event != "c_call" or arg is not builtin:
                return
        elif event != "call" or frame.f_code.co_name != name:
            return
        if within is not None and not _inside(frame, within):
            return
        seen += 1
        if seen == nth:
            sys.setprofile(None)
            _say(f"PAUSED {name} {nth}")
            while True:  # parked until killed
                if not sys.stdin.readline():
                    os._exit(3)

    return hook


def _hold(argv: list[str]) -> int:
    from mnemon_ls import fsio

    root = Path(argv[0])
    with fsio.file_lock(root / "runtime" / ".memories.lock", timeout=10.0):
        _say(f"HELD {os.getpid()}")
        sys.stdin.readline()
    _say("RELEASED")
    return 0


def _import_space(argv: list[str]) -> int:
    from mnemon_ls.spaces.providers.base import ExportItem
    from mnemon_ls.spaces.providers.native import NativeProvider

    db, count, batch = Path(argv[0]), int(argv[1]), int(argv[2])
    pause = argv[4].rsplit(":", 1) if argv[3:4] == ["--pause-at"] else None
    provider = NativeProvider(db)
    provider.remember("a note written before the import")  # the side index exists: no rebuild inside the import
    items = [ExportItem(f"s{i}", f"service {i} keeps retry_backoff_ms at {i} on runner{i % 7}", "fact", 3, [], [],
                        "user", "2026-01-01T00:00:00Z") for i in range(count)]
    _say(f"READY {os.getpid()}")
    if pause is not None:
        sys.setprofile(_breakpoint(pause[0], int(pause[1])))
    provider.import_items(items, batch=batch)
    sys.setprofile(None)
    provider.close()
    _say("DONE")
    return 0


def _gate(argv: list[str]) -> int:
    from mnemon_ls import packgate

    with packgate.hold([Path(a) for a in argv], exclusive=False):
        _say(f"HELD {os.getpid()}")
        sys.stdin.readline()
    _say("RELEASED")
    return 0


def _identity() -> int:
    from filelock._identity import host_name, process_start_token

    record = f"{os.getpid()}\n{host_name()}\n"
    token = process_start_token(os.getpid())
    if token is not None:
        record += f"{token}\n"
    _say(json.dumps(record))
    return 0


def main(argv: list[str]) -> int:
    command, args = argv[0], argv[1:]
    if command == "add":
        return _add(args)
    if command == "archive":
        return _archive(args)
    if command == "hold":
        return _hold(args)
    if command == "import-space":
        return _import_space(args)
    if command == "gate":
        return _gate(args)
    if command == "identity":
        return _identity()
    raise SystemExit(f"unknown command {command}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
