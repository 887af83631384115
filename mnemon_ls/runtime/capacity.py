"""Capacity maintenance of one Runtime store (:mod:`.store`): the maintenance plan a full target gets
(:class:`MaintenancePlan`, reference 4.1; byte counts are UTF-8 bytes of the joined target), compaction
(:meth:`~CapacityMaintenance.compact_target`, :meth:`~CapacityMaintenance.compact_and_mutate`,
:meth:`~CapacityMaintenance.compact_plan`: evict/merge entries, then commit) and the local archive of evicted
entries (``archived/memories.jsonl`` + ``archived/MEMORY.md``, appended durably before the commit).

:class:`CapacityMaintenance` is a part a :class:`~mnemon_ls.runtime.store.RuntimeStore` owns
(``store.maintenance``); it reaches the store only through :class:`MaintainedStore`, the store's write path
(lock, validated read, commit). :func:`plan_of` and :func:`with_plan` also serve the store's own ``mutate``,
which attaches the plan to a capacity error.
"""

from __future__ import annotations

import json
from contextlib import AbstractContextManager
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Collection, Protocol, Sequence

from .. import fsio
from ..linefile import after_torn_line
from ..errors import InvalidInput, RevisionConflict, RuntimeCapacityError
from ..settings import RuntimeMemorySettings
from . import compaction, ops
from .model import (PROJECTION_FILES, Entry, Target, match_key, revision_of, used_bytes, utf8_len,
                    validate_target)
from .state import MaintenancePlan, Receipt, StoreState


class MaintainedStore(Protocol):
    """What capacity maintenance uses of its :class:`~mnemon_ls.runtime.store.RuntimeStore`: the directories,
    the byte limits, and the write path (see the store's methods of these names)."""

    runtime_dir: Path
    archive_dir: Path
    limits: RuntimeMemorySettings

    def locked(self) -> AbstractContextManager[Any]: ...

    def read_valid(self) -> StoreState: ...

    def now(self) -> str: ...

    def commit(self, before: Sequence[Entry] | None, after: Sequence[Entry], *,
               already_saved: Collection[str] = ()) -> tuple[dict[str, str], str]: ...

    def receipt(self, message: str, target: Target, entries: Sequence[Entry], revision: str, changed: bool,
                detail: dict[str, Any], preserved: dict[str, str] | None = None) -> Receipt: ...


def with_plan(exc: RuntimeCapacityError, plan: MaintenancePlan, request: ops.MutationRequest, *,
              redact: bool = False) -> RuntimeCapacityError:
    """``exc`` with ``data.maintenance`` (:func:`~mnemon_ls.runtime.compaction.plan_data`) for a
    ``target=user`` overflow with entries to compact (USER.md is compacted by the client's assistant,
    never archived off the machine); other overflows are returned unchanged, and so is one whose compaction
    budget is 0 bytes (:func:`~mnemon_ls.runtime.compaction.budget_of`: the limit is too small for this change
    and any entry beside it, so no merge makes room), with a message saying so and what would. ``redact``: the
    plan shows stored text redacted (:func:`~mnemon_ls.runtime.compaction.plan_data`)."""
    if plan.target != "user" or not plan.entries:
        return exc
    if compaction.budget_of(plan) == 0:
        return RuntimeCapacityError(_no_room(exc.message, plan), **exc.data)
    data = compaction.plan_data(plan, request, redact=redact)
    count = len(plan.entries)
    message = (f"{exc.message}; or compact USER.md: data.maintenance holds the plan ({count} numbered "
               f"entr{'y' if count == 1 else 'ies'}, budget {data['budgetBytes']} bytes) for {compaction.METHOD} "
               "(CLI: `mnemon-ls runtime compact`; `--json` prints the plan)")
    return RuntimeCapacityError(message, **exc.data, maintenance=data)


