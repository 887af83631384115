"""The Documents store of one storage root: ``documents/index.json`` and the managed Markdown files.

Layout under ``<root>/documents/`` (DESIGN.md section 2, reference section 5; dirs 0700, files 0600):

- ``index.json``: the truth for metadata (format in :mod:`.model`);
- ``active/<filename>``, ``archived/<filename>``: the managed copies; the body lives only here;
- ``.index.lock``: the cross-process lock, created exclusively (the plugin's protocol and name);
- ``.access.json`` (+ ``.access.lock``): access times not yet folded into the index (:mod:`.access`);
- ``.search.sqlite3`` (+ ``-wal``, ``-shm``): the derived search index (:mod:`.search_index`);
- ``edits/<UTC stamp>-<filename>``: managed files saved before a write replaced a version nobody had
  committed (a hand edit);
- ``quarantine/<UTC stamp>-index.json``: damaged indexes moved aside by :meth:`DocumentStore.recover`.

Commit order. Every read-modify-write holds ``.index.lock`` and re-reads the index under it.

- create / update: write the managed file (temp, fsync, rename, directory fsync), then ``index.json``
  (the commit marker). If the index write fails, the file is removed (create) or its old bytes put back
  (update). A crash between the two leaves a file the index does not describe yet; the next refresh
  adopts it (an update whose frontmatter is consistent with its body) or reports it (an orphan of a
  create, which ``recover`` adds).
- archive / restore: (1) write the copy in the target directory with its new frontmatter, (2) commit
  ``index.json``, (3) remove the source copy. Before (2) the index still names the source; after (2)
  the target. So at every instant both the index and the named file are valid, and the body exists in
  at least one file. :meth:`DocumentStore.repair` finishes an interrupted move by one rule: *the copy the
  index names wins*; the other copy (if it is the same document) is removed, first saved under
  ``edits/`` if its body differs. If the named copy is missing and the other exists, the other is moved
  into place. A failure before (2) removes the new copy; a failure of (3) is left to repair.

Reads (``get``, ``list``, ``search``, ``cover``) take no lock. They re-read ``index.json`` when its
signature changed (and at least every ``freshness_seconds``), check each document's file (size, mtime,
inode, ctime) at most every ``freshness_seconds`` (plus at once for documents whose index hash changed),
and adopt a body changed outside mnemon-ls as a new revision (:meth:`DocumentStore.refresh`; the server's
file watcher calls it too). A damaged ``index.json`` is never overwritten: reads work on the recoverable
records with a notice, mutations raise :class:`~mnemon_ls.errors.UnreadableStore` naming the file and
the record, :func:`.doctor.diagnose` explains and :meth:`DocumentStore.recover` rebuilds.
"""

from __future__ import annotations

import os
import re
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from .. import fsio
from ..errors import InvalidInput, NotFound, RevisionConflict, StoreBusy, UnreadableStore
from . import model
from .access import AccessLog
from .cover import DocumentsCover, render_cover
from .errors import DocumentCapacityError, DocumentStatusError
from .model import (
    DocumentRecord,
    IndexCodec,
    IndexProblem,
    Status,
    collapse_space,
    decode_markdown,
    js_length,
    js_trim,
    now_iso,
    render_markdown,
    sha256_hex,
    split_markdown,
    time_key,
)
from .paths import resolve_source_paths
from .search_index import IndexedDoc, SearchIndex
from ..text import normalize, required_matches
from .search_index import query_terms
from .views import (
    Catalog,
    CatalogEntry,
    DocumentView,
    IndexState,
    MutationResult,
    RefreshReport,
    RepairReport,
    SearchHit,
    SearchResult,
    Usage,
)

Clock = Callable[[], datetime]
#: Longest search query, in JavaScript characters (the plugin's bound).
MAX_QUERY_CHARS = 2000
#: Largest ``limit`` of a search.
MAX_SEARCH_LIMIT = 50
#: Phrase (title/description) hits outside the best BM25 rows that are scored with an extra query.
MAX_PHRASE_RESCORE = 100
#: Characters of a search excerpt (and of a catalog excerpt), before the ``…`` marks.
EXCERPT_CHARS = 220
#: Temp files older than this are removed by repair even when their writer's pid looks alive.
STALE_TEMP_SECONDS = 3600.0
_TEMP_OURS = re.compile(r"^\..+\.(?P<pid>\d+)\.(?P<ms>\d+)\.[0-9a-f]{8}\.tmp$")
_TEMP_PLUGIN = re.compile(r"^.+\.(?P<pid>\d+)\.[0-9a-f-]{36}\.tmp$")
_REVISION = re.compile("[0-9a-f]{64}")


def _utc_now() -> datetime:
    return datetime.now(timezone.utc)


def _sig(info: os.stat_result) -> str:
    return f"{info.st_size}:{info.st_mtime_ns}:{info.st_ino}:{info.st_ctime_ns}"


def _stat_sig(path: Path) -> str | None:
    try:
        return _sig(os.stat(path))
    except FileNotFoundError:
        return None


def _other(status: Status) -> Status:
    return "archived" if status == "active" else "active"


@dataclass(slots=True)
class _View:
    """One parsed reading of ``index.json`` (internal)."""

    data: bytes | None
    records: tuple[DocumentRecord, ...]
    revision: str
    exists: bool
    problem: str | None = None
    bad_record: int | None = None
    extra: tuple[tuple[str, Any], ...] = ()
    dropped: int = 0
    sig: str | None = None
    verified: float = 0.0
    by_id: dict[str, DocumentRecord] = field(default_factory=dict)
    cache: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.by_id = {r.id: r for r in self.records}

    def stored_times(self) -> dict[str, str]:
        """``id -> lastAccessedAt`` as stored in the index (cached)."""
        times = self.cache.get("times")
        if times is None:
            times = self.cache["times"] = {r.id: r.last_accessed_at for r in self.records}
        return times


