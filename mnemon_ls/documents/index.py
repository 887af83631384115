"""``documents/index.json`` as the store reads and commits it: the parsed view, the revision fence.

The format itself (records, canonical JSON, revisions) is :mod:`.model`; this module owns how the store
holds it: an :class:`IndexView` per reading (cached by file signature, re-checked at least every
``freshness_seconds``), a damaged index kept as its recoverable records with a problem (never
overwritten), the ``expectedRevision`` fence checked under the lock (:meth:`IndexFile._begin`), and the
commit that writes the index durably (temp, fsync, rename, directory fsync) folding in later access
times (:mod:`.access`).

:class:`IndexFile` is a part of :class:`~.store.DocumentStore` (a mixin, state set up in its ``__init__``).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from .. import fsio
from ..errors import InvalidInput, NotFound, RevisionConflict, UnreadableStore
from .access import AccessLog
from .files import stat_signature
from .indexformat import IndexCodec, IndexProblem, parse_index, salvage_index
from .model import DocumentRecord, time_key
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


def validate_expected(value: Any) -> str | None:
    """``expectedRevision``: ``None`` or an index revision (64 lowercase hex); else :class:`InvalidInput`."""
    if value is None:
        return None
    if not isinstance(value, str) or not _REVISION.fullmatch(value):
        raise InvalidInput("expectedRevision", "must be an index revision (64 lowercase hex characters)")
    return value


class IndexFile:
    """Reading and committing ``index.json`` (module doc); a part of ``DocumentStore``."""

    index_path: Path
    freshness_seconds: float
    _mutex: Any
    _codec: IndexCodec
    _view: IndexView | None
    _access: AccessLog
    _folded: int

    def _read_view(self, *, force: bool = False) -> IndexView:
        sig = stat_signature(self.index_path)
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

    def _parse_view(self, data: bytes | None) -> IndexView:
        if data is None:
            names = self._managed_names(self._listing())
            count = sum(len(v) for v in names.values())
            if count:
                problem = (f"{self.index_path} is missing but {count} managed file(s) exist under "
                           f"documents/active and documents/archived; run `mnemon-ls doc recover` to rebuild it")
                return IndexView(None, (), self._codec.revision(()), False, problem)
            return IndexView(None, (), self._codec.revision(()), False)
        try:
            parsed = parse_index(data)
        except IndexProblem as exc:
            salvaged, _ = salvage_index(data)
            where = f" (record {exc.record})" if exc.record is not None else ""
            problem = f"{self.index_path}: {exc.message}{where}"
            return IndexView(data, tuple(salvaged), self._codec.revision(salvaged), True, problem, exc.record)
        revision = self._codec.revision(parsed.records)
        return IndexView(data, parsed.records, revision, True, None, None, parsed.extra, parsed.dropped)

    def read(self) -> IndexState:
        """Read ``index.json`` without locking or writing (see :class:`IndexState`)."""
        with self._mutex:
            view = self._read_view(force=True)
            return IndexState(view.records, view.revision, view.exists, view.problem, view.bad_record)

    def _unreadable(self, view: IndexView) -> UnreadableStore:
        return UnreadableStore(
            f"{view.problem}; nothing was written. Run `mnemon-ls doctor` to see why and "
            "`mnemon-ls doc recover` to rebuild the index from the managed files",
            file=str(self.index_path), reason=view.problem, record=view.bad_record,
        )

    def _begin(self, expected: str | None) -> IndexView:
        """Under the lock: the current valid index, checked against ``expected``."""
        view = self._read_view(force=True)
        if view.problem:
            raise self._unreadable(view)
        if expected is not None and expected != view.revision:
            raise RevisionConflict(
                f"documents/index.json changed since revision {expected[:12]} (now {view.revision[:12]}); "
                "re-read and retry", expected=expected, actual=view.revision)
        return view

    def _require(self, view: IndexView, document_id: str) -> DocumentRecord:
        record = view.by_id.get(document_id)
        if record is None:
            raise NotFound(f"document {document_id} does not exist", id=document_id, field="id")
        return record

    def _last_accessed(self, view: IndexView) -> dict[str, str]:
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

    def _commit(self, view: IndexView, records: Sequence[DocumentRecord]) -> IndexView:
        """Write ``records`` as ``index.json`` (folding in later access times). Lock must be held."""
        version = self._access.check()
        later = {} if version == self._folded else self._access.effective({r.id: r.last_accessed_at for r in records})
        if later:
            records = [r.with_changes(last_accessed_at=later[r.id]) if r.id in later else r for r in records]
        data, revision = self._codec.encode(records, view.extra)
        fsio.write_file_atomically(self.index_path, data)
        self._access.folded(later)
        self._folded = self._access.version
        new = IndexView(data, tuple(records), revision, True, None, None, view.extra, 0)
        new.sig, new.verified = stat_signature(self.index_path), time.monotonic()
        self._view = new
        return new
