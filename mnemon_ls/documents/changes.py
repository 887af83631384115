"""What a change makes of a Documents record (pure): the validated requests, the record after a create,
an update, an archive or a restore, and whether the active documents still fit (reference 5.4-5.6).

The store validates a request (:class:`CreateRequest`, :class:`UpdateRequest`) with the field rules of
:mod:`.model`, builds the new record here (:func:`new_record`, :func:`updated_record`, :func:`archived_record`,
:func:`restored_record`: revision, timestamps, ``contentHash`` and ``sizeBytes`` of the rendered file) and asks
:func:`plan_capacity` whether the result fits (:mod:`.capacity` applies it with the effective access times).
Nothing here reads or writes a file.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Iterable, Mapping, Sequence

from .model import (DocumentRecord, code_indent, filename_for, merge_session_ids, relative_path, render_markdown,
                    rendered_size, sha256_hex, split_markdown_raw, time_key, trim_drops_text)


@dataclass(frozen=True, slots=True)
class CreateRequest:
    """A validated create: normalized ``title``/``description``/``content``, resolved ``source_paths``
    (workspace-relative, ``/``-separated), ``session_ids``."""

    title: str
    description: str
    content: str
    source_paths: tuple[str, ...]
    session_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class UpdateRequest:
    """A validated update of ``id``; ``None`` fields keep the current value. ``session_ids`` are merged
    (:func:`.model.merge_session_ids`); ``document_revision`` fences the document's own revision."""

    id: str
    title: str | None = None
    description: str | None = None
    content: str | None = None
    source_paths: tuple[str, ...] | None = None
    session_ids: tuple[str, ...] | None = None
    document_revision: int | None = None


def new_record(request: CreateRequest, document_id: str, now: str) -> DocumentRecord:
    """The record of a create (revision 1, timestamps ``now``, ``sizeBytes`` of the rendered file)."""
    filename = filename_for(request.title, document_id)
    record = DocumentRecord(
        id=document_id, title=request.title, description=request.description, status="active",
        filename=filename, relative_path=relative_path("active", filename), source_paths=request.source_paths,
        session_ids=request.session_ids, created_at=now, updated_at=now, last_accessed_at=now, revision=1,
        content_hash=sha256_hex(request.content), size_bytes=0,
    )
    return replace(record, size_bytes=rendered_size(record, request.content))


def updated_record(current: DocumentRecord, request: UpdateRequest, body: str, now: str) -> DocumentRecord:
    """``current`` after ``request`` with ``body`` (the new or kept body): revision + 1, updatedAt =
    lastAccessedAt = ``now``, new hash and size. The filename never changes."""
    record = replace(
        current,
        title=current.title if request.title is None else request.title,
        description=current.description if request.description is None else request.description,
        source_paths=current.source_paths if request.source_paths is None else request.source_paths,
        session_ids=(current.session_ids if request.session_ids is None
                     else merge_session_ids(current.session_ids, request.session_ids)),
        updated_at=now, last_accessed_at=now, revision=current.revision + 1, content_hash=sha256_hex(body),
    )
    return replace(record, size_bytes=rendered_size(record, body))


def unchanged(current: DocumentRecord, updated: DocumentRecord, *, body_on_disk: bool = False) -> bool:
    """Whether ``updated`` (from :func:`updated_record`) differs from ``current`` only by the bookkeeping an
    update always changes (revision, updatedAt, lastAccessedAt): then the update is a no-op. With
    ``body_on_disk`` (the managed file already holds ``updated``'s body under ``current``'s frontmatter) the
    body's hash and the size are bookkeeping too: a body edited by hand that is the text asked for differs
    from ``current`` only by the hash the index has not adopted yet."""
    kept = {"content_hash": current.content_hash, "size_bytes": current.size_bytes} if body_on_disk else {}
    return replace(updated, revision=current.revision, updated_at=current.updated_at,
                   last_accessed_at=current.last_accessed_at, **kept) == current


