"""The Records Source: governed workspace memory records in four scopes (seed 002, DESIGN.md section 8).

Every surface (CLI ``mnemon-ls records``, the language server's ``mnemon/records/*``, the MCP tools)
calls these operations; each write is one locked, durable append (:class:`~.store.JsonlStore`), and a
rejected operation writes nothing.

Lifecycle (seed 002 section 3):

- :meth:`RecordsSource.create` — a person's record: provenance ``user``, origin ``user-authored``;
- :meth:`RecordsSource.propose` — an assistant's proposal: provenance ``agent``, origin
  ``model-suggested``, shown as a proposal until a person verifies or rejects it;
- the auto-writer (:mod:`.autowriter`) — provenance ``tool``, origin ``derived``;
- :meth:`verify` / :meth:`reject` / :meth:`mark_stale` change ``governance.verification``;
  :meth:`edit` keeps the id and adds 1 to ``governance.revision``; :meth:`archive` and :meth:`forget`
  change ``status`` (a forgotten record stays in the file: nothing is ever deleted by the tool).

Writes to ``shared-project`` need ``confirm=True`` (that file is meant to be committed).
"""

from __future__ import annotations

import dataclasses
import functools
import re
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence

from .. import fsio
from ..errors import (AmbiguousMatch, ConfirmationRequired, InvalidInput, NotFound, control_rule, echo_repr,
                      echo_value, type_rule)
from ..redact import Scrubber
from ..text import check_query_length
from ..roots_gitignore import write_root_gitignore
from . import paths
from .model import (MAX_LIST_LIMIT, SCOPE_RETENTION, SCOPES, STATUSES, TYPES, VERIFICATIONS, MemoryRecord, content_hash,
                    validate_record)
from .store import JsonlStore

if TYPE_CHECKING:
    from ..findings import Finding
    from .project import Project

#: ``.gitignore`` written into a new ``<workspace>/.dsh/`` inside a git working tree: everything is
#: private except ``workspace-memory/shared.jsonl`` (the ``shared-project`` scope, meant to be committed).
DSH_GITIGNORE = (b"# Created by mnemon-ls: private workspace memory; only shared.jsonl is meant to be committed.\n"
                 b"*\n!.gitignore\n!workspace-memory/\nworkspace-memory/*\n!workspace-memory/shared.jsonl\n")

#: Largest number of records one import bundle may hold.
MAX_BUNDLE_RECORDS = 10_000


@dataclass
class RecordReceipt:
    """What a records mutation returns: ``status`` (committed|skipped), the record's current state,
    its ``scope`` and a one-line ``message``."""

    status: str
    record: MemoryRecord
    message: str

    def to_dict(self) -> dict[str, Any]:
        """``{status, id, scope, message, record}`` (the record in its on-disk shape)."""
        return {"status": self.status, "id": self.record.id, "scope": self.record.scope,
                "message": self.message, "record": self.record.to_json()}


