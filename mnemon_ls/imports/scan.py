"""An editor's import (issue 28 item 2): every source at once, then the items a person picked.

:func:`scan` reads the default places of every source format (:data:`.sources.SOURCE_NAMES`: the workspace
and the home directory) and decides their items in one :class:`.plan.Router`, as one plan: an item CLAUDE.md
and AGENTS.md both hold is a duplicate the second time, and the runtime budget is shared. It answers, per
source found, its files, the files refused and every item: a stable ``id``, where it would go and why, and
``skip`` (why it would be skipped: already imported, rejected in review, a duplicate) or ``null``. The answer's
``fingerprint`` is the sha256 of the files read; the scan keeps their digests under it
(``state/import-plans/scans.json``, the last :data:`MAX_SAVED_SCANS` scans), as the dry run keeps its own.

:func:`apply` imports the items whose ids a person picked. Under the imports lock it reads every source again,
and refuses with nothing written: a ``fingerprint`` that is not the files' now (``revision-conflict`` naming the
file that changed, appeared or went away since the scan, from the digests kept; ``invalid-input`` naming
``fingerprint`` when no scan kept them), an id that is no item of the scan (``invalid-input`` naming ``ids[i]``)
or named twice, and items that need a Memory Space when there is none. Then it decides the picked items alone,
in scan order (so where an item goes is decided among what was picked: a duplicate of an item left unpicked is
imported, a duplicate of memory or of an earlier import stays skipped and the receipt says why), and writes
each through :func:`.plan.write_item` (the Sources' write paths, then the ledger).

An item's ``id`` is 16 hex of sha256 of its source, file path, ledger key (:func:`.ledger.item_key` of the
redacted text) and how many items of that file before it had the same key: equal from scan to scan while the
file says the same thing.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from .. import fsio
from ..errors import InvalidInput, RevisionConflict, echo_repr
from ..runtime.model import utf8_len
from . import classify, ledger, plan, sources
from .reading import Item

if TYPE_CHECKING:
    from ..host import WorkspaceHost

#: How many scans keep their file digests (a person may scan in two windows before picking in one).
MAX_SAVED_SCANS = 8
#: The longest ``preview`` of an item, in characters.
PREVIEW_CHARS = 100
#: What each source is called in an editor.
SOURCE_TITLES = {"claude-code": "Claude Code", "agents-md": "AGENTS.md", "cursor": "Cursor",
                 "copilot": "GitHub Copilot", "cline": "Cline / Roo memory bank", "hermes": "Hermes"}
_AGAIN = "scan again"


def scans_path(host: "WorkspaceHost") -> Path:
    """``<root>/state/import-plans/scans.json``."""
    return host.root / "state" / "import-plans" / "scans.json"


def fingerprint_of(files: list[dict[str, Any]]) -> str:
    """sha256 hex of the files read (``[{source, path, sha256}]``), in a canonical order."""
    rows = sorted([f["source"], f["path"], f["sha256"]] for f in files)
    return hashlib.sha256(json.dumps(rows, separators=(",", ":")).encode("utf-8")).hexdigest()


def preview(text: str) -> str:
    """``text`` on one line (whitespace runs become one space), at most :data:`PREVIEW_CHARS` characters."""
    line = " ".join(text.split())
    return line if len(line) <= PREVIEW_CHARS else line[:PREVIEW_CHARS - 1] + "…"


class _Scanned:
    """Every source's :class:`.found.Found` and the ids of their items (module doc)."""

    def __init__(self, host: "WorkspaceHost", env: Mapping[str, str] | None, allow_outside: bool = False) -> None:
        self.found = [(name, plan.find(host, name, env=env, allow_outside=allow_outside))
                      for name in sources.SOURCE_NAMES]
        self.found = [(name, f) for name, f in self.found if f.files or f.refused or f.needs_approval]
        self.files = [{"source": name, **f} for name, found in self.found for f in found.files]
        self.fingerprint = fingerprint_of(self.files)
        #: ``(source, item, id, cleaned text)`` of every item with text left after redaction, in order.
        self.items: list[tuple[str, Item, str, tuple[str, list[str]]]] = []
        for name, found in self.found:
            seen: dict[tuple[str, str], int] = {}
            for raw in found.items:
                cleaned = plan.clean(raw)
                if cleaned is None:
                    continue
                key = ledger.item_key(cleaned[0])
                n = seen.get((raw.path, key), 0)
                seen[(raw.path, key)] = n + 1
                digest = hashlib.sha256("\0".join(("import-item", name, raw.path, key, str(n))).encode("utf-8"))
                self.items.append((name, raw, digest.hexdigest()[:16], cleaned))


