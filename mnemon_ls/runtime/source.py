"""The Runtime Source of one workspace: one store, or two under ``runtimeUserScope=global``.

With the split, ``target=user`` reads and writes go to the global root's store and ``target=memory``
to the selected root's store; the effective view combines the global store's user entries with the
selected store's memory entries, in that order (reference section 3.9). Each file keeps its own lock
and stays complete: entries of the other target in either file are ignored here, never deleted.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any, Callable, Sequence

from ..roots import RootResolution
from ..settings import Settings
from . import ops
from .model import TARGETS, Entry, Target, revision_of, used_bytes
from .snapshot import WakeSnapshot, ages_valid_until, render_wake
from .store import (Clock, MaintenancePlan, Receipt, RepairReport, RuntimeStore, StoreState, _utc_now,
                    invalid_entry_line, over_limit_line)

if TYPE_CHECKING:
    from ..redact import Scrubber


@dataclass(frozen=True, slots=True)
class EffectiveState:
    """The entries a workspace sees: ``user`` and ``memory`` tuples (valid entries), the effective
    ``revision`` (sha256 of the combined list), ``used`` bytes per target (whole store), ``problems``
    (damaged files), ``entry_problems`` (one line per stored entry that breaks a rule of a new entry: kept
    in the file, left out of the wake) and ``capacity_problems`` (one line per target over its limit,
    naming the target, the used bytes and the limit)."""

    user: tuple[Entry, ...]
    memory: tuple[Entry, ...]
    revision: str
    used: dict[Target, int]
    problems: tuple[str, ...]
    entry_problems: tuple[str, ...] = ()
    capacity_problems: tuple[str, ...] = ()

    def of(self, target: Target) -> tuple[Entry, ...]:
        """Entries of ``target``."""
        return self.user if target == "user" else self.memory

    @property
    def all_problems(self) -> tuple[str, ...]:
        """Every problem line, damaged files first (what ``mnemon/status`` reports)."""
        return (*self.problems, *self.entry_problems, *self.capacity_problems)


class RuntimeSource:
    """Runtime memory as one workspace sees it (see module doc).

    ``resolution`` from :func:`mnemon_ls.roots.resolve_root`; ``settings`` supplies the limits, the
    detached-HEAD policy and the wake budget; ``clock`` returns the current UTC time.
    """

    def __init__(self, resolution: RootResolution, settings: Settings, *, clock: Clock = _utc_now) -> None:
        self.resolution = resolution
        self.settings = settings
        self.clock = clock
        #: ``(user state, memory state, limits, effective state)`` of the last :meth:`_effective` answer.
        self._last_effective: tuple[StoreState, StoreState, Any, EffectiveState] | None = None
        limits = settings.runtime_memory
        hand_edits = settings.hand_edits
        split = resolution.split_user
        self.memory_store = RuntimeStore(resolution.root, limits, clock=clock, hand_edits=hand_edits,
                                         secrets=settings.secrets, projects=("memory",) if split else TARGETS)
        self.user_store = (
            RuntimeStore(resolution.user_root, limits, clock=clock, hand_edits=hand_edits,
                         secrets=settings.secrets, projects=("user",))
            if split else self.memory_store
        )
        #: ``(inputs, from ms, until ms, snapshot)`` of the last wake rendered (:meth:`_render`).
        self._last_wake: tuple[tuple, int, int, WakeSnapshot] | None = None

    @property
    def stores(self) -> tuple[RuntimeStore, ...]:
        """The distinct stores (one, or two when split)."""
        return (self.memory_store,) if self.user_store is self.memory_store else (self.user_store, self.memory_store)

    def store_for(self, target: Target) -> RuntimeStore:
        """The store that owns ``target``."""
        return self.user_store if target == "user" else self.memory_store

    def read(self, repairs: Sequence[tuple[RuntimeStore, RepairReport]] = ()) -> EffectiveState:
        """Read without locking or writing (see :meth:`RuntimeStore.read`). ``repairs``: the reports of a
        :meth:`repair` that just ran; a store it read and left as it was is taken as that read saw it
        (``RepairReport.verified``) instead of read again."""
        verified = {id(store): report.verified for store, report in repairs if report.verified is not None}

        def state_of(store: RuntimeStore) -> StoreState:
            found = verified.get(id(store))
            return found if found is not None else store.read()

        user_state = state_of(self.user_store)
        memory_state = user_state if self.user_store is self.memory_store else state_of(self.memory_store)
        return self._effective(user_state, memory_state)

    def _effective(self, user_state: StoreState, memory_state: StoreState) -> EffectiveState:
        limits = self.settings.runtime_memory
        kept = self._last_effective  # the same two states (a kept read): the same answer
        if kept is not None and kept[0] is user_state and kept[1] is memory_state and kept[2] is limits:
            return kept[3]
        effective = self._effective_of(user_state, memory_state)
        self._last_effective = (user_state, memory_state, limits, effective)
        return effective

    def _effective_of(self, user_state: StoreState, memory_state: StoreState) -> EffectiveState:
        user, memory = user_state.of("user"), memory_state.of("memory")
        revision = user_state.revision if user_state is memory_state else revision_of((*user, *memory))
        problems = tuple(dict.fromkeys(p for p in (user_state.problem, memory_state.problem) if p))
        used: dict[Target, int] = {"user": used_bytes(user, "user"), "memory": used_bytes(memory, "memory")}
        entry_problems = tuple(
            invalid_entry_line(store, index, entry)
            for store, state, target in ((self.user_store, user_state, "user"),
                                         (self.memory_store, memory_state, "memory"))
            for index, entry in state.invalid(target))
        limits = self.settings.runtime_memory
        capacity_problems = tuple(over_limit_line(target, used[target], limits.limit_for(target))
                                  for target in ("user", "memory") if used[target] > limits.limit_for(target))
        return EffectiveState(user, memory, revision, used, problems, entry_problems, capacity_problems)

    def mutate(self, request: ops.MutationRequest) -> Receipt:
        """Apply a validated mutation to the owning store (see :meth:`RuntimeStore.mutate`), after the
        redaction pass (:meth:`scrub`); the receipt's ``redacted`` counts what was replaced."""
        request, scrub = self.scrub(request)
        return _with_redactions(self.store_for(request.target).mutate(request), scrub)

    def plan_maintenance(self, request: ops.MutationRequest) -> MaintenancePlan:
        """See :meth:`~mnemon_ls.runtime.capacity.CapacityMaintenance.plan`; the revision is the owning store's."""
        return self.store_for(request.target).maintenance.plan(self.scrub(request)[0])

    def compact_target(self, expected_revision: str, target: Target, candidates: Sequence[Any],
                       max_bytes: int | None = None, *, archive_locally: bool = True,
                       before_commit: Callable[[Sequence[Entry], str], None] | None = None,
                       verbatim: bool = False) -> Receipt:
        """See :meth:`~mnemon_ls.runtime.capacity.CapacityMaintenance.compact_target` (fenced by the owning store's
        revision; ``archive_locally`` and ``before_commit`` too). ``verbatim``: see :meth:`compact_and_mutate`."""
        from ..redact import Scrubber  # imported on use: a wake never redacts

        scrub = Scrubber(self.settings.secrets)
        if not verbatim:
            candidates = _scrub_candidates(scrub, candidates)
        return _with_redactions(self.store_for(target).maintenance.compact_target(
            expected_revision, target, candidates, max_bytes, archive_locally=archive_locally,
            before_commit=before_commit), scrub)

    def compact_and_mutate(self, expected_revision: str, request: ops.MutationRequest,
                           candidates: Sequence[Any], max_bytes: int | None = None, *,
                           archive_locally: bool = True,
                           before_commit: Callable[[Sequence[Entry], str], None] | None = None,
                           verbatim: bool = False) -> Receipt:
        """See :meth:`~mnemon_ls.runtime.capacity.CapacityMaintenance.compact_and_mutate` (``archive_locally``,
        ``before_commit`` too). The candidates pass the redaction pass as new text does, unless ``verbatim``: they
        are then the store's own entries at ``expected_revision`` (capacity maintenance, whose revision fence makes
        sure of it), kept or archived as stored. Scrubbed, an entry another program stored with a credential would
        become a new, redacted entry and the stored one would leave hot memory with no destination (the archive's
        evidence check then refused every add until ``redact --apply``); a credential already stored is
        ``redact --apply``'s to replace, never a side effect of maintenance."""
        request, scrub = self.scrub(request)
        if not verbatim:
            candidates = _scrub_candidates(scrub, candidates)
        return _with_redactions(self.store_for(request.target).maintenance.compact_and_mutate(
            expected_revision, request, candidates, max_bytes, archive_locally=archive_locally,
            before_commit=before_commit), scrub)

    def compact(self, expected_revision: Any, target: Any, entries: Any, pending: Any = None, *,
                form: Any = None) -> Receipt:
        """The compaction proposed for a full target (``runtime.compact``: ``mnemon/runtime/compact``,
        ``mnemon_runtime_compact``, ``mnemon-ls runtime compact``): ``entries`` ``[{content, importance,
        sourceIndexes, branches?}]`` over the plan in ``data.maintenance`` of the ``runtime-capacity`` error,
        or (``entries`` ``None``) ``form``, a person's merges and drops
        (:class:`~mnemon_ls.runtime.compaction.PersonForm`); ``pending`` that error's pending mutation
        (``{action, content?, oldText?, importance?, branches?}`` or ``None``), ``expected_revision`` the
        plan's revision (the owning store's; :meth:`compaction_revision`). Contents pass the redaction pass
        first (field ``entries[i].content`` / ``merge[i].content``). See
        :meth:`~mnemon_ls.runtime.capacity.CapacityMaintenance.compact_plan` for the rules and the receipt; raises
        :class:`~mnemon_ls.errors.InvalidInput` (``data.problems``) or ``revision-conflict``."""
        from .compaction import parse_pending
        from .model import validate_target

        target = validate_target(target)
        request = parse_pending(pending, target)
        from ..redact import Scrubber  # imported on use: a wake never redacts

        scrub = Scrubber(self.settings.secrets)
        if request is not None:
            request, scrub = self.scrub(request)
        if isinstance(entries, list):
            entries = [{**item, "content": scrub.text(f"entries[{index}].content", item["content"])}
                       if isinstance(item, dict) and isinstance(item.get("content"), str) else item
                       for index, item in enumerate(entries)]
        if form is not None:
            form = form.with_contents([scrub.text(f"merge[{i}].content", m.content) for i, m in enumerate(form.merges)])
        return _with_redactions(self.store_for(target).maintenance.compact_plan(
            expected_revision, target, entries, request, form=form), scrub)

    def compaction_revision(self, target: Target, given: str | None) -> str:
        """The revision a person's compaction of ``target`` is fenced by: the owning store's current one when
        ``given`` is ``None``; the owning store's revision of the same read when ``given`` is the effective
        revision of :meth:`read` (what ``mnemon-ls runtime list --json`` and ``mnemon/runtime/snapshot``
        print; it differs from the store's under ``runtimeUserScope=global``); else ``given`` (a stale one
        is ``revision-conflict`` at the commit). ``given`` may be the first 12 or more hex digits of either (as
        ``runtime add`` prints it): it stands for the revision it begins. Reads only."""
        store = self.store_for(target)
        if self.user_store is self.memory_store:
            current = store.read().revision
            return current if given is None or current.startswith(given) else given
        user_state, memory_state = self.user_store.read(), self.memory_store.read()
        own = user_state if target == "user" else memory_state
        if given is None or self._effective(user_state, memory_state).revision.startswith(given):
            return own.revision
        return own.revision if own.revision.startswith(given) else given

    def scrub(self, request: ops.MutationRequest) -> tuple[ops.MutationRequest, Scrubber]:
        """The redaction pass of ``settings.secrets`` over a validated request (:mod:`mnemon_ls.redact`):
        ``content`` redacted (or refused under ``reject``: :class:`InvalidInput` naming ``content`` with
        the kind and the character position in the whitespace-normalized content), ``oldText`` redacted
        the same way so it selects the entry its original text was redacted in, ``branches[i]`` that hold
        a credential refused. A changed request is validated again (the placeholder counts in the size)."""
        from ..redact import Scrubber  # imported on use: a wake never redacts

        scrub = Scrubber(self.settings.secrets)
        content = scrub.text("content", request.content)
        old_text = scrub.selector("oldText", request.old_text)
        scrub.identifiers("branches", request.branches)
        if content != request.content or old_text != request.old_text:
            request = ops.validate_request(request.action, request.target, content, old_text, request.importance,
                                           request.branches, request.key)
        return request, scrub

    def repair(self, *, rebuild_missing: bool = True) -> list[tuple[RuntimeStore, RepairReport]]:
        """Import hand edits of (``handEdits=import``) and repair the projections of every store, removing
        temp files killed writers left (:meth:`~mnemon_ls.runtime.repair.ProjectionRepair.repair`); returns ``(store,
        report)`` pairs."""
        return [(store, store.projections.repair(rebuild_missing=rebuild_missing)) for store in self.stores]

    def wake(
        self,
        branch: str | None,
        branch_reason: str | None = None,
        *,
        budget_chars: int | None = None,
        repair: bool = True,
        notices: Sequence[str] = (),
        archived: tuple[int, int] = (0, 0),
        guidance: str | None = None,
        covers: Sequence[str] = (),
        repaired: Sequence[tuple[RuntimeStore, RepairReport]] = (),
        annotate: Callable[[Sequence[Any], Sequence[Any], int], tuple[dict[tuple[str, str], str], Sequence[str]]]
        | None = None,
    ) -> tuple[WakeSnapshot, list[tuple[RuntimeStore, RepairReport]]]:
        """Repair projections (unless ``repair=False``), then render the wake snapshot for ``branch``.

        ``branch`` ``None`` means no branch is known (``branch_reason`` says why). ``budget_chars``
        defaults to ``wakeBudgetChars``. ``notices`` are shown after the stores' own (e.g. a repair
        the caller could not write). ``archived`` ``(into spaces, into the local archive)`` counts what
        capacity maintenance moved out of MEMORY.md (the Host reads it from the lineage); ``guidance`` one
        line for the header and ``covers`` the blocks after the files (:func:`render_wake`). ``repaired``: with
        ``repair=False``, the reports of the :meth:`repair` the caller just ran (what it read is rendered, see
        :meth:`read`). ``annotate(user_entries, memory_entries, now_ms)`` (the entries visible on the branch, the
        capture time in epoch ms) returns the marks and header lines of :func:`render_wake` (the Host's citations
        and review marks; this Source knows neither). Returns the snapshot and the repair reports. The same inputs
        at a time that shows every entry's age alike render the same snapshot (kept: :meth:`_render`).
        """
        extra_notices = list(notices)
        repairs = self.repair() if repair else []
        state = self.read(repairs if repair else repaired)
        now = self.clock().astimezone(timezone.utc)
        now_ms = (now - datetime(1970, 1, 1, tzinfo=timezone.utc)) // timedelta(milliseconds=1)
        notices = [f"{p}; showing the recoverable entries; run `mnemon-ls runtime recover`" for p in state.problems]
        notices += state.entry_problems[:3]
        if len(state.entry_problems) > 3:
            notices.append(f"{len(state.entry_problems) - 3} more stored entries are left out for breaking a rule; "
                           "run `mnemon-ls doctor`")
        notices.extend(extra_notices)
        limits = self.settings.runtime_memory
        marks: dict[tuple[str, str], str] = {}
        mark_lines: Sequence[str] = ()
        if annotate is not None:
            show_all = branch is None and self.settings.detached_head_policy == "show"
            marks, mark_lines = annotate(state.user, [e for e in state.memory if show_all or e.visible_on(branch)],
                                         now_ms)
        user_entries, memory_entries = state.user, state.memory
        if self.redacts_on_read():
            user_entries, memory_entries, marks = self._redacted(state, marks, notices)
        snapshot = self._render(now_ms, dict(
            user_entries=user_entries,
            memory_entries=memory_entries,
            revision=state.revision,
            used=state.used,
            limits={"user": limits.user_limit_bytes, "memory": limits.memory_limit_bytes},
            branch=branch,
            branch_reason=branch_reason,
            budget_chars=budget_chars or self.settings.wake_budget_chars,
            detached_head_policy=self.settings.detached_head_policy,
            notices=tuple(notices),
            archived=tuple(archived),
            guidance=guidance,
            covers=tuple(covers),
            marks=marks,
            mark_lines=tuple(mark_lines),
        ))
        return snapshot, repairs

    def redacts_on_read(self) -> bool:
        """Whether what the last :meth:`read` saw is shown redacted (:mod:`.foreign`): ``secrets`` is ``redact`` or
        ``reject`` and a store's ``memories.json`` may hold a value another program wrote
        (:meth:`~.store.RuntimeStore.written_elsewhere`). Cheap: no parse, nothing imported."""
        return self.settings.secrets != "allow" and any(store.written_elsewhere() for store in self.stores)

    def redact_listed(self, entries: list[dict[str, Any]]) -> list[str]:
        """Redact the ``content`` of listed entries (``Entry.to_json()`` shapes, USER.md ones first) in place when
        :meth:`redacts_on_read`; returns one notice per entry changed (:func:`.foreign.redact_listed`)."""
        if not self.redacts_on_read():
            return []
        from .foreign import redact_listed

        return redact_listed(entries, {t: self.store_for(t).memories_path for t in TARGETS})

    def _redacted(self, state: EffectiveState, marks: dict[tuple[str, str], str], notices: list[str]
                  ) -> tuple[tuple[Entry, ...], tuple[Entry, ...], dict[tuple[str, str], str]]:
        """``(user entries, memory entries, marks)`` of ``state`` with the credentials another program wrote
        replaced by their placeholders (:mod:`.foreign`; the files are not touched), ``marks`` keyed by the
        redacted content; a notice per redacted entry is appended to ``notices``."""
        from .foreign import redacted_entries  # imported on use: only when another program wrote memories.json

        user, user_notices = redacted_entries(state.user, self.user_store.memories_path)
        memory, memory_notices = redacted_entries(state.memory, self.memory_store.memories_path)
        notices.extend((*user_notices, *memory_notices))
        if marks:
            shown = {(old.target, old.content): new.content for olds, news in ((state.user, user),
                     (state.memory, memory)) for old, new in zip(olds, news) if old is not new}
            marks = {(target, shown.get((target, content), content)): mark for (target, content), mark in marks.items()}
        return user, memory, marks

    def _render(self, now_ms: int, inputs: dict[str, Any]) -> WakeSnapshot:
        """:func:`render_wake` of ``inputs`` at ``now_ms``, or the snapshot of the last wake when its inputs were
        equal and every entry's age reads the same now (:func:`~.snapshot.ages_valid_until`): rendering is a pure
        function of both, and an agent asks for the wake every turn. Compared by value (the entries too), so a
        changed store, branch, cover or setting renders anew."""
        key = tuple((name, tuple(value.items()) if isinstance(value, dict) else value)
                    for name, value in inputs.items())
        kept = self._last_wake
        if kept is not None and kept[0] == key and kept[1] <= now_ms < kept[2]:
            return kept[3]
        snapshot = render_wake(now_ms=now_ms, **inputs)
        until = ages_valid_until((*inputs["user_entries"], *inputs["memory_entries"]), now_ms)
        self._last_wake = (key, now_ms, until, snapshot)
        return snapshot


def _scrub_candidates(scrub: Scrubber, candidates: Sequence[Any]) -> Sequence[Any]:
    """Compaction candidates with their contents through ``scrub`` (fields ``candidates[i].content``)."""
    if isinstance(candidates, (str, bytes)) or not isinstance(candidates, Sequence):
        return candidates  # validate_candidates names the problem
    out: list[Any] = []
    for index, item in enumerate(candidates):
        where = f"candidates[{index}].content"
        if isinstance(item, ops.Candidate):
            item = replace(item, content=scrub.text(where, item.content))
        elif isinstance(item, dict) and "content" in item:
            item = {**item, "content": scrub.text(where, item["content"])}
        out.append(item)
    return out


def _with_redactions(receipt: Receipt, scrub: Scrubber) -> Receipt:
    """``receipt`` with ``detail.redacted`` (:meth:`Scrubber.summary`) when anything was redacted."""
    summary = scrub.summary()
    if summary is None:
        return receipt
    return replace(receipt, detail={**receipt.detail, "redacted": summary})
