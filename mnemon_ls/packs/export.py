"""Export a storage root as a Mnemon Pack (reference section 9).

What goes in, per component (only regular files; a link anywhere is refused by the Sources' readers):

- runtime: ``memories.json`` with the entries this workspace sees (``runtimeUserScope=global``: the
  global root's ``user`` entries and this root's ``memory`` entries; serialized by
  :func:`mnemon_ls.runtime.model.serialize_store`) and the two projections built from them. The user
  profile (``user`` entries, USER.md: facts about the person) is left out unless asked for
  (``include_user_profile``), so a pack shared with a team never carries it by surprise;
- documents: ``index.json`` (records re-serialized with ``relativePath`` forced to
  ``documents/<status>/<filename>``) and every managed file, read under the index lock so the set is
  one committed state;
- memory-spaces: the native catalog ``data/.dsh-memory-bodies.json`` (native spaces only) and each
  ``data/<id>/mnemon.db``. Each store is checkpointed first (``wal_checkpoint(TRUNCATE)`` on a
  connection of ours, after this process's own connections are closed); a store whose
  ``mnemon.db-wal`` is still not empty (another process holds a read snapshot or keeps writing) is
  refused (:class:`~mnemon_ls.errors.PackRefused`, reason ``wal-not-checkpointed``). The file is read
  inside a read transaction taken on the empty WAL, so no checkpoint can change it meanwhile.

Third-party spaces, ``state/memory-providers.json`` (connections, credentials) and every derived or
transient file (side indexes, locks, access logs) are never included. The pack is validated by
:func:`.validate.read_pack` before it is returned, so what we write we also accept.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import sqlite3
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from .. import __version__, fsio
from ..documents.indexformat import managed_relative, parse_index, serialize_index
from ..documents.model import body_hash, relative_path
from ..documents.shown import shown_text
from ..errors import InvalidInput, PackRefused, UnreadableStore, echo_repr
from ..runtime.model import projection_bytes, serialize_store
from ..sqliteindex import open_existing
from . import format as fmt
from .validate import INDEX_FILE, REGISTRY_FILE, RUNTIME_FILE, Pack, read_pack

if TYPE_CHECKING:
    from ..hosting import Host


@dataclass(frozen=True)
class ExportedPack:
    """An exported pack: its ``data`` (ZIP bytes), the reference's ``file_name`` and the parsed ``pack``."""

    data: bytes
    file_name: str
    pack: Pack
    #: USER.md entries (the user profile) this root has that the pack leaves out (``include_user_profile``
    #: not given); 0 when the pack carries them or has no runtime component.
    user_profile_left_out: int = 0
    #: Third-party (provider) spaces of this root the pack leaves out: a pack never carries third-party
    #: connections or their content (reference section 9); 0 without a memory-spaces component.
    provider_spaces_left_out: int = 0
    #: Hand edits taken in before the export read the root: ``{file, status, message, savedAs?}`` per file
    #: (USER.md / MEMORY.md: :meth:`~mnemon_ls.runtime.repair.ProjectionRepair.repair`'s results; a document:
    #: status ``adopted``, a new revision).
    hand_edits: tuple[dict[str, Any], ...] = ()
    #: Values that looked like credentials (another program stored them) replaced by their placeholders in the
    #: pack: ``{"count": N, "kinds": {kind: n}}`` (:func:`.exportredact.summary`), ``None`` when none was (always
    #: under ``secrets: allow`` and for an import's backup, :func:`export_held`).
    redacted: dict[str, Any] | None = None
    #: Tables (and views) of a space's ``mnemon.db`` that the Mnemon format does not define, left out of the pack
    #: because nothing could judge what they hold: ``{"space": id, "table": name}`` each
    #: (:func:`.exportredact.leave_out_foreign_tables`); always empty under ``secrets: allow`` and for a backup.
    foreign_tables: tuple[dict[str, str], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """``{fileName, bytes, scope, components, summary, exportedAt, userProfile: {carried, leftOut},
        providerSpaces: {leftOut}, handEdits: [...], redacted, foreignTables}`` (no payload; ``carried``/``leftOut``:
        USER.md entries in the pack / left out of it; ``providerSpaces.leftOut``: third-party spaces left out;
        ``handEdits``: :attr:`hand_edits`; ``redacted``: :attr:`redacted`, only when something was;
        ``foreignTables``: ``{leftOut: [{space, table}]}``, :attr:`foreign_tables`, only when one was left out)."""
        manifest = self.pack.archive.manifest
        return {"fileName": self.file_name, "bytes": len(self.data), "scope": manifest["scope"],
                "components": manifest["components"], "summary": manifest["summary"],
                "exportedAt": manifest["exportedAt"],
                "userProfile": {"carried": self.pack.user_profile_entries(), "leftOut": self.user_profile_left_out},
                "providerSpaces": {"leftOut": self.provider_spaces_left_out}, "handEdits": list(self.hand_edits)
                } | ({"redacted": self.redacted} if self.redacted else {}) | (
                    {"foreignTables": {"leftOut": list(self.foreign_tables)}} if self.foreign_tables else {})


def validate_scope(value: Any, field: str = "packScope") -> str:
    """A pack scope (``full``, ``runtime``, ``documents``, ``memory-spaces``) or :class:`InvalidInput`."""
    if value is None:
        return "full"
    if value not in fmt.SCOPES:
        raise InvalidInput(field, f"must be one of {', '.join(fmt.SCOPES)} (got {echo_repr(value)})")
    return value


def export_pack(host: "Host", scope: str = "full", *, include_user_profile: bool = False,
                now: datetime | None = None) -> ExportedPack:
    """Export ``host``'s memory for ``scope`` (module doc). The user profile (``target=user`` entries,
    USER.md) stays on this machine unless ``include_user_profile``: the pack's ``USER.md`` is then the
    projection of no entries and :attr:`ExportedPack.user_profile_left_out` counts what was left out.
    Never writes under the root except what SQLite's checkpoint folds back into ``mnemon.db`` and, with the
    runtime component, a hand edit of USER.md / MEMORY.md imported first (``handEdits``, as every runtime
    command does: :meth:`~mnemon_ls.runtime.source.RuntimeSource.repair`), so the pack holds what the files show.
    Raises :class:`InvalidInput` (scope), :class:`UnreadableStore` (a damaged store file), :class:`PackRefused` (a
    WAL that cannot be
    checkpointed) and :class:`~mnemon_ls.errors.PackInvalid` (the root holds something a pack cannot
    carry, e.g. a document file that differs from its index record). Unless ``secrets`` is ``allow``, what looks
    like a credential is redacted in the pack (:mod:`.exportredact`; :attr:`ExportedPack.redacted` counts it) and
    the tables of a space's store that the Mnemon format does not define are left out
    (:attr:`ExportedPack.foreign_tables`)."""
    scope = validate_scope(scope)
    with host.pack_gate():  # one state of the root: an import in another process waits (:mod:`.gate`)
        hand_edits = _take_in_hand_edits(host, fmt.SCOPES[scope])
        exported = _build(host, scope, include_user_profile, now, held=False, notes=hand_edits,
                          redact=host.settings.secrets != "allow")
    return dataclasses.replace(exported, hand_edits=tuple(hand_edits))


def _take_in_hand_edits(host: "Host", components: Sequence[str]) -> list[dict[str, Any]]:
    """Hand edits of USER.md / MEMORY.md (``runtime``) and of documents (``documents``) taken into their
    stores, so the pack holds what the files show (:attr:`ExportedPack.hand_edits`)."""
    from .plan import repair_results

    taken: list[dict[str, Any]] = []
    if "runtime" in components:
        for store, report in host.runtime.repair(rebuild_missing=False):
            taken += repair_results(store, report)
    if "documents" in components and (host.root / "documents" / "index.json").is_file():
        report = host.documents.freshness.refresh()
        records = {e.record.id: e.record for e in host.documents.list().documents} if report.adopted else {}
        for document_id in report.adopted:
            record = records[document_id]
            taken.append({"file": str(host.root / managed_relative(record.relative_path)), "status": "adopted",
                          "message": f"document {document_id} ({shown_text(record.title, host.settings.secrets)}) "
                                     "changed by hand: taken in as "
                                     f"revision {record.revision}"})
    return taken


def export_held(host: "Host", scope: str, *, include_user_profile: bool,
                now: datetime | None = None) -> ExportedPack:
    """:func:`export_pack` for a caller that already holds the pack gate exclusive and the component locks
    of ``host``'s root (a replace import saving what it is about to replace,
    :mod:`.importer`): the same payload and format, read without taking any lock again (the registry and
    the document index are read from their files, never repaired). Raises what :func:`export_pack` raises."""
    return _build(host, validate_scope(scope), include_user_profile, now, held=True)


def _build(host: "Host", scope: str, include_user_profile: bool, now: datetime | None,
           *, held: bool, notes: list[dict[str, Any]] | None = None, redact: bool = False) -> ExportedPack:
    moment = (now or datetime.now(timezone.utc)).astimezone(timezone.utc)
    payload: dict[str, bytes] = {}
    left_out = providers_left_out = 0
    redacted: Any = None
    foreign: list[dict[str, str]] = []
    components = fmt.SCOPES[scope]
    items: dict[str, int] = {}
    if "runtime" in components:
        part, items["runtime"], left_out, redacted = _runtime(host, include_user_profile, redact)
        payload.update(part)
    if "documents" in components:
        part, items["documents"] = _documents(host, held, notes)
        payload.update(part)
    if "memory-spaces" in components:
        part, items["memory-spaces"], providers_left_out = _spaces(host, held)
        payload.update(part)
    if redact:
        from .exportredact import redact_payload, summary

        kinds, foreign = redact_payload(host, payload, components, read_documents=_documents, read_spaces=_spaces)
        redacted = summary(kinds if redacted is None else redacted + kinds)
    summary = []
    for component in components:
        files = [data for path, data in payload.items() if fmt.component_of(path) == component]
        summary.append({"component": component, "files": len(files), "bytes": sum(len(d) for d in files),
                        "items": items[component]})
    manifest = fmt.build_manifest(scope, fmt.iso_ms(moment), __version__, summary)
    from .citations import MANIFEST_KEY, collect

    carried = collect(host, components, payload)
    if carried is not None:
        manifest[MANIFEST_KEY] = carried  # the citations of what the pack carries (:mod:`.citations`)
    data = fmt.write_archive(manifest, payload)
    pack = read_pack(data)  # what we write we also accept (raises PackInvalid naming what is wrong)
    return ExportedPack(data, fmt.pack_file_name(moment), pack, left_out, providers_left_out, redacted=redacted,
                        foreign_tables=tuple(foreign))


def _runtime(host: "Host", include_user_profile: bool, redact: bool = False
             ) -> tuple[dict[str, bytes], int, int, Any]:
    """The runtime payload, its entry count, the number of USER.md entries left out and the kinds of values
    redacted (a ``Counter``, ``None`` without ``redact``: each entry's content through
    :func:`.exportredact.redacted_entries`)."""
    state = host.runtime.read()
    if state.problems:
        raise UnreadableStore(f"Runtime memory is damaged: {state.problems[0]}; run `mnemon-ls runtime recover` "
                              "before exporting", reason=state.problems[0])
    user = list(state.user) if include_user_profile else []
    entries = [*user, *state.memory]
    redacted = None
    if redact:
        from .exportredact import redacted_entries

        entries, redacted = redacted_entries(entries)
    return {RUNTIME_FILE: serialize_store(entries),
            "payload/runtime/USER.md": projection_bytes(entries, "user"),
            "payload/runtime/MEMORY.md": projection_bytes(entries, "memory")}, len(entries), \
        len(state.user) - len(user), redacted


def _documents(host: "Host", held: bool = False,
               notes: list[dict[str, Any]] | None = None) -> tuple[dict[str, bytes], int]:
    root = host.root
    index_path = root / "documents" / "index.json"
    if not index_path.is_file():
        return {INDEX_FILE: serialize_index(())}, 0
    if held:  # the caller holds the index lock: no access flush (it takes that lock), no second hold
        lock: Any = contextlib.nullcontext()
    else:
        store = host.documents  # (hand edits were taken in first: _take_in_hand_edits)
        store.flush_access()
        lock = fsio.file_lock(store.lock_path, store.lock_timeout)
    with lock:
        data = fsio.read_bytes_or_none(index_path) or b""
        try:
            parsed = parse_index(data)
        except InvalidInput as exc:
            raise UnreadableStore(f"{index_path} is damaged: {exc.message}; run `mnemon-ls doc recover` before "
                                  "exporting", file=str(index_path), reason=exc.message) from None
        records = [r.with_changes(relative_path=relative_path(r.status, r.filename)) for r in parsed.records]
        out = {INDEX_FILE: serialize_index(records, parsed.extra)}
        for original, record in zip(parsed.records, records):
            path = root / managed_relative(original.relative_path)
            body = fsio.read_bytes_or_none(path)
            if body is None:
                raise UnreadableStore(f"{path} (document {record.id}) is missing; run `mnemon-ls doc recover` "
                                      "before exporting", file=str(path), reason="missing")
            if len(body) != original.size_bytes or body_hash(body) != original.content_hash:
                index_form = frontmatter_only_edit(original, body)
                if index_form is None:
                    raise _changed_document(original, path, body, host.settings.secrets)
                body = index_form  # the pack carries the index's frontmatter (title, description, ...)
                if notes is not None:
                    notes.append({"file": str(path), "status": "frontmatter-kept", "message": (
                        f"document {original.id} ({shown_text(original.title, host.settings.secrets)}): its "
                        "frontmatter was changed by hand; a "
                        "document's title and description come from the index (the pack carries those): change "
                        f"them with `mnemon-ls doc update {original.id}`")})
            out[f"payload/{record.relative_path}"] = body
    return out, len(records)


def frontmatter_only_edit(record: Any, data: bytes) -> bytes | None:
    """When the managed file ``data`` of ``record`` differs from the index only in its frontmatter (the body
    is the record's), the file in the index's form (:func:`~mnemon_ls.documents.model.render_markdown`,
    ``record.size_bytes`` long); else ``None``."""
    from ..documents.model import render_markdown, split_markdown

    if body_hash(data) != record.content_hash:
        return None
    rendered = render_markdown(record, split_markdown(data.decode("utf-8"))[1]).encode("utf-8")
    return rendered if len(rendered) == record.size_bytes else None


def _changed_document(record: Any, path: Path, data: bytes, secrets: str) -> PackRefused:
    """The refusal of an export whose document file differs from its index record and was not taken in
    (reason ``document-changed``, ``file``): why, and what to do."""
    from ..documents.model import split_markdown
    from ..redact import find_secrets

    try:
        body = split_markdown(data.decode("utf-8"))[1]
    except UnicodeDecodeError as exc:
        why, advice = (f"it is not UTF-8 text (invalid byte at offset {exc.start})",
                       f"re-save it as UTF-8, or `mnemon-ls doc update {record.id} --content ...`")
    else:
        if record.status == "archived":
            why, advice = ("archived documents are immutable", "put the file back as it was (restore the document "
                                                               "to edit it)")
        elif not body:
            why, advice = "its body is empty", "put the text back, or update the document"
        elif secrets == "reject" and find_secrets(body):
            why, advice = ("it holds what looks like a credential (secrets is reject)",
                           "remove it from the file, or set secrets to redact")
        else:
            why, advice = "its frontmatter or body could not be taken in", "`mnemon-ls doctor` says why"
    return PackRefused(f"{path} (document {record.id}, {record.title!r}) was changed outside mnemon-ls and could not "
                       f"be taken in: {why}; nothing was exported. {advice[0].upper()}{advice[1:]}",
                       reason="document-changed", file=str(path))


def _spaces(host: "Host", held: bool = False) -> tuple[dict[str, bytes], int, int]:
    """The memory-spaces payload, its native space count and the number of third-party spaces left out."""
    root = host.root
    if not (root / "data").is_dir():
        return {REGISTRY_FILE: _catalog([])}, 0, 0
    if held:  # the caller holds the registry lock and has closed the host's Sources
        from ..spaces.registry import SpaceRegistry

        state: Any = SpaceRegistry(root).read()
    else:
        service = host.spaces
        state = service.state()
        service.close()  # our own connections: pending counters written, nothing of ours holds the WAL
    state.require_native()  # a newer version's catalog: its spaces cannot be read here, so none is left out silently
    out = {REGISTRY_FILE: _catalog([b.to_native_json() for b in state.bodies])}
    for record in state.bodies:
        db_path = root / "data" / record.id / "mnemon.db"
        out[f"payload/data/{record.id}/mnemon.db"] = read_checkpointed(db_path, record.id)
    return out, len(state.bodies), len(state.provider_bodies)


def _catalog(bodies: list[dict[str, Any]]) -> bytes:
    return (json.dumps({"version": 1, "bodies": bodies}, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def read_checkpointed(db_path: Path, space_id: str) -> bytes:
    """The bytes of ``db_path`` with every committed transaction in them (module doc). Raises
    :class:`PackRefused` (``wal-not-checkpointed``) and :class:`UnreadableStore` (missing, linked, not
    SQLite)."""
    fsio.check_store_path(db_path)
    if not db_path.is_file():
        raise UnreadableStore(f"{db_path}: the store of space {space_id} is missing; nothing was exported",
                              file=str(db_path), reason="missing")
    wal = Path(f"{db_path}-wal")
    try:
        db = open_existing(db_path, timeout=2)  # never creates a store that vanished meanwhile
    except sqlite3.Error as exc:
        raise UnreadableStore(f"{db_path} cannot be opened: {exc}", file=str(db_path), reason=str(exc)) from None
    try:
        try:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            db.execute("BEGIN")
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.DatabaseError as exc:
            raise UnreadableStore(f"{db_path} is not a readable SQLite store: {exc}", file=str(db_path),
                                  reason=str(exc)) from None
        try:
            if wal.exists() and wal.stat().st_size > 0:
                raise PackRefused(
                    f"space {space_id}: {wal} is not checkpointed (another process is reading or writing the store); "
                    "close the other Mnemon/mnemon-ls processes on this root and export again",
                    reason="wal-not-checkpointed", file=str(wal))
            with open(db_path, "rb") as handle:
                data = handle.read()
        finally:
            db.execute("COMMIT")
    finally:
        db.close()
    return data


def write_pack_file(path: Path, data: bytes, roots: "Iterable[Path]" = (), allowed: "Iterable[Path]" = ()) -> None:
    """Write pack ``data`` to ``path`` durably (temp file, fsync, rename; mode 0600). Raises
    :class:`InvalidInput` (field ``output``) for a symbolic link, a directory, a missing parent directory,
    or a path inside one of the storage ``roots`` (a pack written there would replace a store's own file:
    ``mnemon.db``, ``memories.json``) other than directly in one of the ``allowed`` folders (the packs'
    own folders, :mod:`.backups`)."""
    path = Path(os.path.abspath(path))
    if path.is_symlink():
        raise InvalidInput("output", f"{path} is a symbolic link; give a plain file name")
    real = Path(os.path.realpath(path))
    folders = {Path(os.path.realpath(a)) for a in allowed}
    for root in roots:
        root_real = Path(os.path.realpath(root))
        if real.parent in folders:
            break
        if real == root_real or root_real in real.parents:
            raise InvalidInput("output", f"{path} is inside the storage root {root}; write the pack outside it")
    if path.is_dir():
        raise InvalidInput("output", f"{path} is a directory; give a file name")
    if not path.parent.is_dir():
        raise InvalidInput("output", f"the directory {path.parent} does not exist")
    _check_existing_output(path)
    fsio.write_file_atomically(path, data)


def _check_existing_output(path: Path) -> None:
    """Refuse (``InvalidInput`` on ``output``) to replace an existing ``path`` that is not a regular file (a
    device, FIFO or socket), is read-only, or is not a Mnemon Pack (a ZIP holding ``manifest.json``): an
    earlier pack is replaced (export again to the same name), anything else is the user's and is kept."""
    import stat
    import zipfile

    try:
        info = os.stat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise InvalidInput("output", f"{path} cannot be read ({exc.strerror or exc})") from None
    if not stat.S_ISREG(info.st_mode):
        raise InvalidInput("output", f"{path} exists and is not a regular file; give a new file name")
    if not info.st_mode & 0o222:
        raise InvalidInput("output", f"{path} exists and is read-only; give a new file name")
    try:
        with zipfile.ZipFile(path) as existing:
            is_pack = "manifest.json" in existing.namelist()
    except (zipfile.BadZipFile, OSError, ValueError):
        is_pack = False
    if not is_pack:
        raise InvalidInput("output", f"{path} exists and is not a Mnemon Pack; remove it or give a new file name")


def pack_roots(host: Any) -> list[Path]:
    """The storage roots of ``host`` a pack file must not be written into (the root and the user root)."""
    roots = [host.root]
    user_root = getattr(host.resolution, "user_root", None)
    if user_root is not None and user_root != host.root:
        roots.append(user_root)
    return roots
