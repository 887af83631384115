"""Runtime memory data model: entries, normalization, validation, byte accounting and the file formats.

Formats are those of the TypeScript plugin (``shared/reference/dsh-mnemon.md`` sections 3.1-3.3 and 3.7):

- ``runtime/memories.json``: ``{"version": 1, "entries": [...]}``, each entry with keys in the order
  content, created_at, updated_at, target, importance[, branches]; 2-space indent, trailing newline,
  non-ASCII unescaped. ``branches`` only for ``target=memory`` and only when non-empty.
- ``USER.md`` / ``MEMORY.md``: the target's contents in stored order joined by ``"\\n§\\n"`` plus one
  final ``"\\n"``; an empty target is a 0-byte file.
- revision: lowercase sha256 hex of the compact JSON of ``{"version":1,"entries":[...]}`` (same key
  order, no whitespace), so both implementations compute the same revision for the same store.

"bytes" always means UTF-8 bytes.
"""

from __future__ import annotations

import functools
import hashlib
import json
import operator
import re
import unicodedata
from dataclasses import dataclass, field
from json.encoder import encode_basestring as _encode_string
from datetime import datetime, timezone
from typing import Any, Iterable, Literal, Sequence

from ..errors import InvalidInput, control_rule, echo_repr, echo_value, type_rule
from ..jsontext import JsonUnreadable, json_loads

Target = Literal["user", "memory"]
Importance = Literal["critical", "normal", "low"]
TARGETS: tuple[Target, ...] = ("user", "memory")
IMPORTANCES: tuple[Importance, ...] = ("critical", "normal", "low")
#: The reserved entry delimiter character (U+00A7 SECTION SIGN).
DELIMITER_CHAR = "\u00a7"
#: Joins entries on disk and in byte accounting: ``\n§\n`` (4 UTF-8 bytes).
DELIMITER = "\n\u00a7\n"
DELIMITER_BYTES = len(DELIMITER.encode("utf-8"))
#: Largest single entry, in UTF-8 bytes (8 KiB).
MAX_ENTRY_BYTES = 8192
MAX_BRANCHES = 16
MAX_BRANCH_CHARS = 128
FORMAT_VERSION = 1
PROJECTION_FILES: dict[Target, str] = {"user": "USER.md", "memory": "MEMORY.md"}

# JavaScript's \s / String.prototype.trim() set (WhiteSpace + LineTerminator), used for every
# normalization so that matching and byte counts agree with the TypeScript plugin exactly.
_JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_SPACE_RUN = re.compile(f"[{_JS_SPACE}]+")
#: The characters of a branch name (:func:`branch_name_problem`), as a JSON schema ``pattern`` publishes them.
BRANCH_PATTERN = "^[A-Za-z0-9._/-]+$"
_BRANCH_CHARSET = re.compile(BRANCH_PATTERN)


def normalize_text(text: str) -> str:
    """Trim and collapse every whitespace run (JS ``\\s`` set, newlines and tabs included) to one space."""
    # Fast path: every JS whitespace character but the ASCII space is non-printable to Python, so a
    # printable text without doubled or edge spaces is already normalized.
    if text.isprintable() and "  " not in text and not text.startswith(" ") and not text.endswith(" "):
        return text
    return _SPACE_RUN.sub(" ", text).strip(" ")


def utf8_len(text: str) -> int:
    """Number of UTF-8 bytes of ``text`` (``str.isascii`` is O(1): an ASCII text is its own length)."""
    return len(text) if text.isascii() else len(text.encode("utf-8"))


def joined_bytes(contents: Iterable[str]) -> int:
    """UTF-8 bytes of ``contents`` joined by ``\\n§\\n`` (no trailing newline); 0 for none."""
    total, count = 0, 0
    for content in contents:
        total += utf8_len(content)
        count += 1
    return total + DELIMITER_BYTES * max(0, count - 1)


def match_key(text: str) -> str:
    """The form used to compare contents: NFC, so NFC and NFD spellings of one text are the same entry (an
    ASCII text is its own NFC form: ``str.isascii`` is O(1))."""
    return text if text.isascii() else unicodedata.normalize("NFC", text)


