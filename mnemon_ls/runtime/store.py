"""The Runtime store of one storage root: ``runtime/memories.json`` and its projections, durable and locked.

Layout under ``<root>/runtime/`` (DESIGN.md section 2, seed 000):

- ``memories.json``: the truth (format in :mod:`mnemon_ls.runtime.model`);
- ``USER.md``, ``MEMORY.md``: projections, rebuilt when missing or different;
- ``.memories.lock``: the cross-process lock, created exclusively (shared with the TypeScript plugin);
- ``.memories.last-good.json``: a copy of the last committed ``memories.json`` (same bytes), written in
  the same commit; it is what ``recover`` restores when the truth file is damaged by hand or by another
  tool, so no committed entry is lost;
- ``.projections-history.json``: sha256 digests of the last committed projections (advisory, not fsynced;
  it tells a crash leftover from a hand edit, :mod:`mnemon_ls.runtime.handedit`);
- ``edits/<UTC stamp>-MEMORY.md``: hand edits, copied before they are imported or a repair overwrites them;
- ``quarantine/<UTC stamp>-memories.json``: damaged truth files moved aside by ``recover``;
- ``archived/memories.jsonl`` + ``archived/MEMORY.md``: entries a compaction evicted, appended before
  the commit (seed 000: the local archive when no Memory Space took them).

Every read-modify-write holds the lock for the whole cycle and re-reads under it. A commit writes the
changed projections, then the last-good copy, then ``memories.json`` last (the commit marker), each
via temp + rename, and fsyncs the directory once (:func:`mnemon_ls.fsio.write_files_atomically`). Only
the ``memories.json`` temp is fsynced (two fsyncs per commit with the directory's): an acknowledged
write survives a power loss because the truth does; the projections are derived and rebuilt from it
at every read, and a power loss that leaves them stale or empty is repaired, never imported. The
last-good copy is not fsynced either: it only matters when ``memories.json`` is later damaged by hand
or by another tool, every commit rewrites it, and a stale or empty copy after a power loss cannot
hide an entry (``memories.json`` itself is durable and ``recover`` merges both; an unreadable copy
counts as empty).
A damaged ``memories.json`` is never overwritten: reads fall back with a notice, writes raise
:class:`~mnemon_ls.errors.UnreadableStore`.
"""

from __future__ import annotations

from ..findings import Finding

import json
import os
import time
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Collection, Sequence

from .. import fsio
from ..redact import Scrubber, redact_file_bytes
from ..errors import InvalidInput, RevisionConflict, RuntimeCapacityError, UnreadableStore
from ..settings import RuntimeMemorySettings
from . import compaction, handedit, ops
from .model import (
    PROJECTION_FILES,
    TARGETS,
    Entry,
    Target,
    match_key,
    now_iso,
    parse_store,
    projection_bytes,
    revision_of,
    salvage_store,
    serialize_store,
    used_bytes,
    validate_target,
)

Clock = Callable[[], datetime]
#: Seconds a differing projection must have been left alone before a repair or commit replaces it.
SETTLE_SECONDS = 0.15
#: Longest seconds one replacement waits for a projection that keeps being written.
SETTLE_MAX_SECONDS = 1.0


def _utc_now() -> datetime:
    return datetime.now(timezone.utc)


@dataclass(frozen=True, slots=True)
class StoreState:
    """What a read saw.

    ``entries`` all entries in stored order; ``revision`` sha256 hex of them; ``exists`` whether
    ``memories.json`` exists; ``problem`` ``None`` when the truth file is valid, else the reason it
    is not (then ``entries`` are the recoverable ones: salvaged entries of the damaged file plus any
    only the last-good copy holds, and writes are refused until ``recover``).
    """

    entries: tuple[Entry, ...]
    revision: str
    exists: bool
    problem: str | None = None

    def of(self, target: Target) -> tuple[Entry, ...]:
        """Valid entries of one target, in stored order (those with a ``problem`` are in :meth:`invalid`)."""
        return tuple(e for e in self.entries if e.target == target and e.problem is None)

    def invalid(self, target: Target | None = None) -> tuple[tuple[int, Entry], ...]:
        """``(index in memories.json, entry)`` of every entry (of ``target``) that breaks a rule of a new
        entry: kept in the file, left out of the projections and the wake (see :class:`Entry`)."""
        return tuple((i, e) for i, e in enumerate(self.entries)
                     if e.problem is not None and (target is None or e.target == target))


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


