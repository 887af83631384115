"""A pack export redacts what another program stored (``secrets: redact`` or ``reject``; ``allow`` exports as stored).

Every write of mnemon-ls passes :mod:`mnemon_ls.redact` (DESIGN.md invariant 9), but each store has other writers:
``memories.json`` (the plugin, a script), a document's file (a person's editor), a native space's ``mnemon.db`` (the
Mnemon CLI). A read sends such a value redacted (mnemon_ls/runtime/foreign.py, mnemon_ls/spaces/foreign.py); a pack
is read by whoever it is shared with, so :func:`redact_payload` runs the Sources' own redaction passes over the
payload :func:`.export._build` assembled, never over the root: the Runtime entries through
:func:`~mnemon_ls.redact.redact_text` (the projections are built from the redacted entries), the documents component
staged in a temporary directory and passed through :func:`mnemon_ls.documents.redaction.apply`, the memory-spaces
component likewise through :func:`mnemon_ls.spaces.redaction.apply` (as an import's staging does,
:mod:`.stagedocs`, :mod:`.stagespaces`). It counts the values replaced: Runtime entries' and documents' values
(titles, descriptions, archive summaries, bodies) one by one, and the findings of
:func:`mnemon_ls.spaces.redaction.scan` in the spaces' catalog and stores.

Only an export for someone else redacts: the copy an import keeps of what it replaces (:func:`.export.export_held`)
is a backup and keeps every byte.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
import types
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from ..documents import model as dmodel
from ..documents.indexformat import parse_index
from ..redact import find_secrets, redact_text
from .validate import INDEX_FILE, REGISTRY_FILE

#: An export reader of :mod:`.export` (``_documents``/``_spaces``): ``(host, held=True)`` -> a tuple whose first
#: value is the payload part (pack entry name -> bytes).
Reader = Callable[..., tuple[Any, ...]]

if TYPE_CHECKING:
    from ..hosting import Host
    from ..runtime.model import Entry


def redacted_entries(entries: Sequence["Entry"]) -> tuple[list["Entry"], Counter[str]]:
    """``(entries with each credential in a content replaced by its placeholder, kind -> values replaced)``."""
    out, kinds = [], Counter[str]()
    for entry in entries:
        content, matches = redact_text(entry.content)
        kinds.update(m.kind for m in matches)
        out.append(dataclasses.replace(entry, content=content) if matches else entry)
    return out, kinds


def summary(kinds: Counter[str]) -> dict[str, object] | None:
    """``{"count": N, "kinds": {kind: n}}`` (the shape of a write's ``redacted``,
    :meth:`~mnemon_ls.redact.Scrubber.summary`, without ``fields``) or ``None`` when nothing was redacted."""
    if not kinds:
        return None
    return {"count": sum(kinds.values()), "kinds": dict(sorted(kinds.items()))}


def _stage(stage: Path, payload: dict[str, bytes], prefix: str) -> None:
    """Write the payload entries under ``payload/<prefix>`` into ``stage`` (their path without ``payload/``)."""
    for name, data in payload.items():
        if name.startswith(f"payload/{prefix}"):
            path = stage / name[len("payload/"):]
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)


def _document_values(payload: dict[str, bytes]) -> Counter[str]:
    """Kind -> how many values of the documents component look like credentials (titles, descriptions, archive
    summaries and bodies, each value once)."""
    kinds = Counter[str]()
    for record in parse_index(payload[INDEX_FILE]).records:
        texts = [record.title, record.description, record.archive_summary or ""]
        data = payload.get(f"payload/{record.relative_path}")
        if data is not None:
            try:
                texts.append(dmodel.split_markdown(data.decode("utf-8"))[1])
            except UnicodeDecodeError:
                pass  # not UTF-8: kept byte for byte by the pass too
        kinds.update(m.kind for text in texts if text for m in find_secrets(text))
    return kinds


def _documents(host: "Host", payload: dict[str, bytes], stage: Path, read_documents: Reader) -> Counter[str]:
    from ..documents import DocumentStore, redaction

    kinds = _document_values(payload)
    if not kinds:
        return kinds
    _stage(stage, payload, "documents/")
    store = DocumentStore(stage, None, search_index=False, secrets="redact", active_limit_bytes=dmodel.MAX_LIMIT_BYTES,
                          max_body_bytes=dmodel.MAX_LIMIT_BYTES)
    try:
        redaction.apply(store)
    finally:
        store.close()
    for name in [n for n in payload if n.startswith("payload/documents/")]:
        del payload[name]  # a redacted title may have given a file a new name
    part, _ = read_documents(types.SimpleNamespace(root=stage, settings=host.settings), held=True)
    payload.update(part)
    return kinds


def _spaces(payload: dict[str, bytes], stage: Path, read_spaces: Reader) -> Counter[str]:
    from ..spaces import SpacesService, redaction
    from .stores import any_secret, store_has_secret

    databases = [n for n in payload if n.startswith("payload/data/") and n.endswith("/mnemon.db")]
    _stage(stage, payload, "data/")
    catalog = payload[REGISTRY_FILE].decode("utf-8", "replace")
    if not any_secret([catalog]) and not any(store_has_secret(stage / n[len("payload/"):]) for n in databases):
        return Counter()
    service = SpacesService(stage, secrets="redact", track_access=False)
    try:
        kinds = Counter(str(found["kind"]) for found in redaction.scan(service))
        redaction.apply(service)
    finally:
        service.close()
    part, _, _ = read_spaces(types.SimpleNamespace(root=stage), held=True)
    for name in databases:
        del payload[name]
    payload.update(part)
    return kinds


def redact_payload(host: "Host", payload: dict[str, bytes], components: Sequence[str], *,
                   read_documents: Reader, read_spaces: Reader) -> Counter[str]:
    """Redact the documents and memory-spaces components of ``payload`` (pack entry name -> bytes, changed in
    place) and return kind -> how many values were replaced (module doc). ``read_documents(host, held=True)`` and
    ``read_spaces(host, held=True)`` are the export's own readers (:mod:`.export`), run again over the staged,
    redacted copy (a ``SimpleNamespace`` with ``root`` and ``settings``): the pack carries what they read there.
    The Runtime component is redacted before it is serialized (:func:`redacted_entries`). Nothing under the root
    is read or written; the staging directory is private (0700) and removed."""
    kinds = Counter[str]()
    if not any(c in components for c in ("documents", "memory-spaces")):
        return kinds
    with tempfile.TemporaryDirectory(prefix="mnemon-pack-export-") as tmp:
        os.chmod(tmp, 0o700)
        if "documents" in components and INDEX_FILE in payload:
            kinds += _documents(host, payload, Path(tmp) / "documents-stage", read_documents)
        if "memory-spaces" in components and REGISTRY_FILE in payload:
            kinds += _spaces(payload, Path(tmp) / "spaces-stage", read_spaces)
    return kinds