def validate_content(value: Any, field_name: str = "content") -> str:
    """Normalize and validate one entry text; returns the normalized text.

    Raises :class:`InvalidInput` when ``value`` is not a string, is empty after normalization, holds
    the reserved ``§``, holds a lone surrogate (not valid Unicode), or exceeds :data:`MAX_ENTRY_BYTES`.
    """
    if not isinstance(value, str):
        raise InvalidInput(field_name, "is required" if value is None else
                           type_rule("a string", value))
    text = normalize_text(value)
    if not text:
        raise InvalidInput(field_name, "is required (empty or only whitespace)", value=echo_value(value))
    if DELIMITER_CHAR in text:
        raise InvalidInput(field_name, "must not contain '\u00a7' (U+00A7), the reserved entry delimiter",
                           value=echo_value(value))
    rule = control_rule(text)  # the one rule of stored text (whitespace runs are already one space)
    if rule is not None:
        raise InvalidInput(field_name, f"{rule}; they would be written raw into USER.md / MEMORY.md and the wake "
                                       "snapshot", value=echo_value(value))
    try:
        size = utf8_len(text)
    except UnicodeEncodeError:
        raise InvalidInput(field_name, "must be valid Unicode (it holds a lone surrogate)") from None
    if size > MAX_ENTRY_BYTES:
        raise InvalidInput(
            field_name, f"is {size} UTF-8 bytes; an entry is at most {MAX_ENTRY_BYTES} bytes", bytes=size
        )
    return text


def validate_target(value: Any, field_name: str = "target") -> Target:
    """Return ``value`` if it is ``"user"`` or ``"memory"``, else raise :class:`InvalidInput`."""
    if value not in TARGETS:
        raise InvalidInput(field_name, f"must be one of user, memory (got {echo_repr(value)})")
    return value


def validate_importance(value: Any, field_name: str = "importance") -> Importance:
    """Return ``value`` if it is ``critical``, ``normal`` or ``low``, else raise :class:`InvalidInput` repeating
    the value given escaped and clipped (:func:`~mnemon_ls.errors.echo_value`)."""
    if value not in IMPORTANCES:
        raise InvalidInput(field_name, f"must be one of critical, normal, low (got {echo_repr(value)})")
    return value


def branch_name_problem(name: Any) -> str | None:
    """Why ``name`` (already trimmed) is not an acceptable branch name, or ``None``.

    A name is accepted when ``git check-ref-format --branch <name>`` accepts it *and* it uses only the
    TypeScript plugin's characters ``A-Z a-z 0-9 . _ / -`` (reference section 3.7; outside them the plugin
    refuses to load the whole store). Within that set git's rules (git-check-ref-format(1)) are: not
    ``HEAD``; not starting with ``-``; no component starting with ``.`` or ending with ``.lock``; no
    ``..``; no leading, trailing or doubled ``/``; not ending with ``.``. At most
    :data:`MAX_BRANCH_CHARS` characters.
    """
    if not isinstance(name, str):
        return type_rule("a string", name)
    if not name:
        return "must not be empty"
    if len(name) > MAX_BRANCH_CHARS:
        return f"is {len(name)} characters; at most {MAX_BRANCH_CHARS}"
    if not _BRANCH_CHARSET.fullmatch(name):
        return "may contain only A-Z a-z 0-9 . _ / -"
    if name == "HEAD":
        return "must not be HEAD (git refuses it as a branch name)"
    if name.startswith(("/", "-")):
        return "must not start with '/' or '-'"
    if name.endswith(("/", ".")):
        return "must not end with '/' or '.'"
    for bad in ("..", "//", "@{"):
        if bad in name:
            return f"must not contain {bad!r}"
    for component in name.split("/"):
        if component.startswith("."):
            return "must not have a component starting with '.'"
        if component.endswith(".lock"):
            return "must not have a component ending with '.lock'"
    return None


