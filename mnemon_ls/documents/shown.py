"""Document titles and descriptions another program wrote into ``index.json``: shown redacted, the index left as it is.

Every write of mnemon-ls passes :mod:`mnemon_ls.redact` first (DESIGN.md invariant 9), but ``documents/index.json``
has other writers (the TypeScript plugin, a person's editor, a script): a credential one of them put in a title or a
description reached the wake's Documents block and ``doc list`` as it was. Under ``secrets: redact`` (or ``reject``)
the paths that show them (:meth:`~.store.DocumentStore.cover`, which the wake, the session-start hook and MCP
``mnemon_wake`` render; the ``documents.list``, ``documents.get`` and ``documents.search`` operations) pass each title
and description through :func:`~mnemon_ls.redact.redact_text` and add one notice per document changed, naming the
index, the document and the kinds (never the value). Nothing is written: ``mnemon-ls redact --apply`` replaces the
values in the index (and the document's file name with them); ``doctor`` names them too.

The wake renders the cover every turn: each text's verdict is kept (:func:`_verdict`, a pure function of the string;
the last :data:`MEMO_SIZE` texts), so a long-lived server scans a title again only when it changed (~0.1 ms a text
holding a key-like word such as ``session`` or ``token``, measured here).
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Sequence

from ..redact import redact_text
from .model import DocumentRecord

#: Texts whose verdict is kept (module doc); titles and descriptions are short (their field limits).
MEMO_SIZE = 4096


@lru_cache(maxsize=MEMO_SIZE)
def _verdict(text: str) -> tuple[str, tuple[str, ...]]:
    """``(text redacted, the kinds found)`` (:func:`~mnemon_ls.redact.redact_text`), kept."""
    shown, matches = redact_text(text)
    return shown, tuple(m.kind for m in matches)


def shown_text(text: Any, secrets: str) -> Any:
    """A title or description as a line of text shows it (a notice, a message): redacted (:func:`_verdict`) unless
    ``secrets`` is ``allow``; anything but a string as it is."""
    return text if secrets == "allow" or not isinstance(text, str) else _verdict(text)[0]


def _notice(index_path: Path | str, document_id: Any, fields: Sequence[str], kinds: Sequence[str]) -> str:
    return (f"{index_path}: document {str(document_id)[:8]} {' and '.join(fields)} hold"
            f"{'s' if len(fields) == 1 else ''} what looks like a credential ({', '.join(sorted(set(kinds)))}) that "
            "another program wrote; shown redacted, the index is unchanged: `mnemon-ls redact --apply` replaces it")


def _redacted(title: Any, description: Any) -> tuple[Any, Any, list[str], list[str]]:
    """``(title, description, the fields changed, the kinds found)``, each string through ``redact_text``."""
    fields: list[str] = []
    kinds: list[str] = []
    out = []
    for name, value in (("title", title), ("description", description)):
        if isinstance(value, str):
            value, found = _verdict(value)
            if found:
                fields.append(name)
                kinds.extend(found)
        out.append(value)
    return out[0], out[1], fields, kinds


def shown_records(records: Sequence[DocumentRecord], secrets: str, index_path: Path | str, *,
                  active_only: bool = False) -> tuple[list[DocumentRecord], list[str]]:
    """``(records as shown, notices)``: under ``secrets`` ``redact`` or ``reject`` each record whose title or
    description holds what looks like a credential is a copy with its placeholders (``[redacted:<kind>]``) and a
    notice naming ``index_path``, the document's first 8 id characters, the fields and the kinds; the others are the
    same objects. Under ``allow``, ``records`` as they are and no notice. ``active_only``: archived records are
    passed on as they are (the wake's cover only counts them). Pure: nothing is written."""
    if secrets == "allow":
        return list(records), []
    out: list[DocumentRecord] = []
    notices: list[str] = []
    for record in records:
        if active_only and record.status != "active":
            out.append(record)
            continue
        title, description, fields, kinds = _redacted(record.title, record.description)
        if fields:
            record = replace(record, title=title, description=description)
            notices.append(_notice(index_path, record.id, fields, kinds))
        out.append(record)
    return out, notices


def redact_shown(documents: Sequence[Any], secrets: str, index_path: Path | str) -> list[str]:
    """:func:`shown_records` for documents as an operation answers them (``record_dict`` shapes: ``id``, ``title``,
    ``description``), changed in place; entries that are not objects are skipped. Returns the notices."""
    if secrets == "allow":
        return []
    notices: list[str] = []
    for document in documents:
        if not isinstance(document, dict):
            continue
        title, description, fields, kinds = _redacted(document.get("title"), document.get("description"))
        if fields:
            document.update({name: value for name, value in (("title", title), ("description", description))
                             if name in fields})
            notices.append(_notice(index_path, document.get("id"), fields, kinds))
    return notices
