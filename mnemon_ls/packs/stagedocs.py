"""Staging of the documents component of a pack import (:mod:`.importer`, reference section 9).

``merge``: a pack document with the id and ``contentHash`` of one here is already here (``skipped``); one
whose id is taken by another content, or whose file name is, comes in under a new UUID id (``renamed``: file
name ``<base (at most 80)>-<id[:8]>.md``, frontmatter id rewritten, a body whose first line is indented as a
code block kept as packed); the rest is ``added``. ``replace``: the
pack's documents only; the saved hand edits, ``quarantine`` and ``orphans`` folders are kept, and a file here
whose frontmatter alone was changed by hand is saved into the new ``edits/`` first. Either way the active
total must stay within ``documents.activeLimitBytes``. A document changed by hand is taken in before the
index is read (:func:`.staging.read_steady`); a dry run names it in ``pendingHandEdits`` instead. The staged
``documents/`` gets the Documents redaction pass under ``secrets`` when an imported text holds a credential.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from .. import fsio
from ..documents import model as dmodel
from ..documents.indexformat import managed_relative, parse_index, serialize_index
from ..errors import DocumentCapacityError, InvalidInput, UnreadableStore
from .staging import copy_tree, read_steady
from .stores import any_secret
from .swap import transient
from .validate import Pack

if TYPE_CHECKING:
    from ..hosting import Host
    from .plan import ImportPlan


def _renamed_filename(filename: str, old_id: str, new_id: str) -> str:
    base = filename[:-3] if filename.endswith(".md") else filename
    suffix = f"-{old_id[:8]}"
    if base.endswith(suffix):
        base = base[: -len(suffix)]
    return f"{base[:80] or 'document'}-{new_id[:8]}.md"


def _renamed_file(renamed: dmodel.DocumentRecord, doc: Any) -> bytes:
    """The managed file of the pack document ``doc`` (a :class:`~.validate.PackDocument`) coming in as
    ``renamed`` (a new id and file name): rendered anew, except that a body as packed whose first line is
    indented as a code block (:func:`~mnemon_ls.documents.model.indented_start`) is kept byte for byte after
    the new frontmatter, since rendering trims the body and that indentation would be lost."""
    raw = dmodel.split_markdown_raw(doc.data.decode("utf-8"))[1]
    rendered = dmodel.render_markdown(renamed, doc.body)
    if dmodel.indented_start(raw) is None:
        return rendered.encode("utf-8")
    front = rendered[:rendered.index("\n---\n") + 5]
    return (front + raw).encode("utf-8")


def stage_documents(host: "Host", pack: Pack, mode: str, plan: "ImportPlan", stage: Path) -> None:
    """Stage the documents component of ``pack`` into ``stage`` (module doc; :mod:`.importer` swaps
    ``plan.pairs``) and put its counts into ``plan.receipt["documents"]``. Raises
    :class:`~mnemon_ls.errors.DocumentCapacityError` (the result would not fit) and
    :class:`~mnemon_ls.errors.UnreadableStore` (a damaged ``index.json`` here)."""
    root = host.root
    docs_dir = root / "documents"
    index_path = docs_dir / "index.json"
    def take_in_and_read() -> Any:
        if not index_path.is_file():
            return None
        if not plan.dry_run:
            # a document changed by hand counts (adopted as a new revision, as the file watcher and every
            # read do) before the import reads the index: the merge keeps it, a replace's backup carries it
            host.documents.freshness.refresh()
        try:
            return parse_index(fsio.read_bytes_or_none(index_path) or b"")
        except InvalidInput as exc:
            raise UnreadableStore(f"{index_path} is damaged: {exc.message}; nothing was imported. Run "
                                  "`mnemon-ls doc recover` first", file=str(index_path), reason=exc.message) from None

    current: tuple[dmodel.DocumentRecord, ...] = ()
    extra: tuple[tuple[str, Any], ...] = ()
    parsed = read_steady(docs_dir, take_in_and_read, plan)
    if parsed is not None:
        current, extra = parsed.records, parsed.extra
    pending = [str(root / managed_relative(r.relative_path)) for r in current
               if plan.dry_run and _changed_by_hand(root, r)]
    staged_docs = stage / "documents"
    report: dict[str, Any] = {"added": 0, "skipped": 0, "renamed": [], "removed": 0}
    records: list[dmodel.DocumentRecord] = []
    files: dict[str, bytes] = {}
    here = {(r.id, r.content_hash) for r in current}
    if mode == "merge":
        records = list(current)
        copy_tree(docs_dir, staged_docs, lambda name: transient(name) or name == "index.json")
    else:
        carried = {(doc.record.id, doc.record.content_hash) for doc in pack.documents or ()}
        report["removed"] = sum(1 for r in current if (r.id, r.content_hash) not in carried)
        copy_tree(docs_dir, staged_docs, lambda name: name not in ("edits", "quarantine", "orphans"))
        extra = ()
        _keep_frontmatter_edits(root, current, staged_docs / "edits")
    by_id = {r.id: r for r in records}
    taken = {managed_relative(r.relative_path) for r in records}
    for doc in pack.documents or ():
        record, data = doc.record, doc.data
        existing = by_id.get(record.id)
        if existing is not None and existing.content_hash == record.content_hash:
            report["skipped"] += 1
            continue
        renamed_here = False
        if existing is not None or record.relative_path in taken:
            new_id = dmodel.new_id()
            filename = _renamed_filename(record.filename, record.id, new_id)
            renamed = record.with_changes(id=new_id, filename=filename,
                                          relative_path=dmodel.relative_path(record.status, filename))
            data = _renamed_file(renamed, doc)
            report["renamed"].append({"from": record.id, "to": new_id})
            record = renamed.with_changes(size_bytes=len(data))
            renamed_here = True
        records.append(record)
        by_id[record.id] = record
        taken.add(record.relative_path)
        files[record.relative_path] = data
        if renamed_here:
            pass  # one outcome: under a new id (``renamed``), not also ``added``
        elif mode == "replace" and (record.id, record.content_hash) in here:
            report["skipped"] += 1  # the same document is here already: it stays
        else:
            report["added"] += 1
    active = sum(r.size_bytes for r in records if r.status == "active")
    limit = host.settings.documents.active_limit_bytes
    if active > limit:
        before = sum(r.size_bytes for r in current if r.status == "active")
        raise DocumentCapacityError(
            f"active documents would take {active} of {limit} bytes after the import (now {before}); nothing was "
            "imported. Archive documents, import with --replace, or raise documents.activeLimitBytes",
            projected=active, limit=limit, used=before, candidates=[])
    if mode == "merge" and not files:
        # nothing comes in: documents/ is left exactly as it is
        plan.receipt["documents"] = report | {"pendingHandEdits": pending}
        return
    for status in dmodel.STATUSES:
        fsio.ensure_dir(staged_docs / status)
    for relative, data in files.items():
        target = stage / relative
        if target.exists():  # a stray file (no record) of the same name in the copied folder
            os.unlink(target)
        fsio.create_file_durably(target, data)
    fsio.create_file_durably(staged_docs / "index.json", serialize_index(records, extra))
    added = [r for r in records if r.relative_path in files]
    texts = [t for r in added for t in (r.title, r.description, r.archive_summary or "")]
    texts += [doc.body for doc in pack.documents or () if any(r.content_hash == doc.record.content_hash for r in added)]
    _redact_documents(host, stage, texts)
    lock = docs_dir / ".index.lock"
    plan.links.append((lock, staged_docs / ".index.lock"))
    plan.pairs.append((staged_docs, docs_dir))
    plan.receipt["documents"] = report | {"pendingHandEdits": pending}


def _keep_frontmatter_edits(root: Path, records: Sequence[dmodel.DocumentRecord], edits: Path) -> None:
    """A replace removes the documents here: a file whose frontmatter alone was changed by hand (never taken
    in, :func:`.export.frontmatter_only_edit`) is saved as it is into the new ``documents/edits/`` first."""
    from datetime import datetime, timezone

    from .export import frontmatter_only_edit

    stamp = fsio.file_stamp(datetime.now(timezone.utc))
    for record in records:
        data = fsio.read_bytes_or_none(root / managed_relative(record.relative_path))
        if data is not None and len(data) != record.size_bytes and frontmatter_only_edit(record, data) is not None:
            fsio.create_file_durably(edits / f"{stamp}-{record.filename}", data)


def _changed_by_hand(root: Path, record: dmodel.DocumentRecord) -> bool:
    """Whether ``record``'s managed file differs from what the index says (size, or body hash)."""
    data = fsio.read_bytes_or_none(root / managed_relative(record.relative_path))
    if data is None:
        return False
    # (a change of the frontmatter alone is not taken in: the index's title and description hold)
    return dmodel.body_hash(data) != record.content_hash


def _redact_documents(host: "Host", stage: Path, texts: Sequence[str]) -> None:
    """The Documents redaction pass on the staged ``documents/`` when the imported ``texts`` (titles,
    descriptions, summaries, bodies of the documents added) hold a credential."""
    from ..documents import DocumentStore
    from ..documents import redaction
    from .stagespaces import secrets_pass

    mode = host.settings.secrets
    if mode == "allow" or not any_secret(texts):
        return
    store = DocumentStore(stage, None, search_index=False, secrets=mode,
                          active_limit_bytes=dmodel.MAX_LIMIT_BYTES, max_body_bytes=dmodel.MAX_LIMIT_BYTES)
    try:
        secrets_pass(redaction, store, mode)
    finally:
        store.close()
    for name in (".access.json", ".access.lock", ".index.lock"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(stage / "documents" / name)
