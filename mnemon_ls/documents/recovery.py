"""Recovery of a Documents store: rebuilding a damaged or missing ``index.json`` from the managed files.

``mnemon-ls doc recover``: the damaged index is first copied to ``documents/quarantine/`` (never
overwritten before that copy is durable); readable records keep their metadata, every other managed file
becomes a record from its frontmatter. A valid index only gains the managed files no record names.
Also here, as a step of a repair (``store.moves``): the orphan managed files adopted or set aside
(:meth:`Recovery.settle_orphans`), since an adopted orphan becomes a record as ``recover`` makes one.

:class:`Recovery` is a part a :class:`~.store.DocumentStore` owns (``store.recovery``); it reaches the store
only through :class:`RecoveringStore`: its paths and ``secrets`` setting, the mutex and file lock, the index,
the managed files, the clock, and the repair and refresh that follow a rebuild.
"""

from __future__ import annotations

import os
import re
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol, Sequence

from .. import fsio
from ..errors import MnemonError
from . import model
from .files import ManagedFiles, SpecialFile, read_managed_or_none, read_regular_file
from .freshness import _or, _str_tuple, redact_typed
from .index import IndexFile
from .indexformat import salvage_index
from .model import DocumentRecord, Status, js_trim, sha256_hex, split_markdown, time_key
from .views import RefreshReport, RepairReport


class Repairing(Protocol):
    """What a recovery uses of ``store.moves`` (:class:`~.moves.Moves`)."""

    def repair(self) -> RepairReport: ...


class Refreshing(Protocol):
    """What a recovery uses of ``store.freshness`` (:class:`~.freshness.Freshness`)."""

    def refresh(self) -> RefreshReport: ...


class Resyncing(Protocol):
    """What a recovery uses of ``store.search`` (:class:`~.search.Search`)."""

    def invalidate(self) -> None: ...


class RecoveringStore(Protocol):
    """What recovery uses of its :class:`~.store.DocumentStore`: ``index.json``'s path, the quarantine and
    orphans directories, the ``secrets`` setting, the mutex and file lock, the index, the managed files, the
    clock, and the repair, refresh and search parts (see the store's members of these names)."""

    index_path: Path
    quarantine_dir: Path
    orphans_dir: Path
    secrets: str
    mutex: AbstractContextManager[Any]
    index: IndexFile
    files: ManagedFiles
    moves: Repairing
    freshness: Refreshing
    search: Resyncing

    def locked(self) -> AbstractContextManager[Any]: ...

    def now(self) -> str: ...


