"""Stored secrets in workspace memory records: find them (``doctor``) and redact them (``mnemon-ls redact --apply``).

Every write of ours redacts a record's text first, but a record file has other writers (a person's editor, a
teammate's commit merged by git, a bundle of an older version, the plugin), so a credential can reach one from
outside. What is looked at: the records file of each scope the workspace reaches (:meth:`RecordsSource.
available_scopes`: ``project``, ``shared-project``, ``user``) and the session files of this workspace
(``<records home>/workspace-memory/sessions/*.jsonl`` holding a record keyed ``<sessionId>|<rootId>``), every line
of each (the file is an append log: a line an id later superseded still holds what it held), with the fields a
read shows through the redaction pass (:func:`~.service.shown_json`: title, content, ``provenance.note`` and
``governance.sourceRefs[].id`` as texts, tags as labels); beside each file its ``.bak`` (compaction) and
``.corrupt`` (quarantined lines) copies. A line that is not a valid record is looked at as JSON, else as text.

Applying rewrites each affected file under the records lock (:class:`~.store.JsonlStore`'s ``<file>.lock``), in
one atomic replace: only the lines that held a credential are written again (the line of a record's current
state gets ``governance.revision`` + 1, ``updatedAt`` now and a new ``contentHash`` when its content changed, as
an edit does, so the redacted state wins a merge; a superseded line is only redacted and rehashed), every other
line keeps its bytes. A file with a damaged line (a records read moves it to ``.corrupt`` first), a file over
the size limit, a file another writer saved while it was being redacted (it is put back as that writer saved
it), a linked or unreadable file, or a file whose lock is held are reported under ``skipped`` and not
rewritten. The ``secrets`` setting does not change what ``redact`` does, as for the other tiers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

from .. import fsio
from ..errors import InvalidInput, MnemonError
from ..jsontext import JsonUnreadable, json_loads
from ..redact import Scrubber, SecretMatch, find_label_secrets, find_secrets, redact_json_value, redact_text
from . import paths
from .model import MemoryRecord, validate_record
from .service import RecordsSource, shown_json
from .store import JsonlStore, encode


class _Finder(Scrubber):
    """The walk of :func:`~.service.shown_json` made a search: it records ``(field, match)`` for each value that
    looks like a credential and changes nothing."""

    def __init__(self) -> None:
        super().__init__("redact")
        self.found: list[tuple[str, SecretMatch]] = []

    def text(self, field: str, value: Any) -> Any:
        if isinstance(value, str):
            self.found.extend((field, match) for match in find_secrets(value))
        return value

    def label(self, field: str, value: Any) -> Any:
        if isinstance(value, str):
            self.found.extend((field, match) for match in find_label_secrets(value))
        return value


def files(source: RecordsSource) -> list[tuple[str, Path]]:
    """``[(scope, records file)]`` this workspace's redaction looks at (module doc), existing or not; a scope
    whose file cannot be placed is left out. Reads only the session folder's file names and session files."""
    out: dict[Path, str] = {}
    for scope in source.available_scopes():
        try:
            out.setdefault(source.store(scope).path, scope)
        except InvalidInput:
            continue
    if source.workspace is not None:
        sessions = paths.records_home_dir(source.env) / "sessions"
        suffix = f"|{paths.root_id(source.workspace)}"
        try:
            names = sorted(p for p in sessions.iterdir() if p.suffix == ".jsonl") if sessions.is_dir() else []
        except OSError:
            names = []
        for path in names:
            if _is_session_of(path, suffix):
                out.setdefault(path, "session")
    return [(scope, path) for path, scope in out.items()]


def _is_session_of(path: Path, suffix: str) -> bool:
    try:
        data = fsio.read_bytes_or_none(path) or b""
    except OSError:
        return False
    for line in data.split(b"\n"):
        record = _record(line) if line.strip() else None
        if record is not None and record.scope_key.endswith(suffix):
            return True
    return False


def _record(raw: bytes) -> MemoryRecord | None:
    """The record one line holds, or ``None`` when it is not a valid one."""
    try:
        return validate_record(json_loads(raw.decode("utf-8")))
    except (UnicodeDecodeError, JsonUnreadable, InvalidInput):
        return None


