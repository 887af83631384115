"""The ``documents/index.json`` format: validating, salvaging, serializing, and the index revision (pure).

The format is the TypeScript plugin's (``shared/reference/dsh-mnemon.md`` section 5.1; summarized in
:mod:`.model`'s module doc): ``{"version": 1, "documents": [record, ...]}``, 2-space indent, non-ASCII
unescaped, trailing newline, record keys in canonical order, keys written by a newer tool kept after
``memoryBodyIds``. The index revision is the lowercase sha256 hex of the compact JSON of the canonical
index (the plugin's ``indexRevision``). Records themselves (:class:`~.model.DocumentRecord`) and the
field rules are :mod:`.model`'s; this module owns only the file format.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Sequence

from ..errors import InvalidInput, echo_repr, type_rule
from ..jsontext import JsonUnreadable, json_loads
from .model import (
    _HASH,
    _SURROGATE,
    _SURROGATE_ESCAPE,
    FORMAT_VERSION,
    LEGACY_PREFIX,
    STATUSES,
    DocumentRecord,
    js_trim,
    relative_path,
)


_REQUIRED_STRINGS = ("id", "title", "description", "filename", "relativePath", "createdAt", "updatedAt",
                     "lastAccessedAt", "contentHash")
_ARRAYS = ("sourcePaths", "sessionIds", "memoryBodyIds")
_KNOWN_KEYS = set(_REQUIRED_STRINGS) | set(_ARRAYS) | {"status", "revision", "sizeBytes", "archivedAt",
                                                       "archiveSummary"}


def managed_relative(relative: str) -> str:
    """Map the legacy ``.mnemon/documents/...`` prefix to ``documents/...`` (other paths unchanged)."""
    if relative == LEGACY_PREFIX or relative.startswith(LEGACY_PREFIX + "/"):
        return relative[len(".mnemon/"):]
    return relative


def _integer(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def record_from_json(raw: Any, index: int, *, surrogates: bool = True) -> tuple[DocumentRecord, int]:
    """Validate one stored record; returns ``(record, dropped)`` where ``dropped`` counts non-string array
    members removed (the plugin drops them too).

    Raises :class:`InvalidInput` naming ``documents[i].<field>``. Stricter than the plugin where a value
    could only come from a damaged file: ``revision`` >= 1 and ``sizeBytes`` >= 0 integers, a 64-hex
    ``contentHash``, a plain ``filename`` and ``relativePath == documents/<status>/<filename>`` (or the
    legacy ``.mnemon/documents/...`` form). ``surrogates=False`` skips the lone-surrogate checks (the
    caller knows the source text holds no ``\\uD800``-``\\uDFFF`` escape).
    """
    where = f"documents[{index}]"
    if not isinstance(raw, dict):
        raise InvalidInput(where, "must be an object")
    for key in _REQUIRED_STRINGS:
        value = raw.get(key)
        if not isinstance(value, str):
            what = "is missing" if key not in raw else type_rule("a string", value)
            raise InvalidInput(f"{where}.{key}", what)
        if surrogates and _SURROGATE.search(value):
            raise InvalidInput(f"{where}.{key}", "holds a lone surrogate (not valid Unicode)")
    for key in ("status", "revision", "sizeBytes"):
        if key not in raw:
            raise InvalidInput(f"{where}.{key}", "is missing")
    status = raw.get("status")
    if status not in STATUSES:
        raise InvalidInput(f"{where}.status", f"must be active or archived (got {echo_repr(status)})")
    revision = _integer(raw.get("revision"))
    if revision is None or revision < 1:
        raise InvalidInput(f"{where}.revision", "must be an integer >= 1 (got "
                                                f"{echo_repr(raw.get('revision'))})")
    size = _integer(raw.get("sizeBytes"))
    if size is None or size < 0:
        raise InvalidInput(f"{where}.sizeBytes", "must be an integer >= 0 (got "
                                                 f"{echo_repr(raw.get('sizeBytes'))})")
    if not raw["id"] or raw["id"] != js_trim(raw["id"]):
        raise InvalidInput(f"{where}.id", "must be a non-empty string without surrounding whitespace")
    if not _HASH.fullmatch(raw["contentHash"]):
        raise InvalidInput(f"{where}.contentHash", "must be 64 lowercase hex characters (sha256)")
    filename = raw["filename"]
    if (not filename or filename in (".", "..") or "/" in filename or "\\" in filename
            or "\x00" in filename or filename.startswith(".")):
        raise InvalidInput(f"{where}.filename", f"must be a plain file name (got {echo_repr(filename)})")
    if managed_relative(raw["relativePath"]) != relative_path(status, filename):
        raise InvalidInput(f"{where}.relativePath",
                           f"must be documents/{status}/{filename} (got {echo_repr(raw['relativePath'])})")
    dropped = 0
    arrays: dict[str, tuple[str, ...]] = {}
    for key in _ARRAYS:
        value = raw.get(key)
        if not isinstance(value, list):
            what = "is missing" if key not in raw else type_rule("an array", value)
            raise InvalidInput(f"{where}.{key}", what)
        kept = [v for v in value if isinstance(v, str)]
        if surrogates and any(_SURROGATE.search(v) for v in kept):
            raise InvalidInput(f"{where}.{key}", "holds a lone surrogate (not valid Unicode)")
        dropped += len(value) - len(kept)
        arrays[key] = tuple(kept)
    archived_at = raw.get("archivedAt") if isinstance(raw.get("archivedAt"), str) else None
    summary = raw.get("archiveSummary") if isinstance(raw.get("archiveSummary"), str) else None
    for key, value in (("archivedAt", archived_at), ("archiveSummary", summary)):
        if value is not None and surrogates and _SURROGATE.search(value):
            raise InvalidInput(f"{where}.{key}", "holds a lone surrogate (not valid Unicode)")
        if key in raw and value is None:
            dropped += 1
    extra = tuple((k, v) for k, v in raw.items() if k not in _KNOWN_KEYS)
    record = DocumentRecord(
        id=raw["id"], title=raw["title"], description=raw["description"], status=status,
        filename=filename, relative_path=raw["relativePath"], source_paths=arrays["sourcePaths"],
        session_ids=arrays["sessionIds"], created_at=raw["createdAt"], updated_at=raw["updatedAt"],
        last_accessed_at=raw["lastAccessedAt"], revision=revision, content_hash=raw["contentHash"],
        size_bytes=size, archived_at=archived_at, archive_summary=summary,
        memory_body_ids=arrays["memoryBodyIds"], extra=extra,
    )
    return record, dropped


# ----------------------------------------------------------------------------------------------- index


@dataclass(frozen=True, slots=True)
class ParsedIndex:
    """A valid ``index.json``: ``records`` in stored order, ``extra`` top-level keys besides version and
    documents, ``dropped`` non-string array members / non-string optional values the load removed."""

    records: tuple[DocumentRecord, ...]
    extra: tuple[tuple[str, Any], ...] = ()
    dropped: int = 0


class IndexProblem(InvalidInput):
    """``index.json`` is not a valid version-1 index. ``record`` is the index of the first bad record
    (``None`` when the file as a whole is bad: not UTF-8, not JSON, truncated, wrong version)."""

    def __init__(self, field: str, rule: str, record: int | None = None) -> None:
        super().__init__(field, rule, record=record)
        self.record = record


def parse_index(data: bytes) -> ParsedIndex:
    """Parse and validate ``index.json`` bytes; fails closed on any problem (raises :class:`IndexProblem`).

    Also rejects two records with one id, or two records for one managed path.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise IndexProblem("index.json", f"is not UTF-8 (byte {exc.start})") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    try:
        document = json_loads(text)
    except JsonUnreadable as exc:
        cut = " (the file looks truncated)" if not text.rstrip().endswith("}") else ""
        raise IndexProblem("index.json", f"is not valid JSON{cut}: {exc}") from None
    if not isinstance(document, dict):
        raise IndexProblem("index.json", "must hold a JSON object")
    version = document.get("version")
    if isinstance(version, bool) or version != FORMAT_VERSION:
        raise IndexProblem("version", f"must be 1 (got {echo_repr(version)})")
    raw_records = document.get("documents")
    if not isinstance(raw_records, list):
        raise IndexProblem("documents", "must be an array")
    records: list[DocumentRecord] = []
    dropped = 0
    ids: set[str] = set()
    paths: set[str] = set()
    surrogates = _SURROGATE_ESCAPE.search(text) is not None
    for index, raw in enumerate(raw_records):
        try:
            record, lost = record_from_json(raw, index, surrogates=surrogates)
        except InvalidInput as exc:
            raise IndexProblem(exc.field, exc.rule, index) from None
        if record.id in ids:
            raise IndexProblem(f"documents[{index}].id", f"repeats the id {echo_repr(record.id)}", index)
        path = managed_relative(record.relative_path)
        if path in paths:
            raise IndexProblem(f"documents[{index}].relativePath", "repeats the managed path "
                                                                   f"{echo_repr(path)}", index)
        ids.add(record.id)
        paths.add(path)
        records.append(record)
        dropped += lost
    extra = tuple((k, v) for k, v in document.items() if k not in ("version", "documents"))
    return ParsedIndex(tuple(records), extra, dropped)


