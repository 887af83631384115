"""Documents cold archival (issue 9 item 4; shared/reference/dsh-mnemon.md sections 4.5 and 5.6).

A document create or update whose capacity plan does not fit, while an eligible Memory Space exists,
archives the least recently accessed active documents one at a time until it fits. For each one:

1. read it (:meth:`DocumentStore.get`) and check its body still hashes to ``contentHash``;
2. find an existing cold reference in the chosen space (keyword recall of the content hash, limit 50,
   an item holding both the cold path and the hash), else write exactly one with
   :meth:`SpacesService.remember` (category ``context``, source ``agent``), whose content is the
   reference's five lines (:func:`reference_text`)::

       Document: <title>
       <summary>
       Document ID: <id>
       Cold path: <where the archived file is>
       Content SHA-256: <contentHash>

   The reference writes ``.mnemon/documents/archived/<filename>`` whatever the root (its section 11
   lists that as wrong for every scope but ``workspace``); here the line names the real file
   (:func:`cold_directory`): relative to the workspace when the root is inside it (``workspace``
   scope: ``.mnemon/documents/archived/<filename>``, the reference's text), else the absolute path
   (``workspaces``, ``global`` and ``custom`` roots live outside the repository). A reference holding
   either that path or the reference's literal one counts as the document's when looked up.
3. verify it by recall (the same keyword recall must return that item with exactly that content);
4. re-check that the space is still eligible, then archive the document with ``store.moves.archive``
   (:meth:`~mnemon_ls.documents.moves.Moves.archive`) fenced by the revision read in step 1, recording the
   space in ``memoryBodyIds`` and the lineage (source ``document:<id>:<revision>`` with the content hash,
   destination ``memory-space:<id>/item:<itemId>``) in the record's ``lineage`` key of ``index.json``.

A reference written in step 2 whose archive then fails is forgotten again (unless the document shows
``archived`` after all). A document that changed meanwhile (revision conflict) is skipped and the next
candidate tried; a provider failure or a space deactivated meanwhile stops the run with
:class:`~mnemon_ls.errors.MaintenanceFailed` (what was archived before stays archived, each with its
reference). With no eligible space the Documents Source's ``document-capacity`` error (with its
``candidates``) is raised unchanged.

Eligible spaces: active, available, and able to forget with exact writes (a cold reference must be
removable again). The ``default`` space takes the references when eligible, else the first eligible one.

Summary (:func:`summary_of`): the document's description, else its first paragraph that is not only a
Markdown heading, whitespace collapsed and cut at a sentence boundary within 1,000 characters.

Uses only the public operations of the Documents and Memory Spaces Sources (they never import each
other). :func:`create_document` and :func:`update_document` are what every surface calls.
"""

from __future__ import annotations

import hashlib
import logging
import re
import uuid
from datetime import datetime, timezone
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from ..errors import (DocumentCapacityError, MaintenanceFailed, MnemonError, RevisionConflict)
from .lineage import LineageEnd, LineageRecord, space_reference
from .receipt import KIND_DOCUMENT_COLD_ARCHIVE, ArchivedFact, Destination, MaintenanceReceipt

if TYPE_CHECKING:
    from pathlib import Path

    from ..documents import DocumentRecord, DocumentStore, MutationResult
    from ..hosting import Host
    from ..spaces import SpacesService
    from ..spaces.service import SpaceView

log = logging.getLogger("mnemon_ls.maintenance")

#: The cold path prefix the reference text names (reference 4.5, the plugin's layout): right only for a
#: ``workspace``-scope root; :func:`cold_directory` gives the real one.
COLD_PREFIX = ".mnemon/documents/archived/"
#: Longest summary, characters.
SUMMARY_CHARS = 1000
#: Recall limit of the reference lookup (reference 4.5).
LOOKUP_LIMIT = 50
#: Progress callback: ``(message, percentage 0..100 or None)``; called from the worker thread.
Progress = Callable[[str, "int | None"], None]