@dataclass(frozen=True, slots=True)
class Receipt:
    """A committed (or no-op) Runtime mutation (reference 3.4 result, plus ``revision`` and ``preserved``).

    ``to_dict()`` gives ``{success, message, target, entryCount, usage: {used, limit}, revision,
    added | replaced: {from, to} | removed, [similar], [kept, dropped], [preserved]}``; ``entryCount`` and
    ``usage`` (UTF-8 bytes) are for the mutated target after the change. ``similar`` (an add only) lists
    the contents of entries of the target that differ from the added one only in case, whitespace or
    punctuation (:func:`~mnemon_ls.runtime.ops.similar_entries`); nothing is removed for them.
    """

    message: str
    target: Target
    entry_count: int
    used: int
    limit: int
    revision: str
    changed: bool
    detail: dict[str, Any] = field(default_factory=dict)
    preserved: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The JSON receipt (camelCase)."""
        data = {
            "success": True,
            "message": self.message,
            "target": self.target,
            "entryCount": self.entry_count,
            "usage": {"used": self.used, "limit": self.limit},
            "revision": self.revision,
            "changed": self.changed,
            **self.detail,
        }
        if self.preserved:
            data["preserved"] = self.preserved
        return data


@dataclass(frozen=True, slots=True)
class MaintenancePlan:
    """Reference 4.1: what a capacity maintenance would work on, read under the lock.

    ``entries`` are the committed entries of ``target`` minus ``excluded`` (the replaced/removed one),
    ``pending`` the new entry of an add/replace, byte counts are UTF-8 bytes of the joined target.
    """

    revision: str
    action: str
    target: Target
    entries: tuple[Entry, ...]
    pending: Entry | None
    excluded: Entry | None
    used: int
    projected: int
    limit: int
    requires_maintenance: bool

    def to_dict(self) -> dict[str, Any]:
        """JSON shape with camelCase keys."""
        return {
            "revision": self.revision,
            "action": self.action,
            "target": self.target,
            "entries": [e.to_json() for e in self.entries],
            "pending": self.pending.to_json() if self.pending else None,
            "excluded": self.excluded.to_json() if self.excluded else None,
            "used": self.used,
            "projected": self.projected,
            "limit": self.limit,
            "requiresMaintenance": self.requires_maintenance,
        }


class RuntimeStore:
    """Runtime memory of one storage root (``<root>/runtime``).

    ``limits`` gives the per-target byte limits; ``lock_timeout`` is in seconds; ``clock`` returns the
    current UTC time (tests pin it). All mutating methods raise :class:`UnreadableStore` when
    ``memories.json`` is damaged, :class:`~mnemon_ls.errors.StoreBusy` when the lock cannot be taken,
    and never change a byte on disk when they raise.
    """

    def __init__(
        self,
        root: Path,
        limits: RuntimeMemorySettings | None = None,
        *,
        lock_timeout: float = fsio.LOCK_TIMEOUT_SECONDS,
        clock: Clock = _utc_now,
        hand_edits: str = "import",
        secrets: str = "redact",
        projects: Sequence[Target] = TARGETS,
    ) -> None:
        self.root = Path(root)
        fsio.confine(self.root)  # invariant 10: no write below the root follows a link
        #: ``import`` (a hand edit of a projection becomes mutations) or ``restore`` (it is saved and undone).
        self.hand_edits = hand_edits
        #: The ``secrets`` setting for what this store writes on its own: imported hand edits and the copies
        #: it saves of them (mutations are redacted by :class:`~mnemon_ls.runtime.source.RuntimeSource`).
        self.secrets = secrets
        #: The projections this store keeps on disk. A split USER scope (``runtimeUserScope=global``,
        #: reference 3.9) ignores the workspace file's ``user`` entries and the global file's ``memory``
        #: ones, so the workspace root has no USER.md (an edit of one would go nowhere) and the global
        #: root no MEMORY.md.
        self.projects: tuple[Target, ...] = tuple(projects)
        self.limits = limits or RuntimeMemorySettings()
        self.lock_timeout = lock_timeout
        self.clock = clock
        self.settle_seconds = SETTLE_SECONDS
        self.runtime_dir = self.root / "runtime"
        self.memories_path = self.runtime_dir / "memories.json"
        self.last_good_path = self.runtime_dir / ".memories.last-good.json"
        self.lock_path = self.runtime_dir / ".memories.lock"
        self.history_path = self.runtime_dir / ".projections-history.json"
        self.edits_dir = self.runtime_dir / "edits"
        self.quarantine_dir = self.runtime_dir / "quarantine"
        self.archive_dir = self.runtime_dir / "archived"
        self._projection_paths = {t: self.runtime_dir / name for t, name in PROJECTION_FILES.items()}
        # The last valid memories.json seen: (its exact bytes, its state). A hit needs the same bytes, so
        # it can never be stale; it saves the parse and the revision hash on every read and wake.
        self._cache: tuple[bytes, StoreState] | None = None

    def projection_path(self, target: Target) -> Path:
        """``runtime/USER.md`` or ``runtime/MEMORY.md``."""
        return self._projection_paths[target]

    # ------------------------------------------------------------------ reads

    def read(self) -> StoreState:
        """Read the store without locking or writing. Never raises for a damaged truth file (see
        :class:`StoreState`); raises :class:`OSError` only for I/O errors other than a missing file."""
        data = fsio.read_bytes_or_none(self.memories_path)
        return self._state_from(data)

    def _state_from(self, data: bytes | None) -> StoreState:
        cached = self._cache
        if cached is not None and data is not None and cached[0] == data:
            return cached[1]
        if data is None:
            last_good = self._last_good_entries()
            if last_good:
                problem = (f"{self.memories_path} is missing but the last committed state "
                           f"({self.last_good_path.name}) holds {len(last_good)} entries")
                return StoreState(tuple(last_good), revision_of(last_good), False, problem)
            return StoreState((), revision_of(()), False)
        try:
            entries = parse_store(data)
        except InvalidInput as exc:
            recovered = self._recoverable_entries(data)
            reason = exc.rule if exc.field == "memories.json" else exc.message
            return StoreState(tuple(recovered), revision_of(recovered), True, f"{self.memories_path}: {reason}")
        state = StoreState(tuple(entries), revision_of(entries), True)
        self._cache = (data, state)
        return state

    def _last_good_entries(self) -> list[Entry]:
        try:
            data = fsio.read_bytes_or_none(self.last_good_path)
            return parse_store(data) if data else []
        except (InvalidInput, OSError):
            return []

    def _recoverable_entries(self, damaged: bytes) -> list[Entry]:
        """Salvaged entries of the damaged file first, then last-good entries it lacks (by target + NFC text)."""
        salvaged, _ = salvage_store(damaged)
        merged: list[Entry] = []
        seen: set[tuple[str, str]] = set()
        for entry in [*salvaged, *self._last_good_entries()]:
            key = (entry.target, match_key(entry.content))
            if key not in seen:
                seen.add(key)
                merged.append(entry)
        return merged

    def _read_valid_locked(self) -> StoreState:
        state = self.read()
        if state.problem:
            raise UnreadableStore(
                f"{state.problem}; nothing was written. Run `mnemon-ls doctor` to see why and "
                "`mnemon-ls runtime recover` to restore it",
                file=str(self.memories_path),
                reason=state.problem,
            )
        return state

    # ------------------------------------------------------------------ mutations

    def mutate(self, request: ops.MutationRequest) -> Receipt:
        """Apply one validated mutation under the lock and commit it durably.

        Raises :class:`~mnemon_ls.errors.NoMatch`, :class:`~mnemon_ls.errors.AmbiguousMatch`,
        :class:`~mnemon_ls.errors.RuntimeCapacityError` (with target/used/projected/limit),
        :class:`InvalidInput`, :class:`UnreadableStore`; none of them changes the disk.
        """
        limit = self.limits.limit_for(request.target)
        if not self.runtime_dir.exists():
            # Invariant 4: a rejected operation creates nothing, not even runtime/. With no directory
            # the store is empty, so a dry run decides exactly whether the real one would fail.
            dry = ops.apply_mutation((), request, self._now())
            ops.check_capacity((), dry.entries, request.target, limit)
        with self._locked():
            state = self._read_valid_locked()
            outcome = ops.apply_mutation(state.entries, request, self._now())
            if not outcome.changed:
                return self._receipt(outcome.message, request.target, state.entries, state.revision, False, outcome.detail)
            try:
                ops.check_capacity(state.entries, outcome.entries, request.target, limit)
            except RuntimeCapacityError as exc:
                raise self._with_plan(exc, self._plan_of(state, outcome, request), request) from None
            preserved, revision = self._commit(state.entries, outcome.entries)
        return self._receipt(outcome.message, request.target, outcome.entries, revision,
                             True, outcome.detail, preserved)

    @staticmethod
    def _with_plan(exc: RuntimeCapacityError, plan: MaintenancePlan,
                   request: ops.MutationRequest) -> RuntimeCapacityError:
        """``exc`` with ``data.maintenance`` (:func:`~mnemon_ls.runtime.compaction.plan_data`) for a
        ``target=user`` overflow with entries to compact (USER.md is compacted by the client's assistant,
        never archived off the machine); other overflows are returned unchanged."""
        if plan.target != "user" or not plan.entries:
            return exc
        data = compaction.plan_data(plan, request)
        count = len(plan.entries)
        message = (f"{exc.message}; or compact USER.md: data.maintenance holds the plan ({count} numbered "
                   f"entr{'y' if count == 1 else 'ies'}, budget {data['budgetBytes']} bytes) for {compaction.METHOD} "
                   "(CLI: `mnemon-ls runtime compact`; `--json` prints the plan)")
        return RuntimeCapacityError(message, **exc.data, maintenance=data)

    def plan_maintenance(self, request: ops.MutationRequest) -> MaintenancePlan:
        """Read the maintenance plan of ``request`` under the lock (no write). Same errors as :meth:`mutate`
        except the capacity error."""
        if self.runtime_dir.exists():
            with self._locked():
                state = self._read_valid_locked()
        else:
            state = self._read_valid_locked()  # nothing to lock, and a read must create nothing
        return self._plan_of(state, ops.apply_mutation(state.entries, request, self._now()), request)

    def _plan_of(self, state: StoreState, outcome: ops.MutationOutcome, request: ops.MutationRequest) -> MaintenancePlan:
        """The maintenance plan of ``request`` applied to ``state`` (``outcome``), reference 4.1."""
        target = request.target
        remaining = tuple(e for e in state.of(target) if e is not outcome.excluded)
        projected = used_bytes(outcome.entries, target)
        return MaintenancePlan(
            revision=state.revision,
            action=request.action,
            target=target,
            entries=remaining,
            pending=outcome.pending,
            excluded=outcome.excluded,
            used=used_bytes(state.entries, target),
            projected=projected,
            limit=self.limits.limit_for(target),
            requires_maintenance=outcome.changed and projected > self.limits.limit_for(target),
        )

    def compact_target(
        self, expected_revision: str, target: Target, candidates: Sequence[Any], max_bytes: int | None = None
    ) -> Receipt:
        """Replace ``target``'s entries by the candidates that fit ``max_bytes`` (reference 4.3).

        The revision must still be ``expected_revision`` (else :class:`RevisionConflict`). Every
        committed entry of ``target`` that does not survive, and every dropped candidate, is appended to
        ``runtime/archived/`` before the commit, so nothing leaves the machine's disk unrecorded.
        """
        return self._compact(expected_revision, target, candidates, max_bytes, None)

    def compact_and_mutate(
        self,
        expected_revision: str,
        request: ops.MutationRequest,
        candidates: Sequence[Any],
        max_bytes: int | None = None,
        *,
        archive_locally: bool = True,
        before_commit: Callable[[Sequence[Entry], str], None] | None = None,
    ) -> Receipt:
        """Compact ``request.target`` to the candidates and apply ``request`` in one commit (reference 4.3).

        A candidate equal to the pending content raises ``duplicates the pending mutation``; one equal
        to the replaced/removed entry raises ``reintroduces``; both as :class:`InvalidInput` (field
        ``candidates[i].content``). Capacity is checked on the result.

        ``archive_locally=False`` skips the local archive (the caller proved the evicted entries are
        stored elsewhere, e.g. in a Memory Space). ``before_commit(evicted, revision)`` is called under
        the lock after the revision check (and the local archive), right before the commit, with the
        entries leaving hot memory; whatever it raises aborts with hot memory unchanged.
        """
        return self._compact(expected_revision, request.target, candidates, max_bytes, request,
                             archive_locally=archive_locally, before_commit=before_commit)

    def compact_plan(self, expected_revision: str, target: Target, entries: Any,
                     request: ops.MutationRequest | None = None) -> Receipt:
        """Commit an assistant's compaction of ``target`` and the pending ``request`` in one commit.

        ``entries`` is ``[{content, importance, sourceIndexes, branches?}]`` over the numbered plan of
        ``request`` (``data.maintenance`` of its ``runtime-capacity`` error). Under the lock the revision
        must still be ``expected_revision`` (:class:`RevisionConflict`), then every rule of reference 4.4
        is checked on the plan re-read there (:func:`~mnemon_ls.runtime.compaction.derive_candidates`:
        :class:`InvalidInput` naming the entry and the rule, ``data.problems`` all of them). The replaced
        originals are appended to ``runtime/archived/`` before the commit. The receipt's
        ``maintenance`` is :func:`~mnemon_ls.runtime.compaction.receipt_data` (the maintenance receipt
        shape of :mod:`mnemon_ls.maintenance.receipt`). A rejected request changes nothing.
        """
        target = validate_target(target)
        if not isinstance(expected_revision, str) or not expected_revision:
            raise InvalidInput("revision", "is required: the revision of the plan (data.maintenance.revision)")
        if request is not None and request.target != target:
            raise InvalidInput("pending.target", f"must be the compacted target {target}")
        chosen: dict[str, Any] = {}

        def derive(state: StoreState, outcome: ops.MutationOutcome | None) -> tuple[list[ops.Candidate], int]:
            base = outcome or ops.MutationOutcome(state.entries, False, "")
            plan = self._plan_of(state, base, request or ops.MutationRequest("compact", target))  # type: ignore[arg-type]
            candidates, budget = compaction.derive_candidates(entries, plan)
            chosen["plan"] = plan
            chosen["entries"] = [{**c.to_dict(), "sourceIndexes": list(e["sourceIndexes"])}
                                 for c, e in zip(candidates, entries)]
            return candidates, budget

        receipt = self._compact(expected_revision, target, (), None, request, derive=derive)
        maintenance = compaction.receipt_data(chosen["plan"], chosen["entries"], receipt.revision, receipt.used,
                                              receipt.limit, str(self.archive_dir / "memories.jsonl"))
        return replace(receipt, detail={**receipt.detail, "maintenance": maintenance})

    def _compact(
        self,
        expected_revision: str,
        target: Target,
        raw_candidates: Sequence[Any],
        max_bytes: int | None,
        request: ops.MutationRequest | None,
        derive: Callable[[StoreState, ops.MutationOutcome | None], tuple[list[ops.Candidate], int]] | None = None,
        *,
        archive_locally: bool = True,
        before_commit: Callable[[Sequence[Entry], str], None] | None = None,
    ) -> Receipt:
        target = validate_target(target)
        limit = self.limits.limit_for(target)
        budget = ops.validate_budget(max_bytes, limit)
        candidates = ops.validate_candidates(raw_candidates, target) if derive is None else []
        if not self.runtime_dir.exists() and expected_revision != revision_of(()):
            raise RevisionConflict(
                f"runtime memory changed since revision {expected_revision[:12]}; re-read and retry",
                expected=expected_revision, actual=revision_of(()))
        with self._locked():
            state = self._read_valid_locked()
            if state.revision != expected_revision:
                raise RevisionConflict(
                    f"runtime memory changed since revision {expected_revision[:12]}; re-read and retry",
                    expected=expected_revision,
                    actual=state.revision,
                )
            now = self._now()
            outcome = ops.apply_mutation(state.entries, request, now) if request else None
            if derive is not None:
                candidates, budget = derive(state, outcome)
            elif outcome is not None:
                for index, candidate in enumerate(candidates):
                    key = match_key(candidate.content)
                    if outcome.pending is not None and key == match_key(outcome.pending.content):
                        raise InvalidInput(f"candidates[{index}].content", "duplicates the pending mutation")
                    if outcome.excluded is not None and key == match_key(outcome.excluded.content):
                        raise InvalidInput(f"candidates[{index}].content",
                                           f"reintroduces the entry being {request.action}d")
            kept_indexes = ops.pack(candidates, budget)
            kept = ops.materialize([candidates[i] for i in kept_indexes], state.entries, target, now)
            tail = [outcome.pending] if outcome is not None and outcome.pending is not None else []
            others = [e for e in state.entries if e.target != target or e.problem is not None]
            new_entries = (*others, *kept, *tail)
            ops.check_capacity(state.entries, new_entries, target, limit)
            survivors = {match_key(e.content) for e in new_entries if e.target == target}
            if outcome is not None and outcome.excluded is not None:
                survivors.add(match_key(outcome.excluded.content))  # a removed entry is the user's choice
            evicted = [e for e in state.entries if e.target == target and e.problem is None
                       and match_key(e.content) not in survivors]
            dropped = [candidates[i] for i in range(len(candidates)) if i not in set(kept_indexes)]
            evicted_keys = {match_key(e.content) for e in evicted}
            extra = ops.materialize([c for c in dropped if match_key(c.content) not in evicted_keys],
                                    state.entries, target, now)
            if archive_locally:
                self._archive_locally([*evicted, *extra], state.revision)
            if before_commit is not None:
                before_commit([*evicted, *extra], state.revision)
            preserved, revision = self._commit(state.entries, new_entries)
        detail: dict[str, Any] = dict(outcome.detail) if outcome else {}
        detail["kept"] = [e.content for e in kept]
        detail["dropped"] = [c.content for c in dropped]
        detail["archived"] = len(evicted) + len(extra)
        message = (outcome.message + " " if outcome else "") + f"Compacted {target}: kept {len(kept)} of {len(candidates)}."
        return self._receipt(message, target, new_entries, revision, True, detail, preserved)

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

    # ------------------------------------------------------------------ internals

    def _locked(self):
        fsio.ensure_dir(self.runtime_dir)
        return fsio.file_lock(self.lock_path, self.lock_timeout)

    def _now(self) -> str:
        return now_iso(self.clock())

    def _stamp(self) -> str:
        """A filename-safe UTC stamp with milliseconds: ``20261130T052804.123Z``."""
        moment = self.clock().astimezone(timezone.utc)
        return moment.strftime("%Y%m%dT%H%M%S.") + f"{moment.microsecond // 1000:03d}Z"

    def _preserve(self, name: str, data: bytes) -> Path:
        """Save a copy of a projection about to be rewritten under ``runtime/edits/``; a value in it that
        looks like a credential is redacted first unless ``secrets`` is ``allow`` (invariant 9: the copy
        is our write, even though the person typed it)."""
        if self.secrets != "allow":
            data = redact_file_bytes(data, name)[0]
        return fsio.copy_file_exclusive(self.edits_dir, f"{self._stamp()}-{name}", data)

    def commit_entries(self, entries: Sequence[Entry]) -> str:
        """Replace the whole store with ``entries`` (each already valid) through the normal commit path
        (lock, projections, last-good copy, ``memories.json`` last, projection history); returns the new
        revision. Used by a pack import on its private staging copy of ``runtime/``
        (:mod:`mnemon_ls.packs.importer`). Raises :class:`UnreadableStore` for a damaged store."""
        with self._locked():
            state = self._read_valid_locked()
            return self._commit(state.entries, list(entries))[1]

    def _commit(self, before: Sequence[Entry] | None, after: Sequence[Entry], *,
                already_saved: Collection[str] = ()) -> tuple[dict[str, str], str]:
        """Write changed projections, the last-good copy and memories.json (last).

        Returns ``(preserved hand edits: file name -> saved path, new revision)``.

        A projection on disk that matches neither the old nor the new expected bytes (a hand edit not
        yet repaired) is saved under ``edits/`` first, unless its name is in ``already_saved`` (the
        repair copied it). Must be called with the lock held.
        """
        preserved: dict[str, str] = {}
        writes: list[tuple[Path, bytes]] = []
        for target in self.projects:
            path = self.projection_path(target)
            new = projection_bytes(after, target)
            current = fsio.read_bytes_or_none(path)
            if current == new:
                continue
            old = projection_bytes(before, target) if before is not None else None
            if current != old:
                current = self._settled_bytes(path, current)
            if current and current != old and current != new and path.name not in already_saved:
                preserved[path.name] = str(self._preserve(path.name, current))
            writes.append((path, new))
        self._sweep_orphans()
        body = serialize_store(after)
        writes.append((self.last_good_path, body))
        writes.append((self.memories_path, body))
        # Two fsyncs per commit: memories.json and the directory. The projections are rebuilt from the
        # truth at every read and the last-good copy is only a recovery aid (see the module doc).
        fsio.write_files_atomically(writes, unsynced={path for path, _ in writes[:-1]})
        handedit.record_history(self.history_path, before, after)
        state = StoreState(tuple(after), revision_of(after), True)
        self._cache = (body, state)
        return preserved, state.revision

    def _sweep_orphans(self) -> list[str]:
        """Remove temp files a killed writer left in ``runtime/`` (call with the lock held).

        Every writer (ours and the plugin's) writes its ``.<name>.<pid>.<ms>.<rand>.tmp`` files only under
        the lock, so while we hold it any such file is an orphan; lock staging files (``.publish``) are
        removed only when their process is gone. Returns the names removed.
        """
        removed = []
        try:
            names = os.listdir(self.runtime_dir)
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
                    os.unlink(self.runtime_dir / name)
                    removed.append(name)
                except OSError:
                    pass
        return removed

    def _archive_locally(self, entries: Sequence[Entry], revision: str) -> None:
        """Append evicted entries to ``archived/memories.jsonl`` and ``archived/MEMORY.md`` durably."""
        if not entries:
            return
        fsio.ensure_dir(self.archive_dir)
        stamp = self._now()
        lines = "".join(
            json.dumps({**e.to_json(), "archived_at": stamp, "revision": revision}, ensure_ascii=False) + "\n"
            for e in entries
        ).encode("utf-8")
        jsonl = self.archive_dir / "memories.jsonl"
        current = fsio.read_bytes_or_none(jsonl)
        if current and not current.endswith(b"\n"):
            lines = b"\n" + lines  # close a line a killed append tore, so this one parses
        _append_durably(jsonl, lines)
        by_target: dict[str, list[str]] = {}
        for e in entries:
            by_target.setdefault(PROJECTION_FILES[e.target], []).append(e.content)
        for name, contents in by_target.items():
            path = self.archive_dir / name
            prefix = b"\xc2\xa7\n" if path.exists() and path.stat().st_size else b""
            _append_durably(path, prefix + "\n\u00a7\n".join(contents).encode("utf-8") + b"\n")

    def _receipt(
        self,
        message: str,
        target: Target,
        entries: Sequence[Entry],
        revision: str,
        changed: bool,
        detail: dict[str, Any],
        preserved: dict[str, str] | None = None,
    ) -> Receipt:
        return Receipt(
            message=message,
            target=target,
            entry_count=sum(1 for e in entries if e.target == target),
            used=used_bytes(entries, target),
            limit=self.limits.limit_for(target),
            revision=revision,
            changed=changed,
            detail=detail,
            preserved=preserved or {},
        )



def _append_durably(path: Path, data: bytes) -> None:
    fsio.append_file_durably(path, data)


def _excerpt(entry: Entry) -> str:
    return entry.content if len(entry.content) <= 60 else entry.content[:57] + "..."


def invalid_entry_line(store: RuntimeStore, index: int, entry: Entry) -> str:
    """The problem line of a stored entry that breaks a rule (status, wake notice and doctor share it)."""
    return (f"{store.memories_path} entries[{index}] ({entry.target}, {_excerpt(entry)!r}) is left out of the wake and "
            f"{PROJECTION_FILES[entry.target]}: {entry.problem}; it is kept in memories.json: shorten it with "
            "`mnemon-ls runtime replace` or delete it with `mnemon-ls runtime remove`")


def over_limit_line(target: Target, used: int, limit: int) -> str:
    """The problem line of a target whose entries use more than its limit (UTF-8 bytes)."""
    return (f"{target} ({PROJECTION_FILES[target]}) uses {used} of its {limit} UTF-8 bytes, {used - limit} over the "
            f"limit (memories.json was edited past it); a change that leaves it over the limit is refused: compact "
            f"it (capacity maintenance) or raise runtimeMemory.{target}LimitBytes")


def diagnose(store: RuntimeStore) -> list[Finding]:
    """Read-only health check of one Runtime store (never writes, never takes the lock)."""
    findings: list[Finding] = []
    memories = str(store.memories_path)
    if not store.runtime_dir.exists():
        return [Finding("ok", str(store.runtime_dir), "no Runtime memory yet (created on the first write)")]
    try:
        state = store.read()
    except OSError as exc:
        return [Finding("problem", memories, f"cannot be read: {exc.strerror or exc}",
                        "check the file's owner and permissions")]
    if state.problem:
        data = fsio.read_bytes_or_none(store.memories_path)
        salvaged, damaged = salvage_store(data) if data is not None else ([], 0)
        findings.append(Finding(
            "problem", memories, state.problem.removeprefix(f"{memories}: "),
            f"`mnemon-ls runtime recover` moves it to runtime/quarantine/ and restores {len(state.entries)} "
            f"entries ({len(salvaged)} readable in the damaged file, {damaged} damaged there, the rest from the "
            "last committed copy); writes are refused until then"))
    elif not state.exists:
        findings.append(Finding("ok", memories, "absent (empty store; created on the first write)"))
    else:
        counts = {t: len(state.of(t)) for t in TARGETS}
        findings.append(Finding("ok", memories, f"valid: {counts['user']} user and {counts['memory']} memory entries, "
                                f"revision {state.revision[:12]}"))
        for index, entry in state.invalid():
            findings.append(Finding(
                "problem", f"{memories} entries[{index}]",
                f"({entry.target}, {_excerpt(entry)!r}) breaks a rule of a new entry: {entry.problem}",
                f"it stays in memories.json and out of the wake and {PROJECTION_FILES[entry.target]}; shorten it "
                "with `mnemon-ls runtime replace --old-text ...` or delete it with `mnemon-ls runtime remove`"))
        for target in TARGETS:
            used, limit = used_bytes(state.entries, target), store.limits.limit_for(target)
            if used > limit:
                findings.append(Finding("problem", target, f"{PROJECTION_FILES[target]} uses {used} of its {limit} "
                                        f"UTF-8 bytes, {used - limit} over the limit",
                                        "a change that leaves it over the limit is refused: compact it (capacity "
                                        f"maintenance) or raise runtimeMemory.{target}LimitBytes"))
            path = store.projection_path(target)
            current = fsio.read_bytes_or_none(path)
            if current != projection_bytes(state.entries, target):
                what = "missing" if current is None else "differs from memories.json (hand edit or interrupted write)"
                findings.append(Finding("warning", str(path), what,
                                        "the next wake, runtime command or running server imports a hand edit (handEdits=import) "
                                        "or rebuilds the file; it is first copied to runtime/edits/"))
    if store.lock_path.exists():
        try:
            age = max(0.0, datetime.now().timestamp() - store.lock_path.stat().st_mtime)
            holder = store.lock_path.read_text(errors="replace").strip().splitlines()
        except OSError:
            age, holder = 0.0, []
        who = f"pid {holder[0]}" if holder and holder[0].isdigit() else "an unknown owner"
        findings.append(Finding("warning", str(store.lock_path), f"held by {who} for {age:.0f} s",
                                "a lock whose owner died, or older than 30 s, is broken by the next writer"))
    for path, expected in ((store.runtime_dir, fsio.DIR_MODE), (store.memories_path, fsio.FILE_MODE),
                           (store.projection_path("user"), fsio.FILE_MODE), (store.projection_path("memory"), fsio.FILE_MODE)):
        try:
            mode = path.stat().st_mode & 0o777
        except OSError:
            continue
        if mode & ~expected:
            findings.append(Finding("warning", str(path), f"mode {mode:04o} is wider than {expected:04o}",
                                    f"chmod {expected:o} {path}"))
    for directory, what in ((store.edits_dir, "hand edits preserved before repair"),
                            (store.quarantine_dir, "damaged files moved aside by recover")):
        if directory.is_dir():
            count = sum(1 for _ in directory.iterdir())
            if count:
                findings.append(Finding("ok", str(directory), f"{count} {what}"))
    return findings
