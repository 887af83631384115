"""Result shapes of the Documents Source (what operations return; ``to_dict()`` gives the JSON form).

All JSON keys are camelCase; record fields are those of ``index.json`` (see :mod:`.model`) with
``lastAccessedAt`` replaced by the effective time (index, side file or pending note, the latest).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .model import DocumentRecord


def record_dict(record: DocumentRecord, last_accessed: str | None = None) -> dict[str, Any]:
    """The record's ``index.json`` fields (canonical order, extra keys dropped), with the effective
    ``lastAccessedAt`` when given."""
    data = record.canonical_json()
    if last_accessed is not None:
        data["lastAccessedAt"] = last_accessed
    return data


@dataclass(frozen=True, slots=True)
class DocumentView:
    """A document with its body: ``record``, ``content`` (the body as on disk; as a read answers it, an edit not
    adopted has its credentials as placeholders: :func:`~.files.as_read`), ``last_accessed_at`` (effective),
    ``path`` (absolute path of the managed file), ``notices`` (what the reader should know: such a credential)."""

    record: DocumentRecord
    content: str
    last_accessed_at: str
    path: str
    notices: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """Record fields + ``content`` + ``path`` [+ ``notices`` when there are any]."""
        data = {**record_dict(self.record, self.last_accessed_at), "content": self.content, "path": self.path}
        if self.notices:
            data["notices"] = list(self.notices)
        return data


@dataclass(frozen=True, slots=True)
class Usage:
    """Active capacity: ``active_bytes`` (sum of active ``sizeBytes``), ``active_count``,
    ``archived_count``, ``limit_bytes``."""

    active_bytes: int
    active_count: int
    archived_count: int
    limit_bytes: int

    def to_dict(self) -> dict[str, int]:
        """``{activeBytes, activeCount, archivedCount, limitBytes}``."""
        return {"activeBytes": self.active_bytes, "activeCount": self.active_count,
                "archivedCount": self.archived_count, "limitBytes": self.limit_bytes}


@dataclass(frozen=True, slots=True)
class MutationResult:
    """A committed create / update / archive / restore.

    ``action`` is ``created``, ``updated``, ``unchanged`` (an update that asked for what already was: nothing
    written, ``notices`` says ``no change; revision N kept``), ``adopted`` (an update whose text a hand edit on
    disk already held: the edit taken into the index as a new revision, nothing else written; ``notices`` says
    so), ``archived`` or ``restored``; ``document`` the new
    version with its body; ``revision`` the index revision after the commit (the next ``expectedRevision``); ``usage``
    the active capacity after it; ``preserved`` maps what was saved before being overwritten (e.g. an un-adopted hand
    edit) to the saved copy's path; ``notices`` anything the caller should show; ``redacted`` what the redaction pass
    replaced (:meth:`mnemon_ls.redact.Scrubber.summary`) or ``None``.
    """

    action: str
    document: DocumentView
    revision: str
    usage: Usage
    preserved: dict[str, str] = field(default_factory=dict)
    notices: tuple[str, ...] = ()
    redacted: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """``{success: true, action, document, revision, usage, preserved, notices[, redacted]}``."""
        data = {"success": True, "action": self.action, "document": self.document.to_dict(),
                "revision": self.revision, "usage": self.usage.to_dict(), "preserved": dict(self.preserved),
                "notices": list(self.notices)}
        if self.redacted:
            data["redacted"] = self.redacted
        return data


@dataclass(frozen=True, slots=True)
class CatalogEntry:
    """One document of :class:`Catalog`: ``record``, effective ``last_accessed_at``, ``healthy`` (the
    managed file is present and readable), ``problem`` (why not, or ``None``), ``excerpt`` (the body's
    first 220 characters, whitespace collapsed, when asked for)."""

    record: DocumentRecord
    last_accessed_at: str
    healthy: bool
    problem: str | None = None
    excerpt: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Record fields + ``healthy`` [+ ``problem``] [+ ``excerpt``]."""
        data = {**record_dict(self.record, self.last_accessed_at), "healthy": self.healthy}
        if self.problem:
            data["problem"] = self.problem
        if self.excerpt is not None:
            data["excerpt"] = self.excerpt
        return data