def _strings(value: Any, field: str) -> Iterator[tuple[str, str]]:
    """``(field path, string)`` of every string leaf of a parsed JSON value."""
    if isinstance(value, str):
        yield field, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, f"{field}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, f"{field}[{index}]")


def line_findings(raw: bytes, field: str = "text") -> list[tuple[str, SecretMatch]]:
    """``(field, match)`` for each value in one line that looks like a credential: a valid record through the walk
    of :func:`~.service.shown_json` (fields ``<record id>.title`` ...), a quarantined line's entry (``{line, text,
    ...}``) through its ``text``, other JSON by its strings (``<field>.key``), anything else as text (``field``).
    Never the value."""
    record = _record(raw)
    if record is not None:
        finder = _Finder()
        shown_json(record.to_json(), finder, record.id)
        return finder.found
    text = raw.decode("utf-8", "replace")
    try:
        value = json_loads(text)
    except JsonUnreadable:
        return [(field, match) for match in find_secrets(text)]
    if isinstance(value, dict) and isinstance(value.get("text"), str) and "quarantinedAt" in value:
        return line_findings(value["text"].encode("utf-8", "surrogatepass"), field)
    return [(name, match) for name, leaf in _strings(value, field) for match in find_secrets(leaf)]


def _redacted_record(record: MemoryRecord, now: int | None) -> MemoryRecord | None:
    """``record`` with its shown fields redacted (``None``: nothing to redact); ``now`` (epoch ms) for the line of a
    current state: revision + 1 and ``updatedAt``, as an edit."""
    scrub = Scrubber("redact")
    data = shown_json(record.to_json(), scrub, rehash=True)
    if not scrub.count:
        return None
    if now is not None:
        data["updatedAt"] = max(now, record.updated_at)
        data["governance"]["revision"] = record.governance.revision + 1
    return validate_record(data)


def _redacted_copy_line(raw: bytes) -> bytes | None:
    """One line of a ``.bak`` or ``.corrupt`` copy redacted (module doc), without its newline; ``None``: unchanged."""
    record = _record(raw)
    if record is not None:
        new = _redacted_record(record, None)
        return encode(new).rstrip(b"\n") if new is not None else None
    text = raw.decode("utf-8", "surrogateescape")
    try:
        value = json.loads(text)
    except ValueError:
        redacted, matches = redact_text(text)
        return redacted.encode("utf-8", "surrogateescape") if matches else None
    if isinstance(value, dict) and isinstance(value.get("text"), str) and "quarantinedAt" in value:
        try:
            inner = _redacted_copy_line(value["text"].encode("utf-8", "surrogatepass"))
            if inner is None:
                return None
            value["text"] = inner.decode("utf-8", "surrogatepass")
        except UnicodeError:  # a damaged line's lenient reading: judged as text
            value["text"], matches = redact_text(value["text"])
            if not matches:
                return None
        value.pop("base64", None)  # the exact bytes held the value too
        return json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogateescape")
    new, kinds = redact_json_value(value)
    return json.dumps(new, ensure_ascii=False).encode("utf-8", "surrogateescape") if kinds else None


def _where(source: RecordsSource, path: Path) -> str:
    if source.workspace is not None:
        try:
            return str(path.relative_to(source.workspace))
        except ValueError:
            pass
    return str(path)


def _copies(path: Path) -> list[Path]:
    store = JsonlStore(path)
    return [store.backup_path, store.corrupt_path]


def scan(source: RecordsSource) -> list[dict[str, Any]]:
    """Findings ``{"location", "kind", "position"}`` (never the value; ``location`` is ``<file> line <n>
    <record id>.<field>``, ``position`` the character in that field). Read-only, no lock: nothing is quarantined;
    a file that cannot be read (linked, unreadable) is skipped (``--apply`` names it)."""
    found: list[dict[str, Any]] = []
    for _scope, path in files(source):
        for file in (path, *_copies(path)):
            try:
                data = fsio.read_bytes_or_none(file)
            except OSError:
                continue
            where = _where(source, file)
            for number, raw in enumerate((data or b"").split(b"\n"), start=1):
                if raw.strip():
                    found.extend({"location": f"{where} line {number} {field}", "kind": match.kind,
                                  "position": match.start} for field, match in line_findings(raw))
    return found


