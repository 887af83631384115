"""Repair and recovery of the Runtime store (:mod:`.store`): ``repair`` rebuilds missing or differing
``USER.md``/``MEMORY.md`` projections (a hand edit is preserved under ``edits/`` and imported, never lost;
a projection still being written is waited for, :data:`SETTLE_SECONDS`/:data:`SETTLE_MAX_SECONDS` seconds),
and ``recover`` restores a damaged ``memories.json`` from its last-good copy (the damaged file is moved to
``quarantine/``), with the :class:`RepairReport` shape.

:class:`RuntimeRepair` is a mixin of :class:`~mnemon_ls.runtime.store.RuntimeStore`: its methods use the
store's lock, reads and ``_commit`` and are only meant to be called on a ``RuntimeStore``. Every name here
is re-exported by :mod:`.store`.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from .. import fsio
from .model import PROJECTION_FILES, Entry, Target, match_key, projection_bytes, salvage_store

if TYPE_CHECKING:
    from .state import StoreState

#: Seconds a differing projection must have been left alone before a repair or commit replaces it.
SETTLE_SECONDS = 0.15
#: Longest seconds one replacement waits for a projection that keeps being written.
SETTLE_MAX_SECONDS = 1.0


@dataclass(slots=True)
class RepairReport:
    """What a repair did: ``repaired`` file names rewritten, ``preserved`` file name -> saved copy path,
    ``skipped`` why nothing could be repaired (damaged truth file), else ``None``; ``hand_edits`` file
    name -> what the differing file was and what became of it (:meth:`RuntimeStore.repair`)."""

    repaired: list[str] = field(default_factory=list)
    preserved: dict[str, str] = field(default_factory=dict)
    skipped: str | None = None
    hand_edits: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON shape: ``{"repaired": [...], "preserved": {...}, "skipped": str|None[, "handEdits": {...}]}``."""
        data: dict[str, Any] = {"repaired": self.repaired, "preserved": self.preserved, "skipped": self.skipped}
        if self.hand_edits:
            data["handEdits"] = self.hand_edits
        return data



