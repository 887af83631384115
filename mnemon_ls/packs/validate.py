"""What a Mnemon Pack's payload must hold (reference section 9, "Validation on inspect/import").

:func:`read_pack` opens the container (:func:`.format.read_archive`) and checks every component it
carries, through the Sources' own format modules (no second parser of any store file):

- runtime: ``memories.json`` parses as version 1 (:func:`mnemon_ls.runtime.model.parse_store`), every
  entry follows the rules of a new entry (at most 8 KiB, no control characters, valid branches) and
  each target fits the limit given (UTF-8 bytes of the joined target);
- documents: ``index.json`` parses (:func:`mnemon_ls.documents.indexformat.parse_index`: unique ids and
  paths), every filename is ``[a-zA-Z0-9._-]+.md``, ``relativePath`` is forced to
  ``documents/<status>/<filename>``, the file is in the payload, its byte size equals ``sizeBytes``, its
  frontmatter id equals the record's id, the body's sha256 equals ``contentHash``; no Markdown file
  without a record;
- memory spaces: ``.dsh-memory-bodies.json`` is ``{version: 1, bodies: [...]}``, ids valid and unique,
  names 1..100 characters, descriptions at most 1000, ``active`` a boolean; every body has exactly one
  ``data/<id>/mnemon.db`` that starts with ``SQLite format 3\\0`` and is at least 100 bytes, opens as
  a Mnemon store (an ``insights`` table; no trigger or view the Mnemon schema has not:
  :func:`store_items`), and no database lacks a body.

Errors are :class:`~mnemon_ls.errors.PackInvalid` naming the payload file and the rule. Nothing here
writes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..documents import model as dmodel
from ..documents.indexformat import parse_index
from ..documents.model import DocumentRecord
from ..errors import InvalidInput, PackInvalid, echo_repr, type_rule
from ..jsontext import JsonUnreadable, json_loads
from ..runtime.model import PROJECTION_FILES, TARGETS, Entry, parse_store, used_bytes
from ..spaces.model import MAX_DESCRIPTION_CHARS, js_length, validate_name, validate_space_id
from ..spaces.registry_model import NATIVE_FILE, SpaceRecord
from .format import NESTED, Archive, read_archive

SQLITE_HEADER = b"SQLite format 3\x00"
MIN_DB_BYTES = 100
_FILENAME = re.compile(r"[a-zA-Z0-9._-]+\.md")
RUNTIME_FILE = "payload/runtime/memories.json"
INDEX_FILE = "payload/documents/index.json"
REGISTRY_FILE = f"payload/data/{NATIVE_FILE}"


@dataclass(frozen=True)
class PackDocument:
    """One document of a pack: its index ``record`` (``relativePath`` forced), the managed file's
    ``data`` (bytes as packed) and its ``body`` (the text after the frontmatter)."""

    record: DocumentRecord
    data: bytes
    body: str


@dataclass(frozen=True)
class PackSpace:
    """One native Memory Space of a pack: its catalog ``record``, the ``mnemon.db`` bytes and ``items``,
    how many items (insights not soft-deleted) the store holds."""

    record: SpaceRecord
    db: bytes
    items: int = 0


@dataclass
class Pack:
    """A validated pack: the ``archive`` and the parsed components it carries (``None`` when absent)."""

    archive: Archive
    runtime: list[Entry] | None = None
    documents: list[PackDocument] | None = None
    spaces: list[PackSpace] | None = None
    registry_extra: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> list[dict[str, Any]]:
        """``[{component, files, bytes, items}]`` computed from the payload, as the manifest's summary
        (items: Runtime entries, documents, spaces: the reference's count, so a space's own items are
        :attr:`PackSpace.items`)."""
        rows = []
        items = {"runtime": len(self.runtime or ()), "documents": len(self.documents or ()),
                 "memory-spaces": len(self.spaces or ())}
        from .format import component_of

        for component in self.archive.components:
            files = [data for path, data in self.archive.payload.items() if component_of(path) == component]
            rows.append({"component": component, "files": len(files), "bytes": sum(len(d) for d in files),
                         "items": items[component]})
        return rows


    def user_profile_entries(self) -> int:
        """How many user-profile entries (``target=user``, USER.md) the pack carries (0 without runtime)."""
        return sum(1 for e in self.runtime or () if e.target == "user")

    def describe(self) -> dict[str, Any]:
        """What the pack holds: ``{"scope", "components", "exportedAt", "source", "summary" (:meth:`summary`),
        "runtime": {user, memory} (entries per target) | None, "documents": [{id, title, status, sizeBytes}]
        | None, "spaces": [{id, name, active, bytes, items}] | None}`` (``None``: the pack does not carry
        the component; ``items``: the space's items, insights not soft-deleted), and ``"userProfile"``: the
        number of user-profile (USER.md) entries it carries (:meth:`user_profile_entries`)."""
        manifest = self.archive.manifest
        runtime = None
        if self.runtime is not None:
            runtime = {t: sum(1 for e in self.runtime if e.target == t) for t in TARGETS}
        documents = None if self.documents is None else [
            {"id": d.record.id, "title": d.record.title, "status": d.record.status, "sizeBytes": d.record.size_bytes}
            for d in self.documents]
        spaces = None if self.spaces is None else [
            {"id": s.record.id, "name": s.record.name, "active": s.record.active, "bytes": len(s.db), "items": s.items}
            for s in self.spaces]
        return {"scope": manifest["scope"], "components": manifest["components"], "exportedAt": manifest["exportedAt"],
                "source": manifest["source"], "summary": self.summary(), "runtime": runtime, "documents": documents,
                "spaces": spaces, "userProfile": self.user_profile_entries()}


def read_pack(data: bytes, limits: dict[str, int] | None = None) -> Pack:
    """Open ``data`` (pack bytes) and validate every component it carries (module doc). ``limits`` maps
    ``user``/``memory`` to the Runtime byte limits to check against (``None``: not checked here).
    Raises :class:`PackInvalid`."""
    archive = read_archive(data)
    pack = Pack(archive)
    payload = archive.payload
    if "runtime" in archive.components:
        pack.runtime = _runtime(payload, limits)
    if "documents" in archive.components:
        pack.documents = _documents(payload)
    if "memory-spaces" in archive.components:
        pack.spaces = _spaces(payload)
    return pack


def _required(payload: dict[str, bytes], path: str, component: str) -> bytes:
    if path not in payload:
        raise PackInvalid(f"entry:{path}", f"is missing: the {component} component needs it")
    return payload[path]


def _runtime(payload: dict[str, bytes], limits: dict[str, int] | None) -> list[Entry]:
    data = _required(payload, RUNTIME_FILE, "runtime")
    try:
        entries = parse_store(data)
    except InvalidInput as exc:
        raise PackInvalid(f"{RUNTIME_FILE}:{exc.field}", exc.rule) from None
    except RecursionError:
        raise PackInvalid(RUNTIME_FILE, NESTED) from None
    for index, entry in enumerate(entries):
        if entry.problem is not None:
            raise PackInvalid(f"{RUNTIME_FILE}:entries[{index}]", entry.problem)
    if limits:
        for target in TARGETS:
            used = used_bytes(entries, target)
            if used > limits[target]:
                raise PackInvalid(f"{RUNTIME_FILE}:{target}",
                                  f"{PROJECTION_FILES[target]} holds {used} UTF-8 bytes; the limit here is "
                                  f"{limits[target]}")
    return entries


def _documents(payload: dict[str, bytes]) -> list[PackDocument]:
    data = _required(payload, INDEX_FILE, "documents")
    try:
        parsed = parse_index(data)
    except InvalidInput as exc:
        raise PackInvalid(f"{INDEX_FILE}:{exc.field}", exc.rule) from None
    except RecursionError:
        raise PackInvalid(INDEX_FILE, NESTED) from None
    out: list[PackDocument] = []
    listed: set[str] = set()
    for index, record in enumerate(parsed.records):
        where = f"{INDEX_FILE}:documents[{index}]"
        if not _FILENAME.fullmatch(record.filename):
            raise PackInvalid(f"{where}.filename", "must match [a-zA-Z0-9._-]+.md (got "
                                                   f"{echo_repr(record.filename)})")
        record = record.with_changes(relative_path=dmodel.relative_path(record.status, record.filename))
        path = f"payload/{record.relative_path}"
        listed.add(path)
        if path not in payload:
            raise PackInvalid(f"{where}", f"its file {path} is not in the pack")
        body_bytes = payload[path]
        if len(body_bytes) != record.size_bytes:
            raise PackInvalid(f"entry:{path}", f"is {len(body_bytes)} bytes; the index says sizeBytes "
                                               f"{record.size_bytes}")
        try:
            text = body_bytes.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise PackInvalid(f"entry:{path}", f"is not UTF-8 (byte {exc.start})") from None
        front, body = dmodel.split_markdown(text)
        front_id = dmodel.parse_frontmatter(front).get("id") if front is not None else None
        if front_id != record.id:
            raise PackInvalid(f"entry:{path}", f"its frontmatter id {echo_repr(front_id)} differs from the "
                                               f"index id {echo_repr(record.id)}")
        if dmodel.sha256_hex(body) != record.content_hash:
            raise PackInvalid(f"entry:{path}", "its body's sha256 differs from the index contentHash")
        out.append(PackDocument(record, body_bytes, body))
    for path in payload:
        if path.startswith("payload/documents/") and path != INDEX_FILE and path not in listed:
            raise PackInvalid(f"entry:{path}", "has no record in payload/documents/index.json")
    return out


def _spaces(payload: dict[str, bytes]) -> list[PackSpace]:
    data = _required(payload, REGISTRY_FILE, "memory-spaces")
    try:
        doc = json_loads(data.decode("utf-8").lstrip("\ufeff"))
    except UnicodeDecodeError as exc:
        raise PackInvalid(REGISTRY_FILE, f"is not valid UTF-8 JSON ({exc})") from None
    except JsonUnreadable as exc:
        raise PackInvalid(REGISTRY_FILE, f"is not valid UTF-8 JSON ({exc})") from None
    except RecursionError:
        raise PackInvalid(REGISTRY_FILE, NESTED) from None
    if not isinstance(doc, dict) or isinstance(doc.get("version"), bool) or doc.get("version") != 1:
        raise PackInvalid(f"{REGISTRY_FILE}:version", "must be 1")
    bodies = doc.get("bodies")
    if not isinstance(bodies, list):
        raise PackInvalid(f"{REGISTRY_FILE}:bodies", "must be an array")
    out: list[PackSpace] = []
    seen: set[str] = set()
    for index, raw in enumerate(bodies):
        where = f"{REGISTRY_FILE}:bodies[{index}]"
        if not isinstance(raw, dict):
            raise PackInvalid(where, "must be an object")
        for key in ("id", "name"):
            if not isinstance(raw.get(key), str):
                raise PackInvalid(f"{where}.{key}", type_rule("a string", raw.get(key)))
        try:
            space_id = validate_space_id(raw.get("id"), "id")
            name = validate_name(raw.get("name"), "name")
        except InvalidInput as exc:
            raise PackInvalid(f"{where}.{exc.field}", exc.rule) from None
        if space_id in seen:
            raise PackInvalid(f"{where}.id", f"repeats the id {echo_repr(space_id)}")
        seen.add(space_id)
        description = raw.get("description", "")
        if not isinstance(description, str) or js_length(description) > MAX_DESCRIPTION_CHARS:
            raise PackInvalid(f"{where}.description", f"must be a string of at most {MAX_DESCRIPTION_CHARS} characters")
        active = raw.get("active")
        if not isinstance(active, bool):
            raise PackInvalid(f"{where}.active", "must be true or false")
        created, updated = raw.get("createdAt"), raw.get("updatedAt")
        if not isinstance(created, str) or not isinstance(updated, str):
            raise PackInvalid(f"{where}.createdAt", "createdAt and updatedAt must be strings (ISO time)")
        placement = raw.get("placement") if isinstance(raw.get("placement"), dict) else None
        path = f"payload/data/{space_id}/mnemon.db"
        if path not in payload:
            raise PackInvalid(where, f"its store {path} is not in the pack")
        db = payload[path]
        if len(db) < MIN_DB_BYTES or not db.startswith(SQLITE_HEADER):
            raise PackInvalid(f"entry:{path}", "is not a SQLite database (no 'SQLite format 3' header, or shorter "
                                               "than 100 bytes)")
        record = SpaceRecord(space_id, name, description.strip(), active, created, updated, placement=placement)
        out.append(PackSpace(record, db, store_items(db, f"entry:{path}")))
    dbs = [p for p in payload if p.startswith("payload/data/") and p.endswith("/mnemon.db")]
    if len(dbs) != len(out):
        extra = sorted(set(dbs) - {f"payload/data/{s.record.id}/mnemon.db" for s in out})
        raise PackInvalid(f"entry:{extra[0]}" if extra else REGISTRY_FILE,
                          f"the pack holds {len(dbs)} stores but the catalog lists {len(out)} spaces")
    return out


#: Triggers a Mnemon store may hold (the Mnemon CLI's schema and ours); views none.
KNOWN_TRIGGERS = frozenset({"set_insight_stored_at"})

#: The only body a ``set_insight_stored_at`` trigger may have (mnemon-cli.md "Trigger (newer)": after an
#: insert whose ``stored_at`` is NULL or empty, set it to the current UTC time), matched against the
#: trigger's SQL lower-cased with quotes dropped and whitespace collapsed; a trigger of that name with any
#: other body (e.g. one deleting every other insight) is refused like a foreign one.
_STORED_AT_TRIGGER = re.compile(
    r"create trigger (?:if not exists )?set_insight_stored_at after insert on insights(?: for each row)? "
    r"when new\.stored_at is null or new\.stored_at=''\s?begin update insights set stored_at="
    r"(?:strftime\('[%a-z:\-]+','now'\)|datetime\('now'\))\s?where id=new\.id;end")


def _trigger_is_known(name: str, sql: str | None) -> bool:
    """Whether trigger ``name`` with CREATE statement ``sql`` is the Mnemon schema's own (module rules)."""
    if name not in KNOWN_TRIGGERS or not sql:
        return False
    text = " ".join(re.sub(r"[\"`\[\]]", "", sql).lower().split())
    text = re.sub(r"\s*([(),;=])\s*", r"\1", text).strip()
    return _STORED_AT_TRIGGER.fullmatch(text) is not None


def store_items(db: bytes, field: str) -> int:
    """How many items (insights with no ``deleted_at``) the packed ``mnemon.db`` bytes hold, read from an
    in-memory copy (nothing is written anywhere). Raises :class:`PackInvalid` naming ``field`` when the
    bytes are not a readable SQLite database, fail SQLite's ``quick_check`` (a damaged page), have no
    ``insights`` table, or hold a trigger or view the
    Mnemon schema has not (a trigger runs on our later writes: one that deletes every insight would wipe
    the space after a remember reported success)."""
    import sqlite3

    connection = sqlite3.connect(":memory:")
    try:
        try:
            # bytes 18-19 of the header are 2 in a WAL-mode file, which an in-memory copy cannot open; a
            # packed store is checkpointed, so the same bytes read as a rollback-journal file are the store
            connection.deserialize(db[:18] + b"\x01\x01" + db[20:] if db[18:20] == b"\x02\x02" else db)
            damage = connection.execute("PRAGMA quick_check(1)").fetchone()[0]
            if damage != "ok":
                raise PackInvalid(field, f"is a damaged SQLite database ({' '.join(str(damage).split())}); export it "
                                         "again from a good copy")
            rows = connection.execute(
                "SELECT type, name, sql FROM sqlite_master WHERE type IN ('trigger', 'view')").fetchall()
            foreign = sorted(f"{kind} {name}" for kind, name, sql in rows
                             if kind == "view" or not _trigger_is_known(name, sql))
            if foreign:
                raise PackInvalid(field, f"holds {', '.join(foreign[:5])}, which the Mnemon schema has not (a pack "
                                         "store must not carry code that runs on later writes)")
            return int(connection.execute("SELECT count(*) FROM insights WHERE deleted_at IS NULL").fetchone()[0])
        except sqlite3.Error as exc:
            raise PackInvalid(field, f"is not a Mnemon store ({exc})") from None
    finally:
        connection.close()