def scan(host: "WorkspaceHost", *, space_id: str | None = None, env: Mapping[str, str] | None = None,
         allow_outside: bool = False) -> dict[str, Any]:
    """Scan every source (module doc). Returns ``{fingerprint, sources: [{source, title, files: [{path, sha256,
    bytes, importedBy?}], refused: [{path, reason}], needsApproval: [{path, reason, importedBy}] (imported files
    outside the repository and the Claude home, read only with ``allow_outside``: :mod:`.outside`), items: [{id,
    path, title, destination: user|memory|document|space, reason, bytes, text, preview, redacted: [kind], skip:
    {why, of} | null, refusal: {code, field, rule} | null (known up front to be refused: :class:`~.plan.Decision`),
    refusedBefore: ISO 8601 | null}]}], counts: {user,
    memory, document, space, alreadyImported, exactDuplicates, nearDuplicates, rejected, temporaryProgress,
    refusedItems,
    refusedFiles, items}, spaceId,
    spaceProblem}`` (``counts``: what importing every item not skipped would write). Raises
    :class:`InvalidInput` naming ``workspace`` (none) or ``spaceId`` (no such space)."""
    with plan.imports_lock(host):
        scanned = _Scanned(host, env, allow_outside)
        router = plan.Router(host, space_id)
        by_source: dict[str, list[dict[str, Any]]] = {name: [] for name, _ in scanned.found}
        for name, raw, item_id, cleaned in scanned.items:
            decided = router.decide(raw, cleaned, source=name)
            destination, reason = (decided.destination, decided.reason) if decided.skip is None else classify.route(raw)
            by_source[name].append({"id": item_id, "path": raw.path, "title": raw.title, "destination": destination,
                                    "reason": reason, "bytes": utf8_len(decided.text), "text": decided.text,
                                    "preview": preview(decided.text), "redacted": decided.redacted,
                                    "skip": decided.skip, "refusal": decided.refusal,
                                    "refusedBefore": decided.refused_before})
        _keep(host, scanned)
    refused = sum(len(found.refused) for _, found in scanned.found)
    counts = {**router.counts, "refusedFiles": refused, "items": len(scanned.items)}
    return {"fingerprint": scanned.fingerprint,
            "sources": [{"source": name, "title": SOURCE_TITLES[name], "files": found.files, "refused": found.refused,
                         "needsApproval": found.needs_approval, "items": by_source[name]}
                        for name, found in scanned.found],
            "counts": counts, "spaceId": router.space_id,
            "spaceProblem": router.space_problem if counts["space"] else None}


def _keep(host: "WorkspaceHost", scanned: _Scanned) -> None:
    """Keep the scan's file digests under its fingerprint (the last :data:`MAX_SAVED_SCANS`)."""
    kept = [s for s in _saved(host) if s.get("fingerprint") != scanned.fingerprint]
    kept.append({"fingerprint": scanned.fingerprint,
                 "files": [{"source": f["source"], "path": f["path"], "sha256": f["sha256"]} for f in scanned.files]})
    path = scans_path(host)
    fsio.ensure_dir(path.parent)
    data = {"version": 1, "scans": kept[-MAX_SAVED_SCANS:]}
    fsio.write_file_atomically(path, json.dumps(data, indent=2).encode("utf-8") + b"\n")


def _saved(host: "WorkspaceHost") -> list[dict[str, Any]]:
    """The scans kept (an unreadable file keeps none)."""
    try:
        scans = json.loads(fsio.read_bytes_or_none(scans_path(host)) or b"{}").get("scans")
    except (ValueError, AttributeError):
        return []
    if not isinstance(scans, list):
        return []
    return [s for s in scans if isinstance(s, dict) and isinstance(s.get("files"), list)]