class RuntimeRepair:
    """Repair and recovery of :class:`~mnemon_ls.runtime.store.RuntimeStore` (mixin; see module doc)."""

    # ------------------------------------------------------------------ repair and recovery

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
        Temp files a killed writer left are removed. Does nothing (``skipped``) when ``memories.json`` is
        missing or damaged. ``rebuild_missing=False`` leaves missing projections for the next wake (the CLI
        absorbs edits before a command that may be rejected, and a rejection must not write).
        """
        report = RepairReport()
        state = self.read()
        if state.problem:
            report.skipped = state.problem
            return report
        if not state.exists or not (self._projections_differ(state.entries, rebuild_missing) or self._has_orphans()):
            return report
        with self._locked():
            state = self.read()
            if state.problem:
                report.skipped = state.problem
                return report
            writes = []
            working = state.entries
            now = self._now()
            for target in self.projects:
                path = self.projection_path(target)
                expected = projection_bytes(state.entries, target)
                current = fsio.read_bytes_or_none(path)
                if current == expected or (current is None and not rebuild_missing):
                    continue
                current = self._settled_bytes(path, current)
                if current == expected or (current is None and not rebuild_missing):
                    continue
                result = self._absorb(target, current, expected, state, working, now, report)
                if result is not None:
                    working = result
                else:
                    writes.append((path, expected))
                report.repaired.append(path.name)
            self._sweep_orphans()
            if working is not state.entries:
                self._commit(state.entries, working, already_saved=set(report.preserved))
            else:
                fsio.write_files_atomically(writes)
        return report

    def _absorb(self, target: Target, current: bytes | None, expected: bytes, state: StoreState,
                working: tuple[Entry, ...], now: str, report: RepairReport) -> tuple[Entry, ...] | None:
        """Classify one differing projection and record it in ``report``; the new entry list when its
        edit is to be imported, else ``None`` (the projection is rebuilt). Call with the lock held."""
        from ..redact import Scrubber  # both imported on use: a repair that finds every projection as
        from . import handedit  # expected (every wake but the one after a hand edit) never needs them

        name = PROJECTION_FILES[target]
        known = handedit.known_projections(self.runtime_dir, self.history_path, self.last_good_path, target, expected)
        kind, reason = handedit.classify(current, expected, known=known,
                                         newer=self._newer_than_commit(self.projection_path(target)))
        if kind in ("missing", "empty"):
            return None
        if kind == "format":
            report.hand_edits[name] = {"status": "format", "reason": reason,
                                       "message": f"{name} {reason}; rewritten (not an edit)"}
            return None
        assert current is not None
        saved = str(self._preserve(name, current))
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
            plan = handedit.plan_import(working, target, text, now, self.limits.limit_for(target),
                                        scrub=Scrubber(self.secrets))
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

    def _newer_than_commit(self, path: Path) -> bool:
        """Whether ``path`` was modified after the last commit of ``memories.json`` (nanosecond mtimes)."""
        try:
            return path.stat().st_mtime_ns > self.memories_path.stat().st_mtime_ns
        except OSError:
            return True

    def _has_orphans(self) -> bool:
        try:
            return any(n.startswith(".") and n.endswith(".tmp") for n in os.listdir(self.runtime_dir))
        except OSError:
            return False

    def _settled_bytes(self, path: Path, current: bytes | None) -> bytes | None:
        """``path``'s bytes once nobody has written it for :data:`SETTLE_SECONDS` (bounded wait).

        An editor that saves in place truncates the file, then writes it: a repair that read between the
        two would see an empty file, preserve nothing and rename the projection over it, and the editor's
        write would land in the replaced inode, lost. So a file modified moments ago is read again once
        it has been quiet for ``settle_seconds`` (default :data:`SETTLE_SECONDS`; at most
        :data:`SETTLE_MAX_SECONDS` or four settle periods in all).
        """
        deadline = time.monotonic() + max(SETTLE_MAX_SECONDS, 4 * self.settle_seconds)
        while True:
            try:
                age = time.time() - path.stat().st_mtime
            except FileNotFoundError:
                return None
            if age >= self.settle_seconds or time.monotonic() >= deadline:
                return fsio.read_bytes_or_none(path)
            time.sleep(max(0.0, min(self.settle_seconds - age, deadline - time.monotonic())) + 0.005)

    def _projections_differ(self, entries: Sequence[Entry], count_missing: bool = True) -> bool:
        for target in self.projects:
            current = fsio.read_bytes_or_none(self.projection_path(target))
            if current != projection_bytes(entries, target) and (count_missing or current is not None):
                return True
        return False

    def recover(self) -> dict[str, Any]:
        """Quarantine a damaged ``memories.json`` and commit every recoverable entry.

        Recoverable = the damaged file's valid entries (it is decoded leniently; a truncated file keeps
        every complete entry) plus the last committed state's entries it lacks. Returns ``{"recovered":
        bool, "quarantined": path|None, "entries": n, "fromDamaged": n, "fromLastGood": n,
        "damagedEntries": n, "message"}``. A valid store is left untouched.
        """
        if not self.runtime_dir.exists():
            return {"recovered": False, "quarantined": None, "entries": 0,
                    "message": f"{self.runtime_dir} does not exist; nothing to recover"}
        with self._locked():
            data = fsio.read_bytes_or_none(self.memories_path)
            state = self._state_from(data)
            if not state.problem:
                return {"recovered": False, "quarantined": None, "entries": len(state.entries),
                        "message": f"{self.memories_path} is valid; nothing to recover"}
            salvaged, damaged = salvage_store(data) if data is not None else ([], 0)
            quarantined = None
            if data is not None:
                quarantined = str(fsio.copy_file_exclusive(
                    self.quarantine_dir, f"{self._stamp()}-memories.json", data))
            entries = list(state.entries)
            preserved, _ = self._commit(None, entries)
        from_damaged = len({(e.target, match_key(e.content)) for e in salvaged})
        return {
            "recovered": True,
            "quarantined": quarantined,
            "entries": len(entries),
            "fromDamaged": from_damaged,
            "fromLastGood": len(entries) - from_damaged,
            "damagedEntries": damaged,
            "preserved": preserved,
            "message": (f"restored {len(entries)} entries ({from_damaged} from the damaged file, "
                        f"{len(entries) - from_damaged} from the last committed state)"
                        + (f"; the damaged file is kept at {quarantined}" if quarantined else "")),
        }