class Recovery:
    """``recover`` and the orphans of a repair (module doc); ``store.recovery`` of a ``DocumentStore``."""

    def __init__(self, store: RecoveringStore) -> None:
        self.store = store

    def recover(self) -> dict[str, Any]:
        """Rebuild a damaged or missing ``index.json`` from the managed files' frontmatter.

        The damaged file is first copied to ``documents/quarantine/<stamp>-index.json`` (never
        overwritten in place before that copy is durable). Records readable in the damaged index keep
        their metadata (revision, lastAccessedAt, archive summary, ...) and take the status of the
        directory their file is in; every other managed file becomes a record from its frontmatter
        (revision 1, title from the frontmatter, else the first Markdown heading, else the file name).
        Records whose file is missing are kept (and reported as missing). A valid index is left as it
        is, except that managed files no record names (orphans of an interrupted create) are added.

        Returns ``{recovered, quarantined, documents, fromIndex, fromFiles, damagedRecords,
        missingFiles, message}``. Raises :class:`~mnemon_ls.errors.StoreBusy` (lock timeout) and the
        :class:`OSError` of a write (the damaged index is then still in place).
        """
        store = self.store
        with store.mutex, store.locked():
            data = fsio.read_bytes_or_none(store.index_path)
            view = store.index.parse(data)
            listing = store.files.managed_names(store.files.listing())
            if data is not None and not view.problem:
                named = {(r.status, r.filename) for r in view.records}
                orphans = [(s, n) for s, names in listing.items() for n in names if (s, n) not in named]
                if not orphans:
                    return {"recovered": False, "quarantined": None, "documents": len(view.records), "fromIndex":
                            len(view.records), "fromFiles": 0, "damagedRecords": 0, "missingFiles": 0,
                            "message": f"{store.index_path} is valid and names every managed file; nothing to recover"}
                base, damaged = list(view.records), 0
            else:
                base, damaged = salvage_index(data) if data is not None else ([], 0)
            quarantined = None
            if data is not None and view.problem:
                quarantined = str(fsio.copy_file_exclusive(store.quarantine_dir, f"{store.files.stamp()}-index.json",
                                                           data))
            records, from_files = self._rebuild(base, listing)
            encoded, _ = store.index.codec.encode(records, view.extra if not view.problem else ())
            fsio.write_file_atomically(store.index_path, encoded)
            store.index.forget()
            store.files.signatures.clear()
            store.files.missing.clear()
            store.search.invalidate()
        store.moves.repair()
        refresh = store.freshness.refresh()
        missing = len(refresh.missing)
        message = (f"rebuilt documents/index.json with {len(records)} documents ({len(records) - from_files} from the "
                   f"readable index records, {from_files} from managed files)")
        if quarantined:
            message += f"; the damaged index is kept at {quarantined}"
        if missing:
            message += f"; {missing} document(s) have no managed file (kept, reported as missing)"
        return {"recovered": True, "quarantined": quarantined, "documents": len(records),
                "fromIndex": len(records) - from_files, "fromFiles": from_files, "damagedRecords": damaged,
                "missingFiles": missing, "message": message}

    def settle_orphans(self, report: RepairReport) -> None:
        """Adopt or set aside the managed files no index record names (the store's file lock held; a step of
        :meth:`~.moves.Moves.repair`; nothing is done on a damaged index).

        Such a file is what a create killed between writing its file and committing the index leaves
        (or one put into ``active/``/``archived/`` by hand). Under the lock no writer is half-way, so
        every such file is a leftover. Content is never deleted: a readable UTF-8 file with a body that
        no record already holds becomes a record as :meth:`recover` would make it (its frontmatter id
        when free, else a new one; revision 1; status from its directory) and the index is committed;
        any other (not UTF-8, not a regular file, no body, a body whose first line is indented as a code block,
        which the rewrite in the managed form would trim away, or the body of a document the index already
        has, e.g. a create retried after the crash) is renamed unchanged into ``documents/orphans/``.
        Both are recorded in ``report`` (``adopted``, ``set_aside``). Raises the :class:`OSError` of a
        write or rename (what was done before it stays consistent: an adoption is committed at the end).
        """
        store = self.store
        view = store.index.view(force=True)
        if view.problem:
            return
        named = {r.filename for r in view.records}
        listing = store.files.managed_names(store.files.listing())
        orphans = [(s, n) for s, names in listing.items() for n in names if n not in named]
        if not orphans:
            return
        holders = {r.content_hash: r.id for r in view.records}
        now = store.now()
        fresh: list[DocumentRecord] = []
        for status, name in orphans:
            path = store.files.dir_for(status) / name
            rel = model.relative_path(status, name)
            reason = None
            fm: dict[str, Any] = {}
            body = ""
            try:
                data = read_regular_file(path)
            except FileNotFoundError:
                continue
            except SpecialFile as exc:
                data, reason = b"", exc.strerror
            except OSError as exc:
                data, reason = b"", f"cannot be read ({exc.strerror or exc})"
            if reason is None:
                try:
                    front, raw = model.split_markdown_raw(data.decode("utf-8"))
                except UnicodeDecodeError as exc:
                    reason = f"is not UTF-8 text (invalid byte at offset {exc.start})"
                else:
                    body, indented = js_trim(raw), model.indented_start(raw)
                    fm = model.parse_frontmatter(front) if front is not None else {}
                    holder = holders.get(sha256_hex(body))
                    if not body:
                        reason = "has no body"
                    elif indented is not None:  # adopting rewrites it trimmed: the indentation would be lost
                        reason = (f"starts its body with a line indented as a code block ({indented}), which a "
                                  f"document body cannot keep ({model.TRIM_RULE})")
                    elif any(r.filename == name for r in fresh):
                        reason = "has the file name of another orphan just adopted (one name, one document)"
                    elif holder is not None:
                        reason = f"repeats the body of document {holder} (a create retried after a crash)"
            original = data
            if reason is None:
                # the secrets setting holds for a file dropped in by hand: redacted, or under reject set aside
                try:
                    data, body = redact_typed(store.secrets, rel, data, body)
                except MnemonError as exc:
                    reason = f"{exc.message} (secrets is reject)"
            if reason is not None:
                report.set_aside.append({"file": rel, "to": self._set_aside(path, status, name), "reason": reason})
                continue
            doc_id = fm.get("id")
            if not (isinstance(doc_id, str) and doc_id and doc_id == js_trim(doc_id)) or doc_id in view.by_id \
                    or any(r.id == doc_id for r in fresh):
                doc_id = model.new_id()
            record = _record_from_file(doc_id, (status, name, data, fm, body), now)
            # the file is written in the managed form (frontmatter naming its id, as every document file),
            # so it can be read, searched and exported like one; a frontmatter of its own is saved first
            rendered = model.render_markdown(record, body).encode("utf-8")
            if rendered != original:
                if fm or data != original:
                    store.files.preserve(name, data)
                if (displaced := fsio.replace_watching(path, rendered, original)) is not None:  # saved meanwhile
                    report.preserved[f"{rel} (saved during the write)"] = store.files.preserve(name, displaced)
                record = record.with_changes(size_bytes=len(rendered))
            fresh.append(record)
            holders[record.content_hash] = doc_id
            report.adopted.append({"id": doc_id, "file": rel})
        if fresh:
            view = store.index.commit(view, [*view.records, *fresh])
            for record in fresh:
                store.files.note_file(view.by_id[record.id])

    def _set_aside(self, path: Path, status: Status, name: str) -> str:
        """Rename ``path`` (unchanged, byte for byte) to ``documents/orphans/<stamp>-<status>-<name>``."""
        store = self.store
        fsio.ensure_dir(store.orphans_dir)
        base = f"{store.files.stamp()}-{status}-{name}"
        target = store.orphans_dir / base
        for attempt in range(1, 1000):
            if not os.path.lexists(target):
                break
            target = store.orphans_dir / f"{base}.{attempt}"
        os.rename(path, target)
        fsio._fsync_dir(store.orphans_dir)
        fsio._fsync_dir(path.parent)
        return str(target)

    def _rebuild(self, base: Sequence[DocumentRecord],
                 listing: dict[str, list[str]]) -> tuple[list[DocumentRecord], int]:
        files: dict[str, list[tuple[Status, str, bytes, dict[str, Any], str]]] = {}
        anonymous: list[tuple[Status, str, bytes, dict[str, Any], str]] = []
        for status in model.STATUSES:
            for name in listing[status]:
                try:
                    data = read_managed_or_none(self.store.files.dir_for(status) / name)
                    if data is None:
                        continue
                    front, body = split_markdown(data.decode("utf-8"))
                except (OSError, UnicodeDecodeError):
                    continue  # not a regular file, unreadable or not UTF-8: never adopted (reported by refresh)
                fm = model.parse_frontmatter(front) if front is not None else {}
                entry = (status, name, data, fm, body)
                doc_id = fm.get("id")
                if isinstance(doc_id, str) and doc_id and doc_id == js_trim(doc_id):
                    files.setdefault(doc_id, []).append(entry)
                elif body:
                    anonymous.append(entry)
        by_id = {r.id: r for r in base}
        records: list[DocumentRecord] = []
        used_paths: set[tuple[str, str]] = set()
        for record in base:
            copies = files.pop(record.id, [])
            chosen = _choose_copy(copies, record.status)
            if chosen is None:
                records.append(record)
                used_paths.add((record.status, record.filename))
                continue
            status, name, data, fm, body = chosen
            digest = sha256_hex(body)
            new = record.with_changes(
                status=status, filename=name, relative_path=model.relative_path(status, name), size_bytes=len(data),
                content_hash=digest, revision=record.revision + (0 if digest == record.content_hash else 1))
            if status == "active":
                new = new.with_changes(archived_at=None, archive_summary=None)
            elif new.archived_at is None:
                new = new.with_changes(archived_at=record.updated_at)
            records.append(new)
            used_paths.add((status, name))
        now = self.store.now()
        fresh: list[DocumentRecord] = []
        for doc_id, copies in files.items():
            if doc_id in by_id:
                continue
            chosen = _choose_copy(copies, None)
            fresh.append(_record_from_file(doc_id, chosen, now))
        for entry in anonymous:
            doc_id = model.new_id()
            fresh.append(_record_from_file(doc_id, entry, now))
        fresh = [r for r in fresh if (r.status, r.filename) not in used_paths]
        fresh.sort(key=lambda r: (time_key(r.created_at), r.filename))
        return records + fresh, len(fresh)


