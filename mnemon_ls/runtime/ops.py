"""Pure Runtime memory operations: add/replace/remove, the maintenance plan and deterministic packing.

Nothing here touches the disk; :mod:`mnemon_ls.runtime.store` runs these functions under the store lock
on the freshly re-read entries and commits the result. Semantics are those of
``shared/reference/dsh-mnemon.md`` sections 3.4 (mutations), 4.1 (plan) and 4.3 (packing), with one
addition: contents are compared in NFC, so an NFD spelling of a stored text is the same entry.
"""

from __future__ import annotations

import functools
import hashlib
import re
import unicodedata
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Sequence

from ..errors import (AmbiguousMatch, DuplicateContent, InvalidInput, NoMatch, RuntimeCapacityError, echo_repr,
                      echo_value, type_rule)
from .model import (
    IMPORTANCES,
    DELIMITER_CHAR,
    Entry,
    Importance,
    Target,
    joined_bytes,
    match_key,
    normalize_text,
    used_bytes,
    utf8_len,
    validate_branches,
    validate_content,
    validate_importance,
    validate_target,
)

Action = Literal["add", "replace", "remove"]
ACTIONS: tuple[Action, ...] = ("add", "replace", "remove")
_RANK = {importance: rank for rank, importance in enumerate(IMPORTANCES)}
#: Entries an ambiguous ``oldText`` error quotes (60 characters each); the rest are counted.
AMBIGUOUS_SHOWN = 5


@dataclass(frozen=True, slots=True)
class MutationRequest:
    """One Runtime mutation, already validated by :func:`validate_request`.

    ``content`` is the normalized new text (add/replace), ``old_text`` the normalized selector
    (replace/remove), ``importance`` ``None`` for "default / keep", ``branches`` ``None`` for "keep"
    (replace) and ``()`` for "no branch scope". ``key`` selects instead of ``old_text`` (replace/remove): the
    entry whose :func:`entry_key` it is, so a caller that was shown an entry redacted can still name it.
    """

    action: Action
    target: Target
    content: str | None = None
    old_text: str | None = None
    importance: Importance | None = None
    branches: tuple[str, ...] | None = None
    key: str | None = None


#: What an entry key is (:func:`entry_key`): the target, a colon, the sha256 hex of the entry's content.
ENTRY_KEY = re.compile(r"(user|memory):[0-9a-f]{64}")


def entry_key(target: str, content: str) -> str:
    """The key of a Runtime entry: ``memory:<sha256 hex of its content (UTF-8)>`` for a MEMORY.md entry (the key
    its citations are kept under), ``user:<sha256>`` for a USER.md one. Names the entry without its text."""
    return f"{'user' if target == 'user' else 'memory'}:" + hashlib.sha256(content.encode("utf-8")).hexdigest()


def validate_key(value: Any, target: Target) -> str:
    """An entry key of ``target`` (:data:`ENTRY_KEY`, its prefix ``target``); :class:`InvalidInput` naming
    ``key`` otherwise."""
    if not isinstance(value, str) or not ENTRY_KEY.fullmatch(value):
        raise InvalidInput("key", "must be an entry key 'user:<sha256 hex>' or 'memory:<sha256 hex>' (64 lower-case "
                                  f"hex digits) as review lists it (got {echo_repr(value)})")
    if value.partition(":")[0] != target:
        raise InvalidInput("key", f"names a {value.partition(':')[0]} entry; the target is {target}")
    return value


def validate_request(
    action: Any,
    target: Any,
    content: Any = None,
    old_text: Any = None,
    importance: Any = None,
    branches: Any = None,
    key: Any = None,
) -> MutationRequest:
    """Validate a raw mutation request (reference order: target, action, importance, branches, texts).

    ``key`` (replace, remove) selects the entry instead of ``old_text`` (:func:`validate_key`); not both.
    Raises :class:`InvalidInput` naming ``target``, ``action``, ``importance``, ``branches[i]``,
    ``content``, ``oldText`` or ``key``.
    """
    target = validate_target(target)
    if action not in ACTIONS:
        raise InvalidInput("action", f"must be one of add, replace, remove (got {echo_repr(action)})")
    if importance is not None:
        importance = validate_importance(importance)
    if branches is not None:
        if action == "remove":
            raise InvalidInput("branches", "does not apply to remove (branch tags are not selectors)")
        if target == "user":
            raise InvalidInput("branches", "applies to target=memory only")
        branches = validate_branches(branches, target)
    new_text = None
    selector = None
    if action in ("add", "replace"):
        new_text = validate_content(content, "content")
    elif content is not None:
        raise InvalidInput("content", "does not apply to remove")
    if key is not None:
        if action == "add":
            raise InvalidInput("key", "does not apply to add")
        if old_text is not None:
            raise InvalidInput("key", "is not taken with oldText: give one of the two")
        return MutationRequest(action, target, new_text, None, importance, branches, validate_key(key, target))
    if action in ("replace", "remove"):
        selector = validate_selector(old_text)
    elif old_text is not None:
        raise InvalidInput("oldText", "does not apply to add")
    return MutationRequest(action, target, new_text, selector, importance, branches)