@dataclass(frozen=True, slots=True)
class Catalog:
    """``list()``: ``documents`` (index order, filtered by status), index ``revision``, ``generated_at``,
    ``usage`` (whole index), ``problem`` (damaged index: the entries are the recoverable ones) and
    ``notices``."""

    documents: tuple[CatalogEntry, ...]
    revision: str
    generated_at: str
    usage: Usage
    problem: str | None = None
    notices: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """``{revision, generatedAt, limitBytes, activeBytes, activeCount, archivedCount, total, problem,
        notices, documents: [...]}``."""
        return {"revision": self.revision, "generatedAt": self.generated_at, **self.usage.to_dict(),
                "total": self.usage.active_count + self.usage.archived_count, "problem": self.problem,
                "notices": list(self.notices), "documents": [d.to_dict() for d in self.documents]}


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One result: ``record``, effective ``last_accessed_at``, ``score`` (BM25F, or 1.0 for an empty
    query), ``matched`` (``title`` when the whole query is a phrase of the title, ``description`` when
    of the description, ``terms`` otherwise, ``all`` for an empty query, ``semantic`` / ``semantic-low``
    when found by meaning alone: :mod:`mnemon_ls.semantic.documents`; their ``score`` is their relevance,
    0..0.55, below every word match's for ``semantic-low``), ``excerpt`` (about 220 characters of the body
    around the best match, ``…`` where cut), ``content`` (the body, only when asked for) and, found by
    meaning alone, ``similarity`` ``{"cosine", "z"}`` of its best chunk (``z`` ``None`` without a spread)."""

    record: DocumentRecord
    last_accessed_at: str
    score: float
    matched: str
    excerpt: str
    content: str | None = None
    similarity: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """Record fields + ``score``, ``matched``, ``excerpt`` [+ ``content``] [+ ``similarity``]."""
        data = {**record_dict(self.record, self.last_accessed_at), "score": round(self.score, 4),
                "matched": self.matched, "excerpt": self.excerpt}
        if self.content is not None:
            data["content"] = self.content
        if self.similarity is not None:
            data["similarity"] = dict(self.similarity)
        return data


@dataclass(frozen=True, slots=True)
class SearchResult:
    """``search()``: the trimmed ``query``, ``include_archived``, ``limit``, ``results`` (best first),
    ``matches`` (documents that matched before the limit), ``generated_at``, index ``revision``,
    ``notices`` (documents left out because their file is missing or unreadable, a damaged index), the
    ``audience`` the answer is for and ``withheld``: the ``semantic-low`` documents an ``assistant`` was
    not sent (0 for a ``person``)."""

    query: str
    include_archived: bool
    limit: int
    results: tuple[SearchHit, ...]
    matches: int
    generated_at: str
    revision: str
    notices: tuple[str, ...] = ()
    audience: str = "person"
    withheld: int = 0

    def to_dict(self) -> dict[str, Any]:
        """``{query, includeArchived, limit, total (= len(results)), matches, generatedAt, revision,
        notices, results: [...], audience, withheld: {lowConfidence}}``."""
        return {"query": self.query, "includeArchived": self.include_archived, "limit": self.limit,
                "total": len(self.results), "matches": self.matches, "generatedAt": self.generated_at,
                "revision": self.revision, "notices": list(self.notices),
                "results": [hit.to_dict() for hit in self.results], "audience": self.audience,
                "withheld": {"lowConfidence": self.withheld}}


@dataclass(slots=True)
class RepairReport:
    """What ``store.moves.repair()`` (:meth:`~.moves.Moves.repair`) did: ``completed`` (``{id, removed}``: the
    stale second copy an interrupted archive/restore left), ``moved`` (``{id, from, to}``: the index's copy was missing
    and the other one was moved into place), ``preserved`` (what was saved first -> where), ``temps``
    (abandoned temp files and lock staging files of dead processes removed), ``adopted`` (``{id,
    file}``: an orphan managed file, e.g. of a create killed before its index commit, taken into the
    index), ``set_aside`` (``{file, to, reason}``: an orphan that could not be adopted - not UTF-8, not a
    regular file, empty, or the body of a document the index already has - moved unchanged to
    ``documents/orphans/``), ``skipped`` (why nothing was done, or ``None``)."""

    completed: list[dict[str, str]] = field(default_factory=list)
    moved: list[dict[str, str]] = field(default_factory=list)
    preserved: dict[str, str] = field(default_factory=dict)
    temps: list[str] = field(default_factory=list)
    adopted: list[dict[str, str]] = field(default_factory=list)
    set_aside: list[dict[str, str]] = field(default_factory=list)
    skipped: str | None = None

    @property
    def changed(self) -> bool:
        """Whether anything on disk changed."""
        return bool(self.completed or self.moved or self.temps or self.adopted or self.set_aside)

    def to_dict(self) -> dict[str, Any]:
        """``{completed, moved, preserved, temps, adopted, setAside, skipped}``."""
        return {"completed": self.completed, "moved": self.moved, "preserved": self.preserved,
                "temps": self.temps, "adopted": self.adopted, "setAside": self.set_aside, "skipped": self.skipped}


@dataclass(slots=True)
class RefreshReport:
    """What ``store.freshness.refresh()`` (:meth:`~.freshness.Freshness.refresh`) found: ``adopted`` ids (a
    managed file changed outside mnemon-ls and its body became a new revision), ``missing`` (id -> reason: file missing
    or unreadable), ``changed_archived`` (archived files whose body no longer matches the index; they are immutable, so
    not adopted), ``orphans`` (managed files no record names: ``recover`` adds them), ``preserved``, ``repair`` (the
    repair it ran, if any), ``problem`` (damaged index) and ``notices`` (human-readable lines for all of the above)."""

    adopted: list[str] = field(default_factory=list)
    missing: dict[str, str] = field(default_factory=dict)
    changed_archived: list[str] = field(default_factory=list)
    orphans: list[str] = field(default_factory=list)
    preserved: dict[str, str] = field(default_factory=dict)
    repair: RepairReport | None = None
    problem: str | None = None
    notices: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        """Whether the index or a managed file was rewritten."""
        return bool(self.adopted) or bool(self.repair and self.repair.changed)

    def to_dict(self) -> dict[str, Any]:
        """JSON shape (camelCase)."""
        return {"adopted": self.adopted, "missing": self.missing, "changedArchived": self.changed_archived,
                "orphans": self.orphans, "preserved": self.preserved,
                "repair": self.repair.to_dict() if self.repair else None, "problem": self.problem,
                "notices": self.notices}


@dataclass(frozen=True, slots=True)
class IndexState:
    """What a read of ``index.json`` saw: ``records`` (the recoverable ones when damaged), ``revision``,
    ``exists``, ``problem`` (``None`` when valid) and ``bad_record`` (index of the first bad record)."""

    records: tuple[DocumentRecord, ...]
    revision: str
    exists: bool
    problem: str | None = None
    bad_record: int | None = None
