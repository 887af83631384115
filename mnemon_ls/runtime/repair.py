"""Projection repair of one Runtime store (:mod:`.store`): :meth:`ProjectionRepair.repair` makes ``USER.md`` /
``MEMORY.md`` agree with ``memories.json`` again (a hand edit is preserved under ``edits/`` and imported, never
lost; a crash leftover or a format change is rebuilt), with the :class:`RepairReport` shape.

Also here, because the store's commit path needs them too: :func:`settled_bytes` (a projection still being
written is waited for, :data:`SETTLE_SECONDS`/:data:`SETTLE_MAX_SECONDS` seconds) and :func:`sweep_orphans` (temp
files a killed writer left in ``runtime/``).

:class:`ProjectionRepair` is a part a :class:`~mnemon_ls.runtime.store.RuntimeStore` owns
(``store.projections``); it reaches the store only through :class:`RepairedStore`: paths, settings, the lock,
read and commit.
:class:`RepairReport` and the settle constants are re-exported by :mod:`.store`.
"""

from __future__ import annotations

import os
import time
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Collection, Protocol, Sequence

from .. import fsio, statsig
from ..settings import RuntimeMemorySettings
from .model import PROJECTION_FILES, Entry, Target, projection_bytes
from .state import StoreState

#: Seconds a differing projection must have been left alone before a repair or commit replaces it.
SETTLE_SECONDS = 0.15
#: Longest seconds one replacement waits for a projection that keeps being written.
SETTLE_MAX_SECONDS = 1.0
#: Seconds an *empty* projection is waited for after it was last modified: an editor saving in place truncates
#: the file, then writes it, and a machine under load can stop it between the two for far longer than
#: :data:`SETTLE_SECONDS`. An empty file is never an edit (it is rebuilt), so waiting costs nothing but time, and
#: only when a projection was emptied in the last two seconds.
EMPTY_GRACE_SECONDS = 2.0
#: Seconds between two looks at an empty projection being waited for.
EMPTY_POLL_SECONDS = 0.02

#: Test seam: called with the projection's path each time :func:`settled_bytes` waits for an empty file to be
#: written (the test of an in-place save writes the editor's second half from it). ``None`` in production.
_empty_wait_hook: Callable[[Path], None] | None = None