def _no_room(message: str, plan: MaintenancePlan) -> str:
    """The capacity error's ``message`` for a ``plan`` whose compaction budget is 0 bytes: the change's entry
    leaves no byte of the 70% of the limit a compaction keeps (reference 4.1) to any other entry, so the message
    says that merging cannot make room and what would (remove entries, shorten this one, or the limit that keeps
    them all). ``message`` unchanged when the entry alone passes the limit (it says so already:
    :func:`~mnemon_ls.runtime.ops.check_capacity`)."""
    alone = utf8_len(plan.pending.content) if plan.pending is not None else 0
    if not alone or alone > plan.limit:
        return message
    return (f"{plan.target} is over capacity: {plan.projected} of {plan.limit} UTF-8 bytes after this change (now "
            f"{plan.used}); merging entries cannot make room: a compaction keeps {PROJECTION_FILES[plan.target]} "
            f"within 70% of its limit ({plan.limit * 7 // 10} UTF-8 bytes), and this entry alone ({alone} bytes) "
            f"leaves none of it to another entry. Remove entries or shorten this one, or raise "
            f"runtimeMemory.{plan.target}LimitBytes to at least {plan.projected} to keep them all")


def plan_of(state: StoreState, outcome: ops.MutationOutcome, request: ops.MutationRequest,
            limits: RuntimeMemorySettings) -> MaintenancePlan:
    """The maintenance plan of ``request`` applied to ``state`` (``outcome``), reference 4.1; ``limits`` gives
    the target's byte limit."""
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
        limit=limits.limit_for(target),
        requires_maintenance=outcome.changed and projected > limits.limit_for(target),
    )