class RecordsSource:
    """The records of one workspace (``None``: only the ``user`` scope) for one session and user.

    ``session_id`` names the session scope (the language server uses one per server lifetime and
    folder); ``user_id`` the partition of ``user.jsonl`` (default :func:`.paths.default_user_id`);
    ``env`` is read for ``DSH_HOME`` and ``MNEMON_DATA_DIR`` (:func:`.paths.records_home`); ``clock``
    returns epoch ms; ``secrets`` is the ``secrets`` setting: every title and content a write takes
    (create, propose, edit, import) passes :mod:`mnemon_ls.redact` first (DESIGN.md invariant 9).
    Constructing it writes nothing.
    """

    def __init__(self, workspace: Path | None, *, session_id: str | None = None, user_id: str | None = None,
                 env: Mapping[str, str] | None = None, clock: Callable[[], int] | None = None,
                 secrets: str = "redact") -> None:
        self.workspace = Path(workspace) if workspace is not None else None
        self.secrets = Scrubber(secrets).mode
        self.session_id = session_id
        self.env = env
        self.user_id = user_id or paths.default_user_id(env)
        self._clock = clock or (lambda: int(time.time() * 1000))
        self._stores: dict[str, JsonlStore] = {}
        if self.workspace is not None:
            # In memory only: the first write that creates .dsh/ gives it its partial .gitignore.
            fsio.on_directory_created(paths.project_dir(self.workspace),
                                      functools.partial(write_root_gitignore, body=DSH_GITIGNORE))

    def _redact(self, field: str, text: str) -> str:
        """``text`` with values that look like credentials replaced (``secrets: reject`` raises
        :class:`InvalidInput` naming ``field``, the kind and the position). A new ``title`` must hold no
        control character (it is one line) and no other field a NUL (:func:`check_written_text`)."""
        return Scrubber(self.secrets).text(field, check_written_text(field, text))

    def _refs(self, refs: Sequence[Any], field: str) -> list[Any]:
        """``refs`` (``[{kind, id}]``) copied with each string ``id`` through :meth:`_redact` (field
        ``<field>[i].id``): a reference may be a URL or a path holding a credential. Anything else is copied as
        it is (the record model names what is wrong with it)."""
        return [{**ref, "id": self._redact(f"{field}[{index}].id", ref["id"])}
                if isinstance(ref, Mapping) and isinstance(ref.get("id"), str) else
                (dict(ref) if isinstance(ref, Mapping) else ref) for index, ref in enumerate(refs)]

    # ------------------------------------------------------------------ scopes

    def available_scopes(self) -> list[str]:
        """The scopes this source can reach (session needs a session id; project ones a workspace)."""
        return paths.reachable_scopes(self.workspace, self.session_id)

    def _located(self, scope: str) -> paths.ScopeLocation:
        """File and path key of ``scope`` (:func:`.paths.locate`: for shared-project this clone's ``rootId``)."""
        return paths.locate(scope, workspace=self.workspace, session_id=self.session_id, user_id=self.user_id,
                            env=self.env)

    def location(self, scope: str) -> paths.ScopeLocation:
        """File and scopeKey of ``scope`` (errors of :func:`.paths.locate`); the shared-project key names the
        project, the same in every clone (:meth:`.project.Project.write_key`)."""
        located = self._located(scope)
        if scope == "shared-project":
            return dataclasses.replace(located, scope_key=self.project.write_key())
        return located

    @functools.cached_property
    def project(self) -> "Project":
        """The project of the shared-project scope (:mod:`.project`); opens nothing until asked. Raises
        :class:`InvalidInput` (field ``recordScope``) without a workspace."""
        if self.workspace is None:
            raise InvalidInput("recordScope", "shared-project needs a workspace (none is open)")
        from .project import Project

        return Project(self.workspace)

    def quarantine_findings(self) -> list["Finding"]:
        """Doctor's ``warning`` for each reachable scope whose ``<file>.corrupt`` holds lines a read moved
        out of the file (:meth:`JsonlStore.quarantined_lines`); reads only, raises nothing."""
        from ..findings import Finding

        findings = []
        for scope in self.available_scopes():
            try:
                store = JsonlStore(self._located(scope).path)
            except InvalidInput:  # a scope this workspace cannot place: nothing to look at
                continue
            count = store.quarantined_lines()
            if count:
                findings.append(Finding(
                    "warning", str(store.corrupt_path),
                    f"{count} damaged lines were moved here out of {store.path} ({scope} records): they are "
                    "not records any more, and are kept as they were",
                    "read them (`text`, or `base64` for a line that was not UTF-8); recreate what you need with "
                    "`mnemon-ls records create`, then delete the file"))
        return findings

    def store(self, scope: str) -> JsonlStore:
        """The :class:`JsonlStore` of ``scope``."""
        if scope not in self._stores:
            self._stores[scope] = JsonlStore(self._located(scope).path, clock=self._clock)
        return self._stores[scope]

    def _records(self, scope: str, records: Mapping[str, MemoryRecord]) -> dict[str, MemoryRecord]:
        """Only this partition's records (the user file holds every user's; the shared-project file, which
        travels with the code, those of this project, written in any clone: :meth:`.project.Project.accepts`)."""
        if scope == "shared-project":
            self._located(scope)  # the errors of a scope without a workspace
            accepts = self.project.accepts
            return {i: r for i, r in records.items() if accepts(r.scope_key)}
        key = self._located(scope).scope_key
        return {i: r for i, r in records.items() if r.scope_key == key}

    def read(self, scope: str) -> dict[str, MemoryRecord]:
        """Current records of ``scope`` (this partition), by id, in first-written order."""
        return self._records(scope, self.store(scope).read().records)

    # ------------------------------------------------------------------ creation

    def create(self, scope: str, type: str, title: str, content: str, *, tags: Sequence[str] = (),
               source_refs: Sequence[Mapping[str, str]] = (), confirm: bool = False) -> RecordReceipt:
        """A person's record (provenance ``user``, origin ``user-authored``, unverified). Raises
        :class:`InvalidInput` (field named), :class:`ConfirmationRequired` (shared-project without
        ``confirm``), :class:`~mnemon_ls.errors.StoreTooLarge`."""
        return self._new(scope, type, title, content, tags, source_refs, confirm,
                         provenance={"kind": "user"}, origin="user-authored", id_kind="user")

    def propose(self, scope: str, type: str, title: str, content: str, *, tags: Sequence[str] = (),
                source_refs: Sequence[Mapping[str, str]] = (), note: str | None = None,
                session_id: str | None = None, confirm: bool = False) -> RecordReceipt:
        """An assistant's proposal (provenance ``agent``, origin ``model-suggested``, unverified) that waits
        for a person's verify/reject. ``source_refs`` default to the session (``{kind: session, id}``)
        when one is known; a proposal with no source at all is refused (field ``sourceRefs``)."""
        session = session_id or self.session_id
        refs = list(source_refs) or ([{"kind": "session", "id": session}] if session else [])
        provenance: dict[str, Any] = {"kind": "agent"}
        if session:
            provenance["sessionId"] = session
        if note:
            provenance["note"] = self._redact("note", note)
        return self._new(scope, type, title, content, tags, refs, confirm, provenance=provenance,
                         origin="model-suggested", id_kind="agent")

    def _new(self, scope: str, type: str, title: str, content: str, tags: Sequence[str],
             source_refs: Sequence[Mapping[str, str]], confirm: bool, *, provenance: dict[str, Any],
             origin: str, id_kind: str) -> RecordReceipt:
        _check_choice("recordScope", scope, SCOPES)
        _check_choice("type", type, TYPES)
        self._check_confirmed(scope, confirm)
        location = self.location(scope)
        now = self._clock()
        content = self._redact("content", content if isinstance(content, str) else "")
        record = validate_record({
            "schemaVersion": 1, "id": f"memory:{id_kind}:{type}:{secrets.token_hex(12)}", "scope": scope,
            "scopeKey": location.scope_key, "type": type,
            "title": self._redact("title", title.strip()) if isinstance(title, str) else title,
            "content": content, "tags": _tags(tags, Scrubber(self.secrets)), "provenance": provenance, "createdAt": now,
            "updatedAt": now,
            "useCount": 0, "contentHash": content_hash(content), "status": "active",
            "governance": {"origin": origin, "sourceRefs": self._refs(source_refs, "sourceRefs"),
                           "verification": "unverified", "revision": 1, "retention": SCOPE_RETENTION[scope]}})
        self.store(scope).update(lambda _current: [record])
        return RecordReceipt("committed", record, f"created {record.id} in {scope}")

    # ------------------------------------------------------------------ changes

    def verify(self, record_id: str, *, scope: str | None = None, confirm: bool = False) -> RecordReceipt:
        """A person confirms the record: verification ``verified`` with ``verifiedAt`` now."""
        return self._change(record_id, scope, confirm, "verified",
                            lambda r, now: {} if r.governance.verification == "verified" else
                            {"governance": {"verification": "verified", "verifiedAt": now}})

    def reject(self, record_id: str, *, scope: str | None = None, confirm: bool = False) -> RecordReceipt:
        """A person rejects the record (a proposal leaves the pending list): verification ``rejected``."""
        return self._change(record_id, scope, confirm, "rejected",
                            lambda r, now: {"governance": {"verification": "rejected", "verifiedAt": None}})

    def mark_stale(self, record_id: str, *, scope: str | None = None, confirm: bool = False) -> RecordReceipt:
        """The record no longer holds: verification ``stale``."""
        return self._change(record_id, scope, confirm, "marked stale",
                            lambda r, now: {"governance": {"verification": "stale", "verifiedAt": None}})

    def archive(self, record_id: str, *, scope: str | None = None, confirm: bool = False) -> RecordReceipt:
        """Status ``archived`` (kept, listed with ``--status archived``)."""
        return self._change(record_id, scope, confirm, "archived", lambda r, now: {"status": "archived"})

    def forget(self, record_id: str, *, scope: str | None = None, confirm: bool = False) -> RecordReceipt:
        """Status ``forgotten``: hidden from lists and exports; the line stays in the file (never deleted)."""
        return self._change(record_id, scope, confirm, "forgotten", lambda r, now: {"status": "forgotten"})

    def edit(self, record_id: str, *, scope: str | None = None, title: str | None = None,
             content: str | None = None, tags: Sequence[str] | None = None, type: str | None = None,
             confirm: bool = False) -> RecordReceipt:
        """Change title/content/tags/type keeping the id; ``governance.revision`` + 1. A changed content
        gets a new ``contentHash`` and goes back to ``unverified``. Nothing given: :class:`InvalidInput`."""
        if title is None and content is None and tags is None and type is None:
            raise InvalidInput("edit", "give at least one of title, content, tags, type")
        if type is not None:
            _check_choice("type", type, TYPES)

        def changes(record: MemoryRecord, now: int) -> dict[str, Any]:
            out: dict[str, Any] = {"governance": {"revision": record.governance.revision + 1}}
            if title is not None:
                out["title"] = self._redact("title", title.strip())
            if type is not None:
                out["type"] = type
            if tags is not None:
                out["tags"] = _tags(tags, Scrubber(self.secrets))
            if content is not None:
                text = self._redact("content", content)
                if text != record.content:
                    out["content"] = text
                    out["contentHash"] = content_hash(text)
                    out["governance"] |= {"verification": "unverified", "verifiedAt": None}
            return out

        return self._change(record_id, scope, confirm, "edited", changes, allow_same=False)

    def _change(self, record_id: str, scope: str | None, confirm: bool, verb: str,
                changes: Callable[[MemoryRecord, int], dict[str, Any]], allow_same: bool = True) -> RecordReceipt:
        where = self.find(record_id, scope)
        self._check_confirmed(where, confirm)
        receipt: list[RecordReceipt] = []

        def apply(current: dict[str, MemoryRecord]) -> list[MemoryRecord]:
            record = self._records(where, current).get(record_id)
            if record is None:
                raise NotFound(f"id: no record {echo_value(record_id)} in {where}", field="id",
                               id=echo_value(record_id))
            if record.status == "forgotten":
                if verb == "forgotten":
                    receipt.append(RecordReceipt("skipped", record, f"{record_id} was already forgotten"))
                    return []
                raise InvalidInput("id", f"{echo_value(record_id)} is forgotten; a forgotten record cannot be {verb}")
            now = max(self._clock(), record.updated_at)
            data = record.to_json()
            delta = changes(record, now)
            gov = {**data["governance"], **delta.pop("governance", {})}
            updated = {**data, **delta, "governance": {k: v for k, v in gov.items() if v is not None}}
            if allow_same and _same(updated, data):
                receipt.append(RecordReceipt("skipped", record, f"{record_id} was already {verb}"))
                return []
            updated["updatedAt"] = now
            new = validate_record(updated)
            receipt.append(RecordReceipt("committed", new, f"{verb} {record_id}"))
            return [new]

        self.store(where).update(apply)
        return receipt[0]

    # ------------------------------------------------------------------ reads

    def find(self, record_id: str, scope: str | None = None) -> str:
        """The scope holding ``record_id`` (checks ``scope`` only when given). Raises :class:`NotFound`,
        or :class:`AmbiguousMatch` when the id exists in several scopes (give the scope)."""
        if not isinstance(record_id, str) or not record_id.strip():
            raise InvalidInput("id", "must be a non-empty record id")
        if scope is not None:
            _check_choice("recordScope", scope, SCOPES)
        scopes = [scope] if scope else self.available_scopes()
        found = [s for s in scopes if record_id in self.read(s)]
        if not found:
            raise NotFound(f"id: no record {echo_value(record_id)} in {', '.join(scopes)}", field="id",
                           id=echo_value(record_id))
        if len(found) > 1:
            raise AmbiguousMatch(f"id: {echo_value(record_id)} exists in {', '.join(found)}; give the record scope",
                                 field="id", matches=len(found))
        return found[0]

    def get(self, record_id: str, scope: str | None = None) -> MemoryRecord:
        """The current state of one record (forgotten ones too)."""
        where = self.find(record_id, scope)
        return self.read(where)[record_id]

    def list(self, *, scopes: Sequence[str] | None = None, type: str | None = None, status: str | None = None,
             verification: str | None = None, tag: str | None = None, text: str | None = None,
             proposals: bool = False, limit: int | None = None, text_field: str = "text") -> list[MemoryRecord]:
        """Records matching every filter, newest ``updatedAt`` first. ``status`` None means every status but
        forgotten; ``text`` matches case-insensitively when every word occurs in the title, content or
        tags; ``proposals`` keeps pending proposals only. ``limit`` 1..10000.

        ``text`` is at most :data:`mnemon_ls.text.MAX_QUERY_CHARS` (2000) characters, the bound of every
        search query (:func:`mnemon_ls.text.check_query_length`, Unicode code points); a longer one raises
        :class:`InvalidInput` naming ``text_field`` (the surface's name of the argument: ``text`` for the CLI
        and ``mnemon/records/list``, ``query`` for the MCP tool)."""
        if text is not None:
            if not isinstance(text, str):
                raise InvalidInput(text_field, type_rule("a string", text))
            check_query_length(text, text_field)
        for name, value, choices in (("type", type, TYPES), ("status", status, STATUSES),
                                     ("verification", verification, VERIFICATIONS)):
            if value is not None:
                _check_choice(name, value, choices)
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)
                                  or not 1 <= limit <= MAX_LIST_LIMIT):
            raise InvalidInput("limit", f"must be an integer in 1..{MAX_LIST_LIMIT} (got {echo_repr(limit)})")
        chosen = list(scopes) if scopes else self.available_scopes()
        for s in chosen:
            _check_choice("recordScope", s, SCOPES)
        words = [w.casefold() for w in (text or "").split()]
        out = []
        for s in chosen:
            for record in self.read(s).values():
                if status is None and record.status == "forgotten" or status is not None and record.status != status:
                    continue
                if type and record.type != type or verification and record.governance.verification != verification:
                    continue
                if tag and tag not in record.tags or proposals and not record.is_proposal:
                    continue
                if words:
                    hay = " ".join([record.title, record.content, *record.tags]).casefold()
                    if not all(w in hay for w in words):
                        continue
                out.append(record)
        out.sort(key=lambda r: r.updated_at, reverse=True)
        return out[:limit] if limit else out

    def pending_proposals(self) -> int:
        """How many proposals wait for a person across the reachable scopes (0 when no file exists)."""
        total = 0
        for s in self.available_scopes():
            if self._located(s).path.exists():
                total += sum(1 for r in self.read(s).values() if r.is_proposal)
        return total

    # ------------------------------------------------------------------ bundles

    def export(self, scopes: Sequence[str] | None = None) -> dict[str, Any]:
        """``{schemaVersion: 1, exportedAt (epoch ms), records: [...]}``: every record but forgotten ones,
        governance completed (seed 002 section 5), oldest first; redacted as :meth:`export_counted` says."""
        return self.export_counted(scopes)[0]

    def export_counted(self, scopes: Sequence[str] | None = None) -> tuple[dict[str, Any], int]:
        """``(the bundle of :meth:`export`, how many values were redacted)``. Every write of ours was redacted, but a
        record file has other writers (the plugin, a script, a person's editor): unless ``secrets`` is ``allow``
        each record's title, content, provenance note and source reference ids (as texts) and tags (as labels)
        pass the redaction pass (:func:`shown_json`; ``reject`` redacts too: an export refuses nothing), and a
        changed content gets its ``contentHash`` again, so the bundle imports. The record files are not touched."""
        records = [r for r in self.list(scopes=scopes) if r.status != "forgotten"]
        records.sort(key=lambda r: (r.created_at, r.id))
        scrub = self.shown_scrubber()
        shown = [shown_json(r.to_json(), scrub, f"records[{index}]", rehash=True) for index, r in enumerate(records)]
        return {"schemaVersion": 1, "exportedAt": self._clock(), "records": shown}, scrub.count

    def shown_scrubber(self) -> Scrubber:
        """The pass a read shows records through (:func:`shown_json`): ``redact`` unless ``secrets`` is ``allow``
        (``reject`` redacts too: a read refuses nothing); its ``count`` is how many values it replaced."""
        return Scrubber("allow" if self.secrets == "allow" else "redact")

    def import_bundle(self, bundle: Any, *, scope: str = "project", confirm: bool = False) -> dict[str, Any]:
        """Restore a bundle into ``scope`` as review items: origin ``imported``, verification
        ``unverified``, a sourceRef ``{kind: import, id: <original id>}``. An id that already exists with
        the same contentHash is skipped; with another content it gets a new id (renamed).

        The whole bundle is validated first (``schemaVersion`` 1, every record by :func:`validate_record`,
        no control character in an id or a tag, no duplicate ids, no forgotten records, at most
        :data:`MAX_BUNDLE_RECORDS`); any problem raises
        :class:`InvalidInput` (field ``records[i]...``) and nothing is written. Returns ``{scope, total,
        imported, skipped, renamed, ids}``.
        """
        _check_choice("recordScope", scope, SCOPES)
        self._check_confirmed(scope, confirm)
        records = _validate_bundle(bundle)
        location = self.location(scope)
        counts = {"imported": 0, "skipped": 0, "renamed": 0}
        ids: list[str] = []

        def apply(current: dict[str, MemoryRecord]) -> list[MemoryRecord]:
            mine = self._records(scope, current)
            taken = set(current)
            now = self._clock()
            scrub = Scrubber(self.secrets)
            out = []
            for index, record in enumerate(records):
                title = self._redact(f"records[{index}].title", record.title)
                content = self._redact(f"records[{index}].content", record.content)
                existing = mine.get(record.id)
                new_id = record.id
                if existing is not None and existing.content_hash == content_hash(content):
                    counts["skipped"] += 1
                    ids.append(record.id)
                    continue
                if new_id in taken:
                    new_id = f"memory:import:{record.type}:{secrets.token_hex(12)}"
                    counts["renamed"] += 1
                data = record.to_json()
                data.update(title=title, content=content, contentHash=content_hash(content),
                            tags=[scrub.label(f"records[{index}].tags[{j}]", tag) for j, tag in enumerate(record.tags)])
                gov = data["governance"]
                refs = self._refs(gov.get("sourceRefs", []), f"records[{index}].governance.sourceRefs") + [
                    {"kind": "import", "id": record.id}]
                if isinstance(data.get("provenance"), dict) and isinstance(data["provenance"].get("note"), str):
                    data["provenance"] = {**data["provenance"], "note": self._redact(
                        f"records[{index}].provenance.note", data["provenance"]["note"])}
                data.update(id=new_id, scope=scope, scopeKey=location.scope_key,
                            updatedAt=max(now, record.created_at),
                            governance={"origin": "imported", "sourceRefs": refs[-64:], "verification": "unverified",
                                        "revision": gov["revision"], "retention": SCOPE_RETENTION[scope]})
                out.append(validate_record(data))
                taken.add(new_id)
                ids.append(new_id)
                counts["imported"] += 1
            return out

        self.store(scope).update(apply)
        return {"scope": scope, "total": len(records), **counts, "ids": ids}

    def compact(self, scope: str, *, confirm: bool = False) -> dict[str, Any]:
        """Rewrite ``scope``'s file to one line per record (``<file>.bak`` first); ``{scope, file, before,
        after, linesBefore, linesAfter}``."""
        _check_choice("recordScope", scope, SCOPES)
        self._check_confirmed(scope, confirm)
        store = self.store(scope)
        return {"scope": scope, "file": str(store.path), **store.compact()}

    def _check_confirmed(self, scope: str, confirm: bool) -> None:
        if scope == "shared-project" and confirm is not True:
            raise ConfirmationRequired(
                "confirm: a write to the shared-project scope (shared.jsonl, meant to be committed) needs "
                "explicit confirmation (--confirm / \"confirm\": true)", field="confirm", scope=scope)