def locate_key(entries: Sequence[Entry], target: Target, key: str) -> int:
    """Index of the entry of ``target`` whose :func:`entry_key` is ``key`` (identical entries: the first).
    Raises :class:`NoMatch` naming ``key`` (never quoting an entry) when none is."""
    for index, entry in enumerate(entries):
        if entry.target == target and entry_key(target, entry.content) == key:
            return index
    raise NoMatch(f"key: no {target} entry has the key {key} (it was changed or removed since it was listed)",
                  field="key", target=target, key=key)


def validate_selector(value: Any, field_name: str = "oldText") -> str:
    """Normalize ``oldText``; raises :class:`InvalidInput` when empty, not a string or holding ``§``."""
    if not isinstance(value, str):
        raise InvalidInput(field_name, "is required for replace and remove (a string)")
    text = normalize_text(value)
    if not text:
        raise InvalidInput(field_name, "is required (empty or only whitespace)", value=echo_value(value))
    if DELIMITER_CHAR in text:
        raise InvalidInput(field_name, "must not contain '\u00a7' (U+00A7), the reserved entry delimiter")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput(field_name, "must be valid Unicode (it holds a lone surrogate)") from None
    return text


def locate(entries: Sequence[Entry], target: Target, old_text: str) -> int:
    """Index of the one entry of ``target`` that ``old_text`` selects.

    Exact full-content matches (NFC) win; otherwise a unique substring match. Raises :class:`NoMatch`
    for none, :class:`AmbiguousMatch` for several (including two identical exact entries): its message
    quotes the first :data:`AMBIGUOUS_SHOWN` of them, ``data.candidates`` holds every one's content, each with
    what looks like a credential replaced by its placeholder (:func:`mnemon_ls.redact_find.redact_text`: another
    program may have stored one; the key selector of ``review`` picks such an entry).
    """
    key = match_key(old_text)
    exact = [i for i, e in enumerate(entries) if e.target == target and match_key(e.content) == key]
    candidates = exact or [i for i, e in enumerate(entries) if e.target == target and key in match_key(e.content)]
    if not candidates:
        raise NoMatch(f"oldText: no {target} entry contains {_quote(old_text)}", field="oldText", target=target,
                      oldText=echo_value(old_text))  # what was sent, clipped: it may be megabytes
    if len(candidates) > 1:
        from ..redact_find import redact_text  # an error never quotes a credential another program stored

        contents = [redact_text(entries[i].content)[0] for i in candidates]
        kind = "are identical to" if exact else "contain"
        shown = ", ".join(_quote(content, 60) for content in contents[:AMBIGUOUS_SHOWN])
        if len(candidates) > AMBIGUOUS_SHOWN:
            shown += f" and {len(candidates) - AMBIGUOUS_SHOWN} more"
        raise AmbiguousMatch(
            f"oldText: {len(candidates)} {target} entries {kind} {_quote(old_text)} ({shown}); use a unique substring",
            field="oldText",
            target=target,
            oldText=old_text,
            matches=len(candidates),
            candidates=contents,
        )
    return candidates[0]


@functools.lru_cache(maxsize=4096)
def similarity_key(text: str) -> str:
    """``text`` without what a near duplicate may differ in: NFKC, case-folded, with every whitespace,
    punctuation (Unicode category ``P*``), modifier symbol (``Sk``: backtick, caret) and control removed.
    Cached: a long-lived server compares each add with the same stored contents again and again."""
    if text.isascii():
        return text.translate(_ASCII_DROP).lower()
    folded = unicodedata.normalize("NFKC", text).casefold()
    return "".join(c for c in folded if not _dropped(c))


def _dropped(c: str) -> bool:
    category = unicodedata.category(c)
    return category[0] in "PZC" or category == "Sk"


_ASCII_DROP = {code: None for code in range(128) if _dropped(chr(code))}


def similar_entries(entries: Sequence[Entry], target: Target, content: str) -> list[Entry]:
    """Entries of ``target`` that differ from ``content`` only in case, whitespace or punctuation (but are not
    the same text in NFC), in stored order (issue 8 item 5: the receipt names them, nothing is deleted)."""
    key = similarity_key(content)
    if not key:
        return []
    exact = match_key(content)
    return [e for e in entries if e.target == target and match_key(e.content) != exact
            and similarity_key(e.content) == key]


