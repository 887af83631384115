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

Layout: this module holds reads, ``mutate``, ``recover`` and the write path the rest uses (``locked``,
``read_valid``, ``commit``). A store owns two parts, each reaching it only through that write path and its
paths: ``store.maintenance`` (:class:`~.capacity.CapacityMaintenance`: plans, compaction, local archive) and
``store.projections`` (:class:`~.repair.ProjectionRepair`: USER.md/MEMORY.md repaired, hand edits imported).
:class:`RepairReport` and the settle constants are re-exported here.
"""

from __future__ import annotations

import contextlib
import os
import threading

from ..findings import Finding
from ..lockinfo import lock_finding

from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Collection, Iterator, Sequence

from .. import fsio
from ..errors import InvalidInput, RuntimeCapacityError, UnreadableStore
from ..settings import RuntimeMemorySettings
from . import ops
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
    serialized_with_revision,
    used_bytes,
)
from .capacity import CapacityMaintenance, plan_of, with_plan
from .repair import SETTLE_MAX_SECONDS, SETTLE_SECONDS, ProjectionRepair, RepairReport, settled_bytes, sweep_orphans
from .state import MaintenancePlan, Receipt, StoreState

#: Public names; :class:`MaintenancePlan`, :class:`Receipt` and :class:`StoreState` (:mod:`.state`),
#: :class:`RepairReport` and the settle constants (:mod:`.repair`) are re-exported here.
__all__ = ["SETTLE_MAX_SECONDS", "SETTLE_SECONDS", "Clock", "MaintenancePlan", "Receipt", "RepairReport",
           "RuntimeStore", "StoreState", "diagnose", "invalid_entry_line", "over_limit_line"]

Clock = Callable[[], datetime]



def _utc_now() -> datetime:
    return datetime.now(timezone.utc)


class RuntimeStore:
    """Runtime memory of one storage root (``<root>/runtime``).

    ``limits`` gives the per-target byte limits; ``lock_timeout`` is in seconds; ``clock`` returns the
    current UTC time (tests pin it); ``hand_edits`` is the :class:`~.repair.ProjectionRepair` policy. All
    mutating methods (here and in the parts ``maintenance`` and ``projections``) raise :class:`UnreadableStore`
    when ``memories.json`` is damaged, :class:`~mnemon_ls.errors.StoreBusy` when the lock cannot be taken,
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
        #: The marker of a ``memories.json`` holding a credential another program wrote (:mod:`.foreign`).
        self.unscrubbed_path = self.runtime_dir / ".memories.unscrubbed"
        self.lock_path = self.runtime_dir / ".memories.lock"
        self.history_path = self.runtime_dir / ".projections-history.json"
        self.edits_dir = self.runtime_dir / "edits"
        self.quarantine_dir = self.runtime_dir / "quarantine"
        self.archive_dir = self.runtime_dir / "archived"
        self._projection_paths = {t: self.runtime_dir / name for t, name in PROJECTION_FILES.items()}
        # The last valid memories.json seen: (its exact bytes, its state). A hit needs the same bytes, so
        # it can never be stale; it saves the parse and the revision hash on every read and wake.
        self._cache: tuple[bytes, StoreState] | None = None
        # The bytes of memories.json the last read saw (None: missing), for written_elsewhere().
        self._last_read: bytes | None = None
        # written_elsewhere()'s last answer: (the memories.json bytes, the last-good copy's stat signature, answer).
        self._elsewhere: tuple[bytes, tuple[int, int, int, int], bool] | None = None
        # This thread's depth of locked() blocks (> 0: the directories were checked in this operation).
        self._held = threading.local()
        #: Capacity maintenance: plans, compaction, the local archive.
        self.maintenance = CapacityMaintenance(self)
        #: Projection repair: USER.md / MEMORY.md rebuilt from the truth, hand edits imported (``hand_edits``:
        #: ``import``, a hand edit becomes mutations; ``restore``, it is saved and undone).
        self.projections = ProjectionRepair(self, hand_edits=hand_edits)

    def projection_path(self, target: Target) -> Path:
        """``runtime/USER.md`` or ``runtime/MEMORY.md``."""
        return self._projection_paths[target]

    # ------------------------------------------------------------------ reads

    def read(self) -> StoreState:
        """Read the store without locking or writing. Never raises for a damaged truth file (see
        :class:`StoreState`); raises :class:`OSError` only for I/O errors other than a missing file."""
        data = self._read_file(self.memories_path)
        return self._state_from(data)

    def _read_file(self, path: Path) -> bytes | None:
        """``path``'s bytes or ``None`` (:func:`~mnemon_ls.fsio.read_bytes_or_none`), without checking its
        directories again inside :meth:`locked`, which checked them for the operation."""
        return fsio.read_bytes_or_none(path, checked=getattr(self._held, "depth", 0) > 0)

    def written_elsewhere(self) -> bool:
        """Whether the ``memories.json`` this store last read may hold a value no redaction pass of ours saw
        (:mod:`.foreign`): its bytes differ from ``.memories.last-good.json`` (every commit writes both alike, so
        another program wrote it since), or the marker ``.memories.unscrubbed`` says a commit carried one forward.
        Two ``lstat`` calls while neither file changed (the answer is kept with the last-good copy's inode, size and
        times, and the bytes it was compared with), else one read of the last-good copy too; no parse, nothing
        imported (a wake in a long-lived server asks on every call: bench/mcp_inprocess.py)."""
        if os.path.lexists(self.unscrubbed_path):
            return True
        data = self._last_read
        if data is None:
            return False
        try:
            st = os.lstat(self.last_good_path)
            signature: tuple[int, int, int, int] | None = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        except OSError:
            signature = None
        kept = self._elsewhere
        if signature is not None and kept is not None and kept[1] == signature and kept[0] == data:
            return kept[2]
        answer = data != self._read_file(self.last_good_path)
        self._elsewhere = None if signature is None else (data, signature, answer)
        return answer

    def _state_from(self, data: bytes | None) -> StoreState:
        self._last_read = data
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

    def read_valid(self) -> StoreState:
        """:meth:`read` for a write: call it with the lock held (:meth:`locked`) and commit what it returns.
        Raises :class:`UnreadableStore` (``file``, ``reason``) when ``memories.json`` is damaged."""
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
        exists = fsio.checked_dir_exists(self.runtime_dir)  # the operation's check of the directories (locked)
        if not exists:
            # Invariant 4: a rejected operation creates nothing, not even runtime/. With no directory
            # the store is empty, so a dry run decides exactly whether the real one would fail.
            dry = ops.apply_mutation((), request, self.now())
            ops.check_capacity((), dry.entries, request.target, limit, _content(dry))
        with self._locked(exists):
            state = self.read_valid()
            outcome = ops.apply_mutation(state.entries, request, self.now())
            if not outcome.changed:
                return self.receipt(outcome.message, request.target, state.entries, state.revision, False,
                                    outcome.detail)
            try:
                ops.check_capacity(state.entries, outcome.entries, request.target, limit, _content(outcome))
            except RuntimeCapacityError as exc:
                raise with_plan(exc, plan_of(state, outcome, request, self.limits), request,
                                redact=self.secrets != "allow") from None
            preserved, revision = self.commit(state.entries, outcome.entries)
        return self.receipt(outcome.message, request.target, outcome.entries, revision,
                             True, outcome.detail, preserved)

    def recover(self) -> dict[str, Any]:
        """Quarantine a damaged ``memories.json`` and commit every recoverable entry.

        Recoverable (what :meth:`read` already falls back to) = the damaged file's valid entries (it is
        decoded leniently; a truncated file keeps every complete entry) plus the last committed state's
        entries it lacks. Returns ``{"recovered": bool, "quarantined": path|None, "entries": n, "fromDamaged":
        n, "fromLastGood": n, "damagedEntries": n, "preserved": {...}, "message"}``. A valid store is left
        untouched. Raises :class:`~mnemon_ls.errors.StoreBusy` and :class:`OSError`.
        """
        if not self.runtime_dir.exists():
            return {"recovered": False, "quarantined": None, "entries": 0,
                    "message": f"{self.runtime_dir} does not exist; nothing to recover"}
        with self.locked():
            data = fsio.read_bytes_or_none(self.memories_path)
            state = self._state_from(data)
            if not state.problem:
                return {"recovered": False, "quarantined": None, "entries": len(state.entries),
                        "message": f"{self.memories_path} is valid; nothing to recover"}
            salvaged, damaged = salvage_store(data) if data is not None else ([], 0)
            quarantined = None
            if data is not None:
                quarantined = str(fsio.copy_file_exclusive(
                    self.quarantine_dir, f"{self.stamp()}-memories.json", data))
            entries = list(state.entries)
            preserved, _ = self.commit(None, entries)
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

    # ------------------------------------------------------------------ the write path

    def locked(self) -> contextlib.AbstractContextManager[None]:
        """The cross-process lock ``runtime/.memories.lock`` as a context manager (creates ``runtime/``; waits
        ``lock_timeout`` seconds, then raises :class:`~mnemon_ls.errors.StoreBusy`). Every read-modify-write
        holds it for the whole cycle: :meth:`read_valid`, then :meth:`commit`. Reentrant within a thread.

        One operation, one check of the directories (invariant 10). On entry the directories from the root's
        anchor down to ``runtime/`` are checked once (:func:`~mnemon_ls.fsio.checked_dir_exists`: real
        directories, no symbolic link); the reads and writes of the block then look only at their own file:
        reads open it ``O_NOFOLLOW``, the commit ``lstat``-s each file it replaces and creates its temp files
        ``O_EXCL | O_NOFOLLOW``, the lock marker is ``link()``-ed (never follows a link at its name). Checking
        each file's directories again inside the block protected nothing more: a link swapped in by someone
        racing the block defeats any ``lstat``-then-``open`` check however often it runs (the lock binds only
        the writers that take it, and a person or an attacker takes none), so the check guards against a link
        that is there when the operation starts, and that is what the entry check refuses. Nothing is cached
        from one block to the next: a directory replaced by a link between two operations (a ``git checkout``
        bringing a linked ``.mnemon``, a hand edit) is refused by the next one.

        A marker that was there first (a writer waited for, or a dead writer's marker broken) means a writer may
        have been killed inside its commit: :meth:`commit` then removes its temp files
        (:func:`~.repair.sweep_orphans`; not before, since a repair first reads them to tell a crash leftover
        from a hand edit). An uncontended lock cannot follow a killed commit (a writer writes temp files only
        while its marker exists, and removes them before removing it), so no directory listing is spent on it;
        temp files left by a writer whose marker was deleted by hand are removed by the next repair (wake).
        """
        return self._locked(None)

    @contextlib.contextmanager
    def _locked(self, exists: bool | None) -> Iterator[None]:
        """:meth:`locked`; ``exists``: the result of :func:`~mnemon_ls.fsio.checked_dir_exists` for ``runtime/``
        when the caller has just run it for this operation (``None``: run it here)."""
        held = self._held
        depth = getattr(held, "depth", 0)
        if not depth and not (fsio.checked_dir_exists(self.runtime_dir) if exists is None else exists):
            fsio.ensure_dir(self.runtime_dir)
        with fsio.file_lock(self.lock_path, self.lock_timeout, checked=True) as contended:
            if not depth:
                held.contended = contended
            held.depth = depth + 1
            try:
                yield
            finally:
                held.depth = depth
                if not depth:
                    held.contended = True  # what commit() assumes outside a block

    def now(self) -> str:
        """The clock's time as an entry timestamp (ISO 8601 UTC, :func:`~.model.now_iso`)."""
        return now_iso(self.clock())

    def stamp(self) -> str:
        """A filename-safe UTC stamp with milliseconds: ``20261130T052804.123Z``."""
        return fsio.file_stamp(self.clock().astimezone(timezone.utc))

    def preserve(self, name: str, data: bytes) -> Path:
        """Save a copy of a projection about to be rewritten under ``runtime/edits/``; a value in it that
        looks like a credential is redacted first unless ``secrets`` is ``allow`` (invariant 9: the copy
        is our write, even though the person typed it). A :class:`~mnemon_ls.fsio.Displaced` file still being
        written is moved there itself, unredacted: what its writer writes later must land in it
        (:func:`~mnemon_ls.fsio.keep_displaced`)."""
        if getattr(data, "held", None):
            return fsio.keep_displaced(self.edits_dir, f"{self.stamp()}-{name}", data)
        if self.secrets != "allow":
            from ..redact import redact_file_bytes  # imported on use: a wake with clean projections never needs it

            data = redact_file_bytes(data, name)[0]
        return fsio.copy_file_exclusive(self.edits_dir, f"{self.stamp()}-{name}", data)

    def commit_entries(self, entries: Sequence[Entry]) -> str:
        """Replace the whole store with ``entries`` (each already valid) through the normal commit path
        (lock, projections, last-good copy, ``memories.json`` last, projection history); returns the new
        revision. Used by a pack import on its private staging copy of ``runtime/``
        (:mod:`mnemon_ls.packs.importer`). Raises :class:`UnreadableStore` for a damaged store."""
        with self.locked():
            state = self.read_valid()
            return self.commit(state.entries, list(entries))[1]

    def commit(self, before: Sequence[Entry] | None, after: Sequence[Entry], *,
                already_saved: Collection[str] = ()) -> tuple[dict[str, str], str]:
        """Write changed projections, the last-good copy and memories.json (last).

        Returns ``(preserved hand edits: file name -> saved path, new revision)``.

        A projection on disk that matches neither the old nor the new expected bytes (a hand edit not
        yet repaired) is saved under ``edits/`` first, unless its name is in ``already_saved`` (the
        repair copied it). Must be called with the lock held (:meth:`locked`); ``after`` must hold valid
        entries (the write path does not validate them). Raises :class:`OSError` for I/O errors, with
        ``memories.json`` unchanged.
        """
        preserved: dict[str, str] = {}
        writes: list[tuple[Path, bytes]] = []
        read: dict[Path, bytes | None] = {}  # a projection as read here: a save since is kept, not replaced
        # (projection_bytes remembers the projections of a tuple: "before" is normally the last commit's "after")
        old_projections = None if before is None else {t: projection_bytes(before, t) for t in TARGETS}
        new_projections: dict[Target, bytes] = {}
        for target in TARGETS:
            new = projection_bytes(after, target)
            if old_projections is not None and new == old_projections[target]:
                new = old_projections[target]  # the same object: its digest is known (handedit.record_history)
            new_projections[target] = new
        for target in self.projects:
            path = self.projection_path(target)
            new = new_projections[target]
            current = self._read_file(path)
            if current == new:
                continue
            old = old_projections[target] if old_projections is not None else None
            if current != old:
                current = settled_bytes(path, self.settle_seconds)
            if current and current != old and current != new and path.name not in already_saved:
                preserved[path.name] = str(self.preserve(path.name, current))
            writes.append((path, new))
            read[path] = current
        if getattr(self._held, "contended", True):  # see locked(): a killed writer's temp files may be here
            sweep_orphans(self.runtime_dir)
        body, revision = serialized_with_revision(after)
        unscrubbed = self._unscrubbed_after(after)
        if unscrubbed:  # before memories.json: a commit cut short leaves the marker, never a value unmarked
            from .foreign import MARKER_TEXT

            writes.insert(0, (self.unscrubbed_path, MARKER_TEXT))
        writes.append((self.last_good_path, body))
        writes.append((self.memories_path, body))
        # Two fsyncs per commit: memories.json and the directory. The projections are rebuilt from the
        # truth at every read and the last-good copy is only a recovery aid (see the module doc).
        displaced = fsio.write_files_atomically(writes, unsynced={path for path, _ in writes[:-1]},
                                                checked=getattr(self._held, "depth", 0) > 0, watched=read)
        for path, data in displaced.items():  # saved by someone outside the lock after the read above
            preserved[path.name + (" (saved during the write)" if path.name in preserved else "")] = str(
                self.preserve(path.name, data))
        from . import handedit  # imported on use: a wake that changes nothing never needs it

        handedit.record_history(self.history_path, before, after, projected=(old_projections, new_projections))
        if unscrubbed is False:
            try:
                os.unlink(self.unscrubbed_path)
            except FileNotFoundError:
                pass
        state = StoreState(tuple(after), revision, True)
        self._cache = (body, state)
        return preserved, state.revision

    def _unscrubbed_after(self, after: Sequence[Entry]) -> bool | None:
        """Whether the marker ``.memories.unscrubbed`` must exist once ``after`` is committed (:mod:`.foreign`):
        ``None`` (leave it: absent) when no marker exists and ``memories.json`` is ours (the same bytes as the
        last-good copy; every entry passed our redaction pass), else whether ``after`` holds a value that looks
        like a credential (the redaction pass is imported only then). Call with the lock held."""
        if not os.path.lexists(self.unscrubbed_path) and \
                self._read_file(self.memories_path) == self._read_file(self.last_good_path):
            return None
        from .foreign import holds_secrets  # imported on use: only after another program wrote memories.json

        return holds_secrets(after)

    def receipt(
        self,
        message: str,
        target: Target,
        entries: Sequence[Entry],
        revision: str,
        changed: bool,
        detail: dict[str, Any],
        preserved: dict[str, str] | None = None,
    ) -> Receipt:
        """The :class:`Receipt` of a (no-op or committed) change of ``target``: its entry count and used bytes
        in ``entries``, its limit, ``revision``; ``detail`` and ``preserved`` as given."""
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




