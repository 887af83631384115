"""Stored secrets in the Documents Source: find them (``doctor``) and redact them (``mnemon-ls redact --apply``).

What is looked at, under ``<root>/documents/``: every record of ``index.json`` (title, description,
archive summary), every managed file (frontmatter and body, active and archived), the copies kept
beside them (``edits/``, ``quarantine/``), and the search side index, which is derived: it is deleted
after a rewrite and rebuilt from the redacted truth on the next search (so no old term survives in
its pages or its WAL).

Applying rewrites each affected document under the index lock the way a mutation does: the new
managed file first, then ``index.json`` (the commit marker), then the old file is removed. Archived
documents are otherwise immutable; a redaction is the one rewrite they get (revision + 1,
``updatedAt`` now). A rewritten document also gets its file name made again from its redacted title:
the old name was made from the title at creation, which may have held the secret.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

from .. import fsio
from ..redact import find_secrets, redact_file_in_place, redact_text
from . import model
from .files import SpecialFile, read_managed_or_none
from .model import render_markdown, sha256_hex, split_markdown
from .store import DocumentStore


def _where(store: DocumentStore, path: Path) -> str:
    try:
        return str(path.relative_to(store.root))
    except ValueError:
        return str(path)


def _copies(store: DocumentStore) -> list[Path]:
    paths: list[Path] = []
    for directory in (store.edits_dir, store.quarantine_dir):
        if directory.is_dir():
            paths.extend(sorted(p for p in directory.iterdir() if p.is_file()))
    return paths


def _managed(store: DocumentStore) -> list[Path]:
    paths: list[Path] = []
    for status in model.STATUSES:
        directory = store.files.dir_for(status)
        if directory.is_dir():
            paths.extend(sorted(p for p in directory.iterdir() if p.is_file()))
    return paths


def scan(store: DocumentStore) -> list[dict[str, Any]]:
    """Findings ``{"location", "kind", "position"}`` (never the value). Read-only."""
    found: list[dict[str, Any]] = []
    if not store.documents_dir.is_dir():
        return found
    index = _where(store, store.index_path)
    data = fsio.read_bytes_or_none(store.index_path)
    if data is not None:
        for match in find_secrets(data.decode("utf-8", "replace")):
            found.append({"location": index, "kind": match.kind, "position": match.start})
    for path in [*_managed(store), *_copies(store)]:
        try:
            data = read_managed_or_none(path) or b""  # a FIFO or device in place of a file is skipped, unread
        except SpecialFile:
            continue
        for match in find_secrets(data.decode("utf-8", "replace")):
            found.append({"location": _where(store, path), "kind": match.kind, "position": match.start})
    return found


def apply(store: DocumentStore) -> dict[str, Any]:
    """Redact every stored value of ``store`` durably (module doc). Returns ``{"documents": n rewritten,
    "renamed": n given a new file name, "files": [rewritten copies], "revision"}``. Raises the errors of
    a mutation (:class:`~mnemon_ls.errors.UnreadableStore` for a damaged index: run ``doc recover``
    first, nothing is written then)."""
    result: dict[str, Any] = {"documents": 0, "renamed": 0, "files": [], "revision": None}
    if not store.documents_dir.is_dir():
        return result
    store.freshness.refresh()  # adopt hand edits first, so the rewrite starts from what the index says
    with store.mutex, store.locked():
        view = store.index.begin(None)
        records, renamed, stale = [], [], []
        now = store.now()
        for record in view.records:
            path = store.files.path_for(record)
            data = store.files.read_managed(record)  # never blocks on a FIFO in place of the file
            try:
                text = data.decode("utf-8") if data is not None else None
            except UnicodeDecodeError:
                records.append(record)  # not UTF-8: kept byte for byte (doctor reports it), never re-encoded
                continue
            body = split_markdown(text)[1] if text is not None else None
            title = redact_text(record.title)[0]
            description = redact_text(record.description)[0]
            summary = redact_text(record.archive_summary)[0] if record.archive_summary else record.archive_summary
            new_body = redact_text(body)[0] if body is not None else None
            file_secret = text is not None and bool(find_secrets(text))
            if (title, description, summary, new_body) == (record.title, record.description,
                                                           record.archive_summary, body) and not file_secret:
                records.append(record)
                continue
            # The file name was made from the title at creation; a later update keeps it, so a document that
            # held a credential gets its name made again from the (redacted) title it has now.
            filename = model.filename_for(title, record.id)
            changed = dataclasses.replace(
                record, title=title, description=description, archive_summary=summary, filename=filename,
                relative_path=model.relative_path(record.status, filename), updated_at=now,
                revision=record.revision + 1,
                content_hash=sha256_hex(new_body) if new_body is not None else record.content_hash)
            if new_body is not None:
                changed = dataclasses.replace(changed, size_bytes=model.rendered_size(changed, new_body))
                target = store.files.path_for(changed)
                # a save since the read is kept under edits/ (redacted below with the other copies), not replaced
                if (displaced := fsio.replace_watching(target, render_markdown(changed, new_body).encode("utf-8"),
                                                       data if target == path else None)) is not None:
                    store.files.preserve(changed.filename, displaced)
                if target != path:
                    renamed.append(target)
                    stale.append((path, data))
            records.append(changed)
            result["documents"] += 1
            result["renamed"] += filename != record.filename
        if result["documents"]:
            try:
                view = store.index.commit(view, records)
            except BaseException:
                for target in renamed:  # a body rewritten in place is adopted by the next refresh
                    _unlink(target)
                raise
            result["revision"] = view.revision
            for path, read in stale:  # a save since the read is kept under edits/, not removed
                fsio.remove_watching(path, read, lambda saved, name=path.name: store.files.preserve(name, saved))
            for record in records:
                store.files.note_file(record)
        for path in _copies(store):
            if redact_file_in_place(path):
                result["files"].append(_where(store, path))
        # The search side index is derived: drop it (pages, WAL and all); the next search rebuilds it.
        store.search.reset()
    return result


def _unlink(path: Path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