def validate_branches(value: Any, target: Target, field_name: str = "branches") -> tuple[str, ...]:
    """Validate a branch list for ``target``; returns the trimmed names in order.

    Raises :class:`InvalidInput` for a non-list, branches on target ``user`` (even an empty list is
    accepted there only as "no branches"), an invalid name (``branches[i]``), a repeated name or more
    than :data:`MAX_BRANCHES` names.
    """
    if value is None:
        return ()
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
        raise InvalidInput(field_name, type_rule("a list of branch names", value))
    if target == "user" and value:
        raise InvalidInput(field_name, "applies to target=memory only")
    if len(value) > MAX_BRANCHES:
        raise InvalidInput(field_name, f"has {len(value)} names; at most {MAX_BRANCHES}")
    names: list[str] = []
    for index, raw in enumerate(value):
        name = raw.strip() if isinstance(raw, str) else raw
        problem = branch_name_problem(name)
        if problem:
            raise InvalidInput(f"{field_name}[{index}]", f"{problem} (got {echo_repr(raw)})")
        if name in names:
            raise InvalidInput(f"{field_name}[{index}]", f"repeats the branch name {echo_repr(name)}")
        names.append(name)
    return tuple(names)


def now_iso(now: datetime | None = None) -> str:
    """UTC time as JavaScript's ``Date.toISOString()``: ``YYYY-MM-DDTHH:MM:SS.mmmZ``."""
    now = now or datetime.now(timezone.utc)
    now = now.astimezone(timezone.utc)
    if now.year >= 1000:  # isoformat pads the year to 4 digits; strftime's %Y does not below 1000
        return now.isoformat(timespec="milliseconds")[:23] + "Z"
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def parse_timestamp_ms(value: str) -> int | None:
    """Epoch milliseconds of an ISO-8601 timestamp (``Z`` or offsets honoured; naive = UTC), or ``None``."""
    if not isinstance(value, str):
        return None
    return _timestamp_ms(value)