@dataclass(slots=True)
class RepairReport:
    """What a repair did: ``repaired`` file names rewritten, ``preserved`` file name -> saved copy path,
    ``skipped`` why nothing could be repaired (damaged truth file), else ``None``; ``hand_edits`` file
    name -> what the differing file was and what became of it (:meth:`ProjectionRepair.repair`)."""

    repaired: list[str] = field(default_factory=list)
    preserved: dict[str, str] = field(default_factory=dict)
    skipped: str | None = None
    hand_edits: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: The store as the repair read it when it wrote nothing (else ``None``): what a wake renders right after,
    #: instead of reading ``memories.json`` again (not part of :meth:`to_dict`).
    verified: Any = field(default=None, compare=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """JSON shape: ``{"repaired": [...], "preserved": {...}, "skipped": str|None[, "handEdits": {...}]}``."""
        data: dict[str, Any] = {"repaired": self.repaired, "preserved": self.preserved, "skipped": self.skipped}
        if self.hand_edits:
            data["handEdits"] = self.hand_edits
        return data


class RepairedStore(Protocol):
    """What projection repair uses of its :class:`~mnemon_ls.runtime.store.RuntimeStore`: its paths, the
    projections it keeps, its byte limits and ``secrets`` setting (for an imported hand edit), the settle time,
    and the read/write path (see the store's attributes and methods of these names)."""

    runtime_dir: Path
    memories_path: Path
    last_good_path: Path
    history_path: Path
    projects: tuple[Target, ...]
    limits: RuntimeMemorySettings
    secrets: str
    settle_seconds: float

    def projection_path(self, target: Target) -> Path: ...

    def read(self) -> StoreState: ...

    def locked(self) -> AbstractContextManager[Any]: ...

    def now(self) -> str: ...

    def preserve(self, name: str, data: bytes) -> Path: ...

    def commit(self, before: Sequence[Entry] | None, after: Sequence[Entry], *,
               already_saved: Collection[str] = ()) -> tuple[dict[str, str], str]: ...


class ProjectionRepair:
    """Projection repair of one Runtime store: ``USER.md`` / ``MEMORY.md`` made equal to ``memories.json``
    again, hand edits of them imported or restored.

    Owns ``store`` (a :class:`RepairedStore`) and ``hand_edits``: ``import`` (a hand edit of a projection
    becomes mutations of the truth) or ``restore`` (it is saved under ``edits/`` and undone). Writes only under
    the store's lock; raises :class:`~mnemon_ls.errors.StoreBusy` when the lock cannot be taken and
    :class:`OSError` for I/O errors; a damaged ``memories.json`` is reported (``skipped``), never raised.
    """

    def __init__(self, store: RepairedStore, *, hand_edits: str = "import") -> None:
        self.store = store
        self.hand_edits = hand_edits
        # (stat signature, state) of the last repair that found every projection as memories.json projects it
        # and no temp file (:mod:`mnemon_ls.statsig`): the next one with the same signature finds the same.
        self._quiet: tuple[Any, StoreState] | None = None
        self._signed: tuple[str, ...] | None = None  # the paths :meth:`_signature` signs

    def repair(self, *, rebuild_missing: bool = True) -> RepairReport:
        """Make USER.md / MEMORY.md agree with ``memories.json`` again: import hand edits, repair the rest.

        Cheap when nothing differs and no temp file is left (three reads and a directory listing, no
        lock). Otherwise, under the lock and on a fresh read, each differing projection is classified
        (:func:`mnemon_ls.runtime.handedit.classify`):

        - missing or empty: rebuilt;
        - ``format`` (line endings, BOM, final newline only): rewritten, no copy, not an edit;
        - ``leftover`` (NUL bytes, equal to another known state's projection, not newer than the last
          commit): copied to ``runtime/edits/``, rebuilt, never imported;
        - ``edit``: copied to ``runtime/edits/`` first; with ``hand_edits == "import"`` paired with the
          store (:func:`~mnemon_ls.runtime.handedit.plan_import`) and every valid file's changes committed
          together as one commit; an edit breaking a rule is not applied and its projection is rebuilt;
          with ``restore`` the projection is rebuilt.

        ``hand_edits[name]`` says which (absent for missing/empty files and restored edits):
        ``{"status": "imported"|"rejected"|"leftover"|"format",
        "reason", "savedAs"?, "message", "added", "replaced": [{from, to}], "removed", "problems": [...]}``.
        A save by someone outside the lock after the read (an editor) is not replaced without a trace: what the
        rewrite displaced is saved under ``edits/`` too (``preserved["<name> (saved during the write)"]`` when
        that name was saved already; :func:`mnemon_ls.fsio.write_files_atomically`, ``watched``).
        Temp files a killed writer left are removed. Does nothing (``skipped``) when ``memories.json`` is
        missing or damaged. ``rebuild_missing=False`` leaves missing projections for the next wake (the CLI
        absorbs edits before a command that may be rejected, and a rejection must not write).
        """
        store = self.store
        report = RepairReport()
        quiet = self._signature()
        kept = self._quiet
        if quiet is not None and kept is not None and kept[0] == quiet:
            report.verified = kept[1]  # the same files as the last repair that found nothing to do
            return report
        state = store.read()
        if state.problem:
            report.skipped = state.problem
            report.verified = state
            return report
        if not state.exists or not (self._projections_differ(state.entries, rebuild_missing)
                                    or has_orphans(store.runtime_dir)):
            if quiet is not None and state.exists and rebuild_missing:
                self._quiet = (quiet, state)
            report.verified = state
            return report
        with store.locked():
            state = store.read()
            if state.problem:
                report.skipped = state.problem
                return report
            writes = []
            read: dict[Path, bytes | None] = {}  # each projection as read here: a save since is kept, not replaced
            working = state.entries
            now = store.now()
            for target in store.projects:
                path = store.projection_path(target)
                expected = projection_bytes(state.entries, target)
                current = fsio.read_bytes_or_none(path)
                if current == expected or (current is None and not rebuild_missing):
                    continue
                if current is None and not expected:
                    writes.append((path, expected))  # no entries, no file yet (the global root of a USER.md
                    read[path] = None  # used from workspaces): created, not repaired, so not reported
                    continue
                current = settled_bytes(path, store.settle_seconds)
                if current == expected or (current is None and not rebuild_missing):
                    continue
                result = self._absorb(target, current, expected, state, working, now, report)
                if result is not None:
                    working = result
                else:
                    writes.append((path, expected))
                    read[path] = current
                report.repaired.append(path.name)
            sweep_orphans(store.runtime_dir)
            if working is not state.entries:
                store.commit(state.entries, working, already_saved=set(report.preserved))
            else:
                for path, data in fsio.write_files_atomically(writes, watched=read).items():  # saved meanwhile
                    name = path.name + (" (saved during the write)" if path.name in report.preserved else "")
                    report.preserved[name] = str(store.preserve(path.name, data))
        return report

    def _absorb(self, target: Target, current: bytes | None, expected: bytes, state: StoreState,
                working: tuple[Entry, ...], now: str, report: RepairReport) -> tuple[Entry, ...] | None:
        """Classify one differing projection and record it in ``report``; the new entry list when its
        edit is to be imported, else ``None`` (the projection is rebuilt). Call with the lock held."""
        from ..redact import Scrubber  # both imported on use: a repair that finds every projection as
        from . import handedit  # expected (every wake but the one after a hand edit) never needs them

        store = self.store
        name = PROJECTION_FILES[target]
        known = handedit.known_projections(store.runtime_dir, store.history_path, store.last_good_path, target,
                                           expected)
        kind, reason = handedit.classify(current, expected, known=known,
                                         newer=self._newer_than_commit(store.projection_path(target)))
        if kind in ("missing", "empty"):
            return None
        if kind == "format":
            report.hand_edits[name] = {"status": "format", "reason": reason,
                                       "message": f"{name} {reason}; rewritten (not an edit)"}
            return None
        assert current is not None
        saved = str(store.preserve(name, current))
        report.preserved[name] = saved
        if kind == "leftover":
            report.hand_edits[name] = {"status": "leftover", "reason": reason, "savedAs": saved, "message": (
                f"{name} {reason}; it was rebuilt from memories.json, not imported (a copy is at {saved})")}
            return None
        if self.hand_edits != "import":
            return None  # handEdits=restore: saved and rebuilt, exactly as before hand edits were imported
        text = handedit.canonical_text(current)
        if text is None:
            plan = handedit.ImportPlan(working, problems=(handedit.ItemProblem(
                None, "encoding", "is not UTF-8; save the file as UTF-8", "invalid-input"),))
        else:
            plan = handedit.plan_import(working, target, text, now, store.limits.limit_for(target),
                                        scrub=Scrubber(store.secrets))
        if plan.problems:
            problems = handedit.describe_problems(name, plan.problems)
            report.hand_edits[name] = {
                "status": "rejected", "reason": "breaks a rule", "savedAs": saved,
                "problems": [p.to_dict() for p in plan.problems],
                "message": (f"your edit of {name} was not applied: {problems}. {name} was rebuilt from "
                            f"memories.json; your edit is saved at {saved}")}
            return None
        report.hand_edits[name] = {
            "status": "imported", "reason": reason, "savedAs": saved,
            "added": list(plan.added), "replaced": [{"from": a, "to": b} for a, b in plan.replaced],
            "removed": list(plan.removed), "unchanged": plan.unchanged,
            "message": handedit.summary(name, plan)}
        return plan.entries if plan.changed else None

    def _signature(self) -> Any:
        """The stat signature (:func:`mnemon_ls.statsig.signature`) of what the cheap path of :meth:`repair` reads:
        the runtime directory (a temp file added or removed changes it), ``memories.json`` and the kept
        projections; ``None`` when it cannot be trusted. Checks the directories as a read does (raises
        :class:`~mnemon_ls.errors.StorageUnsafe` for a linked one)."""
        paths = self._signed
        if paths is None:  # the store's paths never change: built once, as strings (a wake signs them every turn)
            store = self.store
            paths = self._signed = tuple(os.fspath(p) for p in (
                store.runtime_dir, store.memories_path, *(store.projection_path(t) for t in store.projects)))
        return statsig.signature(paths, checked_dir=paths[0])

    def _newer_than_commit(self, path: Path) -> bool:
        """Whether ``path`` was modified after the last commit of ``memories.json`` (nanosecond mtimes)."""
        try:
            return path.stat().st_mtime_ns > self.store.memories_path.stat().st_mtime_ns
        except OSError:
            return True

    def _projections_differ(self, entries: Sequence[Entry], count_missing: bool = True) -> bool:
        """Whether a kept projection differs from what ``entries`` project (a missing one counts when
        ``count_missing``)."""
        for target in self.store.projects:
            current = fsio.read_bytes_or_none(self.store.projection_path(target))
            if current != projection_bytes(entries, target) and (count_missing or current is not None):
                return True
        return False


def settled_bytes(path: Path, settle_seconds: float = SETTLE_SECONDS,
                  empty_grace_seconds: float = EMPTY_GRACE_SECONDS) -> bytes | None:
    """``path``'s bytes once nobody has written it for ``settle_seconds`` (bounded wait); ``None`` when it is
    missing.

    An editor that saves in place truncates the file, then writes it: a repair that read between the
    two would see an empty file, preserve nothing and rename the projection over it, and the editor's
    write would land in the replaced inode, lost. So a file modified moments ago is read again once
    it has been quiet for ``settle_seconds`` (default :data:`SETTLE_SECONDS`; at most
    :data:`SETTLE_MAX_SECONDS` or four settle periods in all), and an *empty* file is waited for until it
    is written or ``empty_grace_seconds`` (default :data:`EMPTY_GRACE_SECONDS`) have passed since it was last
    modified (looked at every :data:`EMPTY_POLL_SECONDS`): the pause between truncation and write is not
    bounded by the settle period on a loaded machine. Raises :class:`OSError` for I/O errors other than a
    missing file.
    """
    start = time.monotonic()
    deadline = start + max(SETTLE_MAX_SECONDS, 4 * settle_seconds)
    empty_deadline = start + empty_grace_seconds + SETTLE_MAX_SECONDS  # a file emptied again and again
    while True:
        try:
            stat = path.stat()
        except FileNotFoundError:
            return None
        age = time.time() - stat.st_mtime
        now = time.monotonic()
        if stat.st_size == 0 and age < empty_grace_seconds and now < empty_deadline:
            if _empty_wait_hook is not None:
                _empty_wait_hook(path)
            time.sleep(min(EMPTY_POLL_SECONDS, empty_grace_seconds - age, empty_deadline - now))
            continue
        if age >= settle_seconds or now >= deadline:
            return fsio.read_bytes_or_none(path)
        time.sleep(max(0.0, min(settle_seconds - age, deadline - now)) + 0.005)


def has_orphans(runtime_dir: Path) -> bool:
    """Whether ``runtime_dir`` holds a ``.<name>...tmp`` file (a killed writer's; False when unreadable)."""
    try:
        return any(n.startswith(".") and n.endswith(".tmp") for n in os.listdir(runtime_dir))
    except OSError:
        return False


def sweep_orphans(runtime_dir: Path) -> list[str]:
    """Remove temp files a killed writer left in ``runtime_dir`` (call with the store's lock held).

    Every writer (ours and the plugin's) writes its ``.<name>.<pid>.<ms>.<rand>.tmp`` files only under
    the lock, so while we hold it any such file is an orphan; lock staging files (``.publish``) are
    removed only when their process is gone. Returns the names removed; never raises.
    """
    removed: list[str] = []
    try:
        names = os.listdir(runtime_dir)
    except OSError:
        return removed
    for name in names:
        orphan = False
        if name.startswith(".") and name.endswith(".tmp"):
            orphan = True
        elif name.startswith(".memories.lock.") and name.endswith(".publish"):
            pid = name.split(".")[-3]
            orphan = pid.isdigit() and not fsio.pid_alive(int(pid))
        if orphan:
            try:
                os.unlink(runtime_dir / name)
                removed.append(name)
            except OSError:
                pass
    return removed
