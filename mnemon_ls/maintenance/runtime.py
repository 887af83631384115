"""MEMORY.md overflow archival (issue 9 item 2; reference/dsh-mnemon.md sections 4.1-4.3).

A Runtime mutation of target ``memory`` that fails with ``runtime-capacity`` (setting
``runtimeMemory.maintenance`` = ``archive``) runs :func:`archive_and_mutate`:

1. Read the maintenance plan under the Runtime lock (:meth:`RuntimeSource.plan_maintenance`, 4.1): the
   revision, the committed entries of the target (numbered 1..N in stored order, the replaced/removed
   one left out), the pending entry. Budget = ``floor(limit x 0.7) - bytes(pending) - 4`` (the
   delimiter, when both exist) (:func:`mnemon_ls.runtime.ops.compaction_budget`).
2. Pick the entries to keep by the deterministic greedy importance packing (4.3,
   :func:`mnemon_ls.runtime.ops.pack`); every other entry is *archived*.
3. Destinations: the eligible spaces are the active, available ones whose provider writes exactly
   (:func:`eligible_spaces`). One takes all; with several each archived entry is routed by BM25 of its
   content against each space's name and description (the spaces' tokenizer, :mod:`mnemon_ls.text`),
   ties to the space with id ``default``, then to the first (:func:`route_entries`), unless the caller
   passed ``routes`` (:func:`validate_routes`). With none, the local archive ``runtime/archived/``
   (written by the Runtime store under its lock before the commit).
4. Space writes: the revision is re-read first (changed: abort, nothing written); then per destination
   one batch (:meth:`SpacesService.remember_many`: one transaction in an embedded space, never activating
   an inactive one): content verbatim, category ``context``, source ``agent``, importance critical 5 /
   normal 3 / low 1, tags ``branch:<name>`` per branch. The space
   is re-checked to be eligible right before its batch. Evidence per entry: a ``committed`` receipt with
   an item id, or for ``skipped`` an item with exactly equal content (the duplicate's id looked up, else
   a keyword recall of the first 500 characters, 20 results). Anything else aborts: hot memory
   unchanged, :class:`~mnemon_ls.errors.MaintenanceFailed` listing the safe duplicates already written.
5. Commit: :meth:`RuntimeSource.compact_and_mutate` under the plan's revision fence; under its lock,
   right before the commit, the entries actually leaving hot memory are checked against the evidence
   and their lineage lines appended durably (:mod:`.lineage`). A conflict keeps hot memory and reports
   the safe duplicates (4.2 steps 6-7); the local-archive path retries (nothing was written yet).

The receipt is the Runtime receipt with ``maintenance`` (:class:`~.receipt.MaintenanceReceipt`).
"""

from __future__ import annotations

import math
import uuid
from collections import Counter
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from ..errors import InvalidInput, MaintenanceFailed, MnemonError, RevisionConflict, RuntimeCapacityError, echo_repr
from ..runtime import ops
from ..runtime.model import Entry, match_key, now_iso, used_bytes, utf8_len
from . import lineage as lineage_mod
from .lineage import LineageEnd, LineageRecord
from .receipt import KIND_LOCAL_ARCHIVE, KIND_SPACE_ARCHIVE, ArchivedFact, Destination, MaintenanceReceipt

if TYPE_CHECKING:
    from ..runtime.source import RuntimeSource
    from ..runtime.store import MaintenancePlan, Receipt
    from ..spaces import SpacesService, SpaceView

#: Memory Spaces importance of each Runtime importance (issue 9; reference 4.2 step 4).
SPACE_IMPORTANCE = {"critical": 5, "normal": 3, "low": 1}
#: BM25 parameters of the routing score (the usual defaults).
BM25_K1 = 1.2
BM25_B = 0.75
#: Times the local-archive path re-plans after a concurrent commit (nothing was written meanwhile).
LOCAL_RETRIES = 3
#: Characters of an entry a duplicate-evidence recall searches with (reference 4.2 step 5).
EVIDENCE_QUERY_CHARS = 500
EVIDENCE_RECALL_LIMIT = 20
KEPT_NOTE = "hot memory unchanged"


@dataclass(frozen=True, slots=True)
class Route:
    """One validated route: the 1-based ``source_indexes`` of plan entries that go to ``space_id``."""

    source_indexes: tuple[int, ...]
    space_id: str


# ---------------------------------------------------------------------------------------------- routes


