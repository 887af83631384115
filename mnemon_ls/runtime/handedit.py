"""Hand edits of ``USER.md`` / ``MEMORY.md``: tell a person's edit from a crash leftover, and import it.

Pure functions, plus the reader and writer of ``runtime/.projections-history.json`` and the scan of the
other store states on disk (:func:`known_projections`); :meth:`mnemon_ls.runtime.repair.ProjectionRepair.repair`
runs them under the Runtime lock on the freshly re-read store and commits the result (DESIGN.md
section 4, issue 8 item 3).

**Reading a projection.** The bytes are decoded as UTF-8 after dropping a UTF-8 BOM, and every CRLF or
lone CR becomes LF (:func:`canonical_text`), so a change of line endings (``core.autocrlf``) or a BOM
alone is never an edit. Items are separated by lines holding only ``§`` (surrounding spaces allowed);
each item is normalised like any entry text (whitespace runs, newlines included, become one space) and
empty items are ignored (:func:`split_items`).

**Which differing file is an edit** (:func:`classify`): a missing or empty (whitespace only) file, one
holding NUL bytes (a write cut short by a power loss), one byte-equal to the projection of another
known store state (an earlier committed state, the last-good copy or an interrupted commit's temp file)
and one whose modification time is not newer than the last commit of ``memories.json`` are *leftovers*:
repaired, never imported. Everything else is an *edit*.

**Pairing an edit with the store** (:func:`plan_import`), deterministic:

1. an item whose normalised text (NFC) equals an entry of the target is that entry, unchanged
   (importance, branches and timestamps kept); entries are taken in stored order, each at most once;
2. the remaining entries and items are grouped by their *anchor*, the nearest unchanged entry before
   them (in stored order for entries, in file order for items; the start of the file is an anchor too);
3. within one group, equal counts pair by position; unequal counts pair the smaller side in order with
   the most similar items of the other (``difflib`` ratio, maximised over order-preserving pairings);
   a pair is a *replace* (content and ``updated_at`` change; ``created_at``, importance and branches
   stay), an unpaired entry a *remove*, an unpaired item an *add* (importance ``normal``, no branches);
4. the target's entries take the file's order, in the slots the target held in ``memories.json``.

Entries loaded with a ``problem`` (they break a rule, so no projection shows them) take no part: they
are never paired, removed or moved by a hand edit.

Every item goes through :func:`mnemon_ls.runtime.ops.validate_request` (size, ``§``, control characters,
valid Unicode) and the result through :func:`~mnemon_ls.runtime.ops.check_capacity`; a bracketed
annotation naming branches (``[branches=main]``, as the wake snapshot prints metadata) is refused, since
branch scope is never set by a hand edit (and never applies to ``USER.md``), and so is one naming the
importance (``[importance=critical]``), which would otherwise be stored as words of the entry. Any problem rejects the
whole file; every problem is listed with the 1-based item number it belongs to.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from .. import fsio
from ..errors import InvalidInput, MnemonError
from . import ops
from .model import (PROJECTION_FILES, TARGETS, Entry, Target, match_key, normalize_text, parse_store,
                    projection_bytes)

if TYPE_CHECKING:
    from ..redact import Scrubber

_BOM = "\ufeff"
_SEPARATOR = re.compile(r"^[ \t]*\u00a7[ \t]*$")
#: A bracketed annotation that names a branch scope: ``[branches=main]``, ``[importance=low; branch: x]``.
_BRANCH_ANNOTATION = re.compile(r"\[[^\[\]]*\bbranch(?:es)?\s*[=:][^\[\]]*\]", re.IGNORECASE)
#: An importance annotation as the wake snapshot prints one (``[importance=critical; created=0d]``).
_IMPORTANCE_ANNOTATION = re.compile(r"\[[^\[\]]*\bimportance\s*[=:][^\[\]]*\]", re.IGNORECASE)
#: Largest group (entries x items) paired by similarity; larger groups pair by position.
_MAX_SIMILARITY_CELLS = 10_000


def digest(data: bytes) -> str:
    """sha256 hex of projection bytes (the form kept in the projection history)."""
    return hashlib.sha256(data).hexdigest()


def canonical_text(data: bytes) -> str | None:
    """``data`` as text with a leading BOM dropped and CRLF / CR turned into LF; ``None`` when not UTF-8."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if text.startswith(_BOM):
        text = text[1:]
    return text.replace("\r\n", "\n").replace("\r", "\n")


