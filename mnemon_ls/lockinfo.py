"""Who holds a lock marker, as ``mnemon-ls doctor`` reports it (read-only: never takes, breaks or writes a lock).

A marker written by :func:`mnemon_ls.fsio.file_lock` records its owner as filelock does (``<pid>\\n<host>\\n
[<start token>\\n]``); the TypeScript plugin's markers are empty. The next writer breaks a marker whose owner
is gone (same host, and the process has exited or its pid now names another process: filelock's own
test, :func:`filelock._identity.owner_is_stale`) at once, and any marker older than
:data:`~mnemon_ls.fsio.LOCK_STALE_SECONDS` seconds. So a marker of a dead owner is a leftover, never a
holder: :func:`lock_finding` says so instead of naming the dead process as the holder.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from .findings import Finding
from .fsio import LOCK_STALE_SECONDS, pid_alive


@dataclass(frozen=True, slots=True)
class LockOwner:
    """What a marker says about its owner: ``pid`` (``None``: no readable pid), ``host`` (``None``: not
    recorded), ``start`` (the process start token, ``None``: not recorded) and ``empty`` (a marker with no
    record at all, as the TypeScript plugin writes)."""

    pid: int | None
    host: str | None
    start: int | None
    empty: bool


def read_owner(data: bytes) -> LockOwner:
    """Parse a marker's bytes (never raises): the first line a decimal pid, the second the host, the third
    the start token; anything else leaves the field ``None``."""
    text = data.decode("utf-8", errors="replace")
    lines = text.strip().splitlines()
    if not lines:
        return LockOwner(None, None, None, True)

    def number(index: int) -> int | None:
        value = lines[index].strip() if len(lines) > index else ""
        return int(value) if value.isascii() and value.isdigit() and 0 < int(value) < 2**63 else None

    host = lines[1].strip() if len(lines) > 1 and lines[1].strip() else None
    return LockOwner(number(0), host, number(2), False)


def owner_gone(owner: LockOwner) -> bool | None:
    """Whether the recorded owner process has exited on this machine: ``True`` gone, ``False`` running,
    ``None`` unknown (no pid, or another host, which this machine cannot check). Uses filelock's own
    staleness test when the host is recorded (a reused pid counts as gone, as filelock breaks it)."""
    if owner.pid is None:
        return None
    if owner.host is not None:
        try:
            from filelock._identity import host_name, owner_is_stale
        except ImportError:  # another filelock layout: the plain liveness test
            return not pid_alive(owner.pid)
        if owner.host != host_name():
            return None
        return bool(owner_is_stale(owner.pid, owner.host, owner.start))
    return not pid_alive(owner.pid)


def lock_finding(path: Path, *, now: float | None = None) -> Finding | None:
    """The doctor finding for the lock marker ``path`` (``None`` when there is none), level ``warning``:

    - the owner has exited: ``left by pid N, which is no longer running (...)``, the next writer removes it;
    - the owner runs: ``held by pid N (running) for S s``;
    - another host, no pid, or an empty marker: who it names and that this machine cannot check it.

    ``now`` is the time in seconds since the epoch (default: the clock). Never writes."""
    try:
        data = path.read_bytes()
        age = max(0.0, (time.time() if now is None else now) - os.stat(path).st_mtime)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return Finding("warning", str(path), f"a lock marker that cannot be read ({exc.strerror or exc})",
                       "check the file's owner and permissions")
    owner = read_owner(data)
    old = age >= LOCK_STALE_SECONDS
    breaks = (f"it is older than {LOCK_STALE_SECONDS:g} s, so the next writer breaks it" if old else
              f"the next writer breaks it once it is {LOCK_STALE_SECONDS:g} s old")
    if owner.pid is None:
        who = ("an owner that recorded no process id (the TypeScript plugin's markers are empty)" if owner.empty
               else "an owner whose record cannot be read")
        return Finding("warning", str(path), f"held by {who} for {age:.0f} s", breaks)
    gone = owner_gone(owner)
    if gone:
        return Finding("warning", str(path),
                       f"left by pid {owner.pid}, which is no longer running ({age:.0f} s old: a writer was killed "
                       "or crashed while it held the lock); no process holds it",
                       "nothing to do: the next writer removes it and goes on")
    if gone is None:
        return Finding("warning", str(path),
                       f"held by pid {owner.pid} on {owner.host or 'an unrecorded host'} for {age:.0f} s (another "
                       "machine: whether that process runs cannot be checked from here)",
                       f"{breaks}; if no mnemon-ls runs there, remove the file")
    return Finding("warning", str(path), f"held by pid {owner.pid} (running) for {age:.0f} s",
                   f"a write in progress holds it for milliseconds; {breaks}")