def parse_routes(raw: Any, field: str = "routes") -> list[Route]:
    """The shape of explicit routes ``[{"sourceIndexes": [int >= 1, ...], "spaceId": str}]`` (no plan
    needed): a non-empty list of objects, each with a non-empty list of integers (not booleans) and a
    string space id. Raises :class:`InvalidInput` naming ``routes[i].sourceIndexes[j]`` etc."""
    if isinstance(raw, (str, bytes)) or not isinstance(raw, (list, tuple)) or not raw:
        raise InvalidInput(field, "must be a non-empty list of {sourceIndexes, spaceId} objects")
    routes: list[Route] = []
    seen: dict[int, int] = {}
    for i, item in enumerate(raw):
        where = f"{field}[{i}]"
        if not isinstance(item, dict):
            raise InvalidInput(where, "must be an object {sourceIndexes, spaceId}")
        unknown = sorted(set(item) - {"sourceIndexes", "spaceId"})
        if unknown:
            raise InvalidInput(f"{where}.{unknown[0]}", "is not a route field (sourceIndexes, spaceId)")
        indexes = item.get("sourceIndexes")
        if isinstance(indexes, (str, bytes)) or not isinstance(indexes, (list, tuple)) or not indexes:
            raise InvalidInput(f"{where}.sourceIndexes", "must be a non-empty list of 1-based entry numbers")
        for j, index in enumerate(indexes):
            if isinstance(index, bool) or not isinstance(index, int) or index < 1:
                raise InvalidInput(f"{where}.sourceIndexes[{j}]", "must be an integer >= 1 (got "
                                                                  f"{echo_repr(index)})")
            if index in seen:
                raise InvalidInput(f"{where}.sourceIndexes[{j}]",
                                   f"entry {index} is already routed by {field}[{seen[index]}]; use each index once")
            seen[index] = i
        space_id = item.get("spaceId")
        if not isinstance(space_id, str) or not space_id.strip():
            raise InvalidInput(f"{where}.spaceId", "must be a space id (a non-empty string)")
        routes.append(Route(tuple(indexes), space_id.strip()))
    return routes


def validate_routes(raw: Any, entry_count: int, eligible_ids: Sequence[str], field: str = "routes") -> list[Route]:
    """Validate explicit routes against a plan of ``entry_count`` entries (reference 4.2 step 2 rules):
    the shape of :func:`parse_routes`, every index in 1..N, no index twice, all N covered, every space
    id eligible. Raises :class:`InvalidInput` naming the field and the rule; changes nothing."""
    routes = (raw if isinstance(raw, list) and all(isinstance(r, Route) for r in raw) and raw
              else parse_routes(raw, field))
    eligible = list(eligible_ids)
    seen: dict[int, int] = {}
    for i, route in enumerate(routes):
        if route.space_id not in eligible:
            rule = ("is not an eligible Memory Space (active and writable): "
                    + (", ".join(eligible) if eligible else "no space is eligible; leave routes out to use the "
                       "local archive"))
            raise InvalidInput(f"{field}[{i}].spaceId", f"{rule} (got {echo_repr(route.space_id)})")
        for j, index in enumerate(route.source_indexes):
            if index > entry_count:
                raise InvalidInput(f"{field}[{i}].sourceIndexes[{j}]",
                                   f"must be an entry number in 1..{entry_count} (got {index})")
            if index in seen:
                raise InvalidInput(f"{field}[{i}].sourceIndexes[{j}]",
                                   f"entry {index} is already routed by {field}[{seen[index]}]; use each index once")
            seen[index] = i
    missing = [n for n in range(1, entry_count + 1) if n not in seen]
    if missing:
        shown = ", ".join(map(str, missing[:10])) + (" ..." if len(missing) > 10 else "")
        raise InvalidInput(field, f"must cover every entry 1..{entry_count} exactly once (missing {shown})")
    return routes


# ---------------------------------------------------------------------------------------------- spaces


def eligible_spaces(spaces: "SpacesService | None") -> list["SpaceView"]:
    """The spaces maintenance may write to: active, available (a provider adapter exists) and with exact
    writes (``capabilities.write == "exact"``), in registry order. ``None`` -> ``[]``."""
    if spaces is None:
        return []
    out = []
    for view in spaces.list_spaces(active_only=True):
        caps = view.capabilities
        if view.available and view.record.active and (caps is None or caps.write == "exact"):
            out.append(view)
    return out