def _validate_bundle(bundle: Any) -> list[MemoryRecord]:
    if not isinstance(bundle, dict):
        raise InvalidInput("bundle", "must be a JSON object {schemaVersion, exportedAt, records}")
    version = bundle.get("schemaVersion")
    if version != 1 or isinstance(version, bool):
        raise InvalidInput("schemaVersion", f"must be 1 (got {echo_repr(version)}); this version reads schema "
                                            "1 bundles")
    items = bundle.get("records")
    if not isinstance(items, list):
        raise InvalidInput("records", type_rule("a list of records", items))
    if len(items) > MAX_BUNDLE_RECORDS:
        raise InvalidInput("records", f"at most {MAX_BUNDLE_RECORDS} records per bundle (got {len(items)})")
    seen: set[str] = set()
    out = []
    for i, item in enumerate(items):
        try:
            record = validate_record(item)
        except InvalidInput as exc:
            raise InvalidInput(f"records[{i}].{exc.field}", exc.rule) from None
        for field, text in (("id", record.id), *((f"tags[{j}]", tag) for j, tag in enumerate(record.tags))):
            rule = control_rule(text)  # kept as given, and shown as given: a terminal escape would reach the screen
            if rule is not None:
                raise InvalidInput(f"records[{i}].{field}", rule)
        if record.id in seen:
            raise InvalidInput(f"records[{i}].id", f"duplicate id {echo_repr(record.id)} in the bundle")
        if record.status == "forgotten":
            raise InvalidInput(f"records[{i}].status", "a bundle must not contain forgotten records")
        seen.add(record.id)
        out.append(record)
    return out


