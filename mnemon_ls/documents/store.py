"""The Documents store of one storage root: ``documents/index.json`` and the managed Markdown files.

Layout under ``<root>/documents/`` (DESIGN.md section 2, reference section 5; dirs 0700, files 0600):

- ``index.json``: the truth for metadata (format in :mod:`.model`);
- ``active/<filename>``, ``archived/<filename>``: the managed copies; the body lives only here;
- ``.index.lock``: the cross-process lock, created exclusively (the plugin's protocol and name);
- ``.access.json`` (+ ``.access.lock``): access times not yet folded into the index (:mod:`.access`);
- ``.search.sqlite3`` (+ ``-wal``, ``-shm``): the derived search index (:mod:`.search_index`);
- ``.cover.json``: the wake's Documents block for one-shot wakes, derived (:mod:`.covercache`);
- ``edits/<UTC stamp>-<filename>``: managed files saved before a write replaced a version nobody had
  committed (a hand edit);
- ``quarantine/<UTC stamp>-index.json``: damaged indexes moved aside by ``store.recovery.recover()``.
- ``orphans/<UTC stamp>-<status>-<filename>``: managed files no record names that a repair could not
  adopt (not UTF-8, not a regular file, empty, or repeating a document's body), moved there unchanged.

Commit order. Every read-modify-write holds ``.index.lock`` and re-reads the index under it.

- create / update: write the managed file (temp, fsync, rename, directory fsync), then ``index.json``
  (the commit marker). If the index write fails, the file is removed (create) or its old bytes put back
  (update). A crash between the two leaves a file the index does not describe yet; the next refresh
  adopts it (an update whose frontmatter is consistent with its body) or, for the orphan of a create,
  takes it into the index under the lock (``store.moves.repair()``; the first read of a process
  runs it, so leftovers are cleaned at start), never deleting content.
- archive / restore: (1) write the copy in the target directory with its new frontmatter, (2) commit
  ``index.json``, (3) remove the source copy. Before (2) the index still names the source; after (2)
  the target. So at every instant both the index and the named file are valid, and the body exists in
  at least one file. ``store.moves.repair()`` finishes an interrupted move by one rule: *the copy
  the index names wins*; the other copy (if it is the same document) is removed, first saved under
  ``edits/`` if its body differs. If the named copy is missing and the other exists, the other is moved
  into place. A failure before (2) removes the new copy; one of (3) undoes (2) and (1) and raises (:mod:`.moves`).

Reads (``get``, ``list``, ``search.find``, ``cover``) take no lock. They re-read ``index.json`` when its
signature changed (and at least every ``freshness_seconds``), check each document's file (size, mtime,
inode, ctime) at most every ``freshness_seconds`` (plus at once for documents whose index hash changed),
and adopt a body changed outside mnemon-ls as a new revision (``store.freshness.refresh()``; the
server's file watcher calls it too). A damaged ``index.json`` is never overwritten: reads work on the recoverable
records with a notice, mutations raise :class:`~mnemon_ls.errors.UnreadableStore` naming the file and
the record, :func:`.doctor.diagnose` explains and ``store.recovery.recover()`` rebuilds. A managed
file that is not UTF-8 (re-saved in another encoding) is never decoded lossily where the text could be
written back: it is kept byte for byte, left out of search and listed as unhealthy with a notice,
``get`` raises ``unreadable-store`` (``data.reason`` ``not-utf-8``), and doctor reports it. Every managed
or workspace file is read with :func:`.files.read_regular_file` (``O_NONBLOCK`` + ``fstat``), so a FIFO,
socket or device in its place never blocks a thread.

Parts (each owns one format or one workflow; a :class:`DocumentStore` owns one object of each, as a named
attribute, not a mixin): ``store.files`` (:mod:`.files`: managed files, temp files, what is known of each
file) and ``store.index`` (:mod:`.index`: ``index.json`` readings, the revision fence, the commit), built
from the paths they need; ``store.capacity`` (:mod:`.capacity`: usage and plans), ``store.search``
(:mod:`.search`: the search workflow), ``store.freshness`` (:mod:`.freshness`: changed-file checks and
adoption), ``store.moves`` (:mod:`.moves`: archive / restore / repair) and ``store.recovery``
(:mod:`.recovery`: ``recover``), each reaching the store only through a Protocol declared in its module.
This module holds the constructor, create / update, the plain reads and the write path the parts share
(``mutex``, ``locked``, ``now``, ``mutation_result``, ``touch``, ``read_notices``, the test seam ``step``).
"""

