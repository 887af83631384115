"""Freshness of a Documents store: noticing managed files changed outside mnemon-ls, and adopting them.

Reads check each managed file's signature at most every ``freshness_seconds`` (and at once for records
whose index hash is not yet verified); :meth:`Freshness.refresh` (also the server's file watcher hook)
checks every file, runs a repair when an interrupted move or a temp file is visible, reports missing,
unreadable and orphan files, and adopts an active document's body changed outside mnemon-ls as a new
revision (its frontmatter too when consistent with the body; a hand-edited frontmatter that would be
lost is saved under ``edits/`` first). Archived documents are immutable: a change is only reported. A body
that cannot be adopted without losing what was typed (emptied, a credential under ``secrets: reject``, or a
first line indented as a code block) is left as it is on disk and reported (:meth:`Freshness.refresh`).

:class:`Freshness` is a part a :class:`~.store.DocumentStore` owns (``store.freshness``); it reaches the store
only through :class:`RefreshedStore`: its settings, the mutex and file lock, the index, the managed files
(whose knowledge of each file it keeps up to date), and the repair, capacity and search parts.
"""

from __future__ import annotations

import os
import sqlite3
import time
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence

from .. import fsio, nowait
from ..errors import InvalidInput, MnemonError, StoreBusy
from ..redact import Scrubber
from . import model
from .capacity import Capacity
from .changes import credential_kept as changes_credential
from .files import ManagedFiles, file_signature, not_utf8_reason, read_managed_or_none, read_regular_file
from .index import IndexFile, IndexView
from .model import DocumentRecord, render_markdown, sha256_hex, split_markdown
from .views import RefreshReport, RepairReport


class Repairer(Protocol):
    """What a refresh uses of ``store.moves`` (:class:`~.moves.Moves`)."""

    def needs_repair(self, view: IndexView, listing: dict[str, set[str]]) -> bool: ...

    def repair(self) -> RepairReport: ...


class SignatureSource(Protocol):
    """What a refresh uses of ``store.search`` (:class:`~.search.Search`)."""

    def stored_signatures(self) -> dict[str, tuple[str, str]]: ...


class RefreshedStore(Protocol):
    """What freshness uses of its :class:`~.store.DocumentStore`: ``documents/`` and the search index's path,
    the ``secrets`` setting, the limits (UTF-8 bytes) and ``freshness_seconds``, the mutex and the file lock,
    the index, the managed files, the clock, and the repair, capacity and search parts (see the store's
    members of these names)."""

    documents_dir: Path
    search_path: Path
    secrets: str
    max_body_bytes: int
    active_limit_bytes: int
    freshness_seconds: float
    mutex: AbstractContextManager[Any]
    index: IndexFile
    files: ManagedFiles
    moves: Repairer
    capacity: Capacity
    search: SignatureSource

    def locked(self) -> AbstractContextManager[Any]: ...

    def now(self) -> str: ...