#: Characters a record title may not hold: C0 controls but tab, and DEL (a title is one line of a listing).
_TITLE_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f]")


def check_written_text(field: str, text: Any) -> Any:
    """``text`` unchanged when a person or an assistant may write it into ``field`` of a record: no NUL in
    any text, no control character (:data:`_TITLE_CONTROL`) in a ``title``. Raises :class:`InvalidInput`
    naming the field and the character (``U+0000``). Not a string: returned as is (the model says why)."""
    if not isinstance(text, str):
        return text
    found = (_TITLE_CONTROL if field.rsplit(".", 1)[-1] == "title" else _NUL).search(text)
    if found is not None:
        what = "NUL characters" if found.group() == "\x00" else "control characters"
        raise InvalidInput(field, f"must not contain {what} (found U+{ord(found.group()):04X})")
    return text


_NUL = re.compile("\x00")


def _check_choice(field: str, value: Any, choices: Iterable[str]) -> None:
    choices = tuple(choices)
    if value not in choices:
        raise InvalidInput(field, f"must be one of {', '.join(choices)} (got {echo_repr(value)})")


def _tags(tags: Any, scrub: Scrubber) -> list[str]:
    """``tags`` validated (a list of strings), whitespace collapsed, empty and repeated ones left out, each
    through ``scrub`` as a label (:meth:`~mnemon_ls.redact.Scrubber.label`: ``reject`` raises naming
    ``tags[i]``)."""
    if isinstance(tags, str) or not isinstance(tags, (list, tuple)):
        raise InvalidInput("tags", type_rule("a list of strings", tags))
    out: list[str] = []
    for i, tag in enumerate(tags):
        if not isinstance(tag, str):
            raise InvalidInput(f"tags[{i}]", type_rule("a string", tag))
        tag = scrub.label(f"tags[{i}]", re.sub(r"\s+", " ", tag).strip())
        if tag and tag not in out:
            out.append(tag)
    return out