def _content(outcome: ops.MutationOutcome) -> str | None:
    """The content ``outcome`` adds or writes (its pending entry's), for the capacity rule; ``None`` for none."""
    return outcome.pending.content if outcome.pending is not None else None


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
            if target not in store.projects:
                # runtimeUserScope=global splits the targets: this root's file of the other target is never
                # read or written, so its absence is right (a stale copy is only named)
                if current:
                    findings.append(Finding("ok", str(path), f"not used: {PROJECTION_FILES[target]} of this "
                                            "workspace lives in another root (runtimeUserScope)"))
                continue
            expected = projection_bytes(state.entries, target)
            if current != expected and (current is not None or expected):  # no entries, no file yet: created later
                what = "missing" if current is None else "differs from memories.json (hand edit or interrupted write)"
                findings.append(Finding("warning", str(path), what,
                                        "the next wake, runtime command or running server imports a hand edit "
                                        "(handEdits=import) or rebuilds the file; it is first copied to "
                                        "runtime/edits/"))
    lock = lock_finding(store.lock_path)
    if lock is not None:
        findings.append(lock)
    for path, expected in ((store.runtime_dir, fsio.DIR_MODE), (store.memories_path, fsio.FILE_MODE),
                           (store.projection_path("user"), fsio.FILE_MODE),
                           (store.projection_path("memory"), fsio.FILE_MODE)):
        try:
            mode = path.stat().st_mode & 0o777
        except OSError:
            continue
        if mode & ~expected:
            findings.append(Finding("warning", str(path), f"mode {mode:04o} is wider than {expected:04o}",
                                    f"chmod {expected:o} {path}"))
    from .saved_edits import saved_edits_finding

    saved = saved_edits_finding(store.edits_dir, state.entries)
    if saved is not None:
        findings.append(saved)
    if store.quarantine_dir.is_dir():
        count = sum(1 for _ in store.quarantine_dir.iterdir())
        if count:
            findings.append(Finding("ok", str(store.quarantine_dir),
                                    f"{count} damaged file{'' if count == 1 else 's'} moved aside by recover"))
    return findings