class Freshness:
    """File checks and adoption (module doc); ``store.freshness`` of a ``DocumentStore``."""

    def __init__(self, store: RefreshedStore) -> None:
        self.store = store
        self._last_scan = float("-inf")  # time.monotonic() of the last full scan
        self._signatures_loaded = False  # the search index's stored signatures were taken into store.files
        self._adopt_tried: dict[str, str] = {}  # id -> file signature whose adoption was tried (not retried)

    def refresh_if_due(self) -> RefreshReport | None:
        """:meth:`refresh` when the last full scan is ``freshness_seconds`` old or older (reads call this
        first), and its report (``None``: not due; reads show its findings through ``store.files.missing``).
        Raises what :meth:`refresh` raises."""
        if self.due():
            nowait.check("a scan of documents/")  # reads every managed file: not on an event loop
            return self._refresh()
        return None

    def due(self) -> bool:
        """Whether the last full scan is ``freshness_seconds`` old or older (:meth:`refresh_if_due` would scan)."""
        return time.monotonic() - self._last_scan >= self.store.freshness_seconds

    def refresh(self) -> RefreshReport:
        """Check every managed file now (the server's file watcher calls this on changes under
        ``documents/``; reads call it at most every ``freshness_seconds``).

        Finishes interrupted archives/restores (:meth:`~.moves.Moves.repair`), notes missing or unreadable files
        (left out of search with a notice), and adopts a body changed outside mnemon-ls into the index
        as a new revision (an active document: hash, size, revision + 1, updatedAt; a frontmatter that
        is consistent with the body - an update whose index commit was interrupted - also brings its
        title, description, sourcePaths and sessionIds; a hand-edited frontmatter that would be lost is
        saved under ``edits/`` first). Archived documents are immutable: a changed archived file is only
        reported (and searched as it is on disk). A file that is not UTF-8, or not a regular file, is
        never adopted nor rewritten: it is reported in ``missing`` (unreadable) until it changes.

        A body whose first line with text is indented 4 columns or more (a Markdown code block,
        :func:`~.model.indented_start`) is not adopted either, and the file is not touched: adopting rewrites
        the file in the document format, whose body is trimmed (reference 5.2-5.3), so that indentation would
        be lost. Not adopting is chosen over adopting with a copy saved under ``edits/``: the file keeps every
        byte as typed where the person typed it, while a refresh often runs inside a read that shows no notice
        (:meth:`refresh_if_due`), so a rewritten file could change under the person without their knowing.
        The notice (:func:`not_adopted_indented`) names the file, the rule and the fix (start with a line that
        is not indented, or fence the code); ``mnemon-ls doctor`` reports the file until it changes, and an
        update that replaces the body saves the edited file under ``edits/`` first. The
        repair also removes dead processes' lock staging files and adopts or sets aside orphan managed
        files (:class:`~.views.RepairReport`).
        """
        with self.store.mutex:
            return self._refresh()

    def _refresh(self) -> RefreshReport:
        store = self.store
        files = store.files
        report = RefreshReport()
        self._last_scan = time.monotonic()
        if not store.documents_dir.is_dir():
            files.missing.clear()
            return report
        view = store.index.view(force=True)
        report.problem = view.problem
        listing = files.listing()
        if not view.problem and store.moves.needs_repair(view, listing):
            try:
                report.repair = store.moves.repair()
            except StoreBusy:
                report.notices.append("documents/.index.lock is busy; the repair waits for the next refresh")
            except OSError as exc:  # a read-only or full file system: reads go on, the repair waits
                report.notices.append(f"the repair of documents/ could not run ({exc.strerror or exc}); reads go on "
                                      "and the next refresh tries again")
            view = store.index.view(force=True)
            listing = files.listing()
            if report.repair is not None:
                report.notices.extend(
                    f"{a['file']}: a managed file no index record named (an interrupted create, or a file put there by "
                    f"hand) was adopted as document {a['id']}" for a in report.repair.adopted)
                report.notices.extend(
                    f"{s['file']}: a managed file no index record named {s['reason']}; it was moved unchanged to "
                    f"{s['to']}" for s in report.repair.set_aside)
        self._scan(view, view.records, listing, report)
        named = {r.filename for r in view.records}
        for status, names in files.managed_names(listing).items():
            report.orphans.extend(f"documents/{status}/{n}" for n in names if n not in named)
        report.notices.extend(f"{p}: no index record names this managed file; `mnemon-ls doc recover` adds it"
                              for p in report.orphans)
        return report

    def check_changed(self, view: IndexView) -> None:
        """Between full scans: check (and adopt, as :meth:`refresh` does) the files of ``view``'s records
        whose index hash was not verified against their file yet (cached per view and file state)."""
        store = self.store
        files = store.files
        token = (files.generation, len(files.missing), len(files.changed_archived))
        if view.cache.get("checked") == token:
            return
        pending = [r for r in view.records
                   if r.id not in files.missing and (files.signatures.get(r.id) or ("", ""))[1] != r.content_hash
                   and r.id not in files.changed_archived]
        if pending:
            self._scan(view, pending, None, RefreshReport())
        view.cache["checked"] = (files.generation, len(files.missing), len(files.changed_archived))

    def _scan(self, view: IndexView, records: Sequence[DocumentRecord], listing: dict[str, set[str]] | None,
              report: RefreshReport) -> None:
        store = self.store
        files = store.files
        self._load_signatures()
        mismatched: list[DocumentRecord] = []
        vanished: list[DocumentRecord] = []
        for record in records:
            if listing is not None and record.filename not in listing[record.status]:
                files.missing[record.id] = "the managed file is missing"
                vanished.append(record)
                continue
            path = files.fspath(record)
            try:
                info = os.stat(path)
            except FileNotFoundError:
                files.missing[record.id] = "the managed file is missing"
                vanished.append(record)
                continue
            except OSError as exc:
                files.missing[record.id] = f"the managed file cannot be read ({exc.strerror or exc})"
                continue
            sig = file_signature(info)
            undecodable = files.undecodable.get(record.id)
            if undecodable is not None and undecodable[0] == sig:
                files.missing[record.id] = undecodable[1]  # unchanged since: still not UTF-8, never adopted
                continue
            known = files.signatures.get(record.id)
            if known is None or known[0] != sig:
                try:
                    data = read_regular_file(path)
                except OSError as exc:
                    files.missing[record.id] = f"the managed file cannot be read ({exc.strerror or exc})"
                    continue
                try:
                    text = data.decode("utf-8")
                except UnicodeDecodeError as exc:
                    # Re-saved in another encoding: a lossy decoding must never be adopted (it would be
                    # written back); the file is kept byte for byte and reported until it is UTF-8 again.
                    files.undecodable[record.id] = (sig, not_utf8_reason(exc))
                    files.missing[record.id] = files.undecodable[record.id][1]
                    if files.signatures.pop(record.id, None) is not None:
                        files.generation += 1
                    continue
                files.undecodable.pop(record.id, None)
                known = (sig, sha256_hex(split_markdown(text)[1]))
                files.signatures[record.id] = known
                files.generation += 1
            files.missing.pop(record.id, None)
            if known[1] != record.content_hash:
                mismatched.append(record)
            else:
                files.changed_archived.discard(record.id)
        if vanished:
            # another process may have moved the file (archive/restore) after we read the index
            fresh = store.index.view(force=True)
            moved = [fresh.by_id[r.id] for r in vanished if fresh.by_id.get(r.id, r) != r]
            if moved:
                for record in moved:
                    files.missing.pop(record.id, None)
                self._scan(fresh, moved, None, report)
                view = fresh
        for record_id, reason in files.missing.items():
            if record_id in view.by_id:
                report.missing[record_id] = reason
        for record in mismatched:
            if record.status == "archived":
                files.changed_archived.add(record.id)
                report.changed_archived.append(record.id)
                report.notices.append(f"{record.relative_path}: the archived copy changed outside mnemon-ls "
                                      "(archived documents are immutable; restore it to edit it)")
        to_adopt = [r for r in mismatched if r.status == "active"
                    and self._adopt_tried.get(r.id) != files.signatures[r.id][0]]
        if to_adopt and not view.problem:
            for record in to_adopt:
                self._adopt_tried[record.id] = files.signatures[record.id][0]
            try:
                self._adopt([r.id for r in to_adopt], report)
            except StoreBusy:
                for record in to_adopt:
                    self._adopt_tried.pop(record.id, None)
                report.notices.append("documents/.index.lock is busy; changed files are adopted at the next refresh")
        for record_id, reason in report.missing.items():
            record = view.by_id[record_id]
            line = f"{record.relative_path} ({record.title}): {reason}"
            if line not in report.notices:
                report.notices.append(line)

    def _load_signatures(self) -> None:
        if self._signatures_loaded:
            return
        self._signatures_loaded = True
        store = self.store
        files = store.files
        if not store.search_path.exists():
            return
        try:
            for doc_id, (sig, body_hash) in store.search.stored_signatures().items():
                if doc_id not in files.signatures and sig and body_hash:
                    files.signatures[doc_id] = (sig, body_hash)
        except (sqlite3.Error, OSError):
            pass

    def adopt_edit(self, record: DocumentRecord) -> tuple[IndexView, DocumentRecord | None]:
        """Adopt the hand edit of ``record``'s managed file now, as :meth:`refresh` does (the same adoption, under
        the lock): ``(view, adopted)``, the committed view and the adopted record, or ``None`` when the edit was
        not adopted (then the refresh's notice says why, and ``view`` is the reading it was tried on). For an
        update whose content already is that edit (``store.update``). Raises :class:`StoreBusy`."""
        report = RefreshReport()
        self._adopt([record.id], report)
        view = self.store.index.view()
        return view, (view.by_id[record.id] if record.id in report.adopted else None)

    def _adopt(self, ids: Sequence[str], report: RefreshReport) -> None:
        """Take bodies changed outside mnemon-ls into the index (see :meth:`refresh`)."""
        store = self.store
        files = store.files
        with store.locked():
            view = store.index.view(force=True)
            if view.problem:
                return
            changes: dict[str, DocumentRecord] = {}
            writes: list[tuple[Path, bytes, bytes]] = []  # (file, new bytes, the bytes read)
            now = store.now()
            for doc_id in ids:
                record = view.by_id.get(doc_id)
                if record is None or record.status != "active":
                    continue
                path = files.path_for(record)
                try:
                    data = read_managed_or_none(path)
                except OSError:
                    continue  # a FIFO or an unreadable file: reported by the scan, never adopted
                if data is None:
                    continue
                try:
                    front, raw = model.split_markdown_raw(data.decode("utf-8"))
                except UnicodeDecodeError:
                    continue  # not UTF-8 (re-saved in another encoding): kept as it is and reported, never adopted
                body = model.js_trim(raw)
                digest = sha256_hex(body)
                if digest == record.content_hash:
                    continue
                if not body:
                    report.notices.append(f"{record.relative_path}: the body was emptied outside mnemon-ls; not "
                                          "adopted (a document needs content): restore the text or update it")
                    continue
                indented = model.indented_start(raw)
                if indented is not None:  # adopting would rewrite the file trimmed: the indentation lost
                    report.notices.append(not_adopted_indented(record.relative_path, indented)
                                          + changes_credential(store.secrets, body))
                    continue
                # the secrets setting holds for a body typed by hand as for one written through mnemon-ls:
                # redact stores placeholders (the file is rewritten), reject leaves it unadopted and says so
                original = data
                try:
                    data, scrubbed = redact_typed(store.secrets, record.relative_path, data, body)
                except MnemonError as exc:
                    report.notices.append(f"{exc.message}; not adopted (secrets is reject): the file keeps it as "
                                          "typed until the file is fixed (search keeps a placeholder in its place)")
                    continue
                if scrubbed != body:
                    body, digest = scrubbed, sha256_hex(scrubbed)
                fm = model.parse_frontmatter(front) if front is not None else {}
                consistent = fm.get("id") == record.id and fm.get("content_hash") == digest
                new = record.with_changes(revision=record.revision + 1, content_hash=digest, last_accessed_at=now)
                if consistent:
                    new = new.with_changes(
                        title=_or(lambda: model.validate_title(fm.get("title")), record.title),
                        description=_or(lambda: model.validate_description(fm.get("description")), record.description),
                        source_paths=_str_tuple(fm.get("source_paths"), record.source_paths),
                        session_ids=_str_tuple(fm.get("session_ids"), record.session_ids),
                        updated_at=fm.get("updated_at") if isinstance(fm.get("updated_at"), str) else now,
                    )
                else:
                    new = new.with_changes(updated_at=now)
                    expected_front = split_markdown(render_markdown(record, "x"))[0]
                    if front != expected_front:
                        report.preserved[record.relative_path] = files.preserve(record.filename, data)
                rendered = render_markdown(new, body).encode("utf-8")
                new = new.with_changes(size_bytes=len(rendered))
                if rendered != original:
                    writes.append((path, rendered, original))
                changes[doc_id] = new
                size = model.utf8_len(body)
                limit = store.max_body_bytes
                report.notices.append(f"{record.relative_path}: adopted a body changed outside mnemon-ls as revision "
                                      f"{new.revision}" + (f" (its body is {size} bytes, over the {limit}"
                                                           "-byte limit)" if size > limit else ""))
            if not changes:
                return
            for path, data, read in writes:  # a save since the read is kept, not replaced (fsio.write_files_atomically)
                if (displaced := fsio.replace_watching(path, data, read)) is not None:
                    report.preserved[f"documents/{path.parent.name}/{path.name} (saved during the write)"] = \
                        files.preserve(path.name, displaced)
            view = store.index.commit(view, [changes.get(r.id, r) for r in view.records])
            for doc_id in changes:
                files.note_file(view.by_id[doc_id])
                report.adopted.append(doc_id)
            usage = store.capacity.usage(view)
            if usage.active_bytes > store.active_limit_bytes:
                report.notices.append(f"active documents use {usage.active_bytes} of {store.active_limit_bytes} bytes "
                                      "after adopting outside edits; archive some before creating more")