def _bm25_scores(query: str, documents: Sequence[str]) -> list[float]:
    """BM25 (k1 1.2, b 0.75) of ``query`` against each document, terms from the spaces' tokenizer."""
    from ..spaces.index import TOKENIZER

    docs = [Counter(TOKENIZER.document_terms(d)) for d in documents]
    lengths = [sum(d.values()) for d in docs]
    average = (sum(lengths) / len(docs)) if docs and sum(lengths) else 1.0
    query_terms = Counter(TOKENIZER.document_terms(query))
    scores = []
    for doc, length in zip(docs, lengths):
        score = 0.0
        for term, qtf in query_terms.items():
            tf = doc.get(term, 0)
            if not tf:
                continue
            having = sum(1 for d in docs if term in d)
            idf = math.log(1 + (len(docs) - having + 0.5) / (having + 0.5))
            score += qtf * idf * tf * (BM25_K1 + 1) / (tf + BM25_K1 * (1 - BM25_B + BM25_B * length / average))
        scores.append(score)
    return scores


def route_entries(contents: Sequence[str], spaces: Sequence["SpaceView"]) -> list[str]:
    """The space id each content goes to: the only space; else the highest BM25 score of the content
    against ``name + " " + description``; ties (including no overlap at all) go to the space with id
    ``default`` when it is among the best, else to the first of them in ``spaces`` order."""
    if not spaces:
        raise ValueError("no space to route to")
    if len(spaces) == 1:
        return [spaces[0].record.id] * len(contents)
    documents = [f"{s.record.name} {s.record.description}" for s in spaces]
    out = []
    for content in contents:
        scores = _bm25_scores(content, documents)
        best = max(scores)
        tied = [s.record.id for s, score in zip(spaces, scores) if math.isclose(score, best,
                                                                                rel_tol=1e-12, abs_tol=1e-12)]
        out.append("default" if "default" in tied else tied[0])
    return out


# ---------------------------------------------------------------------------------------------- entry points


def mutate_runtime(runtime: "RuntimeSource", spaces: "Callable[[], SpacesService | None]",
                   request: ops.MutationRequest, *, routes: Any = None, policy: str = "archive",
                   clock: Callable[[], datetime] | None = None) -> "Receipt":
    """Apply a validated Runtime mutation; on ``runtime-capacity`` for target ``memory`` with ``policy``
    ``archive`` run :func:`archive_and_mutate` (module doc) instead of failing.

    ``spaces`` builds the Memory Spaces Source on demand (only an overflow needs it; ``None``: none).
    ``routes`` (explicit routes, :func:`validate_routes`) are checked for shape before anything runs and
    against the plan when maintenance runs; a mutation that fits ignores them. Raises what
    :meth:`RuntimeSource.mutate` raises, :class:`MaintenanceFailed`, or :class:`InvalidInput` naming a
    route field; none of them changes hot memory."""
    parsed = parse_routes(routes) if routes is not None else None
    if parsed is not None and request.target != "memory":
        raise InvalidInput("routes", "apply to MEMORY.md overflow only (target memory); USER.md is compacted, "
                                     "never archived")
    try:
        return runtime.mutate(request)
    except RuntimeCapacityError:
        if request.target != "memory" or policy != "archive":
            raise
    return archive_and_mutate(runtime, spaces, request, routes=parsed, clock=clock)


def archive_and_mutate(runtime: "RuntimeSource", spaces: "Callable[[], SpacesService | None]",
                       request: ops.MutationRequest, *, routes: Sequence[Route] | None = None,
                       clock: Callable[[], datetime] | None = None) -> "Receipt":
    """Archive what packing does not keep, then commit compaction + ``request`` (module doc, steps 1-5).

    Returns the Runtime receipt with ``detail["maintenance"]`` (:meth:`MaintenanceReceipt.to_dict`).
    Raises the original :class:`RuntimeCapacityError` when nothing can be archived (no entries, or the
    pending entry alone is over the limit), :class:`MaintenanceFailed` (``data.reason``) when evidence is
    missing, a provider fails or times out, a destination stops being eligible or another writer
    committed after the space writes, and :class:`InvalidInput` for bad routes."""
    clock = clock or (lambda: datetime.now(timezone.utc))
    service: "SpacesService | None" = None
    for attempt in range(LOCAL_RETRIES + 1):
        plan = runtime.plan_maintenance(request)
        if not plan.requires_maintenance:
            return runtime.mutate(request)  # another writer freed room meanwhile: a plain commit fits
        pending_text = plan.pending.content if plan.pending is not None else None
        if not plan.entries or (plan.pending is not None and used_bytes([plan.pending], "memory") > plan.limit):
            return runtime.mutate(request)  # nothing to archive: the capacity error with its numbers
        budget = ops.compaction_budget(plan.limit, pending_text, bool(plan.entries))
        candidates = [ops.Candidate(e.content, e.importance, e.branches) for e in plan.entries]
        kept = set(ops.pack(candidates, budget))
        archived = [i for i in range(len(candidates)) if i not in kept]
        if service is None:
            service = spaces()
        eligible = eligible_spaces(service)
        run = _Run(runtime, plan, request, candidates, budget, archived, clock)
        if eligible:
            assert service is not None
            return run.into_spaces(service, eligible, routes)
        if routes is not None:
            validate_routes(list(routes), len(candidates), [])  # names the rule: no space is eligible
        try:
            return run.into_local_archive()
        except RevisionConflict:
            if attempt == LOCAL_RETRIES:
                raise
    raise AssertionError("unreachable")  # pragma: no cover