from __future__ import annotations

import os
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from contextlib import AbstractContextManager
from typing import Any, Callable, Iterable, Sequence

from .. import fsio, nowait
from ..redact import Scrubber
from ..errors import AmbiguousMatch, InvalidInput, NotFound, echo_repr, echo_value
from . import changes, covercache, model
from .access import AccessLog
from .capacity import Capacity
from .cover import DocumentsCover, render_cover
from .files import FileTooLarge, ManagedFiles, SpecialFile, as_read, read_regular_file, unlink_quietly
from .freshness import Freshness
from .index import IndexFile, IndexView, check_document_revision, check_status, validate_expected
from .model import DocumentRecord, now_iso, render_markdown, sha256_hex, split_markdown
from .moves import Moves
from .paths import resolve_source_paths
from .recovery import Recovery
from .search import Search, make_excerpt
from .shown import shown_records, shown_text
from .views import Catalog, CatalogEntry, DocumentView, IndexState, MutationResult

Clock = Callable[[], datetime]
_BOM = "\ufeff".encode("utf-8")


def _utc_now() -> datetime:
    return datetime.now(timezone.utc)


class DocumentStore:
    """Project Documents of one storage root (module doc for files, commit order and freshness).

    ``root`` is the storage root; ``workspace`` the session workspace that ``sourcePaths`` are resolved
    against (``None``: no workspace, only empty ``sourcePaths`` are accepted); ``max_body_bytes`` and
    ``active_limit_bytes`` are UTF-8 bytes (settings ``documents.maxBodyBytes`` and
    ``documents.activeLimitBytes``, 1..1 GiB); ``clock`` returns the current UTC time;
    ``lock_timeout`` is in seconds; ``access_flush_seconds`` and ``freshness_seconds`` are described in
    :mod:`.access` and the module doc; ``search_index=False`` keeps the search index in memory (nothing
    written under ``documents/`` for it); ``secrets`` is the ``secrets`` setting (``redact``, ``reject``,
    ``allow``): title, description, body and archive summary pass :mod:`mnemon_ls.redact` before any
    rule, so the file name made from the title never holds a credential either.

    The store holds create / update, the plain reads and the write path its parts share (:attr:`mutex`,
    :meth:`locked`, :meth:`now`, :meth:`mutation_result`); it owns its parts as named objects:
    ``files`` (:class:`~.files.ManagedFiles`), ``index`` (:class:`~.index.IndexFile`), ``capacity``
    (:class:`~.capacity.Capacity`), ``search`` (:class:`~.search.Search`), ``freshness``
    (:class:`~.freshness.Freshness`: ``refresh``), ``moves`` (:class:`~.moves.Moves`: ``archive``,
    ``restore``, ``repair``) and ``recovery`` (:class:`~.recovery.Recovery`: ``recover``).

    Constructing a store never touches the disk; ``documents/`` is created by the first mutation.
    Thread-safe (one re-entrant mutex per store). Every mutation raises :class:`InvalidInput` (a field
    rule; ``data.field`` names it), :class:`~mnemon_ls.errors.NotFound` (unknown id),
    :class:`~mnemon_ls.errors.RevisionConflict` (stale ``expected_revision`` or document revision),
    :class:`~mnemon_ls.errors.DocumentStatusError`, :class:`~mnemon_ls.errors.DocumentCapacityError`,
    :class:`~mnemon_ls.errors.UnreadableStore` (damaged index) or :class:`~mnemon_ls.errors.StoreBusy`
    (lock timeout), and changes no byte on disk when it raises.
    """

    def __init__(
        self,
        root: Path | str,
        workspace: Path | str | None = None,
        *,
        max_body_bytes: int = model.DEFAULT_MAX_BODY_BYTES,
        active_limit_bytes: int = model.DEFAULT_ACTIVE_LIMIT_BYTES,
        clock: Clock = _utc_now,
        lock_timeout: float = fsio.LOCK_TIMEOUT_SECONDS,
        access_flush_seconds: float = 5.0,
        freshness_seconds: float = 1.0,
        search_index: bool = True,
        secrets: str = "redact",
    ) -> None:
        self.root = Path(root)
        fsio.confine(self.root)  # invariant 10: no write below the root follows a link
        self.secrets = Scrubber(secrets).mode
        self.workspace = Path(workspace) if workspace is not None else None
        self.max_body_bytes = model.validate_limit_bytes(max_body_bytes, "documents.maxBodyBytes")
        self.active_limit_bytes = model.validate_limit_bytes(active_limit_bytes, "documents.activeLimitBytes")
        self.clock = clock
        self.lock_timeout = lock_timeout
        self.freshness_seconds = freshness_seconds
        self.documents_dir = self.root / "documents"
        self.index_path = self.documents_dir / "index.json"
        self.lock_path = self.documents_dir / ".index.lock"
        self.access_path = self.documents_dir / ".access.json"
        self.search_path = self.documents_dir / ".search.sqlite3"
        self.edits_dir = self.documents_dir / "edits"
        self.quarantine_dir = self.documents_dir / "quarantine"
        self.orphans_dir = self.documents_dir / "orphans"
        #: Re-entrant; held around every read and mutation (here and in the parts), so a store is thread-safe.
        self.mutex = nowait.Lock("documents")  # an RLock that no-wait mode never waits for (mnemon_ls.nowait)
        self._access = AccessLog(self.access_path, self.documents_dir / ".access.lock", access_flush_seconds)
        #: The managed files: paths, reads, saved copies, and what is known of each file.
        self.files = ManagedFiles(self.documents_dir, self.edits_dir, clock)
        #: ``index.json``: the cached reading, the revision fence, the commit.
        self.index = IndexFile(self.index_path, self.files, self._access, freshness_seconds)
        #: Usage and capacity plans of the active documents.
        self.capacity = Capacity(self)
        #: Ranked search, the derived index (``search_index=False``: in memory) and the semantic engine.
        self.search = Search(self, self.search_path if search_index else None)
        #: Files changed outside mnemon-ls: checks, adoption (``refresh``).
        self.freshness = Freshness(self)
        #: Archive, restore and the repair that finishes an interrupted one.
        self.moves = Moves(self)
        #: ``recover`` (rebuild a damaged index) and the orphans of a repair.
        self.recovery = Recovery(self)
        #: Test seam: called with a step name ("archive:copied", ...) inside mutations.
        self._step_hook: Callable[[str], None] | None = None

    def step(self, name: str) -> None:
        """Call the test seam ``_step_hook`` with the step ``name`` (``"create:file-written"``,
        ``"archive:copied"``, ...) of a mutation in progress; nothing when no hook is set."""
        if self._step_hook is not None:
            self._step_hook(name)

    def write_and_commit(self, view: IndexView, record: DocumentRecord, path: Path, data: bytes,
                         previous: bytes | None, step: str, preserved: dict[str, str] | None = None) -> IndexView:
        """Write ``data`` durably to ``path`` (``record``'s managed file), then commit ``record`` into ``view`` in
        place of its old version (added when ``view`` has none); the committed view. ``step``: the test seam's
        step between the two. When the commit fails, ``path`` is put back (``previous``: its former bytes;
        ``None``: it did not exist, so it is removed) and the error raised. Lock must be held. ``preserved``: an
        update's (:meth:`~.files.ManagedFiles.replace_keeping_saves`)."""
        records = ([record if r.id == record.id else r for r in view.records] if record.id in view.by_id
                   else [*view.records, record])
        self.files.replace_keeping_saves(record, path, data, previous, preserved)
        try:
            self.step(step)
            return self.index.commit(view, records)
        except BaseException:
            if previous is None:
                unlink_quietly(path)
            else:
                fsio.write_file_atomically(path, previous)
            raise

    def now(self) -> str:
        """The clock's current time as the index writes it (ISO-8601 UTC, milliseconds, ``Z``)."""
        return now_iso(self.clock())

    def locked(self) -> AbstractContextManager[Any]:
        """The cross-process lock ``documents/.index.lock`` (a context manager), creating ``active/`` and
        ``archived/`` first. Every read-modify-write holds it (with :attr:`mutex`) and re-reads the index
        under it (``index.begin``). Entering raises :class:`~mnemon_ls.errors.StoreBusy` after
        ``lock_timeout`` seconds and the :class:`OSError` of creating the directories."""
        fsio.ensure_dir(self.files.dir_for("active"))
        fsio.ensure_dir(self.files.dir_for("archived"))
        return fsio.file_lock(self.lock_path, self.lock_timeout)

    def _source_paths(self, value: Any) -> tuple[str, ...] | None:
        if value is None:
            return None
        return resolve_source_paths(value, self.workspace, self.documents_dir)

    def validate_create(self, title: Any, content: Any, *, description: Any = None, source_paths: Any = None,
                        session_ids: Any = None) -> changes.CreateRequest:
        """Apply the field rules of a create (reads the filesystem only to resolve ``sourcePaths``)."""
        return changes.CreateRequest(
            title=model.validate_title(title),
            description=model.validate_description(description),
            content=model.validate_content(content, self.max_body_bytes),
            source_paths=self._source_paths(source_paths) or (),
            session_ids=model.validate_id_list(session_ids, "sessionIds", model.MAX_SESSION_IDS),
        )

    def validate_update(self, document_id: Any, *, title: Any = None, description: Any = None, content: Any = None,
                        source_paths: Any = None, session_ids: Any = None,
                        document_revision: int | None = None) -> changes.UpdateRequest:
        """Apply the field rules of an update; ``None`` keeps a field. ``document_revision`` is taken as it is
        (its range is the operation layer's one rule of an expected revision); one that is not the document's
        revision is a ``revision-conflict`` when the update runs."""
        return changes.UpdateRequest(
            id=model.validate_id(document_id),
            title=None if title is None else model.validate_title(title),
            description=None if description is None else model.validate_description(description),
            content=None if content is None else model.validate_content(content, self.max_body_bytes),
            source_paths=self._source_paths(source_paths),
            session_ids=(None if session_ids is None
                         else model.validate_id_list(session_ids, "sessionIds", model.MAX_SESSION_IDS)),
            document_revision=document_revision,
        )

    def create(self, title: Any, content: Any, *, description: Any = None, source_paths: Any = None,
               session_ids: Any = None, expected_revision: str | None = None) -> MutationResult:
        """Create an active document (revision 1) from ``title`` and ``content`` (the body).

        ``description`` optional; ``source_paths`` workspace paths (paths module doc); ``session_ids``
        at most 20; ``expected_revision`` the index revision the caller saw. Returns ``action="created"``.
        """
        scrub = Scrubber(self.secrets)
        title, content = scrub.text("title", title), scrub.text("content", content)
        description = scrub.text("description", description)
        request = self.validate_create(title, content, description=description, source_paths=source_paths,
                                       session_ids=session_ids)
        expected = validate_expected(expected_revision)
        with self.mutex, self.locked():
            view = self.index.begin(expected)
            record = self._new_record(view, request)
            plan = self.capacity.fit(view, record.size_bytes)
            if not plan.fits:
                raise self.capacity.refusal(plan, view, f"creating {record.filename} ({record.size_bytes} bytes)")
            view = self.write_and_commit(view, record, self.files.path_for(record),
                                         render_markdown(record, request.content).encode("utf-8"), None,
                                         "create:file-written")
            self.step("create:committed")
            record = view.by_id[record.id]
            self.files.note_file(record)
        return replace(self.mutation_result("created", view, record, request.content), redacted=scrub.summary())

    def create_from_file(self, path: Path | str, *, title: Any = None, description: Any = None,
                         session_ids: Any = None, expected_revision: str | None = None) -> MutationResult:
        """"Create document from file": a new document whose body is the text of the workspace file
        ``path``, whose title is ``title`` or :func:`~.model.suggest_title` (first Markdown heading, else
        the file name) and whose only source path is the file. The file is read, never modified.

        Raises :class:`InvalidInput` (field ``path``) when the file is missing, not a regular file (a
        FIFO, a socket, a device or a directory: refused from its ``fstat`` before a byte is read, and
        opened with ``O_NONBLOCK`` so that even opening one cannot block), larger than
        ``max_body_bytes`` (plus a byte-order mark; at most that many bytes plus one are ever read) or
        not UTF-8, plus every error of :meth:`create`. ``sourcePaths[0]`` (the file must be inside the
        workspace) is checked before the file is opened.
        """
        file, text = self._read_source_file(path)
        chosen = model.suggest_title(text, file.name) if title is None else title
        return self.create(chosen, text, description=description, source_paths=[str(file)],
                           session_ids=session_ids, expected_revision=expected_revision)

    def _read_source_file(self, path: Path | str) -> tuple[Path, str]:
        """The workspace file ``path`` (relative: to the workspace) and its UTF-8 text without a BOM,
        for :meth:`create_from_file` and :meth:`update_from_file`; raises their :class:`InvalidInput`
        (field ``path``, or ``sourcePaths[0]`` for a file outside the workspace)."""
        file = Path(path)
        if self.workspace is not None and not file.is_absolute():
            file = self.workspace / file
        self._source_paths([str(file)])
        try:
            data = read_regular_file(file, self.max_body_bytes + len(_BOM))
        except FileNotFoundError:
            raise InvalidInput("path", f"{echo_value(str(file))} does not exist") from None
        except SpecialFile as exc:
            if exc.strerror.startswith("is a directory"):
                raise InvalidInput("path", f"{echo_value(str(file))} is a directory, not a file") from None
            raise InvalidInput("path", f"{echo_value(str(file))} {exc.strerror}; only regular files are read") from None
        except FileTooLarge as exc:
            size = f"is {exc.size} bytes" if exc.size is not None else f"holds more than {exc.limit} bytes"
            raise InvalidInput("path", f"{echo_value(str(file))} {size}; a document body is at most "
                                       f"{self.max_body_bytes} bytes",
                               bytes=exc.size, limit=self.max_body_bytes) from None
        except OSError as exc:
            raise InvalidInput("path", f"{file} cannot be read ({exc.strerror or exc})") from None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidInput("path", f"{file} is not UTF-8 text (byte {exc.start})") from None
        text = text.removeprefix("\ufeff")
        return file, text

    def documents_for_source(self, path: Path | str, status: str | None = "active") -> list[DocumentRecord]:
        """Documents whose ``sourcePaths`` name the workspace file ``path`` (absolute or relative to the
        workspace), in index order; ``status`` ``None`` means both statuses. ``[]`` without a workspace,
        for a path outside it, or before ``index.json`` exists (nothing is created). Not an access."""
        if self.workspace is None or not (self.documents_dir / "index.json").exists():
            return []
        file = Path(path)
        if not file.is_absolute():
            file = self.workspace / file
        try:
            [stored] = self._source_paths([str(file)]) or ("",)
        except InvalidInput:
            return []
        with self.mutex:
            view = self.index.view()
            return [r for r in view.records if stored in r.source_paths and (status is None or r.status == status)]

    def update_from_file(self, path: Path | str, document_id: Any = None, *, document_revision: int | None = None,
                         expected_revision: str | None = None) -> MutationResult:
        """"Update document from file": the body of the active document that names the workspace file
        ``path`` in its ``sourcePaths`` becomes the file's text (title, description and source paths are
        kept; revision + 1). ``document_id`` picks one when several name the file (else the only one).

        Raises :class:`InvalidInput` for the file (as :meth:`create_from_file`), :class:`NotFound`
        (field ``path``) when no active document names it, :class:`AmbiguousMatch` when several do and
        no ``document_id`` is given, plus every error of :meth:`update` (``revision-conflict`` when
        ``document_revision`` is stale). Nothing is written when it fails."""
        file, text = self._read_source_file(path)
        candidates = self.documents_for_source(file)
        if document_id is not None:
            doc_id = model.validate_id(document_id)
            candidates = [r for r in candidates if r.id == doc_id]
            if not candidates:
                shown = echo_value(doc_id)  # as typed: control characters escaped, clipped
                raise NotFound(f'id: document "{shown}" is not an active document made from '
                               f'{echo_value(str(file))}', id=shown, field="id")
        if not candidates:
            raise NotFound(f"path: no active document names {file} in its sourcePaths; create one instead",
                           field="path")
        if len(candidates) > 1:
            raise AmbiguousMatch(f"{len(candidates)} active documents name {file}; give the document id",
                                 field="id", matches=len(candidates), ids=[r.id for r in candidates])
        return self.update(candidates[0].id, content=text, document_revision=document_revision,
                           expected_revision=expected_revision)

    def _new_record(self, view: IndexView, request: changes.CreateRequest) -> DocumentRecord:
        names = view.cache.get("filenames")
        if names is None:
            names = view.cache["filenames"] = {r.filename for r in view.records}
        now = self.now()
        for _ in range(64):
            document_id = model.new_id()
            filename = model.filename_for(request.title, document_id)
            if (document_id in view.by_id or filename in names or (self.files.dir_for("active") / filename).exists()
                    or (self.files.dir_for("archived") / filename).exists()):
                continue
            return changes.new_record(request, document_id, now)
        raise RuntimeError("could not find a free document id")  # pragma: no cover - 64 UUID collisions

    def update(self, document_id: Any, *, title: Any = None, description: Any = None, content: Any = None,
               source_paths: Any = None, session_ids: Any = None, document_revision: int | None = None,
               expected_revision: str | None = None) -> MutationResult:
        """Update an active document: every given field replaces the current one (``session_ids`` are
        merged, keeping the latest 20); an omitted ``content`` keeps the body. Revision + 1, updatedAt =
        lastAccessedAt = now. ``document_revision`` (optional) must equal the document's revision.
        Archived documents are immutable (:class:`~mnemon_ls.errors.DocumentStatusError`; restore them first).
        Returns ``action="updated"``, or ``action="unchanged"`` (nothing written, the revision kept, the notice
        ``no change; revision N kept``) when every field and the body on disk already are what was asked; when
        that body is a hand edit not adopted yet, it is adopted under the lock as a refresh does: ``"adopted"``
        and the adopted record (a new revision, the body's contentHash; notice :data:`~.changes.HAND_EDIT_ADOPTED`).
        A hand edit the update replaces is saved under ``edits/`` first (``preserved``)."""
        scrub = Scrubber(self.secrets)
        title, content = scrub.text("title", title), scrub.text("content", content)
        description = scrub.text("description", description)
        request = self.validate_update(document_id, title=title, description=description, content=content,
                                       source_paths=source_paths, session_ids=session_ids,
                                       document_revision=document_revision)
        expected = validate_expected(expected_revision)
        with self.mutex:
            # Refusals and no-ops are answered from a reading without the lock: they write nothing, so
            # they must not create (and remove) the lock marker either (documents/ stays as it was).
            view = self.index.begin(expected)
            current, old, old_body, body, record = self._planned_update(view, request)
            if not (changes.on_disk(current, body, old) and changes.unchanged(current, record)):
                with self.locked():  # a write, or a hand edit that is the text sent (adopted)
                    return replace(self._update_locked(request, expected, content), redacted=scrub.summary())
        notices = changes.unchanged_notes(current, content)
        return replace(self.mutation_result("unchanged", view, current, body, notices=notices),
                       redacted=scrub.summary())

    def _planned_update(self, view: IndexView, request: changes.UpdateRequest, settle: bool = False) -> tuple[
            DocumentRecord, bytes | None, str | None, str, DocumentRecord]:
        """What ``request`` makes of its document in ``view`` (reads only): ``(current, old, old_body, body,
        record)``: the current record, the managed file's bytes (``None``: missing), its body (``None``: missing
        or, when content replaces it, not UTF-8), the new body and the new record. Raises what refuses the update:
        :class:`NotFound` (no such document; its file missing and no content given),
        :class:`~mnemon_ls.errors.DocumentStatusError` (archived), ``revision-conflict`` (``documentRevision``)
        and :class:`InvalidInput` (the kept body is not UTF-8)."""
        current = view.require(request.id)
        check_status(current, "active", "update")
        check_document_revision(current, request.document_revision)
        old = self.files.read_managed(current, settle)  # settle: under the lock, once no editor writes it
        if old is None and request.content is None:
            raise NotFound(f"{current.relative_path}: the managed file of document {current.id} is missing; "
                           "give content to write it again", id=current.id, file=str(self.files.path_for(current)))
        old_body = None
        if old is not None and request.content is None:
            old_body = self.files.body_of(current, old)  # not UTF-8: refused, the file stays as it is
        elif old is not None:
            try:
                old_body = split_markdown(old.decode("utf-8"))[1]
            except UnicodeDecodeError:
                old_body = None  # replaced by the new content; the old bytes are saved first (below)
        body = request.content if request.content is not None else old_body
        return current, old, old_body, body, changes.updated_record(current, request, body, self.now())

    def _update_locked(self, request: changes.UpdateRequest, expected: str | None, content: Any) -> MutationResult:
        """The write of :meth:`update`, under :meth:`locked`: the index re-read and the update planned again (a
        writer may have committed since the unlocked reading), then the file and the index written. ``content``:
        the content as sent (for the notices of a no-op)."""
        view = self.index.begin(expected)
        current, old, old_body, body, record = self._planned_update(view, request, settle=True)
        path = self.files.path_for(current)
        if changes.unchanged_on_disk(current, record, body, old):  # a hand edit that is the text sent: adopted
            view, adopted = self.freshness.adopt_edit(current) if record.content_hash != current.content_hash else (
                view, None)
            return self.mutation_result("adopted" if adopted else "unchanged", view, adopted or current, body,
                                        notices=changes.unchanged_notes(current, content, adopted))
        plan = self.capacity.fit(view, record.size_bytes, current.id)
        if not plan.fits:
            raise self.capacity.refusal(plan, view, f"updating {current.filename} to {record.size_bytes} bytes")
        preserved: dict[str, str] = {}
        if old is not None and not changes.on_disk(current, body, old) and (
                (request.content is not None and (old_body is None or sha256_hex(old_body) != current.content_hash))
                or changes.indented_on_disk(old)):
            preserved[current.relative_path] = self.files.preserve(current.filename, old)
        view = self.write_and_commit(view, record, path, render_markdown(record, body).encode("utf-8"), old,
                                     "update:file-written", preserved)
        record = view.by_id[record.id]
        self.files.note_file(record)
        return self.mutation_result("updated", view, record, body, preserved)

    def get(self, document_id: Any) -> DocumentView:
        """The document ``document_id`` with its body (as on disk; an edit not adopted with its credentials as
        placeholders and a notice saying so: :func:`~.files.as_read`). Counts as an access.

        Raises :class:`~mnemon_ls.errors.NotFound` for an unknown id or a missing managed file, and
        :class:`~mnemon_ls.errors.UnreadableStore` (``data.reason`` ``not-utf-8`` with ``offset``, or
        ``not-a-regular-file``) when the file cannot be read as text; the file is never rewritten.
        """
        doc_id = model.validate_id(document_id)
        with self.mutex:
            self.freshness.refresh_if_due()
            view = self.index.view()
            record = view.require(doc_id)
            path = self.files.path_for(record)
            data = self.files.read_managed(record)
            if data is None:
                raise NotFound(f"{record.relative_path}: the managed file of document {record.id} is missing",
                               id=record.id, file=str(path))
            body, notices = as_read(record, self.files.body_of(record, data), self.secrets)
            self.touch([record.id], view)
            return DocumentView(record, body, self.index.accessed(record), str(path), notices)

    def list(self, status: str | None = None, *, excerpts: bool = False) -> Catalog:
        """Every document in index order (``status`` ``active`` / ``archived`` filters), with health
        (file present) and, when ``excerpts``, the first 220 characters of each body as search keeps it
        (:meth:`ManagedFiles.searchable_body`: an unadopted hand edit's credentials as placeholders). Not an access."""
        if status is not None and status not in model.STATUSES:
            raise InvalidInput("status", f"must be active or archived (got {echo_repr(status)})")
        with self.mutex:
            self.freshness.refresh_if_due()
            view = self.index.view()
            later = self.index.last_accessed(view)
            entries = []
            for record in view.records:
                if status is not None and record.status != status:
                    continue
                problem = self.files.missing.get(record.id)
                excerpt = None
                if excerpts and problem is None:
                    body = self.files.searchable_body(record, self.secrets)  # an unadopted edit: no credential
                    excerpt = None if body is None else make_excerpt(body, "", ())
                entries.append(CatalogEntry(record, later.get(record.id, record.last_accessed_at),
                                            problem is None, problem, excerpt))
            return Catalog(tuple(entries), view.revision, self.now(), self.capacity.usage(view), view.problem,
                           tuple(self.read_notices(view)))

    def record_for_path(self, path: Path | str) -> DocumentRecord | None:
        """The record whose managed file is ``path`` (absolute), or ``None`` (for the server: is this
        editor file a managed document?)."""
        target = os.path.realpath(path)
        with self.mutex:
            view = self.index.view()
            for record in view.records:
                if os.path.realpath(self.files.path_for(record)) == target:
                    return record
        return None

    def read(self) -> IndexState:
        """Read ``index.json`` now without locking or writing (see :class:`~.views.IndexState`)."""
        with self.mutex:
            return self.index.state()

    def touch(self, ids: Iterable[str], view: IndexView) -> None:
        """Note an access to the documents ``ids`` of the reading ``view`` now (the access log, not the
        index: :mod:`.access`), flushing the log when it is due. Raises nothing for a flush that cannot
        run (busy lock, unwritable directory): the times stay pending for the next one."""
        self._access.note(ids, self.now())
        if self._access.due():
            self._access.flush({r.id: r.last_accessed_at for r in view.records})

    def read_notices(self, view: IndexView, eligible: Iterable[DocumentRecord] | None = None) -> list[str]:
        """The notices a read of ``view`` carries: a damaged index (naming ``doc recover``), and each of
        ``eligible`` (default: every record) whose file is missing or unreadable (``files.missing``)."""
        notices = []
        if view.problem:
            notices.append(f"{view.problem}; showing the recoverable documents; run `mnemon-ls doc recover`")
        if not self.files.missing:
            return notices
        for record in (view.records if eligible is None else eligible):
            reason = self.files.missing.get(record.id)
            if reason:
                notices.append(f"{record.relative_path} ({shown_text(record.title, self.secrets)}): {reason}; left out")
        return notices

    def mutation_result(self, action: str, view: IndexView, record: DocumentRecord, body: str,
                        preserved: dict[str, str] | None = None, notices: Sequence[str] = ()) -> MutationResult:
        """The :class:`~.views.MutationResult` of a mutation ``action`` (``"created"``, ``"archived"``, ...)
        that left ``record`` with ``body`` in the committed ``view``: the document with its effective access
        time and path, the index revision and usage, ``preserved`` (relative path -> saved copy) and
        ``notices``."""
        document = DocumentView(record, body, self.index.accessed(record), str(self.files.path_for(record)))
        return MutationResult(action, document, view.revision, self.capacity.usage(view), preserved or {},
                              tuple(notices))

    def cover(self, budget_chars: int) -> DocumentsCover:
        """The wake snapshot's Documents block within ``budget_chars`` characters (:mod:`.cover`).

        Rendered even with no documents (counts 0) so the caller decides whether to show it. Writes what a due
        refresh writes and, after one that found nothing to report, ``.cover.json`` (:mod:`.covercache`)."""
        if isinstance(budget_chars, bool) or not isinstance(budget_chars, int) or budget_chars < 0:
            raise InvalidInput("budget", f"must be an integer >= 0 characters (got {echo_repr(budget_chars)})")
        with self.mutex:
            due = self.freshness.due()  # the state before the scan: a change during it is seen
            token = covercache.state_token(str(self.documents_dir)) if due else None
            report = self.freshness.refresh_if_due()
            clean = report is not None and not (report.notices or report.missing or report.orphans or report.problem)
            view = self.index.view()
            notices = ["documents/index.json is damaged; run `mnemon-ls doctor`"] if view.problem else []
            missing = sum(1 for r in view.records if r.id in self.files.missing)
            if missing:
                notices.append(f"{missing} document(s) have a missing or unreadable file")
            records, shown = shown_records(view.records, self.secrets, self.index_path, active_only=True)
            cover = render_cover(records, self.index.last_accessed(view), limit_bytes=self.active_limit_bytes,
                                 budget_chars=budget_chars, revision=view.revision, notices=[*notices, *shown])
            if token and clean and not self._access.pending and not cover.notices:  # kept for one-shot wakes
                covercache.keep(self.documents_dir, token, cover.text, budget_chars, self.active_limit_bytes,
                                self.secrets)
            return cover

    def flush_access(self) -> bool:
        """Write pending access times to ``documents/.access.json`` now (:mod:`.access`); ``True`` when done."""
        with self.mutex:
            if not self._access.pending:
                return True
            view = self.index.view()
            return self._access.flush({r.id: r.last_accessed_at for r in view.records}, force=True)

    def close(self) -> None:
        """Flush access times and close the search index (the store stays usable; it reopens lazily)."""
        with self.mutex:
            try:
                self.flush_access()
            finally:
                self.search.close()

    def __enter__(self) -> "DocumentStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