def split_items(text: str) -> list[tuple[int, str]]:
    """``(1-based item number, raw item text)`` of every non-empty item of a projection text.

    Items are separated by lines holding only ``§``; the number counts every item between separators,
    empty ones included, so it matches what a person sees when counting the file's items.
    """
    items: list[tuple[int, str]] = []
    current: list[str] = []
    number = 1
    for line in [*text.split("\n"), None]:
        if line is None or _SEPARATOR.match(line):
            raw = "\n".join(current)
            if normalize_text(raw):
                items.append((number, raw))
            number += 1
            current = []
        else:
            current.append(line)
    return items


def classify(current: bytes | None, expected: bytes, *, known: Mapping[str, str], newer: bool) -> tuple[str, str]:
    """What a projection that differs from ``expected`` is: ``(kind, reason)``.

    ``kind`` is ``missing``, ``empty``, ``format`` (only line endings, a BOM or the final newline differ),
    ``leftover`` or ``edit``. ``known`` maps :func:`digest` values of other known store states'
    projections to a phrase naming that state; ``newer`` says whether the file was modified after the
    last commit of ``memories.json``.
    """
    if current is None:
        return "missing", "is missing"
    if not current.strip():
        return "empty", "is empty"
    if b"\x00" in current:
        return "leftover", "holds NUL bytes (a write cut short by a crash or a power loss)"
    text, wanted = canonical_text(current), canonical_text(expected)
    if text is not None and wanted is not None and text.rstrip("\n") == wanted.rstrip("\n"):
        return "format", "differs only in line endings, a byte-order mark or the final newline"
    state = known.get(digest(current))
    if state is not None:
        return "leftover", f"equals the projection of {state}"
    if not newer:
        return "leftover", ("is not newer than the last commit of memories.json (a write interrupted by a crash or a "
                            "power loss)")
    return "edit", "was edited"


@dataclass(frozen=True, slots=True)
class ItemProblem:
    """Why one item (1-based ``item``; ``None`` for the whole file) cannot be imported: the rule it broke."""

    item: int | None
    field: str
    rule: str
    code: str
    excerpt: str = ""

    def describe(self, name: str) -> str:
        """One line, e.g. ``MEMORY.md item 3 ("a § b"): content: must not contain '§' ...``."""
        where = f"{name} item {self.item}" + (f" ({self.excerpt!r})" if self.excerpt else "") if self.item else name
        return f"{where}: {self.field}: {self.rule}"

    def to_dict(self) -> dict[str, Any]:
        """``{item, field, rule, code, excerpt}``."""
        return {"item": self.item, "field": self.field, "rule": self.rule, "code": self.code, "excerpt": self.excerpt}


@dataclass(frozen=True, slots=True)
class ImportPlan:
    """The result of pairing an edit with the store: the whole new entry list and what changed.

    ``added`` / ``removed`` are contents, ``replaced`` ``(from, to)`` pairs, ``unchanged`` the count of
    entries kept as they were, ``moved`` whether the target's order changed; ``problems`` non-empty
    means the edit must not be applied (``entries`` is then the unchanged store).
    """

    entries: tuple[Entry, ...]
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    replaced: tuple[tuple[str, str], ...] = ()
    unchanged: int = 0
    moved: bool = False
    problems: tuple[ItemProblem, ...] = field(default=())

    @property
    def changed(self) -> bool:
        """Whether applying the plan changes ``memories.json``."""
        return bool(self.added or self.removed or self.replaced or self.moved)


def _excerpt(text: str) -> str:
    text = normalize_text(text)
    return text if len(text) <= 40 else text[:37] + "..."


def _problem(item: int | None, exc: MnemonError, raw: str = "") -> ItemProblem:
    field_name = exc.data.get("field", "content") if isinstance(exc.data, dict) else "content"
    rule = exc.rule if isinstance(exc, InvalidInput) else exc.message
    return ItemProblem(item, field_name, rule, exc.code, _excerpt(raw) if raw else "")