class _Run:
    """One maintenance run over one plan (module doc)."""

    def __init__(self, runtime: "RuntimeSource", plan: "MaintenancePlan", request: ops.MutationRequest,
                 candidates: list[ops.Candidate], budget: int, archived: list[int],
                 clock: Callable[[], datetime]) -> None:
        self.runtime, self.plan, self.request = runtime, plan, request
        self.candidates, self.budget, self.archived, self.clock = candidates, budget, archived, clock
        self.run_id = uuid.uuid4().hex
        self.root = runtime.memory_store.root
        self.facts: dict[str, ArchivedFact] = {}   # match key -> evidence
        self.written: list[dict[str, Any]] = []    # safe duplicates so far: {sourceIndex, destination}
        self.space_names: dict[str, str] = {}
        self.stored_digests: dict[str, str] = {}  # match key -> sha256 of the content the space stored

    # ------------------------------------------------------------------ destinations

    def into_spaces(self, service: "SpacesService", eligible: Sequence["SpaceView"],
                    routes: Sequence[Route] | None) -> "Receipt":
        plan = self.plan
        ids = [s.record.id for s in eligible]
        self.space_names = {s.record.id: s.record.name for s in eligible}
        if routes is not None:
            chosen = {n: r.space_id for r in validate_routes(list(routes), len(self.candidates), ids)
                      for n in r.source_indexes}
            destination_of = {i: chosen[i + 1] for i in self.archived}
        else:
            routed = route_entries([self.candidates[i].content for i in self.archived], eligible)
            destination_of = dict(zip(self.archived, routed))
        # Step 3: the revision is re-read before any provider write.
        fresh = self.runtime.plan_maintenance(self.request)
        if fresh.revision != plan.revision:
            raise MaintenanceFailed(
                f"runtime memory changed while archival was planned (revision {plan.revision[:12]} is now "
                f"{fresh.revision[:12]}); nothing was written, {KEPT_NOTE}; retry",
                reason="revision-conflict", kept=KEPT_NOTE, safeDuplicates=[])
        batches: dict[str, list[int]] = {}
        for index in self.archived:
            batches.setdefault(destination_of[index], []).append(index)
        for space_id, batch in batches.items():
            self._check_still_eligible(service, space_id)
            self._write_batch(service, space_id, batch)
        try:
            receipt = self.runtime.compact_and_mutate(plan.revision, self.request, self.candidates, self.budget,
                                                      archive_locally=False, before_commit=self._before_commit,
                                                      verbatim=True)
        except RevisionConflict as exc:
            raise self._failure(
                f"another writer committed runtime memory after {len(self.written)} entries were written to "
                f"Memory Spaces; {KEPT_NOTE} (the written items are harmless duplicates); retry",
                "revision-conflict", cause=exc) from exc
        return self._receipt(receipt, KIND_SPACE_ARCHIVE)

    def into_local_archive(self) -> "Receipt":
        path = str(self.runtime.memory_store.archive_dir / "memories.jsonl")
        for index in self.archived:
            candidate = self.candidates[index]
            self.facts[match_key(candidate.content)] = ArchivedFact(
                index + 1, lineage_mod.runtime_reference(self.plan.revision, index + 1), _summary(candidate.content),
                utf8_len(candidate.content), "local",
                Destination("local-archive", lineage_mod.LOCAL_ARCHIVE_REFERENCE, path=path))
        receipt = self.runtime.compact_and_mutate(self.plan.revision, self.request, self.candidates, self.budget,
                                                  archive_locally=True, before_commit=self._before_commit,
                                                  verbatim=True)
        return self._receipt(receipt, KIND_LOCAL_ARCHIVE)

    # ------------------------------------------------------------------ space writes and evidence

    def _check_still_eligible(self, service: "SpacesService", space_id: str) -> None:
        if space_id not in {s.record.id for s in eligible_spaces(service)}:
            raise self._failure(
                f"Memory Space {space_id} is no longer active and writable (it changed after archival was "
                f"planned); {KEPT_NOTE}", "space-ineligible", spaceId=space_id)

    def _write_batch(self, service: "SpacesService", space_id: str, batch: Sequence[int]) -> None:
        """One batch into ``space_id`` (:meth:`SpacesService.remember_many`), then evidence per entry."""
        items = [{"content": self.candidates[i].content, "category": "context", "source": "agent",
                  "importance": SPACE_IMPORTANCE[self.candidates[i].importance],
                  "tags": [f"branch:{b}" for b in self.candidates[i].branches or ()]} for i in batch]
        try:
            receipts = service.remember_many(space_id, items)
        except Exception as exc:
            for index, written in zip(batch, getattr(exc, "written", [])):
                if written.status == "committed" and written.id:
                    self.written.append({"sourceIndex": index + 1,
                                         "destination": lineage_mod.space_reference(space_id, written.id)})
            what = exc.message if isinstance(exc, MnemonError) else str(exc)
            raise self._failure(f"Memory Space {space_id} failed while archiving {len(batch)} entries: {what}; "
                                f"{KEPT_NOTE}", "provider-failed", cause=exc, spaceId=space_id) from exc
        for index, written in zip(batch, receipts):
            if written.status == "committed" and written.id:
                self.written.append({"sourceIndex": index + 1,
                                     "destination": lineage_mod.space_reference(space_id, written.id)})
        for index, written in zip(batch, receipts):
            self._evidence(service, space_id, index, written)

    def _evidence(self, service: "SpacesService", space_id: str, index: int, written: Any) -> None:
        candidate = self.candidates[index]
        number = index + 1
        item_id: str | None = None
        evidence = ""
        stored_content = candidate.content
        if written.status == "committed" and written.id:
            item_id, evidence = written.id, "committed"
            if written.detail.get("redacted"):
                item = service.get_item(space_id, item_id)
                stored_content = item.content if item is not None else stored_content
        elif written.status == "skipped":
            item_id = self._exact_duplicate(service, space_id, candidate.content, written.id)
            evidence = "duplicate"
        if item_id is None:
            raise self._failure(
                f"Memory Space {space_id} answered {written.status!r} for entry {number} and no item with exactly "
                f"its content was found; {KEPT_NOTE}", "no-evidence", spaceId=space_id, sourceIndex=number)
        reference = lineage_mod.space_reference(space_id, item_id)
        key = match_key(candidate.content)
        self.facts[key] = ArchivedFact(
            number, lineage_mod.runtime_reference(self.plan.revision, number), _summary(stored_content),
            utf8_len(stored_content), evidence,
            Destination("memory-space", reference, space_id=space_id, item_id=item_id))
        self.stored_digests[key] = lineage_mod.sha256_hex(stored_content)

    def _exact_duplicate(self, service: "SpacesService", space_id: str, content: str,
                         duplicate_of: str | None) -> str | None:
        """The id of an item of ``space_id`` whose content equals ``content``: the duplicate the provider
        named, else one a keyword recall finds (reference 4.2 step 5)."""
        if duplicate_of:
            try:
                item = service.get_item(space_id, duplicate_of)
            except MnemonError:
                item = None
            if item is not None and item.content == content:
                return item.id
        from ..spaces import RecallQuality

        found = service.recall(content[:EVIDENCE_QUERY_CHARS], spaces=[space_id], limit=EVIDENCE_RECALL_LIMIT,
                               mode="keyword", branch_recall="off",
                               quality=RecallQuality.from_dict({"policy": "exhaustive-v1"}))
        return next((r["id"] for r in found.results if r.get("content") == content and r.get("id")), None)

    # ------------------------------------------------------------------ commit

    def _before_commit(self, evicted: Sequence[Entry], revision: str) -> None:
        """Under the Runtime lock, right before the commit: every entry leaving hot memory has evidence;
        append their lineage lines durably."""
        now = now_iso(self.clock())
        records = []
        for entry in evicted:
            fact = self.facts.get(match_key(entry.content))
            if fact is None:
                from ..redact import quoted  # an error never quotes a credential another program stored

                raise self._failure(f"entry {quoted(entry.content)} would leave hot memory without a "
                                    f"verified destination; {KEPT_NOTE}", "no-evidence")
            digest = self.stored_digests.get(match_key(entry.content), lineage_mod.sha256_hex(entry.content))
            layer = "memory-spaces" if fact.destination.kind == "memory-space" else "runtime-archive"
            records.append(LineageRecord(
                kind=KIND_SPACE_ARCHIVE if layer == "memory-spaces" else KIND_LOCAL_ARCHIVE, run_id=self.run_id,
                archived_at=now,
                source=LineageEnd("runtime", fact.source,
                                  lineage_mod.entry_digest(entry.content, entry.importance, entry.branches)),
                destination=LineageEnd(layer, fact.destination.reference, digest),
                summary=fact.summary, bytes=fact.bytes))
        lineage_mod.append_lineage(self.root, records)

    def _receipt(self, receipt: "Receipt", kind: str) -> "Receipt":
        facts = tuple(sorted(self.facts.values(), key=lambda f: f.source_index))
        counts: dict[tuple[str, str], int] = {}
        for fact in facts:
            key = (fact.destination.kind, fact.destination.space_id or fact.destination.path or "")
            counts[key] = counts.get(key, 0) + 1
        destinations = tuple(
            {"kind": k, "spaceId": where, "spaceName": self.space_names.get(where, where), "count": n}
            if k == "memory-space" else {"kind": k, "path": where, "count": n}
            for (k, where), n in counts.items())
        freed = max(0, self.plan.projected - receipt.used)
        where = ", ".join(f"Memory Space {d['spaceName']}" if d["kind"] == "memory-space" else "the local archive "
                          "runtime/archived/MEMORY.md" for d in destinations)
        summary = (f"Archived {len(facts)} entr{'y' if len(facts) == 1 else 'ies'} of MEMORY.md into {where} "
                   f"({freed} bytes freed); kept {len(self.candidates) - len(facts)} in hot memory.")
        maintenance = MaintenanceReceipt(kind=kind, run_id=self.run_id, target="memory",
                                         plan_revision=self.plan.revision, archived=facts, bytes_freed=freed,
                                         kept=len(self.candidates) - len(facts), revision=receipt.revision,
                                         destinations=destinations, summary=summary)
        mutation_message = receipt.message.partition(" Compacted memory:")[0]  # the summary says what was kept
        return replace(receipt, message=f"{mutation_message} {summary}",
                       detail={**receipt.detail, "maintenance": maintenance.to_dict()})

    def _failure(self, message: str, reason: str, *, cause: BaseException | None = None,
                 **data: Any) -> MaintenanceFailed:
        extra = dict(data)
        if isinstance(cause, MnemonError):
            extra["cause"] = {"code": cause.code, "message": cause.message}
        elif cause is not None:
            extra["cause"] = {"code": "internal-error", "message": str(cause)}
        return MaintenanceFailed(message, reason=reason, kept=KEPT_NOTE, safeDuplicates=list(self.written), **extra)