def _validate_limit_bytes(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= model.MAX_LIMIT_BYTES:
        raise InvalidInput(name, f"must be an integer in 1..{model.MAX_LIMIT_BYTES} bytes (got {value!r})")
    return value


def _validate_expected(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not _REVISION.fullmatch(value):
        raise InvalidInput("expectedRevision", "must be an index revision (64 lowercase hex characters)")
    return value


class DocumentStore:
    """Project Documents of one storage root (module doc for files, commit order and freshness).

    ``root`` is the storage root; ``workspace`` the session workspace that ``sourcePaths`` are resolved
    against (``None``: no workspace, only empty ``sourcePaths`` are accepted); ``max_body_bytes`` and
    ``active_limit_bytes`` are UTF-8 bytes (settings ``documents.maxBodyBytes`` and
    ``documents.activeLimitBytes``, 1..1 GiB); ``clock`` returns the current UTC time;
    ``lock_timeout`` is in seconds; ``access_flush_seconds`` and ``freshness_seconds`` are described in
    :mod:`.access` and the module doc; ``search_index=False`` keeps the search index in memory (nothing
    written under ``documents/`` for it).

    Constructing a store never touches the disk; ``documents/`` is created by the first mutation.
    Thread-safe (one re-entrant mutex per store). Every mutation raises :class:`InvalidInput` (a field
    rule; ``data.field`` names it), :class:`~mnemon_ls.errors.NotFound` (unknown id),
    :class:`~mnemon_ls.errors.RevisionConflict` (stale ``expected_revision`` or document revision),
    :class:`DocumentStatusError`, :class:`DocumentCapacityError`, :class:`UnreadableStore` (damaged
    index) or :class:`~mnemon_ls.errors.StoreBusy` (lock timeout), and changes no byte on disk when it
    raises.
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
    ) -> None:
        self.root = Path(root)
        self.workspace = Path(workspace) if workspace is not None else None
        self.max_body_bytes = _validate_limit_bytes(max_body_bytes, "documents.maxBodyBytes")
        self.active_limit_bytes = _validate_limit_bytes(active_limit_bytes, "documents.activeLimitBytes")
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
        self._dir_strings = {status: str(self.documents_dir / status) for status in model.STATUSES}
        self._mutex = threading.RLock()
        self._codec = IndexCodec()
        self._view: _View | None = None
        self._files: dict[str, tuple[str, str]] = {}
        self._files_generation = 0
        self._signatures_loaded = False
        self._missing: dict[str, str] = {}
        self._changed_archived: set[str] = set()
        self._adopt_tried: dict[str, str] = {}
        self._last_scan = float("-inf")
        self._access = AccessLog(self.access_path, self.documents_dir / ".access.lock", access_flush_seconds)
        self._search = SearchIndex(self.search_path if search_index else None)
        self._synced: tuple[Any, ...] | None = None
        self._folded = -1  # access-log version whose later times the last commit folded into the index
        self._norm: dict[str, tuple[str, str, str, str]] = {}
        #: Test seam: called with a step name ("archive:copied", ...) inside mutations.
        self._step_hook: Callable[[str], None] | None = None

    # ================================================================== paths and small helpers

    def dir_for(self, status: Status) -> Path:
        """``documents/active`` or ``documents/archived``."""
        return self.documents_dir / status

    def path_for(self, record: DocumentRecord) -> Path:
        """The absolute path of ``record``'s managed file (``documents/<status>/<filename>``)."""
        return self.documents_dir / record.status / record.filename

    def _file(self, record: DocumentRecord) -> str:
        """``path_for`` as a string (cheaper on hot paths)."""
        return os.path.join(self._dir_strings[record.status], record.filename)

    def _step(self, name: str) -> None:
        if self._step_hook is not None:
            self._step_hook(name)

    def _now(self) -> str:
        return now_iso(self.clock())

    def _stamp(self) -> str:
        moment = self.clock().astimezone(timezone.utc)
        return moment.strftime("%Y%m%dT%H%M%S.") + f"{moment.microsecond // 1000:03d}Z"

    def _preserve(self, name: str, data: bytes) -> str:
        return str(fsio.copy_file_exclusive(self.edits_dir, f"{self._stamp()}-{name}", data))

    def _locked(self):
        fsio.ensure_dir(self.dir_for("active"))
        fsio.ensure_dir(self.dir_for("archived"))
        return fsio.file_lock(self.lock_path, self.lock_timeout)

    # ================================================================== index reading

    def _listing(self) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for status in model.STATUSES:
            try:
                out[status] = set(os.listdir(self.dir_for(status)))
            except (FileNotFoundError, NotADirectoryError):
                out[status] = set()
        return out

    def _managed_names(self, listing: dict[str, set[str]]) -> dict[str, list[str]]:
        return {status: sorted(n for n in names if n.endswith(".md") and not n.startswith("."))
                for status, names in listing.items()}

    def _read_view(self, *, force: bool = False) -> _View:
        sig = _stat_sig(self.index_path)
        now = time.monotonic()
        cached = self._view
        if cached is not None and not force and cached.sig == sig and now - cached.verified < self.freshness_seconds:
            return cached
        data = fsio.read_bytes_or_none(self.index_path)
        if cached is not None and data == cached.data:
            cached.sig, cached.verified = sig, now
            return cached
        view = self._parse_view(data)
        view.sig, view.verified = sig, now
        self._view = view
        return view

    def _parse_view(self, data: bytes | None) -> _View:
        if data is None:
            names = self._managed_names(self._listing())
            count = sum(len(v) for v in names.values())
            if count:
                problem = (f"{self.index_path} is missing but {count} managed file(s) exist under "
                           f"documents/active and documents/archived; run `mnemon-ls doc recover` to rebuild it")
                return _View(None, (), self._codec.revision(()), False, problem)
            return _View(None, (), self._codec.revision(()), False)
        try:
            parsed = model.parse_index(data)
        except IndexProblem as exc:
            salvaged, _ = model.salvage_index(data)
            where = f" (record {exc.record})" if exc.record is not None else ""
            problem = f"{self.index_path}: {exc.message}{where}"
            return _View(data, tuple(salvaged), self._codec.revision(salvaged), True, problem, exc.record)
        revision = self._codec.revision(parsed.records)
        return _View(data, parsed.records, revision, True, None, None, parsed.extra, parsed.dropped)

    def read(self) -> IndexState:
        """Read ``index.json`` without locking or writing (see :class:`IndexState`)."""
        with self._mutex:
            view = self._read_view(force=True)
            return IndexState(view.records, view.revision, view.exists, view.problem, view.bad_record)

    def _unreadable(self, view: _View) -> UnreadableStore:
        return UnreadableStore(
            f"{view.problem}; nothing was written. Run `mnemon-ls doctor` to see why and "
            "`mnemon-ls doc recover` to rebuild the index from the managed files",
            file=str(self.index_path), reason=view.problem, record=view.bad_record,
        )

    def _begin(self, expected: str | None) -> _View:
        """Under the lock: the current valid index, checked against ``expected``."""
        view = self._read_view(force=True)
        if view.problem:
            raise self._unreadable(view)
        if expected is not None and expected != view.revision:
            raise RevisionConflict(
                f"documents/index.json changed since revision {expected[:12]} (now {view.revision[:12]}); "
                "re-read and retry", expected=expected, actual=view.revision)
        return view

    def _require(self, view: _View, document_id: str) -> DocumentRecord:
        record = view.by_id.get(document_id)
        if record is None:
            raise NotFound(f"document {document_id} does not exist", id=document_id, field="id")
        return record

    def _last_accessed(self, view: _View) -> dict[str, str]:
        """``id -> effective lastAccessedAt`` for ids whose side/pending time is later than the index's."""
        version = self._access.check()
        hit = view.cache.get("later")
        if hit is not None and hit[0] == version:
            return hit[1]
        later = self._access.effective(view.stored_times())
        view.cache["later"] = (version, later)
        return later

    def _accessed(self, record: DocumentRecord) -> str:
        """The effective lastAccessedAt of one record."""
        latest = self._access.latest(record.id)
        if latest is not None and latest[0] > time_key(record.last_accessed_at):
            return latest[1]
        return record.last_accessed_at

    def _usage(self, view: _View) -> Usage:
        active = [r for r in view.records if r.status == "active"]
        return Usage(sum(r.size_bytes for r in active), len(active), len(view.records) - len(active),
                     self.active_limit_bytes)

    # ================================================================== commit

    def _commit(self, view: _View, records: Sequence[DocumentRecord]) -> _View:
        """Write ``records`` as ``index.json`` (folding in later access times). Lock must be held."""
        version = self._access.check()
        later = {} if version == self._folded else self._access.effective({r.id: r.last_accessed_at for r in records})
        if later:
            records = [r.with_changes(last_accessed_at=later[r.id]) if r.id in later else r for r in records]
        data, revision = self._codec.encode(records, view.extra)
        fsio.write_file_atomically(self.index_path, data)
        self._access.folded(later)
        self._folded = self._access.version
        new = _View(data, tuple(records), revision, True, None, None, view.extra, 0)
        new.sig, new.verified = _stat_sig(self.index_path), time.monotonic()
        self._view = new
        return new

    def _note_file(self, record: DocumentRecord, path: Path | None = None) -> None:
        try:
            sig = _sig(os.stat(path or self.path_for(record)))
        except OSError:
            return
        self._files[record.id] = (sig, record.content_hash)
        self._files_generation += 1
        self._missing.pop(record.id, None)
        self._changed_archived.discard(record.id)

    def _result(self, action: str, view: _View, record: DocumentRecord, body: str,
                preserved: dict[str, str] | None = None, notices: Sequence[str] = ()) -> MutationResult:
        document = DocumentView(record, body, self._accessed(record), str(self.path_for(record)))
        return MutationResult(action, document, view.revision, self._usage(view), preserved or {}, tuple(notices))

    def _plan(self, view: _View, size: int, replacing: str | None = None) -> model.CapacityPlan:
        plan = model.plan_capacity(view.records, size, self.active_limit_bytes, replacing=replacing,
                                   always_candidates=False)
        if plan.fits:
            return plan
        return model.plan_capacity(view.records, size, self.active_limit_bytes, replacing=replacing,
                                   last_accessed=self._last_accessed(view))

    def _capacity_error(self, plan: model.CapacityPlan, view: _View, what: str) -> DocumentCapacityError:
        later = self._last_accessed(view)
        return DocumentCapacityError(
            f"{what} would make the active documents {plan.projected} bytes (limit {plan.limit}); archive the "
            "least recently accessed active documents (listed in data.candidates) and retry",
            projected=plan.projected, limit=plan.limit, used=plan.used,
            candidates=[model.candidate_summary(r, later) for r in plan.candidates],
        )

    # ================================================================== validation (pure + paths)

    def _source_paths(self, value: Any) -> tuple[str, ...] | None:
        if value is None:
            return None
        return resolve_source_paths(value, self.workspace, self.documents_dir)

    def validate_create(self, title: Any, content: Any, *, description: Any = None, source_paths: Any = None,
                        session_ids: Any = None) -> model.CreateRequest:
        """Apply the field rules of a create (reads the filesystem only to resolve ``sourcePaths``)."""
        return model.CreateRequest(
            title=model.validate_title(title),
            description=model.validate_description(description),
            content=model.validate_content(content, self.max_body_bytes),
            source_paths=self._source_paths(source_paths) or (),
            session_ids=model.validate_id_list(session_ids, "sessionIds", model.MAX_SESSION_IDS),
        )

    def validate_update(self, document_id: Any, *, title: Any = None, description: Any = None, content: Any = None,
                        source_paths: Any = None, session_ids: Any = None,
                        document_revision: Any = None) -> model.UpdateRequest:
        """Apply the field rules of an update; ``None`` keeps a field."""
        return model.UpdateRequest(
            id=model.validate_id(document_id),
            title=None if title is None else model.validate_title(title),
            description=None if description is None else model.validate_description(description),
            content=None if content is None else model.validate_content(content, self.max_body_bytes),
            source_paths=self._source_paths(source_paths),
            session_ids=(None if session_ids is None
                         else model.validate_id_list(session_ids, "sessionIds", model.MAX_SESSION_IDS)),
            document_revision=model.validate_revision(document_revision),
        )

    # ================================================================== mutations

    def create(self, title: Any, content: Any, *, description: Any = None, source_paths: Any = None,
               session_ids: Any = None, expected_revision: str | None = None) -> MutationResult:
        """Create an active document (revision 1) from ``title`` and ``content`` (the body).

        ``description`` optional; ``source_paths`` workspace paths (paths module doc); ``session_ids``
        at most 20; ``expected_revision`` the index revision the caller saw. Returns ``action="created"``.
        """
        request = self.validate_create(title, content, description=description, source_paths=source_paths,
                                       session_ids=session_ids)
        expected = _validate_expected(expected_revision)
        with self._mutex, self._locked():
            view = self._begin(expected)
            record = self._new_record(view, request)
            plan = self._plan(view, record.size_bytes)
            if not plan.fits:
                raise self._capacity_error(plan, view, f"creating {record.filename} ({record.size_bytes} bytes)")
            path = self.path_for(record)
            fsio.write_file_atomically(path, render_markdown(record, request.content).encode("utf-8"))
            try:
                self._step("create:file-written")
                view = self._commit(view, (*view.records, record))
            except BaseException:
                _unlink_quietly(path)
                raise
            self._step("create:committed")
            record = view.by_id[record.id]
            self._note_file(record)
        return self._result("created", view, record, request.content)

    def create_from_file(self, path: Path | str, *, title: Any = None, description: Any = None,
                         session_ids: Any = None, expected_revision: str | None = None) -> MutationResult:
        """"Create document from file": a new document whose body is the text of the workspace file
        ``path``, whose title is ``title`` or :func:`~.model.suggest_title` (first Markdown heading, else
        the file name) and whose only source path is the file. The file is read, never modified.

        Raises :class:`InvalidInput` (field ``path``) when the file is missing, not a regular file or
        not UTF-8, plus every error of :meth:`create` (e.g. ``sourcePaths[0]`` outside the workspace).
        """
        file = Path(path)
        if self.workspace is not None and not file.is_absolute():
            file = self.workspace / file
        try:
            data = file.read_bytes()
        except FileNotFoundError:
            raise InvalidInput("path", f"{file} does not exist") from None
        except IsADirectoryError:
            raise InvalidInput("path", f"{file} is a directory, not a file") from None
        except OSError as exc:
            raise InvalidInput("path", f"{file} cannot be read ({exc.strerror or exc})") from None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidInput("path", f"{file} is not UTF-8 text (byte {exc.start})") from None
        text = text.removeprefix("\ufeff")
        chosen = model.suggest_title(text, file.name) if title is None else title
        return self.create(chosen, text, description=description, source_paths=[str(file)],
                           session_ids=session_ids, expected_revision=expected_revision)

    def _new_record(self, view: _View, request: model.CreateRequest) -> DocumentRecord:
        names = view.cache.get("filenames")
        if names is None:
            names = view.cache["filenames"] = {r.filename for r in view.records}
        now = self._now()
        for _ in range(64):
            document_id = model.new_id()
            filename = model.filename_for(request.title, document_id)
            if (document_id in view.by_id or filename in names or (self.dir_for("active") / filename).exists()
                    or (self.dir_for("archived") / filename).exists()):
                continue
            return model.new_record(request, document_id, now)
        raise RuntimeError("could not find a free document id")  # pragma: no cover - 64 UUID collisions

    def update(self, document_id: Any, *, title: Any = None, description: Any = None, content: Any = None,
               source_paths: Any = None, session_ids: Any = None, document_revision: int | None = None,
               expected_revision: str | None = None) -> MutationResult:
        """Update an active document: every given field replaces the current one (``session_ids`` are
        merged, keeping the latest 20); an omitted ``content`` keeps the body. Revision + 1, updatedAt =
        lastAccessedAt = now. ``document_revision`` (optional) must equal the document's revision.
        Archived documents are immutable (:class:`DocumentStatusError`; restore them first).
        Returns ``action="updated"``."""
        request = self.validate_update(document_id, title=title, description=description, content=content,
                                       source_paths=source_paths, session_ids=session_ids,
                                       document_revision=document_revision)
        expected = _validate_expected(expected_revision)
        preserved: dict[str, str] = {}
        with self._mutex, self._locked():
            view = self._begin(expected)
            current = self._require(view, request.id)
            self._check_status(current, "active", "update")
            self._check_document_revision(current, request.document_revision)
            path = self.path_for(current)
            old = fsio.read_bytes_or_none(path)
            if old is None and request.content is None:
                raise NotFound(f"{current.relative_path}: the managed file of document {current.id} is missing; "
                               "give content to write it again", id=current.id, file=str(path))
            old_body = split_markdown(decode_markdown(old))[1] if old is not None else None
            body = request.content if request.content is not None else old_body
            record = model.updated_record(current, request, body, self._now())
            plan = self._plan(view, record.size_bytes, current.id)
            if not plan.fits:
                raise self._capacity_error(plan, view, f"updating {current.filename} to {record.size_bytes} bytes")
            if old is not None and request.content is not None and sha256_hex(old_body) != current.content_hash:
                preserved[current.relative_path] = self._preserve(current.filename, old)
            fsio.write_file_atomically(path, render_markdown(record, body).encode("utf-8"))
            try:
                self._step("update:file-written")
                view = self._commit(view, [record if r.id == record.id else r for r in view.records])
            except BaseException:
                if old is None:
                    _unlink_quietly(path)
                else:
                    fsio.write_file_atomically(path, old)
                raise
            record = view.by_id[record.id]
            self._note_file(record)
        return self._result("updated", view, record, body, preserved)

    def archive(self, document_id: Any, document_revision: int | None, *, summary: Any = None,
                memory_body_ids: Any = None, expected_revision: str | None = None) -> MutationResult:
        """Move an active document to ``archived/`` (reference 5.4, module doc for the crash-safe order).

        ``document_revision`` must equal the document's revision (``None`` skips that check, for a
        person archiving by hand); ``summary`` (<= 1000 characters, default "Archived locally by the
        user.") and ``memory_body_ids`` (<= 20, the cold references) are recorded. Revision + 1,
        archivedAt = updatedAt = lastAccessedAt = now. Returns ``action="archived"``.
        """
        doc_id = model.validate_id(document_id)
        revision = model.validate_revision(document_revision, "documentRevision")
        summary_text = model.validate_summary(summary)
        body_ids = model.validate_id_list(memory_body_ids, "memoryBodyIds", model.MAX_MEMORY_BODY_IDS)
        expected = _validate_expected(expected_revision)
        with self._mutex, self._locked():
            view = self._begin(expected)
            current = self._require(view, doc_id)
            self._check_status(current, "active", "archive")
            self._check_document_revision(current, revision)
            body = self._committed_body(current)
            record = model.archived_record(current, body, summary_text, body_ids, self._now())
            view, preserved = self._move(view, current, record, body, "archive")
        return self._result("archived", view, view.by_id[record.id], body, preserved)

    def restore(self, document_id: Any, *, document_revision: int | None = None,
                expected_revision: str | None = None) -> MutationResult:
        """Bring an archived document back to ``active/`` as a new revision (revision + 1, updatedAt =
        lastAccessedAt = now, archivedAt/archiveSummary removed, memoryBodyIds kept). Capacity is
        checked as for a create. Returns ``action="restored"``."""
        doc_id = model.validate_id(document_id)
        revision = model.validate_revision(document_revision, "documentRevision")
        expected = _validate_expected(expected_revision)
        with self._mutex, self._locked():
            view = self._begin(expected)
            current = self._require(view, doc_id)
            self._check_status(current, "archived", "restore")
            self._check_document_revision(current, revision)
            body = self._committed_body(current)
            record = model.restored_record(current, body, self._now())
            plan = self._plan(view, record.size_bytes)
            if not plan.fits:
                raise self._capacity_error(plan, view, f"restoring {current.filename} ({record.size_bytes} bytes)")
            view, preserved = self._move(view, current, record, body, "restore")
        return self._result("restored", view, view.by_id[record.id], body, preserved)

    def _check_status(self, record: DocumentRecord, required: Status, action: str) -> None:
        if record.status == required:
            return
        if required == "active":
            rule = "archived documents are immutable; restore it (a new active revision) or create a new document"
        else:
            rule = "it is already active"
        raise DocumentStatusError(f"cannot {action} document {record.id}: {rule}", id=record.id,
                                  status=record.status, required=required)

    def _check_document_revision(self, record: DocumentRecord, expected: int | None) -> None:
        if expected is not None and expected != record.revision:
            raise RevisionConflict(
                f"document {record.id} is at revision {record.revision}, not {expected}; it changed meanwhile "
                "(the stored copy was kept as it is)", id=record.id, expected=expected, actual=record.revision)

    def _committed_body(self, record: DocumentRecord) -> str:
        """The body of ``record``'s file, which must exist and match the index (else a clear error)."""
        path = self.path_for(record)
        data = fsio.read_bytes_or_none(path)
        if data is None:
            raise NotFound(f"{record.relative_path}: the managed file of document {record.id} is missing",
                           id=record.id, file=str(path))
        body = split_markdown(decode_markdown(data))[1]
        if sha256_hex(body) != record.content_hash:
            raise RevisionConflict(
                f"{record.relative_path} changed on disk after revision {record.revision} (an edit not yet "
                "taken into the index); refresh and retry", id=record.id, expected=record.content_hash,
                actual=sha256_hex(body))
        return body

    def _move(self, view: _View, current: DocumentRecord, record: DocumentRecord, body: str,
              action: str) -> tuple[_View, dict[str, str]]:
        """The three-step move of archive / restore (module doc). Lock must be held."""
        source, target = self.path_for(current), self.path_for(record)
        preserved: dict[str, str] = {}
        existing = fsio.read_bytes_or_none(target)
        if existing is not None and split_markdown(decode_markdown(existing))[1] != body:
            preserved[model.relative_path(record.status, record.filename)] = self._preserve(
                f"{record.status}-{record.filename}", existing)
        self._step(f"{action}:start")
        fsio.write_file_atomically(target, render_markdown(record, body).encode("utf-8"))
        try:
            self._step(f"{action}:copied")
            view = self._commit(view, [record if r.id == record.id else r for r in view.records])
        except BaseException:
            if existing is None:
                _unlink_quietly(target)
            else:
                fsio.write_file_atomically(target, existing)
            raise
        self._step(f"{action}:committed")
        try:
            os.unlink(source)
            fsio._fsync_dir(source.parent)
        except FileNotFoundError:
            pass
        except OSError:
            pass  # the index already names the target; repair removes the source copy later
        self._step(f"{action}:done")
        self._files.pop(current.id, None)
        self._note_file(view.by_id[record.id])
        return view, preserved

    # ================================================================== reads

    def get(self, document_id: Any) -> DocumentView:
        """The document ``document_id`` with its body (as on disk). Counts as an access.

        Raises :class:`~mnemon_ls.errors.NotFound` for an unknown id or a missing managed file.
        """
        doc_id = model.validate_id(document_id)
        with self._mutex:
            self._refresh_if_due()
            view = self._read_view()
            record = self._require(view, doc_id)
            path = self.path_for(record)
            try:
                data = path.read_bytes()
            except FileNotFoundError:
                raise NotFound(f"{record.relative_path}: the managed file of document {record.id} is missing",
                               id=record.id, file=str(path)) from None
            body = split_markdown(decode_markdown(data))[1]
            self._touch([record.id], view)
            return DocumentView(record, body, self._accessed(record), str(path))

    def list(self, status: str | None = None, *, excerpts: bool = False) -> Catalog:
        """Every document in index order (``status`` ``active`` / ``archived`` filters), with health
        (file present) and, when ``excerpts``, the first 220 characters of each body. Not an access."""
        if status is not None and status not in model.STATUSES:
            raise InvalidInput("status", f"must be active or archived (got {status!r})")
        with self._mutex:
            self._refresh_if_due()
            view = self._read_view()
            later = self._last_accessed(view)
            entries = []
            for record in view.records:
                if status is not None and record.status != status:
                    continue
                problem = self._missing.get(record.id)
                excerpt = None
                if excerpts and problem is None:
                    body = self._read_body(record)
                    excerpt = _excerpt(body or "", "", ()) if body is not None else None
                entries.append(CatalogEntry(record, later.get(record.id, record.last_accessed_at),
                                            problem is None, problem, excerpt))
            return Catalog(tuple(entries), view.revision, self._now(), self._usage(view), view.problem,
                           tuple(self._notices(view)))

    def record_for_path(self, path: Path | str) -> DocumentRecord | None:
        """The record whose managed file is ``path`` (absolute), or ``None`` (for the server: is this
        editor file a managed document?)."""
        target = os.path.realpath(path)
        with self._mutex:
            view = self._read_view()
            for record in view.records:
                if os.path.realpath(self.path_for(record)) == target:
                    return record
        return None

    def _read_body(self, record: DocumentRecord) -> str | None:
        try:
            with open(self._file(record), "rb") as handle:
                data = handle.read()
        except FileNotFoundError:
            self._missing[record.id] = "the managed file is missing"
            return None
        except OSError as exc:
            self._missing[record.id] = f"the managed file cannot be read ({exc.strerror or exc})"
            return None
        return split_markdown(decode_markdown(data))[1]

    def _touch(self, ids: Iterable[str], view: _View) -> None:
        self._access.note(ids, self._now())
        if self._access.due():
            self._access.flush({r.id: r.last_accessed_at for r in view.records})

    def _notices(self, view: _View, eligible: Iterable[DocumentRecord] | None = None) -> list[str]:
        notices = []
        if view.problem:
            notices.append(f"{view.problem}; showing the recoverable documents; run `mnemon-ls doc recover`")
        if not self._missing:
            return notices
        for record in (view.records if eligible is None else eligible):
            reason = self._missing.get(record.id)
            if reason:
                notices.append(f"{record.relative_path} ({record.title}): {reason}; left out")
        return notices

    # ================================================================== search

    def search(self, query: Any, include_archived: bool = False, limit: Any = 20, *,
               include_content: bool = False) -> SearchResult:
        """Ranked lexical search over title, description and body (:mod:`.tokens`, :mod:`.search_index`).

        ``query`` at most 2000 characters (an empty query lists every eligible document, newest
        ``updatedAt`` first, score 1); ``include_archived`` adds archived documents; ``limit`` 1..50.
        Order: documents whose title holds the whole query as a phrase, then those whose description
        does, then by BM25F score, then newest ``updatedAt``. A document must contain enough distinct
        query terms (:func:`~.tokens.required_matches`). Returned documents count as accessed (side
        file, not the index). A missing or unreadable managed file leaves that document out with a
        notice. ``include_content`` adds each body.
        """
        if not isinstance(query, str):
            raise InvalidInput("query", f"must be a string (got {type(query).__name__})")
        text = js_trim(query)
        if js_length(text) > MAX_QUERY_CHARS:
            raise InvalidInput("query", f"is {js_length(text)} characters; at most {MAX_QUERY_CHARS}")
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_SEARCH_LIMIT:
            raise InvalidInput("limit", f"must be an integer in 1..{MAX_SEARCH_LIMIT} (got {limit!r})")
        if not isinstance(include_archived, bool):
            raise InvalidInput("includeArchived", "must be true or false")
        with self._mutex:
            self._refresh_if_due()
            view = self._read_view()
            self._check_changed(view)
            eligible = view.cache.get(("eligible", include_archived))
            if eligible is None:
                eligible = view.cache[("eligible", include_archived)] = [
                    r for r in view.records if include_archived or r.status == "active"]
            phrase = collapse_space(normalize(text))
            ranked: list[tuple[DocumentRecord, float, str]]
            notices: list[str] = []
            if not phrase:
                present = [r for r in eligible if r.id not in self._missing]
                ranked = [(r, 1.0, "all") for r in sorted(present, key=lambda r: time_key(r.updated_at), reverse=True)]
                terms, matches = [], len(present)
            elif not eligible:
                ranked, terms, matches = [], [], 0
            else:
                terms = query_terms(phrase)
                ranked, matches, problem = self._rank(view, eligible, phrase, terms, include_archived, limit)
                if problem:
                    notices.append(problem)
            hits: list[SearchHit] = []
            for record, score, matched in ranked:
                if len(hits) >= limit:
                    break
                if record.id in self._missing:
                    continue
                body = self._read_body(record)
                if body is None:
                    if self._read_view(force=True).by_id.get(record.id) != record:
                        self._missing.pop(record.id, None)  # another process moved or changed it meanwhile
                    continue
                hits.append(SearchHit(record, record.last_accessed_at, score, matched,
                                      _excerpt(body, phrase, terms), body if include_content else None))
            notices = self._notices(view, eligible) + notices
            if hits:
                self._touch([h.record.id for h in hits], view)
                hits = [SearchHit(h.record, self._accessed(h.record), h.score, h.matched, h.excerpt, h.content)
                        for h in hits]
            return SearchResult(text, include_archived, limit, tuple(hits), matches, self._now(), view.revision,
                                tuple(notices))

    def _normalized(self, record: DocumentRecord) -> tuple[str, str]:
        hit = self._norm.get(record.id)
        if hit is not None and hit[0] == record.title and hit[1] == record.description:
            return hit[2], hit[3]
        title, description = collapse_space(normalize(record.title)), collapse_space(normalize(record.description))
        self._norm[record.id] = (record.title, record.description, title, description)
        return title, description

    def _normalized_view(self, view: _View) -> tuple[list[tuple[DocumentRecord, str, str]], str, str]:
        """``([(record, normalized title, normalized description)], all titles joined, all descriptions
        joined)`` (cached per view; the joined forms let one ``in`` rule out a phrase everywhere)."""
        cached = view.cache.get("normalized")
        if cached is None:
            rows = [(r, *self._normalized(r)) for r in view.records]
            cached = view.cache["normalized"] = (rows, "\x00".join(t for _, t, _ in rows),
                                                 "\x00".join(d for _, _, d in rows))
        return cached

    def _rank(self, view: _View, eligible: Sequence[DocumentRecord], phrase: str, terms: Sequence[Any],
              include_archived: bool, limit: int) -> tuple[list[tuple[DocumentRecord, float, str]], int, str | None]:
        """``(ranked (record, score, matched) best first, total matches, problem)``."""
        bounds = (_needs_boundary(phrase[0]), _needs_boundary(phrase[-1]))
        eligible_ids = view.cache.get(("eligible-ids", include_archived))
        if eligible_ids is None:
            eligible_ids = view.cache[("eligible-ids", include_archived)] = {r.id for r in eligible}
        missing = self._missing
        tiers: dict[str, int] = {}
        rows, titles, descriptions = self._normalized_view(view)
        for column, tier in ((descriptions, 1), (titles, 2)):
            if phrase not in column:  # one C-level scan of all titles (or descriptions) joined
                continue
            for record, title, description in rows:
                text = title if tier == 2 else description
                if phrase in text and _phrase_in(phrase, text, bounds) and record.id in eligible_ids \
                        and record.id not in missing:
                    tiers[record.id] = tier
        problem = None
        scores: dict[str, float] = {}
        matches = len(tiers)
        if terms:
            required = required_matches(len({t.group for t in terms}))
            statuses = ("active", "archived") if include_archived else ("active",)
            try:
                try:
                    self._sync_search(view)
                except OSError:
                    # the side index cannot be created here (read-only directory): keep it in memory
                    self._search.close()
                    self._search = SearchIndex(None)
                    self._synced = None
                    self._sync_search(view)
                found, total = self._search.query(terms, required, statuses=statuses,
                                                  limit=limit + len(missing) + 8)
                scores = {doc_id: score for doc_id, score, _ in found}
                absent = [doc_id for doc_id in tiers if doc_id not in scores]
                covered = 0
                if absent and len(absent) <= MAX_PHRASE_RESCORE:
                    extra, _ = self._search.query(terms, 0, statuses=statuses, limit=len(absent), only=absent)
                    for doc_id, score, groups in extra:
                        scores[doc_id] = score
                        covered += groups >= required
                # beyond MAX_PHRASE_RESCORE phrase hits outside the top rows keep score 0 (ordered by updatedAt)
                matches = total + len(absent) - covered
            except sqlite3.Error as exc:
                problem = f"the search index is busy or unreadable ({exc}); only title and description phrases matched"
        positions = view.cache.get("positions")
        if positions is None:
            positions = view.cache["positions"] = {r.id: i for i, r in enumerate(view.records)}
        ranked: list[tuple[int, float, int, int, DocumentRecord]] = []
        for doc_id in (scores.keys() | tiers.keys()):
            position = positions.get(doc_id)
            if position is None or doc_id not in eligible_ids or doc_id in missing:
                continue
            record = view.records[position]
            ranked.append((tiers.get(doc_id, 0), scores.get(doc_id, 0.0), time_key(record.updated_at), -position, record))
        ranked.sort(reverse=True)
        names = ("terms", "description", "title")
        return [(record, score, names[tier]) for tier, score, _, _, record in ranked], max(matches, len(ranked)), problem

    def _sync_search(self, view: _View) -> None:
        token = (view.revision, self._files_generation, self._search.generation())
        if token == self._synced:
            return
        wanted = []
        for record in view.records:
            known = self._files.get(record.id)
            if record.id in self._missing or known is None:
                continue
            wanted.append(IndexedDoc(record.id, record.title, record.description, known[1], known[0], record.status))
        expected = {doc.id: doc.body_hash for doc in wanted}

        def load(doc_id: str) -> str | None:
            record = view.by_id[doc_id]
            body = self._read_body(record)
            if body is None or sha256_hex(body) != expected[doc_id]:
                return None
            return body

        self._search.sync(wanted, load)
        self._synced = (view.revision, self._files_generation, self._search.generation())

    # ================================================================== freshness, adoption, repair

    def _refresh_if_due(self) -> None:
        if time.monotonic() - self._last_scan >= self.freshness_seconds:
            self._refresh()

    def refresh(self) -> RefreshReport:
        """Check every managed file now (the server's file watcher calls this on changes under
        ``documents/``; reads call it at most every ``freshness_seconds``).

        Finishes interrupted archives/restores (:meth:`repair`), notes missing or unreadable files
        (left out of search with a notice), and adopts a body changed outside mnemon-ls into the index
        as a new revision (an active document: hash, size, revision + 1, updatedAt; a frontmatter that
        is consistent with the body - an update whose index commit was interrupted - also brings its
        title, description, sourcePaths and sessionIds; a hand-edited frontmatter that would be lost is
        saved under ``edits/`` first). Archived documents are immutable: a changed archived file is only
        reported (and searched as it is on disk).
        """
        with self._mutex:
            return self._refresh()

    def _refresh(self) -> RefreshReport:
        report = RefreshReport()
        self._last_scan = time.monotonic()
        if not self.documents_dir.is_dir():
            self._missing.clear()
            return report
        view = self._read_view(force=True)
        report.problem = view.problem
        listing = self._listing()
        if not view.problem and self._needs_repair(view, listing):
            try:
                report.repair = self.repair()
            except StoreBusy:
                report.notices.append("documents/.index.lock is busy; the repair waits for the next refresh")
            view = self._read_view(force=True)
            listing = self._listing()
        self._scan(view, view.records, listing, report)
        named = {r.filename for r in view.records}
        for status, names in self._managed_names(listing).items():
            report.orphans.extend(f"documents/{status}/{n}" for n in names if n not in named)
        report.notices.extend(f"{p}: no index record names this managed file; `mnemon-ls doc recover` adds it"
                              for p in report.orphans)
        return report

    def _check_changed(self, view: _View) -> None:
        """Between full scans: check the files of records whose index hash we have not verified."""
        token = (self._files_generation, len(self._missing), len(self._changed_archived))
        if view.cache.get("checked") == token:
            return
        pending = [r for r in view.records
                   if r.id not in self._missing and (self._files.get(r.id) or ("", ""))[1] != r.content_hash
                   and r.id not in self._changed_archived]
        if pending:
            self._scan(view, pending, None, RefreshReport())
        view.cache["checked"] = (self._files_generation, len(self._missing), len(self._changed_archived))

    def _scan(self, view: _View, records: Sequence[DocumentRecord], listing: dict[str, set[str]] | None,
              report: RefreshReport) -> None:
        self._load_signatures()
        mismatched: list[DocumentRecord] = []
        vanished: list[DocumentRecord] = []
        for record in records:
            if listing is not None and record.filename not in listing[record.status]:
                self._missing[record.id] = "the managed file is missing"
                vanished.append(record)
                continue
            path = self._file(record)
            try:
                info = os.stat(path)
            except FileNotFoundError:
                self._missing[record.id] = "the managed file is missing"
                vanished.append(record)
                continue
            except OSError as exc:
                self._missing[record.id] = f"the managed file cannot be read ({exc.strerror or exc})"
                continue
            sig = _sig(info)
            known = self._files.get(record.id)
            if known is None or known[0] != sig:
                try:
                    with open(path, "rb") as handle:
                        data = handle.read()
                except OSError as exc:
                    self._missing[record.id] = f"the managed file cannot be read ({exc.strerror or exc})"
                    continue
                known = (sig, sha256_hex(split_markdown(decode_markdown(data))[1]))
                self._files[record.id] = known
                self._files_generation += 1
            self._missing.pop(record.id, None)
            if known[1] != record.content_hash:
                mismatched.append(record)
            else:
                self._changed_archived.discard(record.id)
        if vanished:
            # another process may have moved the file (archive/restore) after we read the index
            fresh = self._read_view(force=True)
            moved = [fresh.by_id[r.id] for r in vanished if fresh.by_id.get(r.id, r) != r]
            if moved:
                for record in moved:
                    self._missing.pop(record.id, None)
                self._scan(fresh, moved, None, report)
                view = fresh
        for record_id, reason in self._missing.items():
            if record_id in view.by_id:
                report.missing[record_id] = reason
        for record in mismatched:
            if record.status == "archived":
                self._changed_archived.add(record.id)
                report.changed_archived.append(record.id)
                report.notices.append(f"{record.relative_path}: the archived copy changed outside mnemon-ls "
                                      "(archived documents are immutable; restore it to edit it)")
        to_adopt = [r for r in mismatched if r.status == "active"
                    and self._adopt_tried.get(r.id) != self._files[r.id][0]]
        if to_adopt and not view.problem:
            for record in to_adopt:
                self._adopt_tried[record.id] = self._files[record.id][0]
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
        if not self.search_path.exists():
            return
        try:
            for doc_id, (sig, body_hash) in self._search.signatures().items():
                if doc_id not in self._files and sig and body_hash:
                    self._files[doc_id] = (sig, body_hash)
        except (sqlite3.Error, OSError):
            pass

    def _adopt(self, ids: Sequence[str], report: RefreshReport) -> None:
        """Take bodies changed outside mnemon-ls into the index (see :meth:`refresh`)."""
        with self._locked():
            view = self._read_view(force=True)
            if view.problem:
                return
            changes: dict[str, DocumentRecord] = {}
            writes: list[tuple[Path, bytes]] = []
            now = self._now()
            for doc_id in ids:
                record = view.by_id.get(doc_id)
                if record is None or record.status != "active":
                    continue
                path = self.path_for(record)
                data = fsio.read_bytes_or_none(path)
                if data is None:
                    continue
                front, body = split_markdown(decode_markdown(data))
                digest = sha256_hex(body)
                if digest == record.content_hash:
                    continue
                if not body:
                    report.notices.append(f"{record.relative_path}: the body was emptied outside mnemon-ls; not "
                                          "adopted (a document needs content): restore the text or update it")
                    continue
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
                        report.preserved[record.relative_path] = self._preserve(record.filename, data)
                rendered = render_markdown(new, body).encode("utf-8")
                new = new.with_changes(size_bytes=len(rendered))
                if rendered != data:
                    writes.append((path, rendered))
                changes[doc_id] = new
                size = model.utf8_len(body)
                report.notices.append(f"{record.relative_path}: adopted a body changed outside mnemon-ls as revision "
                                      f"{new.revision}" + (f" (its body is {size} bytes, over the {self.max_body_bytes}"
                                                           "-byte limit)" if size > self.max_body_bytes else ""))
            if not changes:
                return
            for path, data in writes:
                fsio.write_file_atomically(path, data)
            view = self._commit(view, [changes.get(r.id, r) for r in view.records])
            for doc_id in changes:
                self._note_file(view.by_id[doc_id])
                report.adopted.append(doc_id)
            usage = self._usage(view)
            if usage.active_bytes > self.active_limit_bytes:
                report.notices.append(f"active documents use {usage.active_bytes} of {self.active_limit_bytes} bytes "
                                      "after adopting outside edits; archive some before creating more")

    def _needs_repair(self, view: _View, listing: dict[str, set[str]]) -> bool:
        for record in view.records:
            if record.filename in listing[_other(record.status)]:
                return True
        return any(self._temp_files(listing))

    def _temp_files(self, listing: dict[str, set[str]] | None = None) -> list[Path]:
        found = []
        listing = listing or self._listing()
        try:
            top = set(os.listdir(self.documents_dir))
        except OSError:
            top = set()
        now_ms = time.time() * 1000
        for directory, names in ((self.documents_dir, top), (self.dir_for("active"), listing["active"]),
                                 (self.dir_for("archived"), listing["archived"])):
            for name in names:
                match = _TEMP_OURS.match(name) or _TEMP_PLUGIN.match(name)
                if not match:
                    continue
                pid = int(match.group("pid"))
                try:
                    age_ms = now_ms - os.stat(directory / name).st_mtime * 1000
                except OSError:
                    continue
                if pid != os.getpid() and (not _pid_alive(pid) or age_ms > STALE_TEMP_SECONDS * 1000):
                    found.append(directory / name)
        return found

    def repair(self) -> RepairReport:
        """Finish interrupted archives/restores and remove abandoned temp files (module doc: the copy the
        index names wins). Takes the lock; does nothing (``skipped``) when the index is damaged."""
        report = RepairReport()
        with self._mutex:
            if not self.documents_dir.is_dir():
                report.skipped = "no documents yet"
                return report
            with self._locked():
                view = self._read_view(force=True)
                if view.problem:
                    report.skipped = view.problem
                    return report
                listing = self._listing()
                for record in view.records:
                    other_status = _other(record.status)
                    if record.filename not in listing[other_status]:
                        continue
                    here, other = self.path_for(record), self.dir_for(other_status) / record.filename
                    other_data = fsio.read_bytes_or_none(other)
                    if other_data is None:
                        continue
                    front, other_body = split_markdown(decode_markdown(other_data))
                    fm = model.parse_frontmatter(front) if front is not None else {}
                    if fm.get("id") not in (None, record.id):
                        continue  # a different document that happens to share the name: not ours to touch
                    rel_other = model.relative_path(other_status, record.filename)
                    here_data = fsio.read_bytes_or_none(here)
                    if here_data is not None:
                        here_body = split_markdown(decode_markdown(here_data))[1]
                        if sha256_hex(other_body) not in (record.content_hash, sha256_hex(here_body)):
                            report.preserved[rel_other] = self._preserve(f"{other_status}-{record.filename}", other_data)
                        os.unlink(other)
                        fsio._fsync_dir(other.parent)
                        report.completed.append({"id": record.id, "removed": rel_other})
                    else:
                        if sha256_hex(other_body) == record.content_hash:
                            fsio.write_file_atomically(here, render_markdown(record, other_body).encode("utf-8"))
                            os.unlink(other)
                            fsio._fsync_dir(other.parent)
                        else:
                            os.rename(other, here)
                            fsio._fsync_dir(here.parent)
                            fsio._fsync_dir(other.parent)
                        report.moved.append({"id": record.id, "from": rel_other, "to": record.relative_path})
                    self._files.pop(record.id, None)
                for temp in self._temp_files():
                    try:
                        os.unlink(temp)
                        report.temps.append(str(temp))
                    except FileNotFoundError:
                        pass
        return report

    # ================================================================== recovery

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
        missingFiles, message}``.
        """
        with self._mutex, self._locked():
            data = fsio.read_bytes_or_none(self.index_path)
            view = self._parse_view(data)
            listing = self._managed_names(self._listing())
            if data is not None and not view.problem:
                named = {(r.status, r.filename) for r in view.records}
                orphans = [(s, n) for s, names in listing.items() for n in names if (s, n) not in named]
                if not orphans:
                    return {"recovered": False, "quarantined": None, "documents": len(view.records), "fromIndex":
                            len(view.records), "fromFiles": 0, "damagedRecords": 0, "missingFiles": 0,
                            "message": f"{self.index_path} is valid and names every managed file; nothing to recover"}
                base, damaged = list(view.records), 0
            else:
                base, damaged = model.salvage_index(data) if data is not None else ([], 0)
            quarantined = None
            if data is not None and view.problem:
                quarantined = str(fsio.copy_file_exclusive(self.quarantine_dir, f"{self._stamp()}-index.json", data))
            records, from_files = self._rebuild(base, listing)
            encoded, _ = self._codec.encode(records, view.extra if not view.problem else ())
            fsio.write_file_atomically(self.index_path, encoded)
            self._view = None
            self._files.clear()
            self._missing.clear()
            self._synced = None
        self.repair()
        refresh = self.refresh()
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

    def _rebuild(self, base: Sequence[DocumentRecord], listing: dict[str, list[str]]) -> tuple[list[DocumentRecord], int]:
        files: dict[str, list[tuple[Status, str, bytes, dict[str, Any], str]]] = {}
        anonymous: list[tuple[Status, str, bytes, dict[str, Any], str]] = []
        for status in model.STATUSES:
            for name in listing[status]:
                data = fsio.read_bytes_or_none(self.dir_for(status) / name)
                if data is None:
                    continue
                front, body = split_markdown(decode_markdown(data))
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
        now = self._now()
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

    # ================================================================== cover, access, lifecycle

    def cover(self, budget_chars: int) -> DocumentsCover:
        """The wake snapshot's Documents block within ``budget_chars`` characters (:mod:`.cover`).

        Rendered even with no documents (counts 0) so the caller decides whether to show it. Never
        writes (except a due freshness refresh).
        """
        if isinstance(budget_chars, bool) or not isinstance(budget_chars, int) or budget_chars < 0:
            raise InvalidInput("budget", f"must be an integer >= 0 characters (got {budget_chars!r})")
        with self._mutex:
            self._refresh_if_due()
            view = self._read_view()
            notices = []
            if view.problem:
                notices.append("documents/index.json is damaged; run `mnemon-ls doctor`")
            missing = sum(1 for r in view.records if r.id in self._missing)
            if missing:
                notices.append(f"{missing} document(s) have a missing or unreadable file")
            return render_cover(view.records, self._last_accessed(view), limit_bytes=self.active_limit_bytes,
                                budget_chars=budget_chars, revision=view.revision, notices=notices)

    def capacity_plan(self, *, document_id: str | None = None, title: Any = None, content: Any = None,
                      description: Any = None, source_paths: Any = None, session_ids: Any = None) -> model.CapacityPlan:
        """The capacity plan of a create (no ``document_id``) or an update (reference 5.6), without writing:
        ``projected``, ``limit``, ``used``, ``fits`` and the LRU ``candidates``. For cold archival."""
        with self._mutex:
            view = self._read_view(force=True)
            if view.problem:
                raise self._unreadable(view)
            if document_id is None:
                request = self.validate_create(title, content, description=description, source_paths=source_paths,
                                               session_ids=session_ids)
                record = model.new_record(request, "00000000-0000-4000-8000-000000000000", self._now())
                size, replacing = record.size_bytes, None
            else:
                update = self.validate_update(document_id, title=title, description=description, content=content,
                                              source_paths=source_paths, session_ids=session_ids)
                current = self._require(view, update.id)
                self._check_status(current, "active", "update")
                body = update.content if update.content is not None else self._committed_body(current)
                size, replacing = model.updated_record(current, update, body, self._now()).size_bytes, current.id
            return model.plan_capacity(view.records, size, self.active_limit_bytes, replacing=replacing,
                                       last_accessed=self._last_accessed(view))

    def flush_access(self) -> bool:
        """Write pending access times to ``documents/.access.json`` now (:mod:`.access`); ``True`` when done."""
        with self._mutex:
            if not self._access.pending:
                return True
            view = self._read_view()
            return self._access.flush({r.id: r.last_accessed_at for r in view.records}, force=True)

    def close(self) -> None:
        """Flush access times and close the search index (the store stays usable; it reopens lazily)."""
        with self._mutex:
            try:
                self.flush_access()
            finally:
                self._search.close()

    def __enter__(self) -> "DocumentStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# ====================================================================== module helpers


def _unlink_quietly(path: Path) -> None:
    try:
        os.unlink(path)
        fsio._fsync_dir(path.parent)
    except OSError:
        pass


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _or(make: Callable[[], Any], fallback: Any) -> Any:
    try:
        return make()
    except InvalidInput:
        return fallback


def _str_tuple(value: Any, fallback: tuple[str, ...]) -> tuple[str, ...]:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    return fallback


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


def _needs_boundary(ch: str) -> bool:
    return (ch.isalnum() or ch == "_") and not _is_cjk(ch)


def _is_cjk(ch: str) -> bool:
    code = ord(ch)
    return (0x3040 <= code <= 0x30FF or 0x3400 <= code <= 0x4DBF or 0x4E00 <= code <= 0x9FFF
            or 0xAC00 <= code <= 0xD7AF or 0x1100 <= code <= 0x11FF or 0x3130 <= code <= 0x318F
            or 0xF900 <= code <= 0xFAFF or 0x20000 <= code <= 0x3FFFF or code in (0x3005, 0x3006, 0x303B))


def _phrase_in(phrase: str, text: str, bounds: tuple[bool, bool] | None = None) -> bool:
    """Whether ``phrase`` occurs in ``text`` (both normalized) not inside a longer word. ``bounds``:
    whether the phrase's first / last character needs a word boundary (computed once per query)."""
    if not phrase or not text:
        return False
    start = text.find(phrase)
    check_start, check_end = bounds or (_needs_boundary(phrase[0]), _needs_boundary(phrase[-1]))
    while start >= 0:
        end = start + len(phrase)
        if (not check_start or start == 0 or not _needs_boundary(text[start - 1])) and \
                (not check_end or end == len(text) or not _needs_boundary(text[end])):
            return True
        start = text.find(phrase, start + 1)
    return False


def _excerpt(body: str, phrase: str, terms: Sequence[Any], width: int = EXCERPT_CHARS) -> str:
    """About ``width`` characters of ``body`` (whitespace collapsed) around the best match: the whole
    query, else its longest term found; the start of the body when nothing is found. ``…`` marks cuts.

    Only a window of the body around the match is collapsed (bodies run to megabytes)."""
    needles = [phrase] if phrase else []
    needles += sorted({t.text for t in terms}, key=len, reverse=True)
    position, length = _locate(body, [n for n in needles if n])
    if position < 0:
        raw_start = 0
    else:
        raw_start = max(0, position - 3 * width)
    raw_end = min(len(body), max(position, 0) + length + 3 * width)
    window = body[raw_start:raw_end]
    flat = collapse_space(window)
    if not flat:
        return ""
    offset, match_len = (-1, 0)
    if position >= 0:
        offset, match_len = _locate(flat, [n for n in needles if n])
    if offset < 0 or len(flat) <= width:
        start = 0
    else:
        start = max(0, offset - max(0, width - match_len) // 3)
    end = min(len(flat), start + width)
    start = max(0, min(start, end - width))
    text = flat[start:end]
    cut_before = start > 0 or (raw_start > 0 and bool(collapse_space(body[:raw_start])))
    cut_after = end < len(flat) or (raw_end < len(body) and bool(collapse_space(body[raw_end:raw_end + 64])))
    return ("…" if cut_before else "") + text + ("…" if cut_after else "")


def _locate(text: str, needles: Sequence[str]) -> tuple[int, int]:
    """``(position, length)`` in ``text`` of the first needle (normalized, case-folded) found, case-
    insensitively and across any whitespace run for a multi-word needle; ``(-1, 0)`` when none is."""
    folded = text.casefold()
    same = len(folded) == len(text)
    for needle in needles:
        if same and " " not in needle:
            found = folded.find(needle)
            if found >= 0:
                return found, len(needle)
            continue
        import regex

        pattern = r"\s+".join(regex.escape(part) for part in needle.split(" "))
        match = regex.search(pattern, text, regex.IGNORECASE | regex.FULLCASE)
        if match:
            return match.start(), match.end() - match.start()
    return -1, 0