def not_adopted_indented(where: str, indentation: str) -> str:
    """The notice of a body edited outside mnemon-ls (the managed file ``where``) that is not adopted because its
    first line with text is indented by ``indentation`` (words, :func:`~.model.indented_start`)."""
    return (f"{where}: the body's first line is indented ({indentation}), a Markdown code block whose indentation "
            f"a document body cannot keep: {model.TRIM_RULE}; not adopted, the file stays as it is: start the body "
            "with a line that is not indented, e.g. a heading, or fence the code block with ```")


def redact_typed(mode: str, where: str, data: bytes, body: str) -> tuple[bytes, str]:
    """A managed file typed or changed outside mnemon-ls under the ``secrets`` setting ``mode``: ``(data,
    body)`` (the file's UTF-8 bytes and its body) with every credential replaced by a placeholder, the
    whole file too, so a copy saved of it (``edits/``) holds none either; unchanged when none is found.
    Raises :class:`~mnemon_ls.errors.InvalidInput` naming ``<where>: body`` under ``reject``."""
    scrubbed = Scrubber(mode).text(f"{where}: body", body)
    if scrubbed == body:
        return data, body
    return Scrubber(mode).text("file", data.decode("utf-8")).encode("utf-8"), scrubbed


def _or(make: Callable[[], Any], fallback: Any) -> Any:
    try:
        return make()
    except InvalidInput:
        return fallback


def _str_tuple(value: Any, fallback: tuple[str, ...]) -> tuple[str, ...]:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    return fallback