def salvage_index(data: bytes) -> tuple[list[DocumentRecord], int]:
    """Best-effort read of a damaged ``index.json``: ``(valid records, damaged record count)``.

    Decodes leniently; parses the whole document when it is JSON, else scans for complete record objects
    (a truncated file keeps every record written before the cut). Repeated ids keep the first. Never raises.
    """
    from .. import salvage  # only a damaged file gets here: not imported by every reader

    text = salvage.decode_leniently(data)
    try:
        document = json.loads(text)
        raw = document.get("documents") if isinstance(document, dict) else None
        candidates = raw if isinstance(raw, list) else []
    except ValueError:  # a JSONDecodeError, or a number past Python's digit limit
        candidates = salvage.scan_json_objects(text, "id")
    records: list[DocumentRecord] = []
    seen: set[str] = set()
    damaged = 0
    for index, raw in enumerate(candidates):
        try:
            record, _ = record_from_json(raw, index)
        except InvalidInput:
            damaged += 1
            continue
        if record.id not in seen:
            seen.add(record.id)
            records.append(record)
    return records, damaged


_encode_str = json.encoder.encode_basestring  # the C encoder json.dumps(ensure_ascii=False) uses


def _json_value(value: Any, indent: str | None) -> str:
    """JSON of one record value: strings and ints by hand (fast), string lists, anything else via json."""
    if isinstance(value, str):
        return _encode_str(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        if not value:
            return "[]"
        if indent is None:
            return "[" + ",".join(_encode_str(v) for v in value) + "]"
        inner = indent + "  "
        return "[\n" + ",\n".join(inner + _encode_str(v) for v in value) + "\n" + indent + "]"
    if indent is None:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return json.dumps(value, ensure_ascii=False, indent=2).replace("\n", "\n" + indent)


def _str_list(values: Sequence[str], indent: str) -> str:
    if not values:
        return "[]"
    inner = ",\n".join(f"{indent}  {_encode_str(v)}" for v in values)
    return f"[\n{inner}\n{indent}]"


def record_pretty(record: DocumentRecord) -> str:
    """The record as it appears inside ``index.json`` (6-space keys, 4-space braces): the exact text of
    ``json.dumps(index, indent=2)`` for this element (one template; ~5 µs per record)."""
    e, r, ind = _encode_str, record, "      "
    optional = ""
    if r.archived_at is not None:
        optional += f',\n      "archivedAt": {e(r.archived_at)}'
    if r.archive_summary is not None:
        optional += f',\n      "archiveSummary": {e(r.archive_summary)}'
    extra = "".join(f",\n      {e(k)}: {_json_value(v, ind)}" for k, v in r.extra)
    return (f'    {{\n      "id": {e(r.id)},\n      "title": {e(r.title)},\n      "description": {e(r.description)},\n'
            f'      "status": {e(r.status)},\n      "filename": {e(r.filename)},\n'
            f'      "relativePath": {e(r.relative_path)},\n      "sourcePaths": {_str_list(r.source_paths, ind)},\n'
            f'      "sessionIds": {_str_list(r.session_ids, ind)},\n      "createdAt": {e(r.created_at)},\n'
            f'      "updatedAt": {e(r.updated_at)},\n      "lastAccessedAt": {e(r.last_accessed_at)},\n'
            f'      "revision": {r.revision},\n      "contentHash": {e(r.content_hash)},\n'
            f'      "sizeBytes": {r.size_bytes}{optional},\n'
            f'      "memoryBodyIds": {_str_list(r.memory_body_ids, ind)}{extra}\n    }}')


def record_compact(record: DocumentRecord) -> str:
    """The canonical record's compact JSON (no whitespace, no extra keys), as in the index revision."""
    e, r = _encode_str, record
    optional = ""
    if r.archived_at is not None:
        optional += f',"archivedAt":{e(r.archived_at)}'
    if r.archive_summary is not None:
        optional += f',"archiveSummary":{e(r.archive_summary)}'
    lists = [",".join(map(e, values)) for values in (r.source_paths, r.session_ids, r.memory_body_ids)]
    return (f'{{"id":{e(r.id)},"title":{e(r.title)},"description":{e(r.description)},"status":{e(r.status)},'
            f'"filename":{e(r.filename)},"relativePath":{e(r.relative_path)},"sourcePaths":[{lists[0]}],'
            f'"sessionIds":[{lists[1]}],"createdAt":{e(r.created_at)},"updatedAt":{e(r.updated_at)},'
            f'"lastAccessedAt":{e(r.last_accessed_at)},"revision":{r.revision},"contentHash":{e(r.content_hash)},'
            f'"sizeBytes":{r.size_bytes}{optional},"memoryBodyIds":[{lists[2]}]}}')


class IndexCodec:
    """Serializes an index and computes its revision, caching each record's JSON by record identity.

    ``json.dumps(indent=2)`` runs in pure Python (~60 ms for 2,000 records); records are immutable, so
    each one is encoded once (by hand, with the C string encoder, straight to UTF-8 bytes) and reused;
    a commit then only joins bytes. Output is byte-identical to :func:`serialize_index` and
    :func:`index_revision` (tests compare them).
    """

    def __init__(self) -> None:
        self._pretty: dict[int, tuple[DocumentRecord, bytes]] = {}
        self._compact: dict[int, tuple[DocumentRecord, bytes]] = {}

    @staticmethod
    def _parts(cache: dict[int, tuple[DocumentRecord, bytes]], records: Sequence[DocumentRecord], make) -> list[bytes]:
        out: list[bytes] = []
        append = out.append
        get = cache.get
        for record in records:
            hit = get(id(record))
            if hit is None or hit[0] is not record:
                hit = cache[id(record)] = (record, make(record).encode("utf-8"))
            append(hit[1])
        if len(cache) > 2 * len(records) + 64:
            keep = {id(r) for r in records}
            for key in [k for k in cache if k not in keep]:
                del cache[key]
        return out

    def revision(self, records: Sequence[DocumentRecord]) -> str:
        """The index revision of ``records`` (see module doc)."""
        digest = hashlib.sha256(b'{"version":1,"documents":[')
        digest.update(b",".join(self._parts(self._compact, records, record_compact)))
        digest.update(b"]}")
        return digest.hexdigest()

    def encode(self, records: Sequence[DocumentRecord], extra: Sequence[tuple[str, Any]] = ()) -> tuple[bytes, str]:
        """``(index.json bytes, revision)`` of ``records``."""
        parts = self._parts(self._pretty, records, record_pretty)
        if parts:
            body = b'{\n  "version": 1,\n  "documents": [\n' + b",\n".join(parts) + b"\n  ]"
        else:
            body = b'{\n  "version": 1,\n  "documents": []'
        for key, value in extra:
            rendered = json.dumps(value, ensure_ascii=False, indent=2).replace("\n", "\n  ")
            body += f",\n  {_encode_str(key)}: {rendered}".encode("utf-8")
        return body + b"\n}\n", self.revision(records)


def index_document(records: Sequence[DocumentRecord], extra: Sequence[tuple[str, Any]] = ()) -> dict[str, Any]:
    """The ``index.json`` document of ``records``."""
    document: dict[str, Any] = {"version": FORMAT_VERSION, "documents": [r.to_json() for r in records]}
    for key, value in extra:
        document[key] = value
    return document


def serialize_index(records: Sequence[DocumentRecord], extra: Sequence[tuple[str, Any]] = ()) -> bytes:
    """``index.json`` bytes: 2-space indent, non-ASCII unescaped, trailing newline (``JSON.stringify(x, null, 2)``)."""
    return (json.dumps(index_document(records, extra), ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def index_revision(records: Sequence[DocumentRecord]) -> str:
    """sha256 hex of the compact JSON of the canonical index (the plugin's ``indexRevision``)."""
    compact = json.dumps({"version": FORMAT_VERSION, "documents": [r.canonical_json() for r in records]},
                         ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(compact.encode("utf-8")).hexdigest()


EMPTY_INDEX_BYTES = serialize_index(())
