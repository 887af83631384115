"""``documents/index.json`` as the store reads and commits it: the parsed view, the revision fence.

The format itself (records, canonical JSON, revisions) is :mod:`.model`; this module owns how the store
holds it: an :class:`IndexView` per reading (cached by file signature, re-checked at least every
``freshness_seconds``), a damaged index kept as its recoverable records with a problem (never
overwritten), the ``expectedRevision`` fence checked under the lock (:meth:`IndexFile.begin`), the
checks of one record a mutation makes (:meth:`IndexView.require`, :func:`check_status`,
:func:`check_document_revision`), and the commit that writes the index durably (temp, fsync, rename,
directory fsync) folding in later access times (:mod:`.access`).

:class:`IndexFile` is ``store.index`` of a :class:`~.store.DocumentStore`: an object of its own, built from
the index path, the managed files (:class:`~.files.ManagedFiles`, to tell a missing index from an empty
one), the access log and ``freshness_seconds``; it holds no reference to the store.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from .. import fsio
from ..errors import InvalidInput, NotFound, RevisionConflict, UnreadableStore, echo_value
from .access import AccessLog
from .errors import DocumentStatusError
from .files import ManagedFiles, stat_signature
from .indexformat import IndexCodec, IndexProblem, parse_index, salvage_index
from .model import DocumentRecord, Status, time_key
from .views import IndexState

_REVISION = re.compile("[0-9a-f]{64}")


@dataclass(slots=True)
class IndexView:
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

    def require(self, document_id: str) -> DocumentRecord:
        """The record ``document_id``; raises :class:`~mnemon_ls.errors.NotFound` naming the field ``id``
        (``id: document "x" does not exist``, ``data.field``) when this reading has none."""
        record = self.by_id.get(document_id)
        if record is None:
            shown = echo_value(document_id)  # as typed: control characters escaped, clipped
            raise NotFound(f'id: document "{shown}" does not exist', id=shown, field="id")
        return record


def validate_expected(value: Any) -> str | None:
    """``expectedRevision``: ``None`` or an index revision (64 lowercase hex); else :class:`InvalidInput`."""
    if value is None:
        return None
    if not isinstance(value, str) or not _REVISION.fullmatch(value):
        raise InvalidInput("expectedRevision", "must be an index revision (64 lowercase hex characters)")
    return value


def check_status(record: DocumentRecord, required: Status, action: str) -> None:
    """Raise :class:`DocumentStatusError` (``data.id``, ``status``, ``required``) unless ``record`` has the
    status ``required`` for ``action`` (``"update"``, ``"archive"``, ``"restore"``: named in the message)."""
    if record.status == required:
        return
    if required == "active":
        rule = "archived documents are immutable; restore it (a new active revision) or create a new document"
    else:
        rule = "it is already active"
    raise DocumentStatusError(f"cannot {action} document {record.id}: {rule}", id=record.id,
                              status=record.status, required=required)


def check_document_revision(record: DocumentRecord, expected: int | None) -> None:
    """Raise :class:`~mnemon_ls.errors.RevisionConflict` naming the field (``documentRevision: expected revision
    3, the document is at 4 ...``; ``data.field``, ``id``, ``expected``, ``actual``) when ``expected`` (a
    document's own integer revision; ``None`` skips the check) is not ``record``'s."""
    if expected is not None and expected != record.revision:
        raise RevisionConflict(
            f"documentRevision: expected revision {expected}, the document is at {record.revision} (document "
            f"{record.id}: re-read it and retry; the stored copy was kept as it is)", field="documentRevision",
            id=record.id, expected=expected, actual=record.revision)


class IndexFile:
    """Reading and committing ``index.json`` (module doc); ``store.index`` of a ``DocumentStore``.

    ``path`` is ``documents/index.json``; ``files`` the store's managed files; ``access`` its access log
    (:mod:`.access`: later access times are folded in at each commit); ``freshness_seconds`` how long a
    cached reading is trusted without re-reading the file when its signature is unchanged. Not locked
    itself: callers hold the store's ``mutex`` (and its ``locked()`` file lock to commit).
    """

    def __init__(self, path: Path, files: ManagedFiles, access: AccessLog, freshness_seconds: float) -> None:
        self.path = path
        self.files = files
        self.access = access
        self.freshness_seconds = freshness_seconds
        #: The ``index.json`` codec (canonical bytes and revisions; recovery encodes a rebuilt index with it).
        self.codec = IndexCodec()
        self._view: IndexView | None = None
        self._folded = -1  # access-log version whose later times the last commit folded into the index

    def view(self, *, force: bool = False) -> IndexView:
        """The current reading of ``index.json``: the cached one while the file's signature is unchanged
        and it was verified less than ``freshness_seconds`` ago (``force``: always re-read), else read
        again (parsed only when its bytes changed). A damaged file gives its recoverable records with
        ``problem`` set; a missing one an empty view. Raises the :class:`OSError` of reading it."""
        sig = stat_signature(self.path)
        now = time.monotonic()
        cached = self._view
        if cached is not None and not force and cached.sig == sig and now - cached.verified < self.freshness_seconds:
            return cached
        data = fsio.read_bytes_or_none(self.path)
        if cached is not None and data == cached.data:
            cached.sig, cached.verified = sig, now
            return cached
        view = self.parse(data)
        view.sig, view.verified = sig, now
        self._view = view
        return view

    def forget(self) -> None:
        """Drop the cached reading: the next :meth:`view` reads the file again (after it was rewritten
        other than by :meth:`commit`)."""
        self._view = None

    def parse(self, data: bytes | None) -> IndexView:
        """The :class:`IndexView` of ``data`` (the bytes of ``index.json``, ``None`` when it does not
        exist), not cached. A damaged index keeps its salvaged records with ``problem`` and
        ``bad_record``; a missing one while managed files exist has a ``problem`` naming ``doc recover``."""
        if data is None:
            names = self.files.managed_names(self.files.listing())
            count = sum(len(v) for v in names.values())
            if count:
                problem = (f"{self.path} is missing but {count} managed file(s) exist under "
                           f"documents/active and documents/archived; run `mnemon-ls doc recover` to rebuild it")
                return IndexView(None, (), self.codec.revision(()), False, problem)
            return IndexView(None, (), self.codec.revision(()), False)
        try:
            parsed = parse_index(data)
        except IndexProblem as exc:
            salvaged, _ = salvage_index(data)
            where = f" (record {exc.record})" if exc.record is not None else ""
            problem = f"{self.path}: {exc.message}{where}"
            return IndexView(data, tuple(salvaged), self.codec.revision(salvaged), True, problem, exc.record)
        revision = self.codec.revision(parsed.records)
        return IndexView(data, parsed.records, revision, True, None, None, parsed.extra, parsed.dropped)

    def state(self) -> IndexState:
        """Read ``index.json`` now without locking or writing (see :class:`IndexState`)."""
        view = self.view(force=True)
        return IndexState(view.records, view.revision, view.exists, view.problem, view.bad_record)

    def unreadable(self, view: IndexView) -> UnreadableStore:
        """The :class:`~mnemon_ls.errors.UnreadableStore` a mutation raises on the damaged reading ``view``
        (``data.file``, ``reason``, ``record``; the message names ``doctor`` and ``doc recover``)."""
        return UnreadableStore(
            f"{view.problem}; nothing was written. Run `mnemon-ls doctor` to see why and "
            "`mnemon-ls doc recover` to rebuild the index from the managed files",
            file=str(self.path), reason=view.problem, record=view.bad_record,
        )

    def begin(self, expected: str | None) -> IndexView:
        """Under the file lock: the current valid index, re-read, checked against ``expected`` (an index
        revision, ``None``: no check). Raises :class:`~mnemon_ls.errors.UnreadableStore` for a damaged
        index and :class:`~mnemon_ls.errors.RevisionConflict` for a stale ``expected``."""
        view = self.view(force=True)
        if view.problem:
            raise self.unreadable(view)
        if expected is not None and expected != view.revision:
            raise RevisionConflict(
                f"expectedRevision: documents/index.json changed since revision {expected[:12]} (now "
                f"{view.revision[:12]}); re-read and retry", field="expectedRevision", expected=expected,
                actual=view.revision)
        return view

    def last_accessed(self, view: IndexView) -> dict[str, str]:
        """``id -> effective lastAccessedAt`` (ISO-8601 UTC) for the ids of ``view`` whose side-file or
        pending access time is later than the index's (cached per view and access-log version)."""
        version = self.access.check()
        hit = view.cache.get("later")
        if hit is not None and hit[0] == version:
            return hit[1]
        later = self.access.effective(view.stored_times())
        view.cache["later"] = (version, later)
        return later

    def accessed(self, record: DocumentRecord) -> str:
        """The effective lastAccessedAt (ISO-8601 UTC) of one record: the access log's when later."""
        latest = self.access.latest(record.id)
        if latest is not None and latest[0] > time_key(record.last_accessed_at):
            return latest[1]
        return record.last_accessed_at

    def commit(self, view: IndexView, records: Sequence[DocumentRecord]) -> IndexView:
        """Write ``records`` as ``index.json`` durably (folding in later access times, keeping ``view``'s
        extra keys) and return the new reading. The store's file lock must be held. Raises the
        :class:`OSError` of the write (then the file is unchanged)."""
        version = self.access.check()
        later = {} if version == self._folded else self.access.effective({r.id: r.last_accessed_at for r in records})
        if later:
            records = [r.with_changes(last_accessed_at=later[r.id]) if r.id in later else r for r in records]
        data, revision = self.codec.encode(records, view.extra)
        fsio.write_file_atomically(self.path, data)
        self.access.folded(later)
        self._folded = self.access.version
        new = IndexView(data, tuple(records), revision, True, None, None, view.extra, 0)
        new.sig, new.verified = stat_signature(self.path), time.monotonic()
        self._view = new
        return new