_SENTENCE_END = re.compile(r"[.!?](?=\s)|[\u3002\uff01\uff1f]")
_HEADING = re.compile(r"^\s{0,3}#{1,6}(\s|$)")


def summary_of(description: str, body: str, title: str = "") -> str:
    """The cold reference's summary line (module doc): at most :data:`SUMMARY_CHARS` characters, one
    line; falls back to ``title`` when the document has neither description nor a text paragraph."""
    text = " ".join(description.split())
    if not text:
        for paragraph in re.split(r"\n\s*\n", body):
            lines = [line for line in paragraph.splitlines() if line.strip() and not _HEADING.match(line)]
            if lines:
                text = " ".join(" ".join(lines).split())
                break
    if not text:
        text = " ".join(title.split()) or "Archived document"
    if len(text) <= SUMMARY_CHARS:
        return text
    window = text[:SUMMARY_CHARS]
    ends = [m.end() for m in _SENTENCE_END.finditer(window)]
    if ends:
        return window[:ends[-1]].rstrip()
    return window[:SUMMARY_CHARS - 1].rstrip() + "\u2026"


def cold_directory(root: "Path", workspace: "Path | None") -> str:
    """Where a root's archived documents are, as the ``Cold path:`` line names them (module doc):
    ``<root>/documents/archived/`` relative to ``workspace`` (``/``-separated) when the root is inside
    it, else absolute; always ending in ``/``."""
    import os

    archived = os.path.realpath(root / "documents" / "archived")
    if workspace is not None:
        base = os.path.realpath(workspace)
        if os.path.commonpath([archived, base]) == base:
            return os.path.relpath(archived, base).replace(os.sep, "/") + "/"
    return archived.rstrip(os.sep) + os.sep


def cold_path(filename: str, directory: str = COLD_PREFIX) -> str:
    """``<directory><filename>`` (``directory``: :func:`cold_directory`; default the reference's
    ``.mnemon/documents/archived/``)."""
    return directory + filename


def reference_text(title: str, summary: str, document_id: str, filename: str, content_hash: str,
                   directory: str = COLD_PREFIX) -> str:
    """The five-line cold reference content (module doc; reference 4.5); ``directory`` as :func:`cold_path`."""
    return "\n".join((f"Document: {title}", summary, f"Document ID: {document_id}",
                      f"Cold path: {cold_path(filename, directory)}", f"Content SHA-256: {content_hash}"))


def eligible_spaces(spaces: "SpacesService") -> list["SpaceView"]:
    """The spaces that may take cold references, ``default`` first, then registry order (module doc)."""
    views = [v for v in spaces.list_spaces(active_only=True) if v.record.active and v.available
             and v.capabilities is not None and v.capabilities.forget and v.capabilities.write == "exact"]
    return sorted(views, key=lambda v: v.record.id != "default")


@dataclass(slots=True)
class MaintainedResult:
    """A Documents mutation that may have run cold archival first: ``result`` (the create/update) and
    ``maintenance`` (:class:`MaintenanceReceipt` or ``None``). ``to_dict()`` is the result's JSON plus
    ``maintenance`` when archival ran."""

    result: "MutationResult"
    maintenance: MaintenanceReceipt | None = None

    def to_dict(self) -> dict[str, Any]:
        """The Documents result (``MutationResult.to_dict()``) with ``maintenance`` when archival ran."""
        data = self.result.to_dict()
        if self.maintenance is not None:
            data["maintenance"] = self.maintenance.to_dict()
        return data


