"""Where the process's output goes: the protocol's stdout belongs to its transport alone, and what third-party
code (provider engines and the libraries they pull in) prints, warns or logs goes to our log at debug level.

- :func:`reserve_stdout` (the language server over stdio): a private duplicate of file descriptor 1 for the
  transport, then fd 1 pointed at stderr and ``sys.stdout`` at ``sys.stderr``, so nothing else the process
  writes to stdout (Python ``print``, a C extension, a child process) can land between JSON-RPC frames. The
  MCP SDK's ``stdio_server`` does the same for ``mnemon-ls mcp``.
- :func:`third_party` marks the current thread as running a provider engine call (``mnemon_ls.spaces.
  thirdparty`` wraps every engine and space call in it): while it is active, text written to ``sys.stdout``
  / ``sys.stderr`` on that thread goes to the logger :data:`ENGINE_LOG` at ``DEBUG``, line by line.
  :class:`ThirdPartyCalls` wraps an object so that every method call runs in it.
- :func:`install` (once per process, by the CLI and both servers): the ``sys.stdout``/``sys.stderr`` routing
  above, Python warnings captured into logging (``py.warnings``), and a filter on the root handlers that
  demotes every record of a logger outside ``mnemon_ls`` to ``DEBUG`` (shown only when the log level is
  ``DEBUG``, e.g. ``mnemon-ls serve -vv``). Records of ``mnemon_ls.*`` keep their level. When the root
  logger has no handler (the CLI) one is added that writes ``WARNING`` and above to stderr as Python's
  last-resort handler would (``%(message)s``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
from typing import Any, BinaryIO, Iterator

#: Where captured third-party output goes (``DEBUG``).
ENGINE_LOG = logging.getLogger("mnemon_ls.thirdparty.output")

_local = threading.local()
_installed = False
_install_lock = threading.Lock()


def in_third_party() -> bool:
    """True while this thread runs inside :func:`third_party`."""
    return getattr(_local, "depth", 0) > 0


@contextlib.contextmanager
def third_party() -> Iterator[None]:
    """Mark this thread as running third-party engine code (module doc); nests."""
    _local.depth = getattr(_local, "depth", 0) + 1
    try:
        yield
    finally:
        _local.depth -= 1


class ThirdPartyCalls:
    """``obj`` with every method call run under :func:`third_party` (attributes that are not callable are
    passed through; a missing attribute is :class:`AttributeError` as on ``obj``). ``wrapped`` is ``obj``."""

    def __init__(self, obj: Any) -> None:
        self.wrapped = obj

    def __getattr__(self, name: str) -> Any:
        value = getattr(self.wrapped, name)
        if not callable(value):
            return value

        def call(*args: Any, **kwargs: Any) -> Any:
            with third_party():
                return value(*args, **kwargs)

        call.__name__ = getattr(value, "__name__", name)
        call.__doc__ = getattr(value, "__doc__", None)
        return call


#: What a terminal must not receive from stored memory (C0 controls but tab and newline, DEL, C1 controls,
#: the bidirectional embedding/override/isolate marks): each is written as its escape (``\x1b``,
#: ``\u202e``), so recalled content cannot move the cursor, recolour the screen or reverse a line.
TERMINAL_ESCAPES = {code: (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
                    for code in (*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0),
                                 *range(0x202A, 0x202F), *range(0x2066, 0x206A))}


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


class _RoutedStream:
    """``sys.stdout`` / ``sys.stderr`` stand-in: writes from a :func:`third_party` thread go to
    :data:`ENGINE_LOG` (whole lines; ``label`` says which stream), every other write to ``target``; when
    ``target`` is a terminal, the characters of :data:`TERMINAL_ESCAPES` are written as their escapes (a
    pipe or file gets the text unchanged). Every other attribute (``buffer``, ``fileno``, ``encoding``...)
    is the target's."""

    def __init__(self, target: Any, label: str) -> None:
        self._target = target
        self._label = label
        self._terminal = _is_terminal(target)

    def write(self, text: str) -> int:
        if not in_third_party():
            if self._terminal:
                self._target.write(text.translate(TERMINAL_ESCAPES))
                return len(text)
            return self._target.write(text)
        pending = getattr(_local, self._label, "") + text
        *lines, rest = pending.split("\n")
        for line in lines:
            if line.strip():
                ENGINE_LOG.debug("%s: %s", self._label, line.rstrip())
        setattr(_local, self._label, rest)
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if not in_third_party():
            self._target.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._target, name)


class DemoteThirdParty(logging.Filter):
    """A handler filter: records of loggers outside ``mnemon_ls`` become ``DEBUG`` and pass only when
    ``threshold`` (the log level) is ``DEBUG``; ``mnemon_ls.*`` records pass unchanged."""

    def __init__(self, threshold: int) -> None:
        super().__init__()
        self.threshold = threshold

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name == "mnemon_ls" or record.name.startswith("mnemon_ls."):
            return True
        record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return self.threshold <= logging.DEBUG


def install(level: int = logging.WARNING) -> None:
    """Route third-party output for this process (module doc). ``level`` is the log level the root handlers
    show; idempotent (a second call only updates the filters' threshold and adds the filter to new handlers)."""
    global _installed
    with _install_lock:
        root = logging.getLogger()
        if not root.handlers:
            handler = logging.StreamHandler(sys.stderr)
            handler.setFormatter(logging.Formatter("%(message)s"))
            handler.setLevel(logging.WARNING)
            root.addHandler(handler)
        for handler in root.handlers:
            found = [f for f in handler.filters if isinstance(f, DemoteThirdParty)]
            if found:
                found[0].threshold = level
            else:
                handler.addFilter(DemoteThirdParty(level))
        if _installed:
            return
        logging.captureWarnings(True)
        if not isinstance(sys.stdout, _RoutedStream):
            sys.stdout = _RoutedStream(sys.stdout, "stdout")  # type: ignore[assignment]
        if not isinstance(sys.stderr, _RoutedStream):
            sys.stderr = _RoutedStream(sys.stderr, "stderr")  # type: ignore[assignment]
        _installed = True


def reserve_stdout() -> BinaryIO:
    """The transport's stdout for a stdio server (module doc): a binary buffered file (whole writes; the
    transport flushes each message) on a private duplicate of fd 1; afterwards fd 1 is stderr and ``sys.stdout`` is
    ``sys.stderr``. Raises :class:`OSError` when the descriptors cannot be duplicated (then nothing was changed)."""
    sys.stdout.flush()
    private = os.dup(1)
    try:
        os.dup2(2, 1)
    except OSError:
        os.close(private)
        raise
    sys.stdout = sys.stderr
    return os.fdopen(private, "wb")