@functools.lru_cache(maxsize=4096)
def _timestamp_ms(value: str) -> int | None:
    """:func:`parse_timestamp_ms` of a string (a pure function, kept per value: every wake renders the age of
    every entry from its two timestamps)."""
    if not value.strip():
        return None
    text = value.strip()
    if text.endswith(("z", "Z")):
        text = text[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    delta = moment - datetime(1970, 1, 1, tzinfo=timezone.utc)
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


@dataclass(frozen=True, slots=True)
class Entry:
    """One Runtime memory entry as stored in ``memories.json``.

    ``content`` is normalized text (one line, no ``§``); timestamps are the stored strings (normally
    ``toISOString`` form, kept verbatim); ``branches`` is empty for "every branch"; ``extra`` keeps keys
    written by a newer plugin version so a rewrite never drops them.

    ``problem`` is ``None`` for a valid entry. An entry loaded from disk that breaks a rule a new entry
    must follow (:func:`entry_problem`: size, control characters, branch names...) says which one here
    (``"content: is 51234 UTF-8 bytes; ..."``); it is kept in ``memories.json`` exactly as loaded
    (``raw``, its JSON object) but left out of the projections, the byte accounting and the wake.
    """

    content: str
    created_at: str
    updated_at: str
    target: Target
    importance: Importance = "normal"
    branches: tuple[str, ...] = ()
    extra: tuple[tuple[str, Any], ...] = field(default=(), compare=False)
    problem: str | None = field(default=None, compare=False)
    raw: dict[str, Any] | None = field(default=None, compare=False, repr=False)

    def to_json(self) -> dict[str, Any]:
        """The entry as an insertion-ordered dict in the plugin's key order (an invalid entry: as loaded)."""
        if self.raw is not None:
            return dict(self.raw)
        data: dict[str, Any] = {
            "content": self.content,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "target": self.target,
            "importance": self.importance,
        }
        if self.target == "memory" and self.branches:
            data["branches"] = list(self.branches)
        for key, value in self.extra:
            data[key] = value
        return data

    def visible_on(self, branch: str | None) -> bool:
        """Whether the entry shows on ``branch`` (``None``: unknown branch, only unscoped entries show)."""
        if self.target == "user" or not self.branches:
            return True
        return branch is not None and branch in self.branches


_KNOWN_KEYS = {"content", "created_at", "updated_at", "target", "importance", "branches"}


def entry_from_json(raw: Any, index: int) -> Entry:
    """Validate one stored entry (reference section 3.1); raises :class:`InvalidInput` naming ``entries[i].field``."""
    where = f"entries[{index}]"
    if not isinstance(raw, dict):
        raise InvalidInput(where, type_rule("an object", raw))
    target = validate_target(raw.get("target"), f"{where}.target")
    importance = validate_importance(raw.get("importance"), f"{where}.importance")
    for key in ("created_at", "updated_at"):
        if not isinstance(raw.get(key), str):
            raise InvalidInput(f"{where}.{key}", type_rule("a string", raw.get(key)))
    content = raw.get("content")
    if not isinstance(content, str):
        raise InvalidInput(f"{where}.content", type_rule("a string", content))
    normalized = normalize_text(content)
    if not normalized:
        raise InvalidInput(f"{where}.content", "is empty")
    if DELIMITER_CHAR in normalized:
        raise InvalidInput(f"{where}.content", "contains the reserved delimiter '\u00a7'")
    try:
        normalized.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput(f"{where}.content", "holds a lone surrogate (not valid Unicode)") from None
    branches: tuple[str, ...] = ()
    if "branches" in raw:
        if target == "user":
            raise InvalidInput(f"{where}.branches", "applies to target=memory only")
        value = raw["branches"]
        if not isinstance(value, list):
            raise InvalidInput(f"{where}.branches", type_rule("an array of branch names", value))
        for position, name in enumerate(value):
            # Loading uses the plugin's looser load rule (reference 3.1), not the mutation rule, so a
            # store the plugin reads is readable here too.
            if not isinstance(name, str) or not name or len(name) > MAX_BRANCH_CHARS \
                    or not _BRANCH_CHARSET.fullmatch(name):
                raise InvalidInput(f"{where}.branches[{position}]",
                                   f"must be a non-empty name of at most {MAX_BRANCH_CHARS} characters "
                                   "from A-Z a-z 0-9 . _ / -")
        branches = tuple(value)
    extra = tuple((k, v) for k, v in raw.items() if k not in _KNOWN_KEYS)
    entry = Entry(normalized, raw["created_at"], raw["updated_at"], target, importance, branches, extra)
    problem = entry_problem(content, target, value if "branches" in raw else None)
    if problem is None:
        return entry
    return Entry(normalized, raw["created_at"], raw["updated_at"], target, importance, branches, extra,
                 problem=problem, raw=dict(raw))


def entry_problem(content: str, target: Target, branches: Sequence[str] | None) -> str | None:
    """Which rule of a new entry a stored entry breaks, or ``None`` (issue 15 defect 8).

    ``content`` is the stored text, ``branches`` the stored list (``None``: no key). The rules are
    exactly those of a mutation (:func:`validate_content`, :func:`validate_branches`): at most
    :data:`MAX_ENTRY_BYTES` UTF-8 bytes, no control characters, branch names ``git check-ref-format
    --branch`` accepts, at most :data:`MAX_BRANCHES` distinct names. Returns ``"<field>: <rule>"``.
    """
    if not (len(content) <= MAX_ENTRY_BYTES // 4 and content.isprintable()):  # short printable text passes
        try:
            validate_content(content, "content")
        except InvalidInput as exc:
            return exc.message
    if branches:
        try:
            validate_branches(list(branches), target, "branches")
        except InvalidInput as exc:
            return exc.message
    return None


def document_of(entries: Sequence[Entry]) -> dict[str, Any]:
    """The ``memories.json`` document for ``entries``."""
    return {"version": FORMAT_VERSION, "entries": [entry.to_json() for entry in entries]}


def serialize_store(entries: Sequence[Entry]) -> bytes:
    """``memories.json`` bytes: 2-space indent, non-ASCII unescaped, trailing newline.

    Byte-identical to ``json.dumps(document_of(entries), ensure_ascii=False, indent=2) + "\\n"`` (the
    plugin's ``JSON.stringify(doc, null, 2)``), built from per-entry fragments (:func:`_fragments`)
    because the indenting encoder is pure Python and slow; entries with extra keys or kept as loaded
    (``raw``) fall back to ``json.dumps``.
    """
    if any(entry.extra or entry.raw is not None for entry in entries):
        return (json.dumps(document_of(entries), ensure_ascii=False, indent=2) + "\n").encode("utf-8")
    if not entries:
        return b'{\n  "version": 1,\n  "entries": []\n}\n'
    parts = [_fragments(e)[0] for e in entries]
    return ('{\n  "version": 1,\n  "entries": [\n' + ",\n".join(parts) + "\n  ]\n}\n").encode("utf-8")


def revision_of(entries: Sequence[Entry]) -> str:
    """sha256 hex of the compact JSON of the store (the optimistic-concurrency fence).

    The compact JSON is ``json.dumps(document_of(entries), ensure_ascii=False, separators=(",", ":"))``,
    built from cached per-entry fragments when no entry has extra keys or is kept as loaded."""
    if any(entry.extra or entry.raw is not None for entry in entries):
        compact = json.dumps(document_of(entries), ensure_ascii=False, separators=(",", ":"))
    else:
        compact = '{"version":1,"entries":[' + ",".join(_fragments(e)[1] for e in entries) + "]}"
    return hashlib.sha256(compact.encode("utf-8")).hexdigest()


def serialized_with_revision(entries: Sequence[Entry]) -> tuple[bytes, str]:
    """``(serialize_store(entries), revision_of(entries))`` in one pass over the entries' fragments (a commit
    needs both)."""
    # The cache holds every entry it knows (plain ones only), so an id found there is that very entry (no other
    # live object can have its id): the look-ups run in C; only the entries not seen yet are looked at.
    found = list(map(_FRAGMENTS.get, map(id, entries)))
    if not entries or None in found:
        missing = [e for e, hit in zip(entries, found) if hit is None]
        if not entries or any(entry.extra or entry.raw is not None for entry in missing):
            return serialize_store(entries), revision_of(entries)
        found = [(e, *_fragments(e)) if hit is None else hit for e, hit in zip(entries, found)]
    body = '{\n  "version": 1,\n  "entries": [\n' + ",\n".join(map(_PRETTY, found)) + "\n  ]\n}\n"
    compact = '{"version":1,"entries":[' + ",".join(map(_COMPACT, found)) + "]}"
    return body.encode("utf-8"), hashlib.sha256(compact.encode("utf-8")).hexdigest()


_PRETTY, _COMPACT = operator.itemgetter(1), operator.itemgetter(2)


#: id(entry) -> (entry, indented, compact); holding the entry keeps its id from being reused meanwhile.
_FRAGMENTS: dict[int, tuple[Entry, str, str]] = {}
_FRAGMENTS_MAX = 8192


def _fragments(e: Entry) -> tuple[str, str]:
    """``(indented, compact)`` JSON text of one plain entry (no extra keys, not raw), cached by value.

    The indented form is the entry as it sits in ``memories.json`` (4-space object indent), the compact
    one as it sits in the revision's JSON. A store re-serializes the same entries at every commit, so
    each is encoded once (the cache, keyed by object identity, is cleared when it passes
    :data:`_FRAGMENTS_MAX` entries)."""
    cached = _FRAGMENTS.get(id(e))
    if cached is not None and cached[0] is e:
        return cached[1], cached[2]
    q = _encode_string
    content, created, updated, target, importance = (q(e.content), q(e.created_at), q(e.updated_at),
                                                     q(e.target), q(e.importance))
    pretty = (f'    {{\n      "content": {content},\n      "created_at": {created},\n'
              f'      "updated_at": {updated},\n      "target": {target},\n'
              f'      "importance": {importance}')
    compact = (f'{{"content":{content},"created_at":{created},"updated_at":{updated},"target":{target},'
               f'"importance":{importance}')
    if e.target == "memory" and e.branches:
        names = [q(b) for b in e.branches]
        pretty += ',\n      "branches": [\n' + ",\n".join(f"        {n}" for n in names) + "\n      ]"
        compact += ',"branches":[' + ",".join(names) + "]"
    result = (pretty + "\n    }", compact + "}")
    if len(_FRAGMENTS) >= _FRAGMENTS_MAX:
        _FRAGMENTS.clear()
    _FRAGMENTS[id(e)] = (e, *result)
    return result


def projection_bytes(entries: Sequence[Entry], target: Target) -> bytes:
    """USER.md / MEMORY.md bytes: the target's contents joined by ``\\n§\\n`` plus ``\\n``; empty target = b"".

    Entries with a ``problem`` (see :class:`Entry`) are left out: a projection holds only valid entries.
    The result for a tuple of entries is remembered (:data:`_PROJECTED`): a mutation's capacity check, its
    commit and its receipt ask for the same one."""
    memo = type(entries) is tuple
    if memo:
        hit = _PROJECTED.get((id(entries), target))
        if hit is not None and hit[0] is entries:
            return hit[1]
    contents = [entry.content for entry in entries if entry.target == target and entry.problem is None]
    data = (DELIMITER.join(contents) + "\n").encode("utf-8") if contents else b""
    if memo:
        if len(_PROJECTED) >= 32:
            _PROJECTED.clear()
        _PROJECTED[(id(entries), target)] = (entries, data)  # type: ignore[assignment]
    return data


#: (id(entries tuple), target) -> (that tuple, its projection bytes); holding the tuple keeps its id from being
#: reused meanwhile. A tuple of frozen entries cannot change, and a projection reads only their content,
#: target and problem.
_PROJECTED: dict[tuple[int, str], tuple[tuple[Entry, ...], bytes]] = {}


def used_bytes(entries: Sequence[Entry], target: Target) -> int:
    """Capacity used by ``target``: UTF-8 bytes of its valid contents joined by the delimiter (an entry with
    a ``problem`` is in no projection, so it uses no capacity): its projection's length without the final
    newline."""
    return max(0, len(projection_bytes(entries, target)) - 1)


def parse_store(data: bytes) -> list[Entry]:
    """Parse and validate ``memories.json`` bytes (fails closed on any problem).

    Raises :class:`InvalidInput` with field ``memories.json`` (not UTF-8, not JSON, wrong version, no
    entries array) or ``entries[i]...`` (a bad entry).
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        hint = " (it looks like UTF-16)" if data[:2] in (b"\xff\xfe", b"\xfe\xff") else ""
        raise InvalidInput("memories.json", f"is not UTF-8{hint}: byte {exc.start}") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    try:
        document = json_loads(text)
    except JsonUnreadable as exc:
        raise InvalidInput("memories.json", f"is not valid JSON: {exc}") from None
    if not isinstance(document, dict):
        raise InvalidInput("memories.json", "must hold a JSON object")
    if document.get("version") != FORMAT_VERSION or isinstance(document.get("version"), bool):
        raise InvalidInput("version", f"must be 1 (got {echo_repr(document.get('version'))})")
    raw_entries = document.get("entries")
    if not isinstance(raw_entries, list):
        raise InvalidInput("entries", type_rule("an array", raw_entries))
    return [entry_from_json(raw, index) for index, raw in enumerate(raw_entries)]


def salvage_store(data: bytes) -> tuple[list[Entry], int]:
    """Best-effort read of a damaged ``memories.json``: ``(valid entries found, damaged entry count)``.

    Tries UTF-8, then UTF-16 (by BOM), then UTF-8 with replacement; parses the whole document when it is
    JSON, else scans for complete entry objects (a truncated file keeps every entry written before the
    cut). Never raises.
    """
    from .. import salvage  # only a damaged file gets here: not imported by every reader

    text = salvage.decode_leniently(data)
    try:
        document = json.loads(text)
        raw_entries = document.get("entries") if isinstance(document, dict) else None
        candidates = raw_entries if isinstance(raw_entries, list) else []
    except ValueError:  # a JSONDecodeError, or a number past Python's digit limit
        candidates = salvage.scan_json_objects(text, "content")
    entries: list[Entry] = []
    damaged = 0
    for index, raw in enumerate(candidates):
        try:
            entries.append(entry_from_json(raw, index))
        except InvalidInput:
            damaged += 1
    return entries, damaged