@dataclass(slots=True)
class _Run:
    """One cold archival run: the stores, the chosen space, what was archived so far."""

    docs: "DocumentStore"
    spaces: "SpacesService"
    space: "SpaceView"
    progress: Progress | None
    plan_revision: str
    cold_dir: str = COLD_PREFIX  # :func:`cold_directory` of the root
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    archived: list[ArchivedFact] = field(default_factory=list)
    freed: int = 0
    revision: str | None = None
    skipped: list[str] = field(default_factory=list)

    def report(self, message: str, needed: int) -> None:
        if self.progress is not None:
            percentage = min(99, 100 * self.freed // needed) if needed > 0 else None
            self.progress(message, percentage)

    def make_room(self, first: DocumentCapacityError, what: str) -> None:
        """Archive LRU candidates (each at most once, least recently accessed first) until the change
        fits. The plan is the first attempt's capacity error (``projected``, ``limit``, LRU
        ``candidates``), kept by arithmetic as documents are archived (the new body is not validated
        again); a candidate that changed meanwhile is skipped and the next one tried. The commit
        re-checks capacity anyway (:func:`_maintained` archives once more and retries once)."""
        projected, limit, candidates = first.projected, first.limit, list(first.candidates)
        needed = projected - limit
        for candidate in candidates:
            if projected <= limit:
                return
            self.report(f"Archiving \u201c{candidate['title']}\u201d into {self.space.record.name}", needed)
            if self.archive_one(candidate["id"], candidate["revision"]):
                projected -= candidate["sizeBytes"]
        if projected > limit:
            raise DocumentCapacityError(
                f"{what} would make the active documents {projected} bytes (limit {limit}) even after "
                f"cold-archiving {len(self.archived)} documents; archive or shorten documents by hand",
                projected=projected, limit=limit, used=first.used,
                candidates=[c for c in candidates if c["id"] in self.skipped])

    def archive_one(self, document_id: str, revision: int) -> bool:
        """Cold-archive one document at ``revision`` (module doc, steps 1-4). Returns ``False`` when it
        changed meanwhile (another revision, no longer active, or a body that no longer hashes to
        ``contentHash``): it is skipped and nothing was written for it."""
        docs, spaces, space_id = self.docs, self.spaces, self.space.record.id
        view = docs.get(document_id)
        record = view.record
        if record.status != "active" or record.revision != revision \
                or _sha256(view.content) != record.content_hash:
            self.skipped.append(record.id)
            return False
        summary = summary_of(record.description, view.content, record.title)
        text = reference_text(record.title, summary, record.id, record.filename, record.content_hash, self.cold_dir)
        self._require_eligible()
        item_id, fresh = self._find_reference(record), False
        evidence = "duplicate"
        if item_id is None:
            receipt = _provider(lambda: spaces.remember(text, space_id=space_id, category="context", source="agent"),
                                space_id)
            if receipt.status == "committed" and receipt.id:
                item_id, fresh, evidence = receipt.id, True, "committed"
            elif receipt.status == "skipped" and receipt.id:
                item_id = receipt.id
            else:
                raise MaintenanceFailed(
                    f"the cold reference of {record.title!r} was not stored: {space_id} answered {receipt.status}; "
                    "the document stays active", reason="provider-failed", kept="document unchanged",
                    spaceId=space_id, documentId=record.id)
        try:
            if not self._verified(record, item_id):
                raise MaintenanceFailed(
                    f"the cold reference {item_id} of {record.title!r} is not found by recall in {space_id}; the "
                    "document stays active", reason="no-evidence", kept="document unchanged", spaceId=space_id,
                    documentId=record.id)
            self._require_eligible()
            destination = space_reference(space_id, item_id)
            lineage = LineageRecord(
                KIND_DOCUMENT_COLD_ARCHIVE, self.run_id, _now_iso(),
                LineageEnd("documents", f"document:{record.id}:{record.revision}", record.content_hash),
                LineageEnd("memory-spaces", destination, _sha256(text)), record.title[:200], record.size_bytes)
            result = docs.moves.archive(record.id, record.revision, summary=summary, memory_body_ids=[space_id],
                                        lineage=[lineage.to_dict()])
        except RevisionConflict:
            self._undo(fresh, record, item_id)
            self.skipped.append(record.id)
            return False
        except BaseException:
            self._undo(fresh, record, item_id)
            raise
        self.revision = result.revision
        self.freed += record.size_bytes
        self.archived.append(ArchivedFact(
            len(self.archived) + 1, f"document:{record.id}:{record.revision}", record.title[:200], record.size_bytes,
            evidence, Destination("memory-space", destination, space_id=space_id, item_id=item_id)))
        return True

    def _require_eligible(self) -> None:
        space_id = self.space.record.id
        if all(v.record.id != space_id for v in eligible_spaces(self.spaces)):
            raise MaintenanceFailed(
                f"Memory Space {space_id} is no longer active (or can no longer forget); cold archival stopped "
                f"after {len(self.archived)} documents and the rest stay active", reason="space-ineligible",
                kept="documents not yet archived stay active", spaceId=space_id)

    def _lookup(self, content_hash: str) -> list[Any]:
        result = _provider(lambda: self.spaces.recall(content_hash, spaces=[self.space.record.id],
                                                      limit=LOOKUP_LIMIT, mode="keyword"), self.space.record.id)
        return result.results

    def _names(self, record: "DocumentRecord", content: str) -> bool:
        """Whether a reference's ``content`` names ``record``: its hash and its cold path (the real one, or
        the reference's literal one a TypeScript-plugin root or an earlier mnemon-ls wrote)."""
        return record.content_hash in content and any(
            f"Cold path: {cold_path(record.filename, directory)}\n" in content
            for directory in {self.cold_dir, COLD_PREFIX})

    def _find_reference(self, record: "DocumentRecord") -> str | None:
        for item in self._lookup(record.content_hash):
            if self._names(record, item.get("content") or "") and item.get("spaceId") == self.space.record.id:
                return item.get("id")
        return None

    def _verified(self, record: "DocumentRecord", item_id: str) -> bool:
        return any(item.get("id") == item_id and self._names(record, item.get("content") or "")
                   for item in self._lookup(record.content_hash))

    def _undo(self, fresh: bool, record: "DocumentRecord", item_id: str) -> None:
        """Forget a reference this run wrote for ``record`` unless the document is archived after all."""
        if not fresh:
            return
        try:
            if any(r.record.id == record.id for r in self.docs.list("archived").documents):
                return
        except Exception:  # cannot tell: keep the reference (a harmless pointer) rather than lose one
            return
        try:
            self.spaces.forget(self.space.record.id, item_id)
        except Exception as exc:
            log.warning("cold reference %s in %s could not be forgotten: %s", item_id, self.space.record.id, exc)

    def receipt(self, result: "MutationResult") -> MaintenanceReceipt:
        """The run's receipt once the create/update committed."""
        count = len(self.archived)
        name = self.space.record.name
        return MaintenanceReceipt(
            kind=KIND_DOCUMENT_COLD_ARCHIVE, run_id=self.run_id, target="documents", plan_revision=self.plan_revision,
            archived=tuple(self.archived), bytes_freed=self.freed, kept=result.usage.active_count,
            revision=result.revision,
            destinations=({"kind": "memory-space", "spaceId": self.space.record.id, "spaceName": name,
                           "count": count},),
            summary=(f"Cold-archived {count} document{'s' if count != 1 else ''} into Memory Space {name} "
                     f"({self.freed} bytes freed); each is recallable by its title and content hash."),
            extra={"skipped": list(self.skipped)})


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _provider(call: Callable[[], Any], space_id: str) -> Any:
    """Run a provider call; a provider error becomes :class:`MaintenanceFailed` (``provider-failed``)."""
    try:
        return call()
    except MaintenanceFailed:
        raise
    except MnemonError as exc:
        raise MaintenanceFailed(f"Memory Space {space_id} failed during cold archival: {exc.message}; the document "
                                "stays active", reason="provider-failed", kept="document unchanged", spaceId=space_id,
                                provider=exc.to_dict()) from None


def _now_iso() -> str:
    """Now as ``Date.toISOString()`` writes it (UTC, milliseconds)."""
    from ..documents.model import now_iso

    return now_iso(datetime.now(timezone.utc))


def _maintained(host: "Host", attempt: Callable[[str | None], "MutationResult"], what: str,
                expected_revision: str | None, progress: Progress | None) -> MaintainedResult:
    try:
        return MaintainedResult(attempt(expected_revision))
    except DocumentCapacityError as exc:
        first = exc
        spaces = host.spaces
        eligible = eligible_spaces(spaces)
        if not eligible:
            raise
    run = _Run(host.documents, spaces, eligible[0], progress, host.documents.read().revision,
               cold_directory(host.root, host.workspace))
    run.make_room(first, what)
    fence = run.revision if expected_revision is not None else None
    try:
        result = attempt(fence)
    except DocumentCapacityError as again:  # another writer filled the space: one more archive, one retry
        if not again.candidates or not run.archive_one(again.candidates[0]["id"], again.candidates[0]["revision"]):
            raise
        result = attempt(run.revision if expected_revision is not None else None)
    if run.progress is not None:
        run.progress(run.receipt(result).summary, 100)
    return MaintainedResult(result, run.receipt(result))


def create_document(host: "Host", title: Any, content: Any, *, description: Any = None,
                    source_paths: Any = None, session_ids: Any = None, expected_revision: str | None = None,
                    progress: Progress | None = None) -> MaintainedResult:
    """:meth:`DocumentStore.create` with cold archival when it does not fit (module doc).

    ``expected_revision`` fences the first attempt (the caller's view of the index); after archival the
    create is fenced by the revision the last archive committed, so nothing else slipped in. Raises
    the create's own errors, ``document-capacity`` (no eligible space, or still too big with every
    candidate archived) and ``maintenance-failed`` (``data.reason``: ``provider-failed``, ``no-evidence``,
    ``space-ineligible``). ``progress`` gets ``(message, percentage)`` per archived document.
    """
    docs = host.documents

    def attempt(fence: str | None) -> "MutationResult":
        return docs.create(title, content, description=description, source_paths=source_paths,
                           session_ids=session_ids, expected_revision=fence)

    return _maintained(host, attempt, "creating the document", expected_revision, progress)


def create_document_from_file(host: "Host", path: Any, *, title: Any = None, description: Any = None,
                              session_ids: Any = None, expected_revision: str | None = None,
                              progress: Progress | None = None) -> MaintainedResult:
    """:meth:`DocumentStore.create_from_file` ("Create document from file") with cold archival when it
    does not fit. Errors and fences as :func:`create_document`."""
    docs = host.documents

    def attempt(fence: str | None) -> "MutationResult":
        return docs.create_from_file(path, title=title, description=description, session_ids=session_ids,
                                     expected_revision=fence)

    return _maintained(host, attempt, f"creating a document from {path}", expected_revision, progress)


def update_document(host: "Host", document_id: Any, *, title: Any = None, description: Any = None,
                    content: Any = None, source_paths: Any = None, session_ids: Any = None,
                    document_revision: int | None = None, expected_revision: str | None = None,
                    progress: Progress | None = None) -> MaintainedResult:
    """:meth:`DocumentStore.update` with cold archival when it does not fit (the updated document itself
    is never a candidate). Errors and fences as :func:`create_document`."""
    docs = host.documents

    def attempt(fence: str | None) -> "MutationResult":
        return docs.update(document_id, title=title, description=description, content=content,
                           source_paths=source_paths, session_ids=session_ids, document_revision=document_revision,
                           expected_revision=fence)

    return _maintained(host, attempt, f"updating document {document_id}", expected_revision, progress)


__all__ = ["COLD_PREFIX", "MaintainedResult", "cold_directory", "cold_path", "create_document",
           "create_document_from_file",
           "eligible_spaces", "reference_text", "summary_of", "update_document"]