def apply(source: RecordsSource) -> dict[str, Any]:
    """Redact every record file of ``source`` durably (module doc). Returns ``{"records": n lines rewritten,
    "rewritten": [record files rewritten], "files": [rewritten copies], "skipped": [{"file", "reason"}]}``. Raises
    nothing for one file: what could not be done is in ``skipped`` (and the next scan still finds it)."""
    result: dict[str, Any] = {"records": 0, "rewritten": [], "files": [], "skipped": []}
    for _scope, path in files(source):
        where = _where(source, path)
        try:
            changed = _apply_file(JsonlStore(path), source)
        except _Skipped as skip:
            result["skipped"].append({"file": where, "reason": str(skip)})
            continue
        except (MnemonError, OSError) as exc:  # busy, linked, unreadable, disk full: this file only
            result["skipped"].append({"file": where, "reason": getattr(exc, "message", None) or str(exc)})
            continue
        if changed:
            result["records"] += changed
            result["rewritten"].append(where)
        for copy in _copies(path):
            try:
                if _redact_copy(copy, JsonlStore(path).lock_path):
                    result["files"].append(_where(source, copy))
            except (MnemonError, OSError) as exc:
                result["skipped"].append({"file": _where(source, copy),
                                          "reason": getattr(exc, "message", None) or str(exc)})
    return result


class _Skipped(Exception):
    """A records file :func:`apply` leaves as it is; the message says why."""


def _apply_file(store: JsonlStore, source: RecordsSource) -> int:
    """Rewrite the lines of ``store``'s file that hold a credential, under its lock; how many. Raises
    :class:`_Skipped` (module doc) and the errors of the lock and of the file system."""
    with fsio.file_lock(store.lock_path):
        data = fsio.read_bytes_or_none(store.path)
        if data is None:
            return 0
        lines = data.split(b"\n")
        records = [_record(raw) if raw.strip() else None for raw in lines]
        damaged = [n for n, (raw, r) in enumerate(zip(lines, records), start=1) if raw.strip() and r is None]
        if damaged:
            raise _Skipped(f"line {damaged[0]} is not a valid record ({len(damaged)} damaged line(s)); nothing in the "
                           "file was rewritten. A records read (`mnemon-ls records list`) moves damaged lines to "
                           f"{store.corrupt_path.name}; then run `mnemon-ls redact --apply` again")
        if len(data) > store.max_bytes:
            raise _Skipped(f"{len(data)} bytes is over the {store.max_bytes}-byte limit of a records file (read-only); "
                           "run `mnemon-ls records compact`, then `mnemon-ls redact --apply` again")
        last = {r.id: n for n, r in enumerate(records) if r is not None}
        now = source._clock()
        count = 0
        for n, record in enumerate(records):
            if record is None:
                continue
            new = _redacted_record(record, now if last[record.id] == n else None)
            if new is not None:
                lines[n] = encode(new).rstrip(b"\n")
                count += 1
        if not count:
            return 0
        body = b"\n".join(lines)  # the separators, and a last line without newline, as they were
        if len(body) > store.max_bytes:
            raise _Skipped(f"the placeholders would take it over the {store.max_bytes}-byte limit of a records file; "
                           "run `mnemon-ls records compact`, then `mnemon-ls redact --apply` again")
        displaced = fsio.replace_watching(store.path, body, data)
        if displaced is not None:  # saved by someone who takes no lock, between the read and the rename
            fsio.write_file_atomically(store.path, bytes(displaced))
            raise _Skipped("another program saved the file while it was being redacted; it was put back as that "
                           "program saved it: run `mnemon-ls redact --apply` again")
        return count


def _redact_copy(path: Path, lock: Path) -> bool:
    """Redact the ``.bak`` or ``.corrupt`` copy at ``path`` line by line, durably, holding the records file's
    ``lock`` (a read appends to ``.corrupt`` under it); ``False`` when it is missing or held nothing to redact."""
    with fsio.file_lock(lock):
        return _redact_copy_locked(path)


def _redact_copy_locked(path: Path) -> bool:
    data = fsio.read_bytes_or_none(path)
    if data is None:
        return False
    lines = data.split(b"\n")
    changed = False
    for n, raw in enumerate(lines):
        new = _redacted_copy_line(raw) if raw.strip() else None
        if new is not None:
            lines[n], changed = new, True
    if changed:
        fsio.write_file_atomically(path, b"\n".join(lines))
    return changed

