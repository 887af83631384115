"""Archive and restore of a Documents store, and the repair that finishes an interrupted one.

The three-step move (``store`` module doc): (1) write the copy in the target directory with its new
frontmatter, (2) commit ``index.json``, (3) remove the source copy, so at every instant the index and
the file it names are valid and the body exists at least once. When (3) fails, (2) and (1) are undone and the
move raises, naming the source file and the reason (:meth:`Moves._undo`). :meth:`Moves.repair` finishes an
interrupted move by one rule, *the copy the index names wins* (the other copy is saved under ``edits/``
first when its body differs), removes abandoned temp files whose writer is gone, and has the orphan
managed files adopted or set aside (``store.recovery``).

:class:`Moves` is a part a :class:`~.store.DocumentStore` owns (``store.moves``); it reaches the store only
through :class:`MovingStore`: its settings, the mutex and file lock, the index and managed files, the
capacity and recovery parts, and the store's result shape and step seam.
"""

from __future__ import annotations

import os
from contextlib import AbstractContextManager
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol, Sequence

from .. import fsio
from ..errors import InvalidInput, StorageError, storage_error
from . import changes, model
from .capacity import Capacity
from .files import ManagedFiles, opposite_status, read_managed_or_none
from ..redact import Scrubber
from .index import IndexFile, IndexView, check_document_revision, check_status, validate_expected
from .model import DocumentRecord, body_hash, decode_markdown, render_markdown, split_markdown
from .views import MutationResult, RepairReport


class OrphanSettler(Protocol):
    """What a repair uses of ``store.recovery`` (:class:`~.recovery.Recovery`)."""

    def settle_orphans(self, report: RepairReport) -> None: ...


class MovingStore(Protocol):
    """What archive, restore and repair use of their :class:`~.store.DocumentStore`: the ``secrets`` setting,
    ``documents/``, the mutex and the file lock, the index, the managed files, the capacity and recovery
    parts, the clock, the result of a mutation and the test seam ``step`` (see the store's members of these
    names)."""

    secrets: str
    documents_dir: Path
    mutex: AbstractContextManager[Any]
    index: IndexFile
    files: ManagedFiles
    capacity: Capacity
    recovery: OrphanSettler

    def locked(self) -> AbstractContextManager[Any]: ...

    def now(self) -> str: ...

    def step(self, name: str) -> None: ...

    def write_and_commit(self, view: IndexView, record: DocumentRecord, path: Path, data: bytes,
                         previous: bytes | None, step: str, preserved: dict[str, str] | None = None) -> IndexView: ...

    def mutation_result(self, action: str, view: IndexView, record: DocumentRecord, body: str,
                        preserved: dict[str, str] | None = None, notices: Sequence[str] = ()) -> MutationResult: ...