#: The notice of a no-op update whose content differed from the body only by whitespace around it
#: (:func:`~.model.validate_content`: leading blank lines and trailing whitespace are not kept).
WHITESPACE_NOT_KEPT = ("a document body is stored without its leading and trailing whitespace, so the "
                       "whitespace sent around it changes nothing")

#: The notice of a no-op update whose body is a hand edit on disk that was not adopted yet: the update adopts it
#: (as a refresh does) and answers the adopted record; ``{revision}`` is its revision.
HAND_EDIT_ADOPTED = ("no change to the text sent; the body on disk, edited outside mnemon-ls, already is that text "
                     "and was adopted as revision {revision}")


def on_disk(current: DocumentRecord, body: str, old: bytes | None) -> bool:
    """Whether the managed file's bytes ``old`` (``None``: missing) already are ``body`` under ``current``'s
    frontmatter: unedited, or a body edited by hand that is the very text asked for (its hash not adopted by the
    index yet)."""
    return old is not None and render_markdown(current, body).encode("utf-8") == old


def indented_on_disk(old: bytes) -> bool:
    """Whether the managed file's bytes ``old`` hold a body whose first line with text is indented as a code block
    (:func:`~.model.code_indent`): a hand edit the body's hash does not see (the trim drops it), which rewriting
    the file would lose, so an update saves the file under ``edits/`` first. ``False`` for bytes not UTF-8."""
    try:
        return bool(code_indent(split_markdown_raw(old.decode("utf-8"))[1]))
    except UnicodeDecodeError:
        return False


def unchanged_on_disk(current: DocumentRecord, updated: DocumentRecord, body: str, old: bytes | None) -> bool:
    """Whether an update to ``updated`` would change nothing: the file already ``body`` (:func:`on_disk`) and every
    field as it is (:func:`unchanged` with the body's hash and size as bookkeeping)."""
    return on_disk(current, body, old) and unchanged(current, updated, body_on_disk=True)


def credential_kept(secrets: str, body: str) -> str:
    """What to add to the notice (refresh) or advice (doctor) of a body edited by hand and not adopted when, under
    the ``secrets`` setting (``redact`` or ``reject``), it holds what looks like a credential: ``"; it holds what
    looks like <kinds> ..."`` naming the kinds (:data:`mnemon_ls.redact_rules.KINDS`), never the value, and that
    the file keeps it until the person fixes the file (search keeps a placeholder in its place:
    :func:`~.files.searchable`). ``""`` when none is found or ``secrets`` is ``allow``."""
    if secrets == "allow":
        return ""
    from ..redact import redact_text
    from ..redact_rules import KINDS

    kinds = sorted({KINDS.get(m.kind, m.kind) for m in redact_text(body)[1]})
    if not kinds:
        return ""
    return (f"; it holds what looks like {', '.join(kinds)}: the file keeps it as typed until the file is fixed "
            "(search keeps a placeholder in its place)")


def unchanged_notes(current: DocumentRecord, content: Any, adopted: DocumentRecord | None = None) -> list[str]:
    """The notices of a no-op update of ``current``: :func:`unchanged_note`, or :data:`HAND_EDIT_ADOPTED` when the
    body on disk was a hand edit the update ``adopted`` (the record adopted), then :data:`WHITESPACE_NOT_KEPT` when
    ``content`` (as sent) had whitespace around the body that the format does not keep
    (:func:`~.model.validate_content`)."""
    notices = [unchanged_note(current) if adopted is None else HAND_EDIT_ADOPTED.format(revision=adopted.revision)]
    if isinstance(content, str) and trim_drops_text(content.replace("\x00", "")):
        notices.append(WHITESPACE_NOT_KEPT)
    return notices


def unchanged_note(current: DocumentRecord) -> str:
    """The notice of a no-op update of ``current``: ``no change; revision N kept``."""
    return f"no change; revision {current.revision} kept"