@dataclass(frozen=True, slots=True)
class MutationOutcome:
    """Result of :func:`apply_mutation`: the new entry list (``changed`` False when nothing changes)."""

    entries: tuple[Entry, ...]
    changed: bool
    message: str
    detail: dict[str, Any] = field(default_factory=dict)
    excluded: Entry | None = None
    pending: Entry | None = None


def apply_mutation(entries: Sequence[Entry], request: MutationRequest, now: str) -> MutationOutcome:
    """Apply ``request`` to ``entries`` (no capacity check; see :func:`check_capacity`).

    ``now`` is the ISO timestamp for created_at/updated_at. Raises :class:`NoMatch`,
    :class:`AmbiguousMatch` or :class:`InvalidInput` (a replace that would duplicate another entry).
    """
    target = request.target
    if request.action == "add":
        assert request.content is not None
        key = match_key(request.content)
        for entry in entries:
            if entry.target == target and match_key(entry.content) == key:
                message = "Entry already exists."
                if entry.problem:
                    message += (f" It is kept out of the wake and {target} projection because {entry.problem};"
                                " use replace to fix it.")
                wanted = (request.importance or entry.importance, request.branches if request.branches is not None
                          else entry.branches)
                if wanted != (entry.importance, entry.branches):
                    scope = ",".join(entry.branches) or "every branch"
                    message += (f" It keeps importance {entry.importance} and scope {scope}; use replace to "
                                "change them.")
                return MutationOutcome(tuple(entries), False, message, {"added": entry.content})
        new = Entry(request.content, now, now, target, request.importance or "normal", request.branches or ())
        detail: dict[str, Any] = {"added": new.content}
        message = "Entry added."
        similar = similar_entries(entries, target, request.content)
        if similar:
            detail["similar"] = [entry.content for entry in similar]
            message += similar_note(detail["similar"])
        return MutationOutcome((*entries, new), True, message, detail, pending=new)

    if request.key is not None:
        index = locate_key(entries, target, request.key)
    else:
        assert request.old_text is not None
        index = locate(entries, target, request.old_text)
    old = entries[index]
    if request.action == "remove":
        rest = tuple(e for i, e in enumerate(entries) if i != index)
        return MutationOutcome(rest, True, "Entry removed.", {"removed": old.content}, excluded=old)

    assert request.content is not None
    key = match_key(request.content)
    for i, entry in enumerate(entries):
        if i != index and entry.target == target and match_key(entry.content) == key:
            raise InvalidInput(
                "content", f"duplicates another {target} entry; remove one of them instead", target=target
            )
    branches = old.branches if request.branches is None else request.branches
    if request.branches is None and old.problem and old.branches:
        validate_branches(list(old.branches), target, "branches")  # kept branches must pass the rules too
    importance = request.importance or old.importance
    detail = {"replaced": {"from": old.content, "to": request.content}}
    if request.content == old.content and importance == old.importance and branches == old.branches \
            and old.problem is None:
        return MutationOutcome(tuple(entries), False, "Entry unchanged.", detail)
    new = replace(old, content=request.content, updated_at=now, importance=importance, branches=branches,
                  problem=None, raw=None)
    result = list(entries)
    result[index] = new
    return MutationOutcome(tuple(result), True, "Entry replaced.", detail, excluded=old, pending=new)


def check_capacity(before: Sequence[Entry], after: Sequence[Entry], target: Target, limit: int,
                   pending: str | None = None) -> None:
    """Raise :class:`RuntimeCapacityError` when ``after`` uses more than ``limit`` bytes of ``target``. When the
    ``pending`` entry (the content added or written by the change) alone is larger than ``limit``, the message
    says so: no removal or compaction makes room, only a shorter entry or a limit of at least its size."""
    projected = used_bytes(after, target)
    if projected > limit:
        used = used_bytes(before, target)
        setting = f"runtimeMemory.{target}LimitBytes"
        alone = utf8_len(pending) if pending else 0
        if alone > limit:
            keep = f" ({projected} to keep the entries there now)" if projected > alone else ""
            advice = (f"the limit is smaller than this one entry ({alone} UTF-8 bytes), so no removal or compaction "
                      f"makes room: shorten it, or raise {setting} to at least {alone}{keep}")
        else:
            advice = f"remove or shorten entries, or raise {setting}"
        raise RuntimeCapacityError(
            f"{target} is over capacity: {projected} of {limit} UTF-8 bytes after this change "
            f"(now {used}); {advice}",
            target=target,
            used=used,
            projected=projected,
            limit=limit,
        )


