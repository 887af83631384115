"""Read-only health check of one Documents store (``mnemon-ls doctor``): never writes, never locks.

Each :class:`Finding` has a ``level`` (``ok`` | ``warning`` | ``problem``), a ``subject`` (a path or
area), a ``message`` (what and why) and ``advice`` (what to do). Checks: the index (valid, missing
while managed files exist, not JSON / truncated / a bad record, with the record's position and
field), capacity, every record's managed file (missing, unreadable, not a regular file, not UTF-8, body
changed outside mnemon-ls; read with :func:`~.files.read_regular_file`, so a FIFO never blocks it),
second copies left by an interrupted archive/restore, orphan managed files, abandoned temp files, a
held lock, file modes wider than 0600/0700, the side files, and the saved edits / quarantine / orphans.
"""

from __future__ import annotations

from ..findings import Finding
from ..lockinfo import lock_finding

import os
from typing import Any

from .. import fsio
from . import changes, indexformat, model
from .files import LOCK_STAGING, TEMP_OURS, TEMP_PLUGIN, SpecialFile, opposite_status, read_regular_file
from .store import DocumentStore


def diagnose(store: DocumentStore) -> list[Finding]:
    """Explain the state of ``store``'s ``documents/`` directory (see module doc)."""
    documents = store.documents_dir
    index = str(store.index_path)
    if not documents.exists():
        return [Finding("ok", str(documents), "no Documents yet (created by the first create)")]
    findings: list[Finding] = []
    listing: dict[str, list[str]] = {}
    for status in model.STATUSES:
        try:
            listing[status] = sorted(os.listdir(store.files.dir_for(status)))
        except OSError:
            listing[status] = []
    managed = {s: [n for n in names if n.endswith(".md") and not n.startswith(".")] for s, names in listing.items()}
    file_count = sum(len(v) for v in managed.values())
    try:
        data = fsio.read_bytes_or_none(store.index_path)
    except OSError as exc:
        return [Finding("problem", index, f"cannot be read: {exc.strerror or exc}",
                        "check the file's owner and permissions")]
    records: tuple[model.DocumentRecord, ...] = ()
    if data is None:
        if file_count:
            findings.append(Finding("problem", index, f"is missing while {file_count} managed file(s) exist",
                                    "`mnemon-ls doc recover` rebuilds it from their frontmatter; writes are refused "
                                    "until then"))
        else:
            findings.append(Finding("ok", index, "absent (no documents; created by the first create)"))
    else:
        try:
            parsed = indexformat.parse_index(data)
            records = parsed.records
        except indexformat.IndexProblem as exc:
            salvaged, damaged = indexformat.salvage_index(data)
            where = f"record {exc.record} ({exc.field})" if exc.record is not None else exc.field
            findings.append(Finding(
                "problem", index, f"{where}: {exc.rule}; the file is never overwritten while it is damaged",
                f"`mnemon-ls doc recover` moves it to documents/quarantine/ and rebuilds the index: {len(salvaged)} "
                f"readable record(s) keep their metadata ({damaged} damaged), the {file_count} managed file(s) "
                "supply the rest from their frontmatter; writes are refused until then"))
            records = tuple(salvaged)
        else:
            active = [r for r in records if r.status == "active"]
            used = sum(r.size_bytes for r in active)
            findings.append(Finding("ok", index, f"valid: {len(active)} active ({used} of {store.active_limit_bytes} "
                                    f"bytes), {len(records) - len(active)} archived"))
            if used > store.active_limit_bytes:
                findings.append(Finding("warning", "documents capacity",
                                        f"active documents use {used} of {store.active_limit_bytes} bytes",
                                        "archive the least recently accessed documents before creating more"))
            if parsed.dropped:
                findings.append(Finding("warning", index, f"{parsed.dropped} non-string list member(s) or optional "
                                        "value(s) are ignored (the TypeScript plugin ignores them too)",
                                        "the next write removes them"))
    named = {(r.status, r.filename) for r in records}
    for record in records:
        path = store.files.path_for(record)
        other = store.files.dir_for(opposite_status(record.status)) / record.filename
        if record.filename not in listing[record.status]:
            if record.filename in listing[opposite_status(record.status)]:
                findings.append(Finding("warning", str(path), f"missing, but {other} exists (an interrupted move)",
                                        "the next refresh moves it into place"))
            else:
                findings.append(Finding("problem", str(path), f"missing: document {record.id} ({record.title!r}) has "
                                        "no managed file; search leaves it out",
                                        "restore the file (e.g. from a backup) or update the document with its "
                                        "content"))
            continue
        try:
            data = read_regular_file(path)
        except SpecialFile as exc:
            findings.append(Finding("problem", str(path), f"{exc.strerror}: document {record.id} ({record.title!r}) "
                                    "cannot be read; search leaves it out",
                                    "put the document's Markdown file back in its place (or update the document "
                                    "with its content)"))
            continue
        except OSError as exc:
            findings.append(Finding("problem", str(path), f"cannot be read: {exc.strerror or exc}",
                                    "check the file's owner and permissions"))
            continue
        try:
            raw = model.split_markdown_raw(data.decode("utf-8"))[1]
        except UnicodeDecodeError as exc:
            findings.append(Finding(
                "problem", str(path), f"is not UTF-8 text (invalid byte at offset {exc.start}; re-saved in another "
                f"encoding?): document {record.id} ({record.title!r}) is left out of search and `doc get` refuses "
                "it; mnemon-ls never rewrites the file, so its bytes are kept exactly",
                f"re-save it as UTF-8 (for GBK: iconv -f GBK -t UTF-8), or `mnemon-ls doc update {record.id} "
                "--content ...` (the current file is saved under documents/edits/ first)"))
            continue
        body, indented = model.js_trim(raw), model.indented_start(raw)
        if model.sha256_hex(body) != record.content_hash:
            advice = ("the next refresh takes the new body into the index as a new revision"
                      if record.status == "active" else "archived documents are immutable: restore it to edit it")
            kept = changes.credential_kept(store.secrets, body) if record.status == "active" else ""
            if record.status == "active" and body and indented is not None:
                advice = (f"the body's first line is indented ({indented}), which a document body cannot keep "
                          "(it is stored trimmed), so refreshes leave the file as it is and do not adopt it: start "
                          "the body with a line that is not indented, e.g. a heading, or fence the code with ```"
                          + kept)
            elif kept and store.secrets == "reject":
                advice = "refreshes do not adopt a body holding a credential under secrets: reject" + kept
            findings.append(Finding("warning", str(path), "its body differs from contentHash (changed outside "
                                    "mnemon-ls)", advice))
        if record.filename in listing[opposite_status(record.status)]:
            findings.append(Finding("warning", str(other), "a second copy left by an interrupted archive or restore",
                                    "the next refresh removes it (saving it under documents/edits/ if it differs)"))
    orphans = [f"documents/{s}/{n}" for s, names in managed.items() for n in names if (s, n) not in named]
    if orphans and data is not None:
        findings.append(Finding("warning", str(documents), f"{len(orphans)} managed file(s) no record names: "
                                + ", ".join(orphans[:5]) + (" ..." if len(orphans) > 5 else ""),
                                "the next refresh (any read) adopts them into the index, or moves those it cannot "
                                "adopt unchanged to documents/orphans/; `mnemon-ls doc recover` adopts them too"))
    temps = []
    for directory in (documents, store.files.dir_for("active"), store.files.dir_for("archived")):
        try:
            names = os.listdir(directory)
        except OSError:
            continue
        temps.extend(str(directory / n) for n in names if TEMP_OURS.match(n) or TEMP_PLUGIN.match(n)
                     or (directory == documents and LOCK_STAGING.match(n)))
    if temps:
        findings.append(Finding("warning", str(documents), f"{len(temps)} temp or lock staging file(s) of "
                                "interrupted writes", "the next repair removes those whose writer has exited"))
    lock = lock_finding(store.lock_path)
    if lock is not None:
        findings.append(lock)
    checks: list[tuple[Any, int]] = [(documents, fsio.DIR_MODE), (store.files.dir_for("active"), fsio.DIR_MODE),
                                     (store.files.dir_for("archived"), fsio.DIR_MODE),
                                     (store.index_path, fsio.FILE_MODE)]
    checks += [(store.files.dir_for(s) / n, fsio.FILE_MODE) for s, names in managed.items() for n in names]
    wide = []
    for path, expected in checks:
        try:
            mode = os.stat(path).st_mode & 0o777
        except OSError:
            continue
        if mode & ~expected:
            wide.append(f"{path} ({mode:04o})")
    if wide:
        findings.append(Finding("warning", str(documents), f"{len(wide)} path(s) wider than 0600/0700: "
                                + ", ".join(wide[:5]) + (" ..." if len(wide) > 5 else ""),
                                f"chmod -R go-rwx {documents}"))
    if store.search_path.exists():
        findings.append(Finding("ok", str(store.search_path), "derived search index (rebuilt automatically when "
                                "stale or unreadable; safe to delete)"))
    for directory, what in ((store.edits_dir, "managed files saved before they were overwritten"),
                            (store.quarantine_dir, "damaged indexes moved aside by recover"),
                            (store.orphans_dir, "orphan managed files set aside unchanged by a repair (not UTF-8, "
                             "not regular files, empty, or repeating a document's body)")):
        if directory.is_dir():
            count = sum(1 for _ in directory.iterdir())
            if count:
                findings.append(Finding("ok", str(directory), f"{count} {what}"))
    return findings
