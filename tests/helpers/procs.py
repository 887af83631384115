"""Process and file-tree utilities shared by the concurrency, crash and CLI tests (no sleeps, bounded waits).

Loaded by path (``tests/helpers`` is not a package), see ``load_procs`` in the test modules.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

HELPERS = Path(__file__).resolve().parent
WRITER = HELPERS / "writer.py"
#: Upper bound for any single wait on a child process (a hang fails the test instead of blocking it).
WAIT_SECONDS = 60.0


def child_env(**extra: str) -> dict[str, str]:
    """The environment for child processes: ours minus anything that could redirect git or mnemon."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GIT_", "MNEMON_")) or k == "MNEMON_SEMANTIC"}  # tests/conftest.py sets it
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra)
    return env


def spawn_writer(*args: str, stdin: int | None = subprocess.PIPE) -> subprocess.Popen[bytes]:
    """Start ``python tests/helpers/writer.py <args>`` with pipes for stdin/stdout, as a fork of the suite's fork
    server (tests/helpers/zygote.py): the writer's pid is the one it prints (:func:`ready_pid`), not ``pid``."""
    from tests.helpers.zygote import script_command

    return subprocess.Popen(
        script_command(str(WRITER), *args),
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=child_env(),
    )


class LineReader:
    """Read lines from a child's stdout pipe with a deadline (select on the raw fd, own buffer)."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        self.proc = proc
        self.fd = proc.stdout.fileno()
        self.buffer = b""
        self.eof = False

    def _fill(self, deadline: float) -> bool:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        ready, _, _ = select.select([self.fd], [], [], remaining)
        if not ready:
            return False
        chunk = os.read(self.fd, 65536)
        if not chunk:
            self.eof = True
        self.buffer += chunk
        return True

    def readline(self, timeout: float = WAIT_SECONDS) -> str:
        """The next complete line (without newline); raises AssertionError on EOF or timeout."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            if self.eof:
                raise AssertionError(f"child exited before a line arrived; stderr: {self._stderr()!r}")
            if not self._fill(deadline):
                raise AssertionError(f"no line from the child within {timeout} s")
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line.decode()

    def rest(self, timeout: float = WAIT_SECONDS) -> list[str]:
        """Every remaining complete line until EOF (the child must have exited or be exiting)."""
        deadline = time.monotonic() + timeout
        while not self.eof:
            if not self._fill(deadline):
                raise AssertionError(f"child did not close stdout within {timeout} s")
        lines = self.buffer.split(b"\n")
        self.buffer = b""
        return [line.decode() for line in lines if line]

    def _stderr(self) -> str:
        if self.proc.stderr is None:
            return ""
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return "(child still running)"
        return self.proc.stderr.read().decode(errors="replace")


def kill_hard(proc: subprocess.Popen[bytes], pid: int | None = None) -> int:
    """SIGKILL the child (if still running) and reap it; returns its return code. ``pid``: the process to kill
    when it is not ``proc`` itself (a script run through the fork server, :func:`spawn_writer`: its launcher
    ends only once the script is dead and reaped, dying of the same signal, so the code is still -9)."""
    if proc.poll() is None:
        try:
            os.kill(pid if pid is not None else proc.pid, signal.SIGKILL)
        except ProcessLookupError:  # it ended by itself a moment ago
            pass
    return proc.wait(timeout=WAIT_SECONDS)


def ready_pid(line: str, proc: subprocess.Popen[bytes], word: str = "READY") -> int:
    """The pid in a writer's first line ``<word> <pid>`` (``READY``, ``HELD``); it is ``proc.pid`` unless the
    writer runs through the fork server (:func:`spawn_writer`). Fails the test on any other line."""
    parts = line.split(" ")
    assert len(parts) == 2 and parts[0] == word and parts[1].isdigit(), f"expected '{word} <pid>', got {line!r}"
    pid = int(parts[1])
    if os.environ.get("MNEMON_TEST_NO_ZYGOTE") == "1":
        assert pid == proc.pid
    return pid


@dataclass
class Running:
    """A child process started for a test and known ready (:func:`running`): ``proc`` (its ``Popen``; through the
    fork server, its launcher), ``reader`` (its stdout lines) and ``pid`` (the process itself, from its first
    line)."""

    proc: subprocess.Popen[bytes]
    reader: LineReader
    pid: int

    def kill(self) -> int:
        """SIGKILL the process and reap it (:func:`kill_hard`); its return code (-9 when the kill ended it)."""
        return kill_hard(self.proc, self.pid)


@contextlib.contextmanager
def running(proc: subprocess.Popen[bytes], word: str = "READY") -> Iterator[Running]:
    """Wait for ``proc``'s first line ``<word> <pid>`` (:func:`ready_pid`) and yield it as :class:`Running`; on
    leaving, whatever happened, the process is killed if still running, reaped and its pipes closed."""
    pid = None
    try:
        reader = LineReader(proc)
        pid = ready_pid(reader.readline(), proc, word)
        yield Running(proc, reader, pid)
    finally:
        kill_hard(proc, pid)
        finish(proc)


def writer(*args: str, word: str = "READY") -> contextlib.AbstractContextManager[Running]:
    """``tests/helpers/writer.py <args>`` started (:func:`spawn_writer`) and waited for (:func:`running`)."""
    return running(spawn_writer(*args), word)


def finish(proc: subprocess.Popen[bytes]) -> None:
    """Close our pipe ends of an exited child."""
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None:
            try:
                stream.close()
            except OSError:
                pass


def tree_snapshot(path: Path) -> dict[str, tuple]:
    """Every file and directory under ``path`` (inclusive): relative path -> ("dir", mode) or
    ("file", mode, bytes, inode, mtime_ns).

    Inode and mtime catch a rewrite with identical bytes (our writes replace files by rename). Directory
    mtimes are left out: taking and releasing the lock creates and deletes a marker file. An absent
    ``path`` gives ``{}``. Used to prove that a failed operation changed nothing.
    """
    result: dict[str, tuple] = {}
    if not os.path.lexists(path):
        return result
    for current, dirs, files in os.walk(path):
        rel = os.path.relpath(current, path)
        result[rel] = ("dir", os.stat(current).st_mode & 0o7777)
        for name in files:
            full = os.path.join(current, name)
            with open(full, "rb") as handle:
                data = handle.read()
            info = os.stat(full)
            result[os.path.normpath(os.path.join(rel, name))] = (
                "file", info.st_mode & 0o7777, data, info.st_ino, info.st_mtime_ns)
    return result