def _choose_copy(copies: Sequence[tuple[Status, str, bytes, dict[str, Any], str]],
                 prefer: Status | None) -> tuple[Status, str, bytes, dict[str, Any], str] | None:
    """Of the files of one id, the one the rebuilt record names: the preferred status' copy, else the
    one with the latest ``updated_at`` (archived on a tie)."""
    if not copies:
        return None
    for copy in copies:
        if copy[0] == prefer:
            return copy
    return max(copies, key=lambda c: (time_key(str(c[3].get("updated_at", ""))), c[0] == "archived"))


_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)


def _record_from_file(doc_id: str, entry: tuple[Status, str, bytes, dict[str, Any], str], now: str) -> DocumentRecord:
    status, name, data, fm, body = entry
    title = _or(lambda: model.validate_title(fm.get("title")), None)
    if title is None:
        heading = _HEADING.search(body)
        title = _or(lambda: model.validate_title(heading.group(1) if heading else name.removesuffix(".md")), "Document")
    updated = fm.get("updated_at") if isinstance(fm.get("updated_at"), str) else now
    created = fm.get("created_at") if isinstance(fm.get("created_at"), str) else updated
    return DocumentRecord(
        id=doc_id, title=title, description=_or(lambda: model.validate_description(fm.get("description")), ""),
        status=status, filename=name, relative_path=model.relative_path(status, name),
        source_paths=_str_tuple(fm.get("source_paths"), ()), session_ids=_str_tuple(fm.get("session_ids"), ()),
        created_at=created, updated_at=updated, last_accessed_at=updated, revision=1,
        content_hash=sha256_hex(body), size_bytes=len(data),
        archived_at=updated if status == "archived" else None, archive_summary=None,
        memory_body_ids=_str_tuple(fm.get("memory_body_ids"), ()),
    )