def _summary(content: str) -> str:
    return content if len(content) <= lineage_mod.SUMMARY_CHARS else content[:lineage_mod.SUMMARY_CHARS - 1] + "\u2026"


# ---------------------------------------------------------------------------------------------- listing


def archived_listing(runtime: "RuntimeSource", space_names: "Mapping[str, str] | None" = None) -> dict[str, Any]:
    """What left MEMORY.md and where it went (``mnemon-ls runtime archived``), from the lineage of the
    root that owns MEMORY.md: ``{"path", "records": [LineageRecord.to_dict() + {"stillInHotMemory"[,
    "spaceName"]}], "damaged": [line numbers], "count"}``. ``stillInHotMemory`` is true when an entry with
    the same content is (again, or after a crash before the commit) in hot memory; ``spaceName`` (a record
    into a Memory Space) is the space's name in ``space_names`` (space id -> name), ``None`` for a space no
    longer registered. Never writes."""
    root = Path(runtime.memory_store.root)
    log = lineage_mod.read_lineage(root)
    hot = {lineage_mod.sha256_hex(e.content) for e in runtime.read().memory}
    records = []
    for record in log.records:
        data = record.to_dict()
        data["stillInHotMemory"] = record.destination.digest in hot
        target = record.space_item
        if target is not None and space_names is not None:
            data["spaceName"] = space_names.get(target[0])
        records.append(data)
    return {"path": str(lineage_mod.lineage_path(root)), "records": records, "damaged": log.damaged,
            "count": len(records)}