class Moves:
    """Archive, restore and repair (module doc); ``store.moves`` of a ``DocumentStore``."""

    def __init__(self, store: MovingStore) -> None:
        self.store = store

    def archive(self, document_id: Any, document_revision: int | None, *, summary: Any = None,
                memory_body_ids: Any = None, expected_revision: str | None = None,
                lineage: Any = None) -> MutationResult:
        """Move an active document to ``archived/`` (reference 5.4, module doc for the crash-safe order).

        ``document_revision`` must equal the document's revision (``None`` skips that check, for a
        person archiving by hand); ``summary`` (<= 1000 characters, default "Archived locally by the
        user.") and ``memory_body_ids`` (<= 20, the cold references) are recorded. ``lineage`` (cold
        archival, :mod:`mnemon_ls.maintenance.documents`): a list of JSON objects kept in the record's
        ``lineage`` key of ``index.json`` (an extra key, outside the revision; :class:`InvalidInput`
        when it is not a list of objects). Revision + 1, archivedAt = updatedAt = lastAccessedAt = now.
        Returns ``action="archived"``. Raises a :class:`~mnemon_ls.errors.StorageError` (``storage-denied``, ...)
        naming the active file when it cannot be removed, the archive undone (:meth:`_undo`).
        """
        store = self.store
        doc_id = model.validate_id(document_id)
        scrub = Scrubber(store.secrets)
        summary_text = model.validate_summary(scrub.text("summary", summary))
        body_ids = model.validate_id_list(memory_body_ids, "memoryBodyIds", model.MAX_MEMORY_BODY_IDS)
        expected = validate_expected(expected_revision)
        if lineage is not None and (not isinstance(lineage, list) or not all(isinstance(x, dict) for x in lineage)):
            raise InvalidInput("lineage", "must be a list of objects")
        with store.mutex, store.locked():
            view = store.index.begin(expected)
            current = view.require(doc_id)
            check_status(current, "active", "archive")
            check_document_revision(current, document_revision)
            data, body = store.files.committed(current)  # read once: _move looks at these bytes too
            record = changes.archived_record(current, body, summary_text, body_ids, store.now())
            if lineage is not None:
                record = replace(record, extra=(*((k, v) for k, v in record.extra if k != "lineage"),
                                                ("lineage", list(lineage))))
            view, preserved = self._move(view, current, record, body, "archive", data)
        return replace(store.mutation_result("archived", view, view.by_id[record.id], body, preserved),
                       redacted=scrub.summary())

    def restore(self, document_id: Any, *, document_revision: int | None = None,
                expected_revision: str | None = None) -> MutationResult:
        """Bring an archived document back to ``active/`` as a new revision (revision + 1, updatedAt =
        lastAccessedAt = now, archivedAt/archiveSummary removed, memoryBodyIds kept). Capacity is
        checked as for a create. Returns ``action="restored"``. Raises as :meth:`archive` when the archived file
        cannot be removed."""
        store = self.store
        doc_id = model.validate_id(document_id)
        expected = validate_expected(expected_revision)
        with store.mutex, store.locked():
            view = store.index.begin(expected)
            current = view.require(doc_id)
            check_status(current, "archived", "restore")
            check_document_revision(current, document_revision)
            data, body = store.files.committed(current)
            record = changes.restored_record(current, body, store.now())
            plan = store.capacity.fit(view, record.size_bytes)
            if not plan.fits:
                raise store.capacity.refusal(plan, view, f"restoring {current.filename} ({record.size_bytes} bytes)")
            view, preserved = self._move(view, current, record, body, "restore", data)
        return store.mutation_result("restored", view, view.by_id[record.id], body, preserved)

    def _move(self, view: IndexView, current: DocumentRecord, record: DocumentRecord, body: str,
              action: str, moved: bytes) -> tuple[IndexView, dict[str, str]]:
        """The three-step move of archive / restore (module doc): ``moved`` are the source file's bytes as read
        for ``body`` (:meth:`~.files.ManagedFiles.committed`), not read again. Lock must be held."""
        store = self.store
        files = store.files
        source, target = files.path_for(current), files.path_for(record)
        preserved: dict[str, str] = {}
        existing = read_managed_or_none(target)
        if existing is not None and split_markdown(decode_markdown(existing))[1] != body:
            preserved[model.relative_path(record.status, record.filename)] = files.preserve(
                f"{record.status}-{record.filename}", existing)
        if changes.indented_on_disk(moved):  # a hand edit the trim would drop: kept first
            preserved[current.relative_path] = files.preserve(current.filename, moved)
        store.step(f"{action}:start")
        copy = render_markdown(record, body).encode("utf-8")
        view = store.write_and_commit(view, record, target, copy, existing,
                                      f"{action}:copied", preserved)  # a save to the target meanwhile is kept
        store.step(f"{action}:committed")
        try:
            # a save to the source after it was read is kept, not removed with it (fsio.remove_watching)
            if (kept := fsio.remove_watching(source, moved, lambda saved: files.preserve(current.filename,
                                                                                         saved))) is not None:
                preserved[current.relative_path + " (saved during the write)"] = kept
        except OSError as exc:
            raise self._undo(view, current, record, copy, existing, action, exc) from exc
        store.step(f"{action}:done")
        files.signatures.pop(current.id, None)
        files.note_file(view.by_id[record.id])
        return view, preserved

    def _undo(self, view: IndexView, current: DocumentRecord, record: DocumentRecord, copy: bytes,
              existing: bytes | None, action: str, exc: OSError) -> StorageError:
        """Undo a move whose source copy could not be removed (``exc``): commit ``current`` back into ``view`` (the
        index as it was: the same bytes, access times noted since folded in), then take the target copy away (its
        bytes ``copy``; ``existing``: what stood there before, put back) so the store is as it was and nothing of
        the document is lost; a save to the target meanwhile is kept under ``edits/``. Returns the error to raise:
        a :class:`~mnemon_ls.errors.StorageError` naming the source file, the reason and what was undone (or, when
        the undo fails too, what is left and that a repair finishes it). Lock must be held."""
        store, files = self.store, self.store.files
        source, target = files.path_for(current), files.path_for(record)
        error = storage_error(exc, source) or StorageError(str(source), exc.errno, exc.strerror or str(exc))
        said = f"{source} cannot be removed: {error.what} ({error.data['reason']})"
        try:
            store.index.commit(view, [current if r.id == current.id else r for r in view.records])
        except OSError as again:
            message = (f"{said}; undoing the {action} failed too ({again}): documents/index.json names "
                       f"{record.relative_path}, and a repair removes {current.relative_path} once it can")
        else:
            message = f"{said}; the {action} was undone: {current.relative_path} stays {current.status}"
            try:
                if existing is None:
                    fsio.remove_watching(target, copy, lambda saved: files.preserve(
                        f"{record.status}-{record.filename}", saved))
                else:
                    fsio.write_file_atomically(target, existing)
            except OSError as left:
                message += f" (the copy {record.relative_path} stays until a repair removes it: {left.strerror})"
        files.signatures.pop(current.id, None)
        error.message = message
        error.args = (exc.errno or 0, message)
        error.strerror = message
        error.data.update({"id": current.id, "action": action})
        return error

    def _remove_keeping_saves(self, path: Path, read: bytes, relative: str, report: RepairReport) -> None:
        """Remove ``path`` (read as ``read`` under the lock) unless someone saved it since: then what they saved
        is kept under ``edits/`` (``report.preserved[relative + " (saved during the write)"]``) and the file
        removed (:func:`~mnemon_ls.fsio.remove_watching`). Raises the :class:`OSError` of the removal."""
        name = f"{path.parent.name}-{path.name}"
        if (kept := fsio.remove_watching(path, read, lambda saved: self.store.files.preserve(name, saved))):
            report.preserved[f"{relative} (saved during the write)"] = kept

    def needs_repair(self, view: IndexView, listing: dict[str, set[str]]) -> bool:
        """Whether :meth:`repair` has work in ``documents/`` as ``listing`` (:meth:`~.files.ManagedFiles.listing`)
        shows it against the reading ``view``: a document's file in both directories (an interrupted move),
        a managed file no record names (an orphan), or a temp file a gone writer left. Reads directory
        entries only."""
        files = self.store.files
        for record in view.records:
            if record.filename in listing[opposite_status(record.status)]:
                return True
        named = {r.filename for r in view.records}
        if any(n not in named for names in files.managed_names(listing).values() for n in names):
            return True  # an orphan managed file (adopted or set aside by the repair)
        return any(files.temp_files(listing))

    def repair(self) -> RepairReport:
        """Finish interrupted archives/restores and remove abandoned temp files (module doc: the copy the
        index names wins), then adopt or set aside the orphan managed files (``store.recovery``). Takes the
        lock; does nothing (``skipped``) when the index is damaged or ``documents/`` does not exist. Raises
        :class:`~mnemon_ls.errors.StoreBusy` (lock timeout) and the :class:`OSError` of a file operation."""
        store = self.store
        files = store.files
        report = RepairReport()
        with store.mutex:
            if not store.documents_dir.is_dir():
                report.skipped = "no documents yet"
                return report
            with store.locked():
                view = store.index.view(force=True)
                if view.problem:
                    report.skipped = view.problem
                    return report
                listing = files.listing()
                for record in view.records:
                    other_status = opposite_status(record.status)
                    if record.filename not in listing[other_status]:
                        continue
                    here, other = files.path_for(record), files.dir_for(other_status) / record.filename
                    try:
                        other_data = read_managed_or_none(other)
                        here_data = read_managed_or_none(here)
                    except OSError:
                        continue  # not a regular file or unreadable: reported by refresh, never touched
                    if other_data is None:
                        continue
                    front = split_markdown(decode_markdown(other_data))[0]  # only to read the id
                    fm = model.parse_frontmatter(front) if front is not None else {}
                    if fm.get("id") not in (None, record.id):
                        continue  # a different document that happens to share the name: not ours to touch
                    other_hash = body_hash(other_data)  # None when not UTF-8: then only renamed or saved
                    rel_other = model.relative_path(other_status, record.filename)
                    if here_data is not None:
                        if other_hash is None or other_hash not in (record.content_hash, body_hash(here_data)):
                            report.preserved[rel_other] = files.preserve(f"{other_status}-{record.filename}",
                                                                         other_data)
                        self._remove_keeping_saves(other, other_data, rel_other, report)
                        report.completed.append({"id": record.id, "removed": rel_other})
                    else:
                        if other_hash == record.content_hash:
                            other_body = split_markdown(other_data.decode("utf-8"))[1]
                            if (displaced := fsio.replace_watching(
                                    here, render_markdown(record, other_body).encode("utf-8"), None)) is not None:
                                report.preserved[f"{record.relative_path} (saved during the write)"] = \
                                    files.preserve(record.filename, displaced)
                            self._remove_keeping_saves(other, other_data, rel_other, report)
                        else:
                            os.rename(other, here)
                            fsio._fsync_dir(here.parent)
                            fsio._fsync_dir(other.parent)
                        report.moved.append({"id": record.id, "from": rel_other, "to": record.relative_path})
                    files.signatures.pop(record.id, None)
                for temp in files.temp_files():
                    try:
                        os.unlink(temp)
                        report.temps.append(str(temp))
                    except FileNotFoundError:
                        pass
                store.recovery.settle_orphans(report)
        return report
