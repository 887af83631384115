"""Entries an interrupted archival left in MEMORY.md *and* at their destination (``mnemon-ls doctor``,
``mnemon-ls runtime archived --finish``).

An archival writes each evicted entry to its destination (a Memory Space item, or the local archive),
appends its lineage line durably, then commits MEMORY.md without it (:mod:`.runtime`). A process killed
after the lineage append and before that commit leaves the entry in both places: nothing is lost, but
the fact is twice in the assistant's context (hot memory and recall). Such an entry is recognised by its
lineage line: the line's ``source.digest`` is the entry's (content, importance, branches) and the entry
was created before the line was written (an entry added again later, on purpose, is not a leftover).

:func:`find_leftovers` (read-only) lists them and verifies each destination: the space item still
exists with exactly the entry's content (or the local archive holds that content). :func:`doctor_findings`
words them for ``doctor``. :func:`finish_interrupted` removes the verified ones from MEMORY.md in one
commit, fenced by the revision read, and checks every destination again under the Runtime lock right
before the commit; an entry whose copy cannot be verified stays.

A kill *before* the lineage append leaves no line: its destination copy is a harmless duplicate that the
next archival of the entry recognises (a ``skipped`` write with an exact duplicate as evidence).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from ..errors import MaintenanceFailed
from ..findings import Finding
from ..runtime.model import Entry, parse_timestamp_ms
from . import lineage as lineage_mod
from .lineage import LineageRecord

if TYPE_CHECKING:
    from ..runtime.source import RuntimeSource
    from ..spaces import SpacesService

#: Entries a doctor finding quotes (60 characters each); the rest are counted.
SHOWN = 5
KEPT = "MEMORY.md unchanged"


@dataclass(frozen=True, slots=True)
class Leftover:
    """One hot ``entry`` that the lineage ``record`` says an archival already moved: ``where`` its copy is
    (words), ``verified`` whether that copy exists with exactly the entry's content, else ``reason``."""

    entry: Entry
    record: LineageRecord
    where: str
    verified: bool
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        """``{content, archivedAt, destination, where, verified, reason}``."""
        return {"content": self.entry.content, "archivedAt": self.record.archived_at,
                "destination": self.record.destination.to_dict(), "where": self.where, "verified": self.verified,
                "reason": self.reason}


def _before(created_at: str, archived_at: str) -> bool:
    """Whether the entry existed when the line was written (an unreadable stamp does not rule it out)."""
    created, archived = parse_timestamp_ms(created_at), parse_timestamp_ms(archived_at)
    return created is None or archived is None or created <= archived


def _space_label(spaces: "SpacesService | None", space_id: str) -> tuple[str, Any]:
    """``(Memory Space <name> (id <id>), record or None)``."""
    try:
        record = spaces.state().find(space_id) if spaces is not None else None
    except Exception:  # noqa: BLE001 - doctor reports a broken registry elsewhere
        record = None
    return (f"Memory Space {record.name} (id {space_id})" if record is not None
            else f"Memory Space with id {space_id}"), record


def _verify(root: Path, record: LineageRecord, entry: Entry, spaces: "SpacesService | None",
            third_party: bool, local: dict[str, set[str]]) -> tuple[str, bool, str]:
    """``(where, verified, reason)`` of one leftover's destination (read-only; see the module doc)."""
    destination = record.destination
    if destination.layer_id == "runtime-archive":
        if "digests" not in local:
            local["digests"] = lineage_mod.local_archive_digests(root)
        found = lineage_mod.sha256_hex(entry.content) in local["digests"]
        return (f"the local archive {destination.reference}", found,
                "" if found else "the local archive holds no entry with this content")
    space_id, item_id = record.space_item or ("", "")
    where, space = _space_label(spaces, space_id)
    where = f"{where}, item {item_id}"
    if spaces is None:
        return where, False, "Memory Spaces are unavailable"
    if space is not None and not space.native and not third_party:
        return where, False, "a third-party space, not opened (`mnemon-ls doctor --providers` checks it)"
    try:
        item = spaces.get_item(space_id, item_id)
    except Exception as exc:  # noqa: BLE001 - an unknown space or a failing provider: not verified
        return where, False, str(getattr(exc, "message", exc))
    if item is None:
        return where, False, "the item is gone"
    if item.content != entry.content:
        return where, False, "the item's content differs from the entry's"
    return where, True, ""


def find_leftovers(root: Path, entries: Sequence[Entry], spaces: "SpacesService | None", *,
                   third_party: bool = True) -> list[Leftover]:
    """The entries of ``entries`` (MEMORY.md's, as read) that a lineage line of ``root`` says an archival
    already moved (module doc), each with its destination verified. ``third_party`` ``False`` leaves a
    third-party space unopened (the entry is then not verified). Newest line first wins; each entry is
    listed once, in stored order. Never writes."""
    log = lineage_mod.read_lineage(Path(root))
    hot = [e for e in entries if e.target == "memory" and e.problem is None]
    if not log.records or not hot:
        return []
    by_digest: dict[str, list[Entry]] = {}
    for entry in hot:
        by_digest.setdefault(lineage_mod.entry_digest(entry.content, entry.importance, entry.branches),
                             []).append(entry)
    matched: dict[int, Leftover] = {}
    local: dict[str, set[str]] = {}
    for record in reversed(log.records):
        if (record.source.layer_id != "runtime"
                or record.destination.layer_id not in ("memory-spaces", "runtime-archive")):
            continue
        for entry in by_digest.get(record.source.digest, ()):
            if id(entry) in matched or not _before(entry.created_at, record.archived_at):
                continue
            where, verified, reason = _verify(Path(root), record, entry, spaces, third_party, local)
            matched[id(entry)] = Leftover(entry, record, where, verified, reason)
    return [matched[id(e)] for e in hot if id(e) in matched]


