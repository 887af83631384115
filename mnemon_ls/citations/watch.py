"""The watch behind the trusted citation views (:mod:`.trust`) of a long-lived host.

:class:`CitedWatch` watches, non-recursively (watchfiles, inotify on Linux), the directories of the files that
citations name, as the views ask for them (:func:`.trust.wanted`), and reports each change it sees
(:func:`.trust.changed`, then the ``on_change`` callback: the language server asks its client for the code
lenses again). It runs on a thread of its own with its own event loop, so that the language server (pygls'
loop), the MCP server (anyio) and a benchmark start it the same way. A CLI process never starts one: it reads
every cited file anyway.

When views want a directory that is not watched yet, the watch is replaced by one over every wanted directory:
the old one is disarmed first (nothing is trusted while no watch stands), the new one armed once its inotify
watches are in place (:func:`.trust.arm`). A watched directory that is itself deleted or replaced disarms
everything until the watch is in place again. Base layer: imports only this package (and watchfiles, when
started).
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from typing import Callable

from . import freshness, trust

log = logging.getLogger(__name__)

#: The environment variable that turns the watch off for a process (``0``, ``off``, ``false`` or ``no``): on a
#: network file system whose changes inotify does not see, every citation is then checked with a ``stat``.
ENV = "MNEMON_WATCH_CITED_FILES"

#: Milliseconds watchfiles waits for more changes before yielding a batch ...
STEP_MS = 20
#: ... and the longest milliseconds one batch may keep growing.
DEBOUNCE_MS = 80
#: Seconds between two audits of a standing watch: every cached file of the watched directories is checked with a
#: ``stat`` (what no event reports: a dropped event queue, a hard link made later); ``MNEMON_WATCH_AUDIT_MS``
#: (milliseconds) overrides it.
AUDIT_SECONDS = 30.0
#: Seconds before a watch that failed to start is tried again, doubling up to :data:`MAX_BACKOFF_SECONDS`.
FIRST_BACKOFF_SECONDS = 1.0
MAX_BACKOFF_SECONDS = 60.0


def audit_seconds() -> float:
    """:data:`AUDIT_SECONDS`, or ``MNEMON_WATCH_AUDIT_MS`` / 1000 when that is a positive integer."""
    raw = os.environ.get("MNEMON_WATCH_AUDIT_MS", "").strip()
    return int(raw) / 1000 if raw.isdigit() and int(raw) > 0 else AUDIT_SECONDS


def enabled() -> bool:
    """Whether this process may start a watch (:data:`ENV` is not ``0``, ``off``, ``false`` or ``no``)."""
    return os.environ.get(ENV, "").strip().lower() not in ("0", "off", "false", "no")


class CitedWatch:
    """Watch the cited files' directories for this process (module doc).

    ``on_change(paths)`` is called on the watch's thread with a batch of changed absolute paths that dropped a
    trusted view or name a cited file, and, once a watch stands, with the cited files in its directories that
    changed before it did; it must not block (hand work to another loop).
    ``start()`` and ``stop()`` may be called from any thread; :meth:`wait_armed` waits until the watch stands
    behind a set of directories (tests, benchmarks)."""

    def __init__(self, on_change: Callable[[set[str]], None] | None = None) -> None:
        self.on_change = on_change
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._rearm: asyncio.Event | None = None
        self._ready = threading.Event()
        self._stopping = False
        self._armed: frozenset[str] = frozenset()
        self._condition = threading.Condition()
        #: How many times a watch failed to start or broke (each time nothing stays trusted; tests read it).
        self.failures = 0

    def start(self) -> None:
        """Start the watch's thread (idempotent) and listen for wanted directories."""
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self._main, name="mnemon-cited-watch", daemon=True)
        self._thread.start()
        self._ready.wait()
        trust.listen(self._want)
        self._want()  # directories wanted before the watch started

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the watch and wait up to ``timeout`` seconds for its thread; nothing stays trusted."""
        trust.listen(None)
        trust.disarm()
        trust.prune()
        thread, self._thread = self._thread, None
        if thread is None:
            return
        self._stopping = True
        self._want()
        thread.join(timeout)

    def wait_armed(self, directories: list[str], timeout: float) -> bool:
        """Wait up to ``timeout`` seconds until every one of ``directories`` (absolute, real) is watched; whether
        they are."""
        wanted = set(directories)
        with self._condition:
            return self._condition.wait_for(lambda: wanted <= self._armed, timeout)

    def wait_failures(self, count: int, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds until the watch failed to start (or broke) ``count`` times; whether it
        did (tests)."""
        with self._condition:
            return self._condition.wait_for(lambda: self.failures >= count, timeout)

    def _want(self) -> None:
        loop, rearm = self._loop, self._rearm
        if loop is not None and rearm is not None:
            try:
                loop.call_soon_threadsafe(rearm.set)
            except RuntimeError:  # the loop already closed (the watch stopped)
                pass

    def _set_armed(self, directories: frozenset[str]) -> None:
        with self._condition:
            self._armed = directories
            self._condition.notify_all()

    def _report(self, paths: set[str], dropped: bool) -> None:
        """Forget what is cached of each of ``paths`` that is a cited file (a same-size edit whose mtime was put
        back would match the cached signature), then ``on_change(paths)`` when a trusted view was dropped or one of
        ``paths`` is a cited file."""
        cited = [p for p in paths if freshness.cached(p)]
        for path in cited:
            freshness.invalidate(path)
        if self.on_change is None or not (dropped or cited):
            return
        try:
            self.on_change(paths)
        except Exception:
            log.exception("cited-file watch: on_change failed")

    def _main(self) -> None:
        try:
            asyncio.run(self._run())
        except Exception:  # never let the watch take the host down (watchfiles missing, no event loop, ...)
            log.exception("cited-file watch failed; citations are checked with a stat from now on")
            with self._condition:
                self.failures += 1
                self._condition.notify_all()
        finally:
            trust.disarm()
            self._set_armed(frozenset())
            self._ready.set()

    async def _run(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._rearm = asyncio.Event()
        self._ready.set()
        import watchfiles  # here: only a long-lived host that starts a watch pays for it

        backoff = FIRST_BACKOFF_SECONDS
        while not self._stopping:
            self._rearm.clear()
            wanted = trust.wanted()
            directories = frozenset(d for d in wanted if os.path.isdir(d))
            trust.prune(set(wanted) - directories)  # gone: wanted again when a view finds it back
            if not directories:
                await self._rearm.wait()
                continue
            stop = asyncio.Event()
            rearm = self._rearm

            async def replace() -> None:
                await rearm.wait()
                await asyncio.sleep(STEP_MS / 1000)  # let the directories one wake asks for arrive together
                trust.disarm()  # before the old watch ends: nothing is trusted until the new one stands
                self._set_armed(frozenset())
                stop.set()

            async def arm() -> None:
                # runs when the watch first awaits, after watchfiles created its inotify watches; a cited file
                # changed before then is reported as if the watch had seen it
                trust.arm(directories)
                self._set_armed(directories)
                missed = await asyncio.to_thread(freshness.stale_in, directories)
                if missed:
                    self._report(set(missed), True)

            async def audit() -> None:
                # bounds what no event reports (an overflowed event queue, a link made later): a cited file of
                # a watched directory whose signature changed is reported as if the watch had seen it
                while True:
                    await asyncio.sleep(audit_seconds())
                    missed = await asyncio.to_thread(freshness.stale_in, directories)
                    if missed:
                        self._report(set(missed), True)  # (stale_in dropped their views and cache)

            loop = asyncio.get_running_loop()
            replacing, arming = loop.create_task(replace()), loop.create_task(arm())
            auditing = loop.create_task(audit())
            try:
                # nothing skipped (ignore_permission_denied off): a directory the watch cannot hold (no
                # permission, the inotify limits) fails the whole watch, and nothing is trusted until one stands
                async for changes in watchfiles.awatch(*sorted(directories), watch_filter=None, debounce=DEBOUNCE_MS,
                                                       step=STEP_MS, stop_event=stop, recursive=False,
                                                       ignore_permission_denied=False):
                    paths = {path for _, path in changes}
                    self._report(paths, bool(trust.changed(paths)))
                    if paths & directories:  # a watched directory itself went or was replaced: watch anew
                        break
                # the watch ended: replaced, a watched directory went or moved (watchfiles stops on its own when
                # one is moved away), or stopping; nothing is trusted until the next one stands (its catch-up
                # reports what changed meanwhile)
                trust.disarm()
                self._set_armed(frozenset())
                backoff = FIRST_BACKOFF_SECONDS
            except Exception as exc:
                arming.cancel()  # before any await: a watch that failed to start is never armed
                auditing.cancel()
                log.warning("cited-file watch failed (%s: %s); citations are checked with a stat until it stands, "
                            "next try in %.0f s", type(exc).__name__, exc, backoff)
                trust.disarm()
                self._set_armed(frozenset())
                with self._condition:
                    self.failures += 1
                    self._condition.notify_all()
                try:
                    await asyncio.wait_for(self._rearm.wait(), timeout=backoff)
                except asyncio.TimeoutError:
                    pass
                backoff = min(MAX_BACKOFF_SECONDS, backoff * 2)
            finally:
                replacing.cancel()
                arming.cancel()
                auditing.cancel()