def shown_json(data: dict[str, Any], scrub: Scrubber, field: str = "record", *, rehash: bool = False
               ) -> dict[str, Any]:
    """A record's on-disk object (:meth:`~.model.MemoryRecord.to_json`) as a read shows it, changed in place and
    returned: through ``scrub`` (:meth:`RecordsSource.shown_scrubber`) its ``title``, ``content``,
    ``provenance.note`` and each ``governance.sourceRefs[].id`` as texts and its ``tags`` as labels, as a write
    judges them (fields named ``<field>.title`` ...). A record file has other writers (the plugin, a script, a
    person's editor), so a read cannot trust what it holds; the file is not touched. ``rehash``: a changed content
    gets its ``contentHash`` again (an export's bundle must import)."""
    data["title"] = scrub.text(f"{field}.title", data.get("title"))
    content = scrub.text(f"{field}.content", data.get("content"))
    if content != data.get("content"):
        data["content"] = content
        if rehash and isinstance(content, str):
            data["contentHash"] = content_hash(content)
    if data.get("tags"):
        data["tags"] = scrub.labels(f"{field}.tags", data["tags"])
    provenance = data.get("provenance")
    if isinstance(provenance, dict) and isinstance(provenance.get("note"), str):
        provenance["note"] = scrub.text(f"{field}.provenance.note", provenance["note"])
    governance = data.get("governance")
    for index, ref in enumerate(governance.get("sourceRefs") or () if isinstance(governance, dict) else ()):
        if isinstance(ref, dict) and isinstance(ref.get("id"), str):
            ref["id"] = scrub.text(f"{field}.governance.sourceRefs[{index}].id", ref["id"])
    return data


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    keys = set(a) | set(b)
    return all(a.get(k) == b.get(k) for k in keys if k != "updatedAt")