class CapacityMaintenance:
    """Capacity maintenance of one Runtime store: maintenance plans, compaction and the local archive.

    Owns no state but ``store`` (a :class:`MaintainedStore`) and the files under ``store.archive_dir``
    (``memories.jsonl``: one JSON entry a line with ``archived_at`` and ``revision``; ``MEMORY.md``/``USER.md``:
    the archived contents, separated by ``§`` lines). Every method raises what the store's write path raises
    (:class:`~mnemon_ls.errors.UnreadableStore`, :class:`~mnemon_ls.errors.StoreBusy`) and changes no byte on
    disk when it raises.
    """

    def __init__(self, store: MaintainedStore) -> None:
        self.store = store

    def plan(self, request: ops.MutationRequest) -> MaintenancePlan:
        """Read the maintenance plan of ``request`` under the lock (no write). Same errors as the store's
        ``mutate`` except the capacity error."""
        store = self.store
        if store.runtime_dir.exists():
            with store.locked():
                state = store.read_valid()
        else:
            state = store.read_valid()  # nothing to lock, and a read must create nothing
        return plan_of(state, ops.apply_mutation(state.entries, request, store.now()), request, store.limits)

    def compact_target(
        self, expected_revision: str, target: Target, candidates: Sequence[Any], max_bytes: int | None = None, *,
        archive_locally: bool = True, before_commit: Callable[[Sequence[Entry], str], None] | None = None,
    ) -> Receipt:
        """Replace ``target``'s entries by the candidates that fit ``max_bytes`` (reference 4.3).

        The revision must still be ``expected_revision`` (else :class:`RevisionConflict`). Every
        committed entry of ``target`` that does not survive, and every dropped candidate, is appended to
        ``runtime/archived/`` before the commit, so nothing leaves the machine's disk unrecorded, unless
        ``archive_locally`` is ``False`` (the caller proved they are stored elsewhere); ``before_commit``
        as for :meth:`compact_and_mutate`.
        """
        return self._compact(expected_revision, target, candidates, max_bytes, None,
                             archive_locally=archive_locally, before_commit=before_commit)

    def compact_and_mutate(
        self,
        expected_revision: str,
        request: ops.MutationRequest,
        candidates: Sequence[Any],
        max_bytes: int | None = None,
        *,
        archive_locally: bool = True,
        before_commit: Callable[[Sequence[Entry], str], None] | None = None,
        describe: Callable[[int], str] | None = None,
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
                     request: ops.MutationRequest | None = None, *,
                     form: compaction.PersonForm | None = None) -> Receipt:
        """Commit an assistant's compaction of ``target`` and the pending ``request`` in one commit.

        ``entries`` is ``[{content, importance, sourceIndexes, branches?}]`` over the numbered plan of
        ``request`` (``data.maintenance`` of its ``runtime-capacity`` error); or, with ``entries`` ``None``,
        ``form`` is a person's merges and drops over that plan (:func:`~mnemon_ls.runtime.compaction.person_entries`
        makes the full list under the lock; an error names ``merge[i]``/``drop[k]``). Under the lock the revision
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
            pending = request or ops.MutationRequest("compact", target)  # type: ignore[arg-type]
            plan = plan_of(state, base, pending, self.store.limits)
            raw, dropped = compaction.restore_redacted(entries, plan), ()
            if form is not None:
                raw, dropped, names = compaction.person_entries(form, plan)
                try:
                    candidates, budget = compaction.derive_candidates(raw, plan, dropped, person=True)
                except InvalidInput as exc:
                    raise compaction.renamed(exc, names) from None
            else:
                candidates, budget = compaction.derive_candidates(raw, plan)
            chosen["plan"], chosen["dropped"] = plan, dropped
            chosen["entries"] = [{**c.to_dict(), "sourceIndexes": list(e["sourceIndexes"])}
                                 for c, e in zip(candidates, raw)]
            return candidates, budget

        def describe(remaining: int) -> str:
            return compaction.plan_message(chosen["plan"], chosen["entries"], chosen["dropped"], remaining)

        receipt = self._compact(expected_revision, target, (), None, request, derive=derive, describe=describe)
        maintenance = compaction.receipt_data(chosen["plan"], chosen["entries"], receipt.revision, receipt.used,
                                              receipt.limit, str(self.store.archive_dir / "memories.jsonl"),
                                              chosen["dropped"])
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
        describe: Callable[[int], str] | None = None,
    ) -> Receipt:
        store = self.store
        target = validate_target(target)
        limit = store.limits.limit_for(target)
        budget = ops.validate_budget(max_bytes, limit)
        candidates = ops.validate_candidates(raw_candidates, target) if derive is None else []
        if not store.runtime_dir.exists() and expected_revision != revision_of(()):
            raise RevisionConflict(
                f"runtime memory changed since revision {expected_revision[:12]}; re-read and retry",
                expected=expected_revision, actual=revision_of(()))
        plan = _CompactionPlan(store, target, limit, expected_revision, request, candidates, budget, derive)
        # A refusal (a stale revision, an entry that does not exist, a compaction that does not fit) is found on a
        # reading without the lock: it writes nothing, so it creates (and removes) no lock marker either. Under the
        # lock the store is read and the compaction planned again: a writer may have committed in between.
        plan.make(store.read_valid())
        with store.locked():
            state = store.read_valid()
            outcome, candidates, kept_indexes, kept, new_entries = plan.make(state)
            evicted, dropped, extra = plan.leaving(state, outcome, candidates, kept_indexes, new_entries)
            if archive_locally:
                self._archive_locally([*evicted, *extra], state.revision)
            if before_commit is not None:
                before_commit([*evicted, *extra], state.revision)
            preserved, revision = store.commit(state.entries, new_entries)
        detail: dict[str, Any] = dict(outcome.detail) if outcome else {}
        detail["kept"] = [e.content for e in kept]
        detail["dropped"] = [c.content for c in dropped]
        detail["archived"] = len(evicted) + len(extra)
        told = (describe(len(kept)) if describe is not None
                else f"Compacted {target}: kept {len(kept)} of {len(candidates)}.")
        message = (outcome.message + " " if outcome else "") + told
        return store.receipt(message, target, new_entries, revision, True, detail, preserved)

    def _archive_locally(self, entries: Sequence[Entry], revision: str) -> None:
        """Append evicted entries to ``archived/memories.jsonl`` and ``archived/MEMORY.md`` durably."""
        if not entries:
            return
        fsio.ensure_dir(self.store.archive_dir)
        stamp = self.store.now()
        lines = "".join(
            json.dumps({**e.to_json(), "archived_at": stamp, "revision": revision}, ensure_ascii=False) + "\n"
            for e in entries
        ).encode("utf-8")
        jsonl = self.store.archive_dir / "memories.jsonl"
        _append_durably(jsonl, after_torn_line(jsonl, lines))  # a line a killed append tore is closed
        by_target: dict[str, list[str]] = {}
        for e in entries:
            by_target.setdefault(PROJECTION_FILES[e.target], []).append(e.content)
        for name, contents in by_target.items():
            path = self.store.archive_dir / name
            prefix = b"\xc2\xa7\n" if path.exists() and path.stat().st_size else b""
            _append_durably(path, prefix + "\n\u00a7\n".join(contents).encode("utf-8") + b"\n")


class _CompactionPlan:
    """What one compaction of ``target`` makes of a reading of the store (pure: nothing is written), so that
    :meth:`Capacity._compact` can find a refusal before it takes the lock and plan again under it."""

    def __init__(self, store: MaintainedStore, target: Target, limit: int, expected_revision: str,
                 request: ops.MutationRequest | None, candidates: list[ops.Candidate], budget: int,
                 derive: Callable[[StoreState, ops.MutationOutcome | None], tuple[list[ops.Candidate], int]] | None
                 ) -> None:
        self.store, self.target, self.limit, self.expected = store, target, limit, expected_revision
        self.request, self.candidates, self.budget, self.derive = request, candidates, budget, derive
        self.now = ""

    def make(self, state: StoreState) -> tuple[ops.MutationOutcome | None, list[ops.Candidate], list[int],
                                               list[Entry], tuple[Entry, ...]]:
        """``(outcome, candidates, kept_indexes, kept, new_entries)`` of the compaction over ``state``: the
        pending request's outcome (``None``: none), the candidates, the indexes of those kept, the kept entries
        and the store's entries after the commit. Raises :class:`RevisionConflict` (``state`` is not at the
        expected revision), :class:`InvalidInput` (a candidate, a person's form) and
        :class:`RuntimeCapacityError` (the result does not fit)."""
        if state.revision != self.expected:
            raise RevisionConflict(
                f"runtime memory changed since revision {self.expected[:12]}; re-read and retry",
                expected=self.expected,
                actual=state.revision,
            )
        request, candidates, budget = self.request, self.candidates, self.budget
        self.now = now = self.store.now()
        outcome = ops.apply_mutation(state.entries, request, now) if request else None
        if self.derive is not None:
            candidates, budget = self.derive(state, outcome)
        elif outcome is not None:
            for index, candidate in enumerate(candidates):
                key = match_key(candidate.content)
                if outcome.pending is not None and key == match_key(outcome.pending.content):
                    raise InvalidInput(f"candidates[{index}].content", "duplicates the pending mutation")
                if outcome.excluded is not None and key == match_key(outcome.excluded.content):
                    raise InvalidInput(f"candidates[{index}].content",
                                       f"reintroduces the entry being {request.action}d")
        kept_indexes = ops.pack(candidates, budget)
        kept = ops.materialize([candidates[i] for i in kept_indexes], state.entries, self.target, now)
        tail = [outcome.pending] if outcome is not None and outcome.pending is not None else []
        others = [e for e in state.entries if e.target != self.target or e.problem is not None]
        new_entries = (*others, *kept, *tail)
        ops.check_capacity(state.entries, new_entries, self.target, self.limit)
        return outcome, candidates, kept_indexes, kept, new_entries

    def leaving(self, state: StoreState, outcome: ops.MutationOutcome | None, candidates: list[ops.Candidate],
                kept_indexes: list[int], new_entries: Sequence[Entry]) -> tuple[list[Entry], list[ops.Candidate],
                                                                                list[Entry]]:
        """``(evicted, dropped, extra)`` of the :meth:`make` result: the entries of ``state`` that leave hot
        memory, the candidates not kept, and those of them not already evicted as entries (to archive too)."""
        survivors = {match_key(e.content) for e in new_entries if e.target == self.target}
        if outcome is not None and outcome.excluded is not None:
            survivors.add(match_key(outcome.excluded.content))  # a removed entry is the user's choice
        evicted = [e for e in state.entries if e.target == self.target and e.problem is None
                   and match_key(e.content) not in survivors]
        dropped = [candidates[i] for i in range(len(candidates)) if i not in set(kept_indexes)]
        evicted_keys = {match_key(e.content) for e in evicted}
        extra = ops.materialize([c for c in dropped if match_key(c.content) not in evicted_keys],
                                state.entries, self.target, self.now)
        return evicted, dropped, extra


def _append_durably(path: Path, data: bytes) -> None:
    fsio.append_file_durably(path, data)