def plan_import(entries: Sequence[Entry], target: Target, text: str, now: str, limit: int, *,
                scrub: "Scrubber | None" = None) -> ImportPlan:
    """Pair the edited projection ``text`` of ``target`` with ``entries`` (see the module doc).

    ``now`` is the ISO timestamp for new and replaced entries; ``limit`` the target's capacity in UTF-8
    bytes; ``scrub`` the redaction pass every item goes through first, as a mutation's content does
    (under ``secrets: reject`` an item holding a credential is a problem, naming the kind and position).
    Never raises for bad items: they become ``problems``.
    """
    name = PROJECTION_FILES[target]
    problems: list[ItemProblem] = []
    items: list[tuple[int, str, str]] = []  # (number, raw, normalized)
    seen: dict[str, int] = {}
    for number, raw in split_items(text):
        if scrub is not None:
            try:
                raw = scrub.text("content", raw)  # described as "<name> item <n>: content: ..."
            except MnemonError as exc:
                problems.append(_problem(number, exc, ""))  # never quote the credential back
                continue
        if _BRANCH_ANNOTATION.search(raw):
            rule = ("USER.md entries are never branch-scoped (branches apply to target=memory only)" if target == "user"
                    else "branch scope cannot be set by a hand edit; use `mnemon-ls runtime replace --branch`")
            problems.append(ItemProblem(number, "branches", rule, "invalid-input", _excerpt(raw)))
            continue
        if _IMPORTANCE_ANNOTATION.search(raw):  # else stored as words of the entry, its importance unchanged
            problems.append(ItemProblem(
                number, "importance", "importance cannot be set by a hand edit (the annotation would be stored as "
                "text); use `mnemon-ls runtime replace --old-text TEXT --importance critical|normal|low`",
                "invalid-input", _excerpt(raw)))
            continue
        try:
            request = ops.validate_request("add", target, raw)
        except MnemonError as exc:
            problems.append(_problem(number, exc, raw))
            continue
        assert request.content is not None
        key = match_key(request.content)
        if key in seen:
            problems.append(ItemProblem(number, "content", f"repeats item {seen[key]} of {name}; an entry appears once",
                                        "invalid-input", _excerpt(raw)))
            continue
        seen[key] = number
        items.append((number, raw, request.content))
    if problems:
        return ImportPlan(tuple(entries), problems=tuple(problems))

    def shown(entry: Entry) -> bool:  # an entry breaking a rule is in no projection: never paired, kept as is
        return entry.target == target and getattr(entry, "problem", None) is None

    old = [e for e in entries if shown(e)]
    # 1. unchanged: exact (NFC) matches, entries in stored order, each used once
    free: dict[str, list[int]] = {}
    for index, entry in enumerate(old):
        free.setdefault(match_key(entry.content), []).append(index)
    match_of_item: dict[int, int] = {}
    for position, (_, _, content) in enumerate(items):
        slots = free.get(match_key(content))
        if slots:
            match_of_item[position] = slots.pop(0)
    matched_old = set(match_of_item.values())

    # 2. group the rest by anchor (the nearest unchanged entry before them)
    groups: dict[int, tuple[list[int], list[int]]] = {}
    anchor = -1
    for index in range(len(old)):
        if index in matched_old:
            anchor = index
        else:
            groups.setdefault(anchor, ([], []))[0].append(index)
    anchor = -1
    for position in range(len(items)):
        if position in match_of_item:
            anchor = match_of_item[position]
        else:
            groups.setdefault(anchor, ([], []))[1].append(position)

    # 3. pair within each group
    pair_of_item: dict[int, int] = {}
    removed_old: list[int] = []
    for anchor_key in sorted(groups):
        olds, news = groups[anchor_key]
        pairs = _pair([old[i].content for i in olds], [items[p][2] for p in news])
        paired_old = set()
        for a, b in pairs:
            pair_of_item[news[b]] = olds[a]
            paired_old.add(olds[a])
        removed_old.extend(i for i in olds if i not in paired_old)

    # 4. build the target's entries in file order through the normal mutation rules
    new_target: list[Entry] = []
    added: list[str] = []
    replaced: list[tuple[str, str]] = []
    for position, (number, raw, content) in enumerate(items):
        try:
            if position in match_of_item:
                new_target.append(old[match_of_item[position]])
            elif position in pair_of_item:
                before = old[pair_of_item[position]]
                request = ops.validate_request("replace", target, raw, before.content)
                outcome = ops.apply_mutation((before,), request, now)
                new_target.append(outcome.entries[0])
                if outcome.changed:
                    replaced.append((before.content, content))
            else:
                outcome = ops.apply_mutation((), ops.validate_request("add", target, raw), now)
                new_target.append(outcome.entries[0])
                added.append(content)
        except MnemonError as exc:
            problems.append(_problem(number, exc, raw))
    if problems:
        return ImportPlan(tuple(entries), problems=tuple(problems))
    result: list[Entry] = []
    pending = iter(new_target)
    for entry in entries:
        if not shown(entry):
            result.append(entry)
        else:
            nxt = next(pending, None)
            if nxt is not None:
                result.append(nxt)
    result.extend(pending)
    try:
        ops.check_capacity(entries, result, target, limit)
    except MnemonError as exc:
        return ImportPlan(tuple(entries), problems=(ItemProblem(None, "capacity", exc.message, exc.code),))
    survivors = [match_of_item.get(p, pair_of_item.get(p)) for p in range(len(items))]
    order = [i for i in survivors if i is not None]
    moved = order != sorted(order)
    return ImportPlan(tuple(result), tuple(added), tuple(old[i].content for i in sorted(removed_old)),
                      tuple(replaced), len(match_of_item), moved)


