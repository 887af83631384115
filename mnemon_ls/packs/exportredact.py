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

A space's ``mnemon.db`` may hold tables (or views) the Mnemon format does not define (another program's): mnemon-ls
never reads them, so it cannot judge what they hold; such an export leaves them out of the pack's copy of the store
(:func:`leave_out_foreign_tables`) and its report names them (``foreignTables``), rather than carry them unscanned.
Under ``secrets: allow`` the store is exported as stored, every table in it.

Only an export for someone else redacts: the copy an import keeps of what it replaces (:func:`.export.export_held`)
is a backup and keeps every byte.
"""

from __future__ import annotations

import dataclasses
import os
import sqlite3
import tempfile
import types
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from ..documents import model as dmodel
from ..documents.indexformat import parse_index
from ..errors import echo_repr
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


#: The tables of the Mnemon format (shared/reference/mnemon-cli.md 4.1-4.4) and those SQLite keeps itself
#: (``sqlite_sequence`` of the ``oplog``'s AUTOINCREMENT, ``sqlite_stat*`` of ANALYZE).
MNEMON_TABLES = frozenset({"insights", "edges", "oplog"})


def _foreign_schema(db: sqlite3.Connection) -> list[tuple[str, str, str]]:
    """``[(type, name, sql)]`` of the tables and views of ``db`` the Mnemon format does not define: views first,
    then virtual tables (dropping one drops its shadow tables), then the other tables."""
    rows = db.execute("SELECT type, name, coalesce(sql, '') FROM sqlite_master WHERE type IN ('table', 'view')"
                      ).fetchall()
    foreign = [(t, n, q) for t, n, q in rows if n not in MNEMON_TABLES and not n.startswith("sqlite_")]
    return sorted(foreign, key=lambda r: (r[0] != "view", not r[2].upper().startswith("CREATE VIRTUAL")))


def leave_out_foreign_tables(db_path: Path, space_id: str) -> list[str]:
    """Drop from the staged store ``db_path`` every table and view the Mnemon format does not define (another
    program's, never read by mnemon-ls, so never scanned for credentials) and rewrite the file so none of their
    bytes stays in free pages (``secure_delete``, ``VACUUM``); returns their names, sorted. Raises
    :class:`~mnemon_ls.errors.PackRefused` (``foreign-table``) naming the space and table when SQLite cannot drop
    one (a virtual table of a module this SQLite lacks): nothing is exported then."""
    from ..errors import PackRefused
    from ..sqliteindex import open_existing

    db = open_existing(db_path)
    dropped: list[str] = []
    try:
        db.execute("PRAGMA secure_delete=ON")
        while True:
            foreign = _foreign_schema(db)
            if not foreign:
                break
            kind, name, _ = foreign[0]
            try:
                quoted = '"' + name.replace('"', '""') + '"'
                db.execute(f"DROP {'VIEW' if kind == 'view' else 'TABLE'} {quoted}")
            except sqlite3.Error as exc:
                raise PackRefused(f"space {space_id}: its mnemon.db holds the {kind} {echo_repr(name)}, which the "
                                  f"Mnemon format does not define and this export cannot leave out ({exc}); drop it "
                                  "from the store, or export with --secrets allow", reason="foreign-table",
                                  file=str(db_path)) from None
            dropped.append(name)
        if dropped:
            db.execute("VACUUM")
    finally:
        db.close()
    return sorted(set(dropped))


def _spaces(payload: dict[str, bytes], stage: Path, read_spaces: Reader,
            left_out: list[dict[str, str]]) -> Counter[str]:
    from ..spaces import SpacesService, redaction
    from .stores import any_secret, store_has_secret

    databases = [n for n in payload if n.startswith("payload/data/") and n.endswith("/mnemon.db")]
    _stage(stage, payload, "data/")
    for name in databases:  # another program's tables: left out, and said so (:attr:`.export.ExportedPack`)
        space_id = name.split("/")[2]
        left_out.extend({"space": space_id, "table": table}
                        for table in leave_out_foreign_tables(stage / name[len("payload/"):], space_id))
    catalog = payload[REGISTRY_FILE].decode("utf-8", "replace")
    kinds = Counter[str]()
    if any_secret([catalog]) or any(store_has_secret(stage / n[len("payload/"):]) for n in databases):
        service = SpacesService(stage, secrets="redact", track_access=False)
        try:
            kinds = Counter(str(found["kind"]) for found in redaction.scan(service))
            redaction.apply(service)
        finally:
            service.close()
    elif not left_out:
        return kinds
    part, _, _ = read_spaces(types.SimpleNamespace(root=stage), held=True)
    for name in databases:
        del payload[name]
    payload.update(part)
    return kinds


def redact_payload(host: "Host", payload: dict[str, bytes], components: Sequence[str], *,
                   read_documents: Reader, read_spaces: Reader) -> tuple[Counter[str], list[dict[str, str]]]:
    """Redact the documents and memory-spaces components of ``payload`` (pack entry name -> bytes, changed in
    place) and return ``(kind -> how many values were replaced (module doc), the tables left out)``: each
    ``{"space", "table"}`` a table or view of a space's ``mnemon.db`` the Mnemon format does not define, left out
    of the pack rather than carried unscanned (:func:`leave_out_foreign_tables`). ``read_documents(host,
    held=True)`` and ``read_spaces(host, held=True)`` are the export's own readers (:mod:`.export`), run again over
    the staged, redacted copy (a ``SimpleNamespace`` with ``root`` and ``settings``): the pack carries what they
    read there. The Runtime component is redacted before it is serialized (:func:`redacted_entries`). Nothing under
    the root is read or written; the staging directory is private (0700) and removed. Raises
    :class:`~mnemon_ls.errors.PackRefused` when a table cannot be left out (:func:`leave_out_foreign_tables`)."""
    kinds = Counter[str]()
    left_out: list[dict[str, str]] = []
    if not any(c in components for c in ("documents", "memory-spaces")):
        return kinds, left_out
    with tempfile.TemporaryDirectory(prefix="mnemon-pack-export-") as tmp:
        os.chmod(tmp, 0o700)
        if "documents" in components and INDEX_FILE in payload:
            kinds += _documents(host, payload, Path(tmp) / "documents-stage", read_documents)
        if "memory-spaces" in components and REGISTRY_FILE in payload:
            kinds += _spaces(payload, Path(tmp) / "spaces-stage", read_spaces, left_out)
    return kinds, left_out

