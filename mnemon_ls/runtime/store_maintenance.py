"""Capacity maintenance of the Runtime store (:mod:`.store`): the maintenance plan a full target gets
(:class:`MaintenancePlan`, reference 4.1; byte counts are UTF-8 bytes of the joined target), compaction
(``compact_target``, ``compact_and_mutate``, ``compact_plan``: evict/merge entries, then commit) and the local
archive of evicted entries (``archived/memories.jsonl`` + ``archived/MEMORY.md``, appended durably before
the commit).

:class:`RuntimeMaintenance` is a mixin of :class:`~mnemon_ls.runtime.store.RuntimeStore`: its methods use the
store's lock, reads and ``_commit`` and are only meant to be called on a ``RuntimeStore``.
:class:`MaintenancePlan` is re-exported by :mod:`.store`.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Sequence

from .. import fsio
from ..errors import InvalidInput, RevisionConflict, RuntimeCapacityError
from . import compaction, ops
from .model import PROJECTION_FILES, Entry, Target, match_key, revision_of, used_bytes, validate_target
from .state import MaintenancePlan, Receipt, StoreState


class RuntimeMaintenance:
    """Maintenance plans, compaction and the local archive of :class:`~mnemon_ls.runtime.store.RuntimeStore`
    (mixin; see module doc)."""

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
            plan = self._plan_of(state, base, request or ops.MutationRequest("compact", target))  # type: ignore[arg-type]
            raw, dropped = entries, ()
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

        receipt = self._compact(expected_revision, target, (), None, request, derive=derive)
        maintenance = compaction.receipt_data(chosen["plan"], chosen["entries"], receipt.revision, receipt.used,
                                              receipt.limit, str(self.archive_dir / "memories.jsonl"),
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


def _append_durably(path: Path, data: bytes) -> None:
    fsio.append_file_durably(path, data)