@dataclass(frozen=True, slots=True)
class Candidate:
    """One entry proposed for a compacted target: normalized content, importance, branches (``None``: inherit)."""

    content: str
    importance: Importance
    branches: tuple[str, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        """``{"content", "importance"[, "branches"]}``."""
        data: dict[str, Any] = {"content": self.content, "importance": self.importance}
        if self.branches:
            data["branches"] = list(self.branches)
        return data


def validate_candidates(raw: Sequence[Any], target: Target) -> list[Candidate]:
    """Validate compaction candidates (dicts or :class:`Candidate`); duplicates (NFC) are rejected.

    Raises :class:`InvalidInput` naming ``candidates[i].content`` etc., or :class:`DuplicateContent`.
    """
    if isinstance(raw, (str, bytes)) or not isinstance(raw, Sequence):
        raise InvalidInput("candidates", type_rule("a list", raw))
    result: list[Candidate] = []
    seen: set[str] = set()
    for index, item in enumerate(raw):
        where = f"candidates[{index}]"
        if isinstance(item, Candidate):
            item = item.to_dict() if item.branches is not None else {"content": item.content,
                                                                     "importance": item.importance}
        if not isinstance(item, dict):
            raise InvalidInput(where, "must be an object with content and importance")
        content = validate_content(item.get("content"), f"{where}.content")
        importance = validate_importance(item.get("importance", "normal"), f"{where}.importance")
        branches = None
        if "branches" in item and item["branches"] is not None:
            branches = validate_branches(item["branches"], target, f"{where}.branches")
        key = match_key(content)
        if key in seen:
            raise DuplicateContent(f"{where}.content: duplicates an earlier candidate", field=f"{where}.content")
        seen.add(key)
        result.append(Candidate(content, importance, branches))
    return result


def pack(candidates: Sequence[Candidate], max_bytes: int) -> list[int]:
    """Indexes of the candidates kept by greedy importance packing, in original order.

    Candidates are tried critical, then normal, then low, ties in original order; one is kept when the
    joined bytes of those already kept plus it stay within ``max_bytes`` (smaller later ones may still
    fit after a skip).
    """
    order = sorted(range(len(candidates)), key=lambda i: (_RANK[candidates[i].importance], i))
    kept: list[int] = []
    total = 0
    for i in order:
        size = utf8_len(candidates[i].content)
        projected = size if not kept else total + 4 + size
        if projected <= max_bytes:
            kept.append(i)
            total = projected
    return sorted(kept)


def materialize(
    candidates: Sequence[Candidate], committed: Sequence[Entry], target: Target, now: str
) -> list[Entry]:
    """Turn kept candidates into entries, copying timestamps (and branches when the candidate has none)
    from an identical committed entry of ``target``; otherwise created/updated = ``now``."""
    by_key = {match_key(e.content): e for e in committed if e.target == target and e.problem is None}
    entries = []
    for candidate in candidates:
        original = by_key.get(match_key(candidate.content))
        branches = candidate.branches
        if branches is None:
            branches = original.branches if original else ()
        if original is not None:
            entries.append(Entry(candidate.content, original.created_at, original.updated_at, target,
                                 candidate.importance, branches, original.extra))
        else:
            entries.append(Entry(candidate.content, now, now, target, candidate.importance, branches))
    return entries


def validate_budget(max_bytes: Any, limit: int) -> int:
    """``max_bytes`` (``None`` = ``limit``) as an int in 0..limit, else :class:`InvalidInput` (field ``maxBytes``)."""
    if max_bytes is None:
        return limit
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or not 0 <= max_bytes <= limit:
        raise InvalidInput("maxBytes", f"budget is invalid: must be an integer in 0..{limit} (got "
                                       f"{echo_repr(max_bytes)})")
    return max_bytes


def compaction_budget(limit: int, pending: str | None, has_entries: bool) -> int:
    """Bytes left for compacted entries: ``max(0, floor(limit*0.7) - bytes(pending) - 4 if both)`` (ref 4.1)."""
    pending_bytes = utf8_len(pending) if pending else 0
    gap = 4 if pending and has_entries else 0
    return max(0, (limit * 7) // 10 - pending_bytes - gap)


def similar_note(similar: Sequence[str]) -> str:
    """What an add's message says of the ``similar`` entries' contents (:func:`similar_entries`; not empty): the
    first quoted (80 characters at most), how many more. A caller showing them otherwise (redacted) replaces this
    text by the note of what it shows."""
    return (f" It differs only in case, whitespace or punctuation from {_quote(similar[0])}"
            + (f" and {len(similar) - 1} more" if len(similar) > 1 else "") + "; remove one if they say the same.")


def _quote(text: str, width: int = 80) -> str:
    return repr(text if len(text) <= width else text[:width - 3] + "...")


__all__ = [
    "ACTIONS",
    "Candidate",
    "MutationOutcome",
    "MutationRequest",
    "apply_mutation",
    "check_capacity",
    "compaction_budget",
    "joined_bytes",
    "locate",
    "materialize",
    "pack",
    "similar_entries",
    "similar_note",
    "similarity_key",
    "validate_budget",
    "validate_candidates",
    "validate_request",
    "validate_selector",
]