def _excerpts(leftovers: Sequence[Leftover]) -> str:
    shown = ", ".join(repr(lo.entry.content if len(lo.entry.content) <= 60 else lo.entry.content[:57] + "...")
                      for lo in leftovers[:SHOWN])
    return shown + (f" and {len(leftovers) - SHOWN} more" if len(leftovers) > SHOWN else "")


def _places(leftovers: Sequence[Leftover]) -> str:
    return ", ".join(dict.fromkeys(lo.where.partition(", item ")[0] for lo in leftovers))


def doctor_findings(root: Path, entries: Sequence[Entry], spaces: "SpacesService | None", *,
                    third_party: bool = False) -> list[Finding]:
    """``doctor`` findings (level ``warning``, subject the lineage file) for :func:`find_leftovers`: one for
    the verified entries (``runtime archived --finish`` removes their MEMORY.md copies), one for those
    whose copy could not be verified (they stay). Nothing when there is none. Never writes."""
    leftovers = find_leftovers(root, entries, spaces, third_party=third_party)
    subject = str(lineage_mod.lineage_path(Path(root)))
    findings = []
    verified = [lo for lo in leftovers if lo.verified]
    if verified:
        n = len(verified)
        one = n == 1
        findings.append(Finding(
            "warning", subject,
            f"{n} entr{'y' if one else 'ies'} of MEMORY.md {'is' if one else 'are'} also in {_places(verified)}: an "
            f"archival was interrupted after writing {'it' if one else 'them'} there and before removing "
            f"{'it' if one else 'them'} from MEMORY.md ({_excerpts(verified)})",
            "`mnemon-ls runtime archived --finish` removes the MEMORY.md cop" + ("y" if one else "ies")
            + ", each only after checking that its copy there still has exactly its content"))
    unverified = [lo for lo in leftovers if not lo.verified]
    if unverified:
        n = len(unverified)
        reasons = "; ".join(dict.fromkeys(f"{lo.where}: {lo.reason}" for lo in unverified[:SHOWN]))
        findings.append(Finding(
            "warning", subject,
            f"{n} entr{'y' if n == 1 else 'ies'} of MEMORY.md {'was' if n == 1 else 'were'} also written by an "
            f"interrupted archival, but the cop{'y' if n == 1 else 'ies'} could not be verified ({reasons}): "
            f"{_excerpts(unverified)}",
            "they stay in MEMORY.md (nothing to do); `mnemon-ls runtime archived` lists the lineage"))
    return findings


def finish_interrupted(runtime: "RuntimeSource", spaces: "SpacesService | None") -> dict[str, Any]:
    """Remove from MEMORY.md the entries an interrupted archival already moved (module doc), in one commit
    fenced by the revision read, after verifying each destination again under the Runtime lock.

    Returns ``{"removed": [Leftover.to_dict()], "kept": [Leftover.to_dict()] (copies not verified),
    "revision": str}`` (``revision`` the new one, or the unchanged one when nothing was removed). Raises
    :class:`~mnemon_ls.errors.UnreadableStore` for a damaged store, :class:`~mnemon_ls.errors.RevisionConflict`
    when another writer committed meanwhile and :class:`MaintenanceFailed` when a copy disappeared or
    changed before the commit; each leaves MEMORY.md unchanged."""
    from ..runtime import ops

    store = runtime.store_for("memory")
    state = store.read()
    root = Path(store.root)
    leftovers = find_leftovers(root, state.entries, spaces, third_party=True)
    verified = [lo for lo in leftovers if lo.verified]
    kept = [lo.to_dict() for lo in leftovers if not lo.verified]
    if not verified:
        return {"removed": [], "kept": kept, "revision": state.revision}
    dropped = {(lo.entry.content, lo.entry.created_at) for lo in verified}
    candidates = [ops.Candidate(e.content, e.importance, e.branches) for e in state.of("memory")
                  if e.problem is None and (e.content, e.created_at) not in dropped]

    def check(evicted: Sequence[Entry], revision: str) -> None:
        # under the Runtime lock, right before the commit: exactly the verified entries leave, and each
        # copy is still there with the entry's content
        leaving = {(e.content, e.created_at) for e in evicted}
        if leaving != dropped:
            raise MaintenanceFailed(f"the entries leaving MEMORY.md are not exactly the {len(dropped)} verified "
                                    f"ones; {KEPT}", reason="plan-changed", kept=KEPT)
        again = {(lo.entry.content, lo.entry.created_at): lo for lo in find_leftovers(root, evicted, spaces)}
        for key in sorted(dropped):
            fresh = again.get(key)
            if fresh is None or not fresh.verified:
                why = fresh.reason if fresh is not None else "its lineage line is gone"
                from ..redact import quoted  # an error never quotes a credential another program stored

                raise MaintenanceFailed(f"the copy of {quoted(key[0])} can no longer be verified "
                                        f"({why}); {KEPT}",
                                        reason="no-evidence", kept=KEPT)

    receipt = runtime.compact_target(state.revision, "memory", candidates, archive_locally=False,
                                     before_commit=check, verbatim=True)
    return {"removed": [lo.to_dict() for lo in verified], "kept": kept, "revision": receipt.revision}
