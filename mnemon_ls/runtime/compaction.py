"""Assistant-proposed compaction of one Runtime target: the plan it is given and the rules it must keep.

USER.md never leaves the machine (seed 001 "USER.md Capacity Maintenance"), and mnemon-ls has no model
of its own: when a mutation of ``target=user`` does not fit, the ``runtime-capacity`` error carries the
plan in ``data.maintenance`` (:func:`plan_data`), the client's assistant rewrites the numbered entries
into fewer, shorter ones and sends them back (``mnemon/runtime/compact``, ``mnemon-ls runtime compact``).
The host then checks every rule of ``shared/reference/dsh-mnemon.md`` section 4.4 (:func:`derive_candidates`)
on the plan re-read under the lock, and commits the compaction and the pending mutation in one commit
(:meth:`mnemon_ls.runtime.capacity.CapacityMaintenance.compact_plan`). The same works for ``target=memory`` when a
person or assistant prefers rewriting to archiving.

A person compacts without rewriting every entry: the *person's form* (:class:`PersonForm`, :func:`person_form`)
names only the changes, ``merge`` (entry numbers that become one new text) and ``drop`` (entry numbers that
leave); :func:`person_entries` turns it into the full list of entries over the plan (every entry neither
merged nor dropped stays as it is), checked by the same rules. The numbers are the plan's, which are those
``mnemon-ls runtime list --target user`` prints (the target's valid entries in stored order; with a pending
replace or remove the plan leaves out the entry it changes). Dropped entries are kept word for word in the
local archive like replaced ones.

Pure: nothing here reads or writes a file. "bytes" are UTF-8 bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

from ..errors import InvalidInput, echo_repr, echo_value, type_rule
from . import ops
from .model import (IMPORTANCES, PROJECTION_FILES, Entry, Target, joined_bytes, match_key, validate_branches,
                    validate_content, validate_importance)

if TYPE_CHECKING:
    from .state import MaintenancePlan

#: ``maintenance.kind`` of an assistant-proposed compaction (reference 4.4, ``local-compaction``).
KIND = "local-compaction"
#: The request that carries a compaction back (also ``mnemon-ls runtime compact``).
METHOD = "mnemon/runtime/compact"
#: Importance order, lowest first: an entry may raise its sources' importance, never lower it.
_LEVEL = {importance: level for level, importance in enumerate(reversed(IMPORTANCES))}


def budget_of(plan: "MaintenancePlan") -> int:
    """Bytes the compacted entries may use together: ``max(0, floor(limit*0.7) - bytes(pending) - 4)``,
    the 4 only when there is a pending entry and entries to compact (reference 4.1, vN budget)."""
    pending = plan.pending.content if plan.pending is not None else None
    return ops.compaction_budget(plan.limit, pending, bool(plan.entries))


def _shown(content: str, redact: bool) -> str:
    """``content`` as a plan shows it: redacted when ``redact`` (:func:`plan_data`)."""
    if not redact:
        return content
    from ..redact import redact_text  # imported on use: only a capacity error's plan shows stored text

    return redact_text(content)[0]


def restore_redacted(raw: Any, plan: "MaintenancePlan") -> Any:
    """The compaction ``raw`` (``[{content, importance, sourceIndexes, ...}]`` as sent) with every entry whose
    only source is plan entry N and whose content is N's text as :func:`plan_data` showed it redacted given N's
    stored text back: the entry is unchanged, and a credential another program stored is neither lost nor
    replaced by its placeholder. Anything else (a malformed list included: :func:`derive_candidates` names it)
    is returned as it is."""
    if not isinstance(raw, list):
        return raw
    out = []
    for item in raw:
        sources = item.get("sourceIndexes") if isinstance(item, dict) else None
        if (isinstance(sources, list) and len(sources) == 1 and type(sources[0]) is int
                and 1 <= sources[0] <= len(plan.entries) and isinstance(item.get("content"), str)
                and "[redacted:" in item["content"]):
            stored = plan.entries[sources[0] - 1].content
            if item["content"] != stored and _shown(stored, True) == item["content"]:
                item = {**item, "content": stored}
        out.append(item)
    return out


def pending_request(plan: "MaintenancePlan", request: ops.MutationRequest | None) -> dict[str, Any] | None:
    """The pending mutation as the compact request carries it back: ``{action, content?, oldText?,
    importance?, branches?}`` (the shape of ``mnemon/runtime/mutate`` without ``target``), or ``None``."""
    if request is None:
        return None
    data: dict[str, Any] = {"action": request.action}
    if request.content is not None:
        data["content"] = request.content
    if request.old_text is not None:
        data["oldText"] = request.old_text
    if request.key is not None:
        data["key"] = request.key
    if request.importance is not None:
        data["importance"] = request.importance
    if request.branches is not None:
        data["branches"] = list(request.branches)
    return data


def plan_data(plan: "MaintenancePlan", request: ops.MutationRequest | None, *, redact: bool = False) -> dict[str, Any]:
    """``data.maintenance`` of a ``runtime-capacity`` error: what an assistant needs to compact.

    ``redact`` (``secrets`` is not ``allow``): an entry's ``content`` and ``excluded`` are shown redacted
    (:func:`mnemon_ls.redact.redact_text`): text another program stored may hold a credential, and an error never
    quotes one. An entry sent back with its shown text as its only source stays as stored
    (:func:`restore_redacted`); merged into another text, the placeholder is what the new entry holds, and the
    stored text is kept word for word in the local archive like every replaced entry.

    Shape: ``{kind: "local-compaction", method: "mnemon/runtime/compact", file: "USER.md"|"MEMORY.md",
    target, revision, action, entries: [{index (1-based), content, importance, bytes, [branches]}],
    pending: {action, content?, oldText?, importance?, branches?} | null, pendingEntry: {content,
    importance} | null, excluded: content | null, budgetBytes, limit, used, projected, rules: [str]}``.
    ``revision`` is the owning store's (the fence of the compact request).
    """
    budget = budget_of(plan)
    entries = []
    for index, entry in enumerate(plan.entries, start=1):
        row: dict[str, Any] = {"index": index, "content": _shown(entry.content, redact), "importance": entry.importance,
                               "bytes": joined_bytes([entry.content])}
        if entry.branches:
            row["branches"] = list(entry.branches)
        entries.append(row)
    count = len(plan.entries)
    return {
        "kind": KIND,
        "method": METHOD,
        "file": PROJECTION_FILES[plan.target],
        "target": plan.target,
        "revision": plan.revision,
        "action": plan.action,
        "entries": entries,
        "pending": pending_request(plan, request),
        "pendingEntry": ({"content": plan.pending.content, "importance": plan.pending.importance}
                         if plan.pending is not None else None),
        "excluded": _shown(plan.excluded.content, redact) if plan.excluded is not None else None,
        "budgetBytes": budget,
        "limit": plan.limit,
        "used": plan.used,
        "projected": plan.projected,
        "rules": [
            f"send {{revision, target, entries: [{{content, importance, sourceIndexes}}], pending}} to {METHOD}",
            f"every index 1..{count} in exactly one entry's sourceIndexes (integers)",
            "an entry's importance is at least the highest importance of its sources (low < normal < critical)",
            "no entry contains '\u00a7', repeats another, the pending content or the replaced/removed entry (also "
            "not up to case, whitespace or punctuation)",
            "the compaction changes something: not every entry its own source unchanged",
            f"the entries joined by the 4-byte delimiter use at most {budget} UTF-8 bytes",
        ],
    }


@dataclass(frozen=True, slots=True)
class Problem:
    """One broken rule: ``field`` (dotted path, e.g. ``entries[2].sourceIndexes[0]``) and ``rule``; ``value``
    the value sent there when the rule is about it (an entry number that does not exist), else ``None``."""

    field: str
    rule: str
    value: Any = None

    def to_dict(self) -> dict[str, Any]:
        """``{"field", "rule"}``, with ``"value"`` when there is one."""
        return {"field": self.field, "rule": self.rule} | ({} if self.value is None else {"value": self.value})


def derive_candidates(raw_entries: Any, plan: "MaintenancePlan", dropped: Sequence[int] = (),
                      person: bool = False) -> tuple[list[ops.Candidate], int]:
    """Check a proposed compaction of ``plan`` against every rule of reference 4.4 and return the
    candidates to commit (in the proposed order) and the byte budget.

    ``dropped``: plan indexes that leave without a successor (the person's form, already checked by
    :func:`person_entries`: in range, each once, in no entry's ``sourceIndexes``); they count as covered.
    ``person`` words the budget rule for a person (what the file would use, what to do).

    ``raw_entries``: ``[{content, importance, sourceIndexes: [int, ...], branches?}]``. Rules, each
    violation one :class:`Problem` naming the entry: an object; content valid after normalization (not
    empty, no ``§``, at most 8192 bytes); importance one of critical/normal/low and not lower than its
    highest source; ``sourceIndexes`` a non-empty list of integers in ``1..N`` (N = ``len(plan.entries)``)
    each used exactly once across all entries and all N covered; no two entries with the same content;
    no entry equal to the pending content or reintroducing the replaced/removed entry (equal up to case,
    whitespace and punctuation: :func:`~mnemon_ls.runtime.ops.similarity_key`); not every entry its own
    source unchanged (a no-op compaction frees nothing and is not counted as one); ``branches``
    (target memory only) valid, and when omitted every source of the entry must have the same branch
    scope (it is inherited); the joined bytes within the budget (:func:`budget_of`).

    Raises :class:`InvalidInput` for the first problem, with ``data.problems`` listing all of them
    (``[{field, rule}]``); nothing is written by the caller then.
    """
    target: Target = plan.target
    count = len(plan.entries)
    budget = budget_of(plan)
    if isinstance(raw_entries, (str, bytes)) or not isinstance(raw_entries, Sequence):
        raise InvalidInput("entries", type_rule("a list of {content, importance, sourceIndexes}", raw_entries))
    if count == 0:
        raise InvalidInput("entries", f"there is nothing to compact: {PROJECTION_FILES[target]} has no entries "
                                      "besides the pending change")
    problems: list[Problem] = []
    used_by: dict[int, int] = {index: -1 for index in dropped}
    seen: dict[str, int] = {}
    candidates: list[ops.Candidate] = []
    # the pending and the removed/replaced content are compared up to case, whitespace and punctuation
    # (ops.similarity_key, the key that names similar entries on an add): "likes X1" beside a pending
    # "Likes x1" would leave the same fact twice after the commit
    pending_key = ops.similarity_key(plan.pending.content) if plan.pending is not None else None
    excluded_key = ops.similarity_key(plan.excluded.content) if plan.excluded is not None else None
    for position, item in enumerate(raw_entries):
        where = f"entries[{position}]"
        if not isinstance(item, dict):
            problems.append(Problem(where, "must be an object with content, importance and sourceIndexes"))
            continue
        unknown = sorted(set(item) - {"content", "importance", "sourceIndexes", "branches"})
        if unknown:
            problems.append(Problem(f"{where}.{unknown[0]}", "is not a known field (content, importance, "
                                                             "sourceIndexes, branches)"))
        content = _check(problems, lambda: validate_content(item.get("content"), f"{where}.content"))
        importance = _check(problems, lambda: validate_importance(item.get("importance", "normal"),
                                                                  f"{where}.importance"))
        sources = _source_indexes(problems, item.get("sourceIndexes"), f"{where}.sourceIndexes", count, used_by,
                                  position)
        if content is not None:
            key = match_key(content)
            if key in seen:
                problems.append(Problem(f"{where}.content", f"repeats entries[{seen[key]}].content"))
            seen.setdefault(key, position)
            similar = ops.similarity_key(content)
            if pending_key and similar == pending_key:
                problems.append(Problem(f"{where}.content", "duplicates the pending mutation (it is added "
                                                            "after the compaction; leave it out)"))
            if excluded_key and similar == excluded_key:
                problems.append(Problem(f"{where}.content", f"reintroduces the entry being {plan.action}d"))
        originals = [plan.entries[i - 1] for i in sources]
        if importance is not None and originals:
            highest = max(originals, key=lambda e: _LEVEL[e.importance])
            if _LEVEL[importance] < _LEVEL[highest.importance]:
                index = sources[originals.index(highest)]
                problems.append(Problem(f"{where}.importance", f"lowers importance: source index {index} is "
                                                               f"{highest.importance}, this entry {importance}"))
        branches = _branches(problems, item, where, target, originals, sources)
        if content is not None and importance is not None:
            candidates.append(ops.Candidate(content, importance, branches))
    missing = [i for i in range(1, count + 1) if i not in used_by]
    if missing:
        shown = ", ".join(str(i) for i in missing[:10]) + (" ..." if len(missing) > 10 else "")
        problems.append(Problem("entries", f"does not cover source index {shown} (every index 1..{count} must be "
                                           "in exactly one entry's sourceIndexes)"))
    total = joined_bytes(c.content for c in candidates)
    if total > budget and person:
        problems.append(Problem("entries", f"{PROJECTION_FILES[target]} would still use {total} UTF-8 bytes for its "
                                           f"entries, over the budget of {budget} (70% of the {plan.limit}-byte "
                                           "limit, minus the pending change); merge, shorten or drop more entries"))
    elif total > budget:
        problems.append(Problem("entries", f"use {total} UTF-8 bytes joined, over the budget of {budget} "
                                           f"(floor(limit x 0.7) minus the pending entry); shorten or merge more"))
    if not problems and count and not dropped and len(candidates) == count and all(
            (c.content, c.importance, c.branches) == (e.content, e.importance, e.branches)
            and item.get("sourceIndexes") == [index]
            for index, (c, e, item) in enumerate(zip(candidates, plan.entries, raw_entries), start=1)):
        problems.append(Problem("entries", f"change nothing: each entry is its source index unchanged, so no "
                                           f"{PROJECTION_FILES[target]} byte is freed (a compaction merges or "
                                           "shortens entries)"))
    if problems:
        first = problems[0]
        raise InvalidInput(first.field, first.rule + _more(problems), problems=[p.to_dict() for p in problems])
    return candidates, budget


def _check(problems: list[Problem], validate: Any) -> Any:
    try:
        return validate()
    except InvalidInput as exc:
        problems.append(Problem(exc.field, exc.rule))
        return None


def _source_indexes(problems: list[Problem], raw: Any, where: str, count: int, used_by: dict[int, int],
                    position: int) -> list[int]:
    """The valid, first-used indexes of one entry (problems appended for the rest)."""
    if isinstance(raw, (str, bytes)) or not isinstance(raw, Sequence) or not raw:
        problems.append(Problem(where, f"must be a non-empty list of integers in 1..{count}"))
        return []
    valid: list[int] = []
    for k, index in enumerate(raw):
        field = f"{where}[{k}]"
        if isinstance(index, bool) or not isinstance(index, int):
            problems.append(Problem(field, f"must be an integer in 1..{count} (got {echo_repr(index)})"))
        elif not 1 <= index <= count:
            problems.append(Problem(field, f"index {index} is out of range 1..{count}"))
        elif index in used_by:
            other = used_by[index]
            also = ("earlier in this entry" if other == position else "also dropped" if other < 0
                    else f"also in entries[{other}].sourceIndexes")
            problems.append(Problem(field, f"index {index} is used twice ({also}); each index exactly once"))
        else:
            used_by[index] = position
            valid.append(index)
    return valid


def _branches(problems: list[Problem], item: dict[str, Any], where: str, target: Target,
              originals: Sequence[Entry], sources: Sequence[int]) -> tuple[str, ...] | None:
    if item.get("branches") is not None:
        return _check(problems, lambda: validate_branches(item["branches"], target, f"{where}.branches"))
    scopes = {e.branches for e in originals}
    if len(scopes) > 1:
        problems.append(Problem(f"{where}.branches", "is required: source indexes "
                                + ", ".join(str(i) for i in sources) + " have different branch scopes"))
        return None
    return next(iter(scopes)) if scopes else ()


@dataclass(frozen=True, slots=True)
class Merge:
    """One merge of the person's form: plan entries ``sources`` (1-based, each once) become one entry
    ``content`` (normalized) of ``importance`` (``None``: the highest importance of its sources) and
    ``branches`` (``None``: inherited from the sources, which must then share one scope)."""

    sources: tuple[int, ...]
    content: str
    importance: str | None = None
    branches: Any = None


@dataclass(frozen=True, slots=True)
class PersonForm:
    """A compaction as a person says it: ``merges`` and the plan indexes to ``drop``; every other entry
    stays as it is (:func:`person_entries`)."""

    merges: tuple[Merge, ...]
    drop: tuple[int, ...]

    def with_contents(self, contents: Sequence[str]) -> "PersonForm":
        """The same form with each merge's content replaced (the redaction pass)."""
        return PersonForm(tuple(Merge(m.sources, c, m.importance, m.branches) for m, c in zip(self.merges, contents)),
                          self.drop)


#: How an entry is numbered, said in a refusal of a number that is none.
_NUMBERING = "entries are numbered from 1, as the compaction plan and `mnemon-ls runtime list` number them"


def _ordinal(n: int) -> str:
    """``1`` -> ``first``, ``2`` -> ``second``, ``3`` -> ``third``, then ``4th``, ``11th``, ``21st``, ``22nd``."""
    if n <= 3:
        return ("first", "second", "third")[n - 1]
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _numbers(raw: Any, where: str, what: str) -> tuple[int, ...]:
    """A list of distinct entry numbers (integers >= 1) or :class:`InvalidInput` naming ``where[k]`` and saying
    in plain words which number of the list is wrong and why (``drop[0]``: ``the first number in drop is 0, not
    an entry number: entries are numbered from 1, ...``; a position in the list is not an entry number)."""
    if isinstance(raw, (str, bytes)) or not isinstance(raw, Sequence):
        raise InvalidInput(where, type_rule(f"a list of entry numbers ({what}, e.g. [2, 3])", raw))
    seen: list[int] = []
    for k, index in enumerate(raw):
        given = f"the {_ordinal(k + 1)} number"  # the field ({where}[{k}]) says of what
        if isinstance(index, bool) or not isinstance(index, int) or index < 1:
            raise InvalidInput(f"{where}[{k}]", f"{given} is {echo_repr(index)}, not an entry number: "
                                                f"{_NUMBERING}", value=index if isinstance(index, int) else
                               echo_value(index))
        if index in seen:
            raise InvalidInput(f"{where}[{k}]", f"{given} names entry {index} again; name each entry once",
                               value=index)
        seen.append(index)
    return tuple(seen)


def person_form(merge: Any, drop: Any) -> PersonForm:
    """The person's form checked without the plan: ``merge`` ``[{sourceIndexes: [int >= 1, ...], content,
    importance?, branches?}]`` or ``None``, ``drop`` ``[int >= 1, ...]`` or ``None``, at least one merge or
    drop in all. Contents are normalized and checked like any entry (no ``§``, at most 8192 bytes);
    ``importance`` is critical, normal or low. Raises :class:`InvalidInput` naming ``merge[i].<field>`` or
    ``drop[k]``; the ranges and overlaps are checked on the plan (:func:`person_entries`)."""
    merges: list[Merge] = []
    if merge is not None:
        if isinstance(merge, (str, bytes)) or not isinstance(merge, Sequence):
            raise InvalidInput("merge", type_rule("a list of {sourceIndexes, content, importance?}", merge))
        for i, item in enumerate(merge):
            where = f"merge[{i}]"
            if not isinstance(item, dict):
                raise InvalidInput(where, "must be an object {sourceIndexes, content, importance?}")
            unknown = sorted(set(item) - {"sourceIndexes", "content", "importance", "branches"})
            if unknown:
                raise InvalidInput(f"{where}.{unknown[0]}", "is not a known field (sourceIndexes, content, importance, "
                                                            "branches)")
            if item.get("sourceIndexes") is None:
                raise InvalidInput(f"{where}.sourceIndexes", "is required: the numbers of the entries to merge")
            sources = _numbers(item["sourceIndexes"], f"{where}.sourceIndexes", "the entries to merge")
            if not sources:
                raise InvalidInput(f"{where}.sourceIndexes", "must name at least one entry")
            content = validate_content(item.get("content"), f"{where}.content")
            importance = item.get("importance")
            if importance is not None:
                importance = validate_importance(importance, f"{where}.importance")
            merges.append(Merge(sources, content, importance, item.get("branches")))
    dropped = _numbers(drop, "drop", "the entries to drop") if drop is not None else ()
    if not merges and not dropped:
        raise InvalidInput("merge" if merge is not None else "drop",
                           "names no change: give at least one merge or one entry to drop")
    return PersonForm(tuple(merges), dropped)


def person_entries(form: PersonForm, plan: "MaintenancePlan") -> tuple[list[dict[str, Any]], tuple[int, ...],
                                                                        list[str]]:
    """The person's form over ``plan``: the full entries list (plan order: a merge stands where its first
    source stood; entries neither merged nor dropped stay as they are), the dropped indexes and, for each
    entry of the list, the field that names it in an error (``merge[i]`` or ``entries[k]``).

    Rules (each broken one an :class:`InvalidInput` with ``data.problems``): every number in ``1..N``
    (N = the plan's entries), merged or dropped once; a merge's importance not lower than its sources'
    highest (default: that highest); a merged text not the text of an entry that stays or of another merge.
    The result is then checked by :func:`derive_candidates` (budget, pending, branches, something changes).
    """
    count = len(plan.entries)
    name = PROJECTION_FILES[plan.target]
    if count == 0:
        raise InvalidInput("merge" if form.merges else "drop", f"there is nothing to compact: {name} has no entries "
                                                               "besides the pending change")
    problems: list[Problem] = []
    owner: dict[int, str] = {}

    def claim(index: int, field: str, how: str) -> None:
        if not 1 <= index <= count:
            problems.append(Problem(field, f"entry {index} does not exist: {name} has entries 1..{count}", index))
        elif index in owner:
            both = "in two merges" if owner[index] == how else "both merged and dropped"
            problems.append(Problem(field, f"entry {index} is {both}; each entry is merged or dropped once", index))
        else:
            owner[index] = how

    for i, merge in enumerate(form.merges):
        for k, index in enumerate(merge.sources):
            claim(index, f"merge[{i}].sourceIndexes[{k}]", "merged")
    for k, index in enumerate(form.drop):
        claim(index, f"drop[{k}]", "dropped")
    importances: list[str] = []
    for i, merge in enumerate(form.merges):
        sources = [(s, plan.entries[s - 1].importance) for s in merge.sources if 1 <= s <= count]
        index, highest = max(sources, key=lambda pair: _LEVEL[pair[1]], default=(0, "low"))
        if merge.importance is not None and _LEVEL[merge.importance] < _LEVEL[highest]:
            problems.append(Problem(f"merge[{i}].importance", f"lowers importance: entry {index} is {highest}, this "
                                                              f"merge {merge.importance}"))
        importances.append(merge.importance or highest)
    staying = {match_key(plan.entries[i - 1].content): i for i in range(1, count + 1) if i not in owner}
    merged: dict[str, int] = {}
    for i, merge in enumerate(form.merges):
        key = match_key(merge.content)
        if key in staying:
            problems.append(Problem(f"merge[{i}].content", f"is the text of entry {staying[key]}, which stays as it "
                                                           f"is (merge or drop entry {staying[key]} too)"))
        elif key in merged:
            problems.append(Problem(f"merge[{i}].content", f"repeats merge[{merged[key]}].content"))
        merged.setdefault(key, i)
    if problems:
        first = problems[0]
        value = {} if first.value is None else {"value": first.value}
        raise InvalidInput(first.field, first.rule + _more(problems), problems=[p.to_dict() for p in problems],
                           **value)
    starts = {min(m.sources): i for i, m in enumerate(form.merges)}
    entries: list[dict[str, Any]] = []
    names: list[str] = []
    for index in range(1, count + 1):
        if index in starts:
            i = starts[index]
            merge = form.merges[i]
            item: dict[str, Any] = {"content": merge.content, "importance": importances[i],
                                    "sourceIndexes": list(merge.sources)}
            if merge.branches is not None:
                item["branches"] = merge.branches
            entries.append(item)
            names.append(f"merge[{i}]")
        elif index not in owner:
            entry = plan.entries[index - 1]
            entries.append({"content": entry.content, "importance": entry.importance, "sourceIndexes": [index]})
            names.append(f"entries[{len(entries) - 1}]")
    return entries, form.drop, names


def renamed(error: InvalidInput, names: Sequence[str]) -> InvalidInput:
    """``error`` (of :func:`derive_candidates` over :func:`person_entries`' list) with each ``entries[k]``
    field named as the person named it (``names[k]``: ``merge[i]``)."""
    def one(field: str) -> str:
        if not field.startswith("entries["):
            return field
        position, _, rest = field[len("entries["):].partition("]")
        return names[int(position)] + rest if position.isdigit() and int(position) < len(names) else field

    data = {k: v for k, v in error.data.items() if k not in ("field", "rule")}
    if isinstance(data.get("problems"), list):
        data["problems"] = [{**p, "field": one(p["field"])} for p in data["problems"]]
    return InvalidInput(one(error.field), error.rule, **data)


def receipt_data(plan: "MaintenancePlan", entries: list[dict[str, Any]], revision: str, used: int, limit: int,
                 archive_path: str, dropped: Sequence[int] = ()) -> dict[str, Any]:
    """``maintenance`` of a committed compaction, in the shape of
    :class:`mnemon_ls.maintenance.receipt.MaintenanceReceipt` (``kind`` ``local-compaction``): ``archived``
    lists every plan entry whose text is gone (kept word for word in the local archive
    ``runtime/archived/memories.jsonl``), ``entries`` the compacted entries with their ``sourceIndexes``,
    ``dropped`` the plan indexes dropped without a successor, ``bytesBefore``/``bytesAfter`` the target's
    UTF-8 bytes before and after the commit (after: the pending change included), ``bytesFreed`` =
    projected bytes of the plan minus bytes used after, ``memoryBodyIds`` ``[]`` (the profile never leaves
    the machine)."""
    kept_keys = {match_key(e["content"]) for e in entries}
    archived = []
    for index, entry in enumerate(plan.entries, start=1):
        if match_key(entry.content) in kept_keys:
            continue
        archived.append({"sourceIndex": index, "source": f"runtime:{plan.revision}:{plan.target}:{index}",
                         "summary": entry.content[:200], "bytes": joined_bytes([entry.content]), "evidence": "local",
                         "destination": {"kind": "local-archive", "reference": "runtime/archived/memories.jsonl",
                                         "path": archive_path}})
    name = PROJECTION_FILES[plan.target]
    if dropped:
        summary = (f"Compacted {name}: {len(entries)} entr{'y' if len(entries) == 1 else 'ies'} replace "
                   f"{len(plan.entries) - len(dropped)}, {len(dropped)} dropped ({used}/{limit} bytes); the replaced "
                   "and dropped text is kept in runtime/archived/")
    else:
        summary = (f"Compacted {name}: {len(entries)} entr{'y' if len(entries) == 1 else 'ies'} replace "
                   f"{len(plan.entries)} ({used}/{limit} bytes); the replaced text is kept in runtime/archived/")
    import uuid  # imported here: a wake never compacts, and uuid costs it ~2 ms

    return {"kind": KIND, "runId": uuid.uuid4().hex, "target": plan.target, "planRevision": plan.revision,
            "revision": revision, "archived": archived,
            "destinations": [{"kind": "local-archive", "path": archive_path,
                              "count": len(archived)}] if archived else [],
            "bytesFreed": max(0, plan.projected - used), "kept": len(entries), "summary": summary,
            "entries": entries, "dropped": sorted(dropped), "bytesBefore": plan.used, "bytesAfter": used,
            "memoryBodyIds": []}


def plan_message(plan: "MaintenancePlan", entries: list[dict[str, Any]], dropped: Sequence[int], remaining: int) -> str:
    """The receipt line of a committed compaction of ``plan`` into ``entries`` (``sourceIndexes`` as numbered in
    the plan) with the plan numbers ``dropped``: what was merged, rewritten and dropped, then how many entries
    of the target remain, e.g. ``Compacted memory: merged 1, 2 into one entry; 2 entries remain (were 3).``
    (``remaining`` counts the compacted entries committed; a pending change's new entry is told by its own message)."""
    parts = []
    for entry in entries:
        sources = list(entry["sourceIndexes"])
        if len(sources) > 1:
            parts.append(f"merged {', '.join(map(str, sources))} into one entry")
        elif sources and match_key(entry["content"]) != match_key(plan.entries[sources[0] - 1].content):
            parts.append(f"rewrote {sources[0]}")
    if dropped:
        parts.append(f"dropped {', '.join(map(str, sorted(dropped)))}")
    before = len(plan.entries)
    counts = (f"{remaining} entr{'y' if remaining == 1 else 'ies'} remain{'s' if remaining == 1 else ''} "
              f"(were {before})")
    return f"Compacted {plan.target}: {'; '.join([*parts, counts])}."


def parse_pending(raw: Any, target: Target) -> ops.MutationRequest | None:
    """The ``pending`` member of a compact request (``{action, content?, oldText?, importance?, branches?}``
    or ``None``) as a validated mutation of ``target``; :class:`InvalidInput` names ``pending.<field>``."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise InvalidInput("pending", "must be an object {action, content?, oldText?, importance?, branches?} or null")
    unknown = sorted(set(raw) - {"action", "content", "oldText", "key", "importance", "branches", "target"})
    if unknown:
        raise InvalidInput(f"pending.{unknown[0]}", "is not a known field")
    if raw.get("target", target) != target:
        raise InvalidInput("pending.target", f"must be the compacted target {target} (got "
                                             f"{echo_repr(raw.get('target'))})")
    try:
        return ops.validate_request(raw.get("action"), target, raw.get("content"), raw.get("oldText"),
                                    raw.get("importance"), raw.get("branches"), raw.get("key"))
    except InvalidInput as exc:
        raise InvalidInput(f"pending.{exc.field}", exc.rule) from None


__all__ = ["KIND", "METHOD", "Merge", "PersonForm", "Problem", "budget_of", "derive_candidates", "parse_pending",
           "plan_message",
           "pending_request", "person_entries", "person_form", "plan_data", "receipt_data", "renamed",
           "restore_redacted"]


def _more(problems: list[Problem]) -> str:
    """What a refusal's message says after its first problem: ``""`` for one; else every other problem,
    ``"; 2 more: drop[0]: entry 5 does not exist ...; merge[1].content: repeats ..."`` (each field as the wire
    names it). The message is all a command line without ``--json`` or an MCP tool error shows, so the others
    are in it, not only in the error's ``problems`` (the language server's ``data.problems``)."""
    rest = problems[1:]
    if not rest:
        return ""
    return f"; {len(rest)} more: " + "; ".join(f"{p.field}: {p.rule}" for p in rest)