def _pair(olds: Sequence[str], news: Sequence[str]) -> list[tuple[int, int]]:
    """Order-preserving pairs ``(old index, new index)`` of one group (see the module doc, step 3)."""
    n, m = len(olds), len(news)
    if not n or not m:
        return []
    if n == m or n * m > _MAX_SIMILARITY_CELLS:
        return [(i, i) for i in range(min(n, m))]
    swap = n > m
    a, b = (news, olds) if swap else (olds, news)  # a is the smaller side; every a gets a partner
    import difflib  # only when a hand edit is matched

    sim = [[difflib.SequenceMatcher(None, x, y).ratio() for y in b] for x in a]
    rows, cols = len(a), len(b)
    neg = float("-inf")
    best = [[neg] * (cols + 1) for _ in range(rows + 1)]
    for j in range(cols + 1):
        best[0][j] = 0.0
    for i in range(1, rows + 1):
        for j in range(i, cols + 1):
            skip = best[i][j - 1]
            take = best[i - 1][j - 1] + sim[i - 1][j - 1]
            best[i][j] = take if take >= skip else skip  # ties pair the earlier position
    pairs = []
    i, j = rows, cols
    while i > 0:
        if j > i and best[i][j - 1] > best[i - 1][j - 1] + sim[i - 1][j - 1]:
            j -= 1
            continue
        pairs.append((i - 1, j - 1))
        i, j = i - 1, j - 1
    pairs.reverse()
    return [(y, x) for x, y in pairs] if swap else pairs


def summary(name: str, plan: ImportPlan) -> str:
    """The person-facing result, e.g. ``2 entries added and 1 removed from your edit of MEMORY.md``."""
    parts = [(len(plan.added), "added"), (len(plan.replaced), "replaced"), (len(plan.removed), "removed")]
    parts = [(n, verb) for n, verb in parts if n]
    if not parts:
        return (f"entries reordered from your edit of {name}" if plan.moved
                else f"your edit of {name} changed no entry (only spacing)")
    words = [f"{n} {'entry' if n == 1 else 'entries'} {verb}" if k == 0 else f"{n} {verb}"
             for k, (n, verb) in enumerate(parts)]
    joined = words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]
    return f"{joined} from your edit of {name}"


def describe_problems(name: str, problems: Iterable[ItemProblem]) -> str:
    """All problems of a rejected edit on one line, separated by ``; ``."""
    return "; ".join(p.describe(name) for p in problems)


# ------------------------------------------------------------------ the other store states on disk

#: Committed projections remembered per target in ``.projections-history.json``.
HISTORY_LENGTH = 8
#: Fixed size of ``.projections-history.json`` (bytes; the JSON padded with spaces), so a rewrite never shrinks it.
HISTORY_BYTES = 1536


def known_projections(runtime_dir: Path, history_path: Path, last_good_path: Path, target: Target,
                      expected: bytes) -> dict[str, str]:
    """Digests of ``target``'s projection in every other store state on disk -> a phrase naming it.

    The states: earlier commits (``.projections-history.json``), the last-good copy when it differs from
    ``memories.json`` and the store in an interrupted commit's temp files (``.memories.json.*.tmp``,
    ``..memories.last-good.json.*.tmp``; call with the Runtime lock held, so their writer is dead). The
    digest of ``expected`` (the current projection) is left out. Never raises.
    """
    known: dict[str, str] = {}
    for value in read_history(history_path).get(target, []):
        known.setdefault(value, "an earlier committed state")
    sources = [(last_good_path, "the last-good copy (a commit interrupted before memories.json)")]
    try:
        names = sorted(os.listdir(runtime_dir))
    except OSError:
        names = []
    for name in names:
        if name.endswith(".tmp") and name.startswith((".memories.json.", "..memories.last-good.json.")):
            sources.append((runtime_dir / name, "an interrupted commit (its temp file is still there)"))
    for path, phrase in sources:
        try:
            data = fsio.read_bytes_or_none(path)
            if data:
                known.setdefault(digest(projection_bytes(parse_store(data), target)), phrase)
        except (InvalidInput, OSError):
            continue
    known.pop(digest(expected), None)
    return known