def apply(host: "WorkspaceHost", ids: list[str], fingerprint: str, *, space_id: str | None = None,
          env: Mapping[str, str] | None = None, allow_outside: bool = False) -> dict[str, Any]:
    """Import the picked items (module doc). Returns ``{applied: [{id, source, path, title, destination, ref}],
    skipped: [{id, source, path, title, why, of}], refusedItems: [{id, source, path, title, destination, code,
    field, rule}] (refused by their Source, recorded as refused: :func:`~.plan.write_or_refuse`; the others are
    still written), status: imported|partly-imported|refused, counts: {written, user, memory, document, space,
    skipped, refusedItems}, spaceId}``. Raises :class:`RevisionConflict` (a file changed since the scan),
    :class:`InvalidInput` naming ``fingerprint``, ``ids[i]`` or ``spaceId``, and the Sources' errors of a write (the
    items before it stay
    written and are in the ledger: a second import skips them)."""
    # bad input is refused before the lock writes its marker under state/
    _checked(host, ids, fingerprint, env, allow_outside)
    with plan.imports_lock(host):
        scanned, known = _checked(host, ids, fingerprint, env, allow_outside)  # again: a file may have changed
        router = plan.Router(host, space_id)
        planned, skipped = [], []
        for name, raw, item_id, cleaned in (scanned.items[i] for i in sorted(known[x] for x in ids)):
            decided = router.decide(raw, cleaned, source=name)
            row = {"id": item_id, "source": name, "path": raw.path, "title": raw.title}
            if decided.skip is not None:
                skipped.append({**row, **decided.skip})
            else:
                planned.append((row, {"path": raw.path, "title": raw.title, "destination": decided.destination,
                                      "text": decided.text, "key": decided.key,
                                      "bareKey": decided.bare_key}))
        if router.counts["space"] and router.space_id is None:
            raise InvalidInput("spaceId", f"{router.counts['space']} picked item(s) go to a Memory Space, but "
                               f"{router.space_problem}; nothing was imported")
        digests = {f["path"]: f["sha256"] for f in scanned.files}
        applied, refused = [], []
        for row, item in planned:
            ref, refusal = plan.write_or_refuse(host, row["source"], router.space_id, item, digests.get(item["path"]))
            if refusal is not None:
                refused.append({**row, "destination": item["destination"], **refusal})
            else:
                applied.append({**row, "destination": item["destination"], "ref": ref})
    counts = {"written": len(applied), **{t: sum(a["destination"] == t for a in applied)
                                          for t in ("user", "memory", "document", "space")}, "skipped": len(skipped),
              "refusedItems": len(refused)}
    return {"applied": applied, "skipped": skipped, "refusedItems": refused,
            "status": plan.import_status(applied, refused), "counts": counts, "spaceId": router.space_id}


def _checked(host: "WorkspaceHost", ids: list[str], fingerprint: str, env: Mapping[str, str] | None,
             allow_outside: bool = False) -> tuple[_Scanned, dict[str, int]]:
    """The scan of the files as they are now and ``{item id: its index in scanned.items}``, after the checks of
    :func:`apply`'s request (reads only): ``fingerprint`` is the files' (:func:`_refuse_changed` otherwise), no file
    changed while read, each of ``ids`` is an item of the scan, named once. Raises as :func:`apply` documents."""
    scanned = _Scanned(host, env, allow_outside)
    if scanned.fingerprint != fingerprint:
        _refuse_changed(host, scanned, fingerprint)
    plan.check_unchanged(scanned.files, scanned.files, "it was read", _AGAIN)
    known = {item_id: i for i, (_, _, item_id, _) in enumerate(scanned.items)}
    first: dict[str, int] = {}
    for i, item_id in enumerate(ids):
        if item_id not in known:
            raise InvalidInput(f"ids[{i}]", f"is not an item of the scan ({echo_repr(item_id)}); nothing "
                                            f"was imported: {_AGAIN}")
        if item_id in first:
            raise InvalidInput(f"ids[{i}]", f"names the same item as ids[{first[item_id]}]; nothing was imported")
        first[item_id] = i
    return scanned, known


def _refuse_changed(host: "WorkspaceHost", scanned: _Scanned, fingerprint: str) -> None:
    """Raise for a ``fingerprint`` that is not the files' now: the file that changed since that scan, or
    ``invalid-input`` when no scan with it was kept."""
    kept = next((s for s in _saved(host) if s.get("fingerprint") == fingerprint), None)
    if kept is not None:
        try:
            plan.check_unchanged(kept["files"], scanned.files, "the scan", _AGAIN)
        except RevisionConflict as exc:
            raise RevisionConflict(f"fingerprint: {exc.message}", field="fingerprint", **exc.data) from None
    raise InvalidInput("fingerprint", "is not the fingerprint of the files as they are now, nor of a recent scan of "
                       f"them; nothing was imported: {_AGAIN}")