def archived_record(current: DocumentRecord, body: str, summary: str, memory_body_ids: Sequence[str],
                    now: str) -> DocumentRecord:
    """``current`` archived (reference 5.4): status archived, path under ``archived/``, revision + 1,
    updatedAt = lastAccessedAt = archivedAt = ``now``, summary and memory-body ids, new size."""
    record = replace(
        current, status="archived", relative_path=relative_path("archived", current.filename), updated_at=now,
        last_accessed_at=now, revision=current.revision + 1, archived_at=now, archive_summary=summary,
        memory_body_ids=tuple(memory_body_ids),
    )
    return replace(record, size_bytes=rendered_size(record, body))


def restored_record(current: DocumentRecord, body: str, now: str) -> DocumentRecord:
    """``current`` (archived) back to active as a new revision: path under ``active/``, revision + 1,
    updatedAt = lastAccessedAt = ``now``; archivedAt and archiveSummary removed; memoryBodyIds kept
    (they name the cold references that still exist)."""
    record = replace(
        current, status="active", relative_path=relative_path("active", current.filename), updated_at=now,
        last_accessed_at=now, revision=current.revision + 1, archived_at=None, archive_summary=None,
    )
    return replace(record, size_bytes=rendered_size(record, body))


@dataclass(frozen=True, slots=True)
class CapacityPlan:
    """Reference 5.6: ``projected`` active bytes after the change, ``limit``, ``used`` (now), ``fits`` and
    the ``candidates`` (other active records, least recently accessed first)."""

    projected: int
    limit: int
    used: int
    fits: bool
    candidates: tuple[DocumentRecord, ...]

    def to_dict(self, last_accessed: Mapping[str, str] | None = None) -> dict[str, Any]:
        """``{projected, limit, used, fits, candidates: [candidate_summary...]}``."""
        return {"projected": self.projected, "limit": self.limit, "used": self.used, "fits": self.fits,
                "candidates": [candidate_summary(r, last_accessed) for r in self.candidates]}


def candidate_summary(record: DocumentRecord, last_accessed: Mapping[str, str] | None = None) -> dict[str, Any]:
    """``{id, title, relativePath, sizeBytes, lastAccessedAt, updatedAt, revision}`` of a capacity candidate."""
    accessed = (last_accessed or {}).get(record.id, record.last_accessed_at)
    return {"id": record.id, "title": record.title, "relativePath": record.relative_path,
            "sizeBytes": record.size_bytes, "lastAccessedAt": accessed, "updatedAt": record.updated_at,
            "revision": record.revision}


def lru_order(records: Iterable[DocumentRecord],
              last_accessed: Mapping[str, str] | None = None) -> list[DocumentRecord]:
    """Records ordered least recently accessed first: effective lastAccessedAt, then updatedAt, ascending
    (unreadable timestamps sort oldest; ties keep index order)."""
    accessed = last_accessed or {}
    return sorted(records, key=lambda r: (time_key(accessed.get(r.id, r.last_accessed_at)), time_key(r.updated_at)))


def plan_capacity(records: Sequence[DocumentRecord], new_size: int, limit: int, *, replacing: str | None = None,
                  last_accessed: Mapping[str, str] | None = None, always_candidates: bool = True) -> CapacityPlan:
    """Pure capacity plan: ``projected = active total - size of `replacing` (if active) + new_size``.

    ``always_candidates=False`` leaves ``candidates`` empty when the change fits (the commit path only
    needs them for the error).
    """
    active = [r for r in records if r.status == "active"]
    used = sum(r.size_bytes for r in active)
    projected = used + new_size - sum(r.size_bytes for r in active if r.id == replacing)
    fits = projected <= limit
    candidates = () if fits and not always_candidates else \
        tuple(lru_order((r for r in active if r.id != replacing), last_accessed))
    return CapacityPlan(projected, limit, used, fits, candidates)
