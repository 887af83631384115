"""The auto-writer (seed 002 section 4): "what this session touched", derived from file events.

:class:`SessionFiles` accumulates one session's file events (in mnemon-ls a session is one language
server lifetime per workspace folder; the events are the editor's own ``didSave``, ``didCreateFiles``,
``didDeleteFiles`` and ``didRenameFiles``, never a file watcher's changes, which include what a branch
switch, a rebase, a pull or a stash outside the editor did). :func:`write_digest` turns them into one
session-scoped ``fact``::

    Files touched: 3 (2 created, 1 modified, 0 deleted)
    Created: out/report.md, out/data.json
    Modified: src/util.ts
    Artifacts: 2 — out/report.md, out/data.json

with the stable id ``memory:auto:fact:<first 16 hex of sha256(scopeKey)>:<digestKey>``, where
``digestKey`` is the first 24 hex of sha256 of ``"<created>/<modified>/<deleted>/<artifacts>"`` (the
counts, as the seed defines it). An identical digest (same type and contentHash) is merged without a
new line; a changed digest appends a record. Because the id hashes the counts only, a changed digest
with the same counts (other files, same numbers) has the id of an earlier one: it is appended as the
next revision of that record (``revision`` + 1, ``createdAt`` kept), since ids are unique in a scope
file; a digest with new counts gets a new id. A session keeps at most :data:`MAX_PER_SESSION` active
auto records, archiving the oldest. Paths outside the workspace, in ``.git/``, or in a storage root
are ignored; lists are bounded (:data:`MAX_LISTED` paths per line, :data:`MAX_TRACKED` per kind) so
an event storm still gives one bounded record. Nothing here imports pygls: the debounce lives in
``mnemon_ls/lsp/records.py``.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Iterable

from .model import MemoryRecord, content_hash, validate_record
from .paths import scope_key_hash
from .service import RecordsSource

#: Active auto records one session keeps (seed: 6); the oldest is archived beyond it.
MAX_PER_SESSION = 6
#: Paths printed per line of the digest (the rest is counted: "... and N more").
MAX_LISTED = 20
#: Paths remembered per kind (created/modified/deleted); beyond it they are counted only.
MAX_TRACKED = 10_000
#: Debounce of the auto-writer per session, milliseconds (seed: 500).
DEBOUNCE_MS = 500
TITLE = "Session workspace digest (auto)"
NOTE = "workspace auto-writer"


class SessionFiles:
    """The files one session touched, relative to ``workspace`` (POSIX separators).

    ``ignored`` are directories whose files never count (storage roots, ``<workspace>/.dsh``). A file
    created and then deleted in the same session counts as neither; a created file that is saved stays
    created; a deleted file that comes back is modified.
    """

    def __init__(self, workspace: Path, ignored: Iterable[Path] = ()) -> None:
        self.workspace = Path(os.path.realpath(workspace))
        self.ignored = [Path(os.path.realpath(p)) for p in ignored]
        self.created: dict[str, None] = {}
        self.modified: dict[str, None] = {}
        self.deleted: dict[str, None] = {}
        self.overflow = {"created": 0, "modified": 0, "deleted": 0}
        self.event_seq = 0

    def relative(self, path: Path) -> str | None:
        """``path`` relative to the workspace, or ``None`` when it is ignored (outside, ``.git/``, a root)."""
        real = Path(os.path.realpath(path))
        if real == self.workspace or self.workspace not in real.parents:
            return None
        if any(real == root or root in real.parents for root in self.ignored):
            return None
        rel = real.relative_to(self.workspace)
        if ".git" in rel.parts:
            return None
        return rel.as_posix()

    def observe(self, kind: str, path: Path) -> bool:
        """Record one event (``created``, ``modified`` or ``deleted``); ``True`` when it counted."""
        rel = self.relative(path)
        if rel is None:
            return False
        self.event_seq += 1
        if kind == "created":
            if rel in self.deleted:
                self.deleted.pop(rel)
                self._add(self.modified, "modified", rel)
            elif rel not in self.modified:
                self._add(self.created, "created", rel)
        elif kind == "modified":
            if rel not in self.created:
                self.deleted.pop(rel, None)
                self._add(self.modified, "modified", rel)
        elif kind == "deleted":
            if rel in self.created:
                self.created.pop(rel)
            else:
                self.modified.pop(rel, None)
                self._add(self.deleted, "deleted", rel)
        else:
            raise ValueError(f"kind must be created, modified or deleted (got {kind!r})")
        return True

    def rename(self, old: Path, new: Path) -> bool:
        """A rename: the old path deleted, the new one created. ``True`` when either side counted."""
        a = self.observe("deleted", old)
        b = self.observe("created", new)
        return a or b

    def _add(self, bucket: dict[str, None], kind: str, rel: str) -> None:
        if rel in bucket:
            return
        if len(bucket) >= MAX_TRACKED:
            self.overflow[kind] += 1
            return
        bucket[rel] = None

    def counts(self) -> dict[str, int]:
        """``{created, modified, deleted, artifacts}`` (artifacts: the files this session created)."""
        created = len(self.created) + self.overflow["created"]
        return {"created": created, "modified": len(self.modified) + self.overflow["modified"],
                "deleted": len(self.deleted) + self.overflow["deleted"], "artifacts": created}

    def digest(self) -> tuple[str, str] | None:
        """``(content, digestKey)`` of the session so far, or ``None`` when nothing was touched."""
        c = self.counts()
        total = c["created"] + c["modified"] + c["deleted"]
        if total == 0:
            return None
        lines = [f"Files touched: {total} ({c['created']} created, {c['modified']} modified, {c['deleted']} deleted)"]
        for label, bucket, n in (("Created", self.created, c["created"]), ("Modified", self.modified, c["modified"]),
                                 ("Deleted", self.deleted, c["deleted"])):
            if n:
                lines.append(f"{label}: {_listing(bucket, n)}")
        if c["artifacts"]:
            lines.append(f"Artifacts: {c['artifacts']} — {_listing(self.created, c['artifacts'])}")
        key = hashlib.sha256(f"{c['created']}/{c['modified']}/{c['deleted']}/{c['artifacts']}".encode()).hexdigest()
        return "\n".join(lines), key[:24]


def _listing(bucket: dict[str, None], total: int) -> str:
    shown = list(bucket)[:MAX_LISTED]
    text = ", ".join(shown)
    if total > len(shown):
        text += f" … and {total - len(shown)} more"
    return text


def auto_id(scope_key: str, digest_key: str) -> str:
    """``memory:auto:fact:<scopeKeyHash16>:<digestKey24>``."""
    return f"memory:auto:fact:{scope_key_hash(scope_key)[:16]}:{digest_key[:24]}"


def write_digest(source: RecordsSource, files: SessionFiles) -> dict[str, object] | None:
    """Write the session's digest into ``source``'s session scope (one locked append at most).

    Returns ``None`` when nothing was touched, else ``{status: committed|merged, id, archived: [ids]}``.
    Raises what the store raises (the caller reports it and never interrupts the session).
    """
    made = files.digest()
    if made is None:
        return None
    return write_made_digest(source, made[0], made[1], files.event_seq)


def write_made_digest(source: RecordsSource, content: str, digest_key: str, event_seq: int) -> dict[str, object]:
    """:func:`write_digest` from an already rendered digest (``content``, ``digest_key``) and the
    session's event count (the language server renders on its loop and writes from a worker thread)."""
    location = source.location("session")
    record_id = auto_id(location.scope_key, digest_key)
    prefix = record_id.rsplit(":", 1)[0] + ":"
    digest_hash = content_hash(content)
    result: dict[str, object] = {"status": "merged", "id": record_id, "archived": []}

    def apply(current: dict[str, MemoryRecord]) -> list[MemoryRecord]:
        mine = [r for r in current.values() if r.scope_key == location.scope_key and r.id.startswith(prefix)]
        if any(r.type == "fact" and r.content_hash == digest_hash and r.status == "active" for r in mine):
            return []  # identical digest: merged by (type, contentHash), no new line
        now = source._clock()
        previous = current.get(record_id)
        session = source.session_id or ""
        data = {
            "schemaVersion": 1, "id": record_id, "scope": "session", "scopeKey": location.scope_key,
            "type": "fact", "title": TITLE, "content": content, "tags": [],
            "provenance": {"kind": "tool", "sessionId": session, "eventSeq": event_seq, "note": NOTE},
            "createdAt": previous.created_at if previous else now,
            "updatedAt": max(now, previous.updated_at) if previous else now, "useCount": 0,
            "contentHash": digest_hash, "status": "active",
            "governance": {"origin": "derived",
                           "sourceRefs": [{"kind": "session", "id": session}, {"kind": "event", "id": str(event_seq)}],
                           "verification": "unverified",
                           "revision": previous.governance.revision + 1 if previous else 1,
                           "retention": "session-end"}}
        out = [validate_record(data)]
        active = [r for r in mine if r.status == "active" and r.id != record_id]
        active.sort(key=lambda r: (r.created_at, r.id))
        while len(active) + 1 > MAX_PER_SESSION:
            oldest = active.pop(0)
            archived = oldest.to_json() | {"status": "archived", "updatedAt": max(now, oldest.updated_at)}
            out.append(validate_record(archived))
            result["archived"].append(oldest.id)  # type: ignore[union-attr]
        result["status"] = "committed"
        return out

    source.store("session").update(apply)
    return result