def read_history(path: Path) -> dict[str, list[str]]:
    """``{"user": [sha256, ...], "memory": [...]}`` of recent committed projections, newest first
    (``{}`` when absent or unreadable: the history is advisory)."""
    try:
        return _history_of(fsio.read_bytes_or_none(path) or b"{}")
    except OSError:
        return {}


def _history_of(data: bytes) -> dict[str, list[str]]:
    """The parsed history of :func:`read_history` from the file's bytes (``{}`` for anything unreadable)."""
    try:
        parsed = json.loads(data or b"{}")
    except ValueError:
        return {}
    if not isinstance(parsed, dict):
        return {}
    return {t: [d for d in parsed[t] if isinstance(d, str)] for t in TARGETS if isinstance(parsed.get(t), list)}


def record_history(path: Path, before: Sequence[Entry] | None, after: Sequence[Entry], *,
                   projected: tuple[Mapping[Target, bytes] | None, Mapping[Target, bytes]] | None = None) -> None:
    """Push the digests of the projections a commit replaced and wrote (last :data:`HISTORY_LENGTH` per
    target) to ``path`` (``{"version": 1, "user": [...], "memory": [...]}``, newest first).

    ``projected`` gives the projections of ``before`` (``None`` when ``before`` is) and ``after`` per target
    when the caller has them (the commit does), so they are not built again. Call it with ``path``'s
    directory checked (:meth:`~mnemon_ls.runtime.store.RuntimeStore.locked`): the file itself is opened
    ``O_NOFOLLOW`` (a linked history file is neither read nor written through), once, for both the read
    and the write.

    Written in place at offset 0, padded to :data:`HISTORY_BYTES` with spaces (no temp file, no rename,
    no truncate, no fsync: ext4 flushes a file renamed or truncated over another at once, which would
    cost a commit as much as an fsync). It only sharpens the leftover test of ``repair``, which falls
    back to modification times when the file is lost or torn (a torn file reads as empty); I/O errors
    are ignored for the same reason.
    """
    if projected is None:
        projected = (None if before is None else {t: projection_bytes(before, t) for t in TARGETS},
                     {t: projection_bytes(after, t) for t in TARGETS})
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | fsio.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), fsio.FILE_MODE)
    except OSError:
        return
    try:
        data = os.pread(fd, 4 * HISTORY_BYTES, 0)
        last = _WRITTEN.get(str(path))
        history = ({t: list(v) for t, v in last[1].items()} if last is not None and last[0] == data
                   else _history_of(data))
        changed = False
        for target in TARGETS:
            values = history.get(target, [])
            for projections in projected:
                if projections is None:
                    continue
                value = _digest_of(projections[target])
                if not values or values[0] != value:
                    values = [value, *[v for v in values if v != value]][:HISTORY_LENGTH]
                    changed = True
            history[target] = values
        if changed:
            body = json.dumps({"version": 1, **history}).encode("utf-8").ljust(HISTORY_BYTES)
            os.pwrite(fd, body, 0)
            if len(_WRITTEN) >= 64:
                _WRITTEN.clear()
            _WRITTEN[str(path)] = (body, history)
    except OSError:
        pass
    finally:
        os.close(fd)


#: history path -> (the bytes this process last wrote there, what they say): when the file still holds exactly
#: those bytes (no other writer since), they are not parsed again.
_WRITTEN: dict[str, tuple[bytes, dict[str, list[str]]]] = {}
#: id(projection bytes) -> (those bytes, their sha256): a commit's "after" projections are the next commit's
#: "before" (the same objects, :meth:`~mnemon_ls.runtime.store.RuntimeStore.commit`), hashed once.
_DIGESTS: dict[int, tuple[bytes, str]] = {}


def _digest_of(data: bytes) -> str:
    cached = _DIGESTS.get(id(data))
    if cached is not None and cached[0] is data:
        return cached[1]
    if len(_DIGESTS) >= 16:
        _DIGESTS.clear()
    value = digest(data)
    _DIGESTS[id(data)] = (data, value)
    return value


__all__ = ["ImportPlan", "ItemProblem", "canonical_text", "classify", "describe_problems", "digest",
           "known_projections", "plan_import", "read_history", "record_history", "split_items", "summary"]
