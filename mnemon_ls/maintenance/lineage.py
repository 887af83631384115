"""Lineage of capacity maintenance: ``runtime/archived/lineage.jsonl``, one JSON line per archived fact.

Format (issue 9; the record shape of reference/dsh-mnemon.md section 4.2 "Lineage", persisted here)::

    {"kind": "mnemon-archive" | "local-archive" | ...,       # the maintenance kind that moved it
     "runId": "<uuid4 hex>",                                 # one maintenance run
     "archivedAt": "<ISO 8601 UTC, ms>",
     "source": {"layerId": "runtime", "reference": "runtime:<planRevision>:memory:<index 1-based>",
                "digest": "<sha256 hex of JSON {content, importance[, branches]}>"},
     "destination": {"layerId": "memory-spaces", "reference": "memory-space:<enc(id)>/item:<enc(itemId)>",
                     "digest": "<sha256 hex of the content>"}
                  | {"layerId": "runtime-archive", "reference": "runtime/archived/memories.jsonl",
                     "digest": "<sha256 hex of the content>"},
     "summary": "<the content, cut to 200 characters>", "bytes": <UTF-8 bytes of the content>}

``enc`` is JavaScript's ``encodeURIComponent`` (what the TypeScript plugin puts in its references). The
JSON digested for ``source.digest`` is compact (no spaces), keys in that order, non-ASCII unescaped (as
JavaScript's ``JSON.stringify`` writes it); ``branches`` only when non-empty.

Lines are appended durably (fsync) before the Runtime commit that removes the fact from hot memory, so
a crash can leave a line for a fact that is still in hot memory (harmless; :func:`read_lineage` readers
compare with hot memory when they need to), never a removed fact without its line. A torn last line (a
crash during the append) is skipped and counted, never rewritten.

Other Sources' maintenance (Documents cold archival) may reuse :class:`LineageRecord` with their own
``layerId``/``reference`` values and their own file.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from .. import fsio
from ..linefile import after_torn_line
from ..findings import Finding

if TYPE_CHECKING:
    from ..spaces import SpacesService

#: Where the Runtime lineage lives, relative to the storage root.
LINEAGE_PATH = ("runtime", "archived", "lineage.jsonl")
#: The local archive's truth file, relative to the storage root (written by the Runtime store).
LOCAL_ARCHIVE_REFERENCE = "runtime/archived/memories.jsonl"
#: Characters ``encodeURIComponent`` leaves alone besides letters and digits.
_URI_SAFE = "-_.!~*'()"
SUMMARY_CHARS = 200


def encode_component(text: str) -> str:
    """JavaScript ``encodeURIComponent(text)`` (UTF-8 percent-encoding)."""
    from urllib.parse import quote

    return quote(text, safe=_URI_SAFE)


def sha256_hex(text: str) -> str:
    """sha256 hex of the UTF-8 bytes of ``text``."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def entry_digest(content: str, importance: str, branches: Sequence[str] = ()) -> str:
    """``source.digest``: sha256 hex of compact JSON ``{content, importance[, branches]}`` (module doc)."""
    doc: dict[str, Any] = {"content": content, "importance": importance}
    if branches:
        doc["branches"] = list(branches)
    return sha256_hex(json.dumps(doc, ensure_ascii=False, separators=(",", ":")))


def runtime_reference(plan_revision: str, index: int, target: str = "memory") -> str:
    """``runtime:<planRevision>:<target>:<index>`` (``index`` 1-based in the plan's entries)."""
    return f"runtime:{plan_revision}:{target}:{index}"


def space_reference(space_id: str, item_id: str) -> str:
    """``memory-space:<enc(space id)>/item:<enc(item id)>``."""
    return f"memory-space:{encode_component(space_id)}/item:{encode_component(item_id)}"


def parse_space_reference(reference: str) -> tuple[str, str] | None:
    """``(space id, item id)`` of a :func:`space_reference`, or ``None`` when it is not one."""
    if not reference.startswith("memory-space:") or "/item:" not in reference:
        return None
    space, _, item = reference[len("memory-space:"):].partition("/item:")
    if not space or not item:
        return None
    from urllib.parse import unquote

    return unquote(space), unquote(item)


@dataclass(frozen=True, slots=True)
class LineageEnd:
    """One end of a lineage record: ``layer_id`` (``runtime``, ``memory-spaces``, ``runtime-archive``,
    ``documents``), ``reference`` (module doc) and ``digest`` (sha256 hex)."""

    layer_id: str
    reference: str
    digest: str

    def to_dict(self) -> dict[str, str]:
        """``{layerId, reference, digest}``."""
        return {"layerId": self.layer_id, "reference": self.reference, "digest": self.digest}

    @classmethod
    def from_dict(cls, raw: Any) -> "LineageEnd":
        """Parse ``{layerId, reference, digest}``; raises :class:`ValueError` naming the missing key."""
        if not isinstance(raw, dict):
            raise ValueError("must be an object")
        values = []
        for key in ("layerId", "reference", "digest"):
            value = raw.get(key)
            if not isinstance(value, str) or not value:
                raise ValueError(f"{key} must be a non-empty string")
            values.append(value)
        return cls(*values)


@dataclass(frozen=True, slots=True)
class LineageRecord:
    """One archived fact: where it came from and where it went (one line of ``lineage.jsonl``)."""

    kind: str
    run_id: str
    archived_at: str
    source: LineageEnd
    destination: LineageEnd
    summary: str = ""
    bytes: int = 0

    def to_dict(self) -> dict[str, Any]:
        """The JSON line's object (module doc)."""
        return {"kind": self.kind, "runId": self.run_id, "archivedAt": self.archived_at,
                "source": self.source.to_dict(), "destination": self.destination.to_dict(),
                "summary": self.summary, "bytes": self.bytes}

    @classmethod
    def from_dict(cls, raw: Any) -> "LineageRecord":
        """Parse one line's object; raises :class:`ValueError` saying which key is wrong."""
        if not isinstance(raw, dict):
            raise ValueError("must be an object")
        for key in ("kind", "runId", "archivedAt"):
            if not isinstance(raw.get(key), str):
                raise ValueError(f"{key} must be a string")
        try:
            source = LineageEnd.from_dict(raw.get("source"))
            destination = LineageEnd.from_dict(raw.get("destination"))
        except ValueError as exc:
            raise ValueError(f"source/destination: {exc}") from None
        size = raw.get("bytes", 0)
        return cls(raw["kind"], raw["runId"], raw["archivedAt"], source, destination,
                   str(raw.get("summary") or ""), size if isinstance(size, int) and not isinstance(size, bool) else 0)

    @property
    def space_item(self) -> tuple[str, str] | None:
        """``(space id, item id)`` when the destination is a Memory Space item."""
        if self.destination.layer_id != "memory-spaces":
            return None
        return parse_space_reference(self.destination.reference)


@dataclass(slots=True)
class LineageLog:
    """What :func:`read_lineage` found: ``records`` in file order and ``damaged`` (1-based line numbers
    that did not parse; a torn last line after a crash is one)."""

    records: list[LineageRecord] = field(default_factory=list)
    damaged: list[int] = field(default_factory=list)


def lineage_path(root: Path) -> Path:
    """``<root>/runtime/archived/lineage.jsonl``."""
    return Path(root).joinpath(*LINEAGE_PATH)


def append_lineage(root: Path, records: Iterable[LineageRecord]) -> None:
    """Append ``records`` to the root's lineage file durably (one write + fsync; 0600, directories 0700).

    Raises :class:`~mnemon_ls.errors.StorageError` naming the file. A previous torn line (no final
    newline) is closed first so the new lines stay parseable."""
    lines = "".join(json.dumps(r.to_dict(), ensure_ascii=False, separators=(",", ":")) + "\n" for r in records)
    if not lines:
        return
    path = lineage_path(root)
    fsio.ensure_dir(path.parent)
    fsio.append_file_durably(path, after_torn_line(path, lines.encode("utf-8")))


def read_lineage(root: Path) -> LineageLog:
    """Every lineage line of the root (missing file: empty). Never writes; raises
    :class:`~mnemon_ls.errors.StorageError` only for an unreadable file."""
    data = fsio.read_bytes_or_none(lineage_path(root))
    log = LineageLog()
    if not data:
        return log
    for number, line in enumerate(data.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            log.records.append(LineageRecord.from_dict(json.loads(line.decode("utf-8"))))
        except (ValueError, UnicodeDecodeError):
            log.damaged.append(number)
    return log


def count_archived(root: Path) -> tuple[int, int]:
    """``(lines into Memory Spaces, lines into the local archive)`` of the root's lineage, counted from
    the raw bytes without parsing (the wake header reads it every turn; lines are written compactly by
    :func:`append_lineage`). Missing file: ``(0, 0)`` (one ``lstat``: nothing is read, so no directory needs
    checking). The counts of a file read before are given again while its stat signature
    (:mod:`mnemon_ls.statsig`) is the same."""
    path = os.path.join(root, *LINEAGE_PATH)
    try:
        os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return 0, 0
    except OSError:
        pass  # the read says what is wrong
    from .. import statsig

    signature = statsig.signature((path,), checked_dir=os.path.dirname(path))
    kept = _counted.get(path)
    if signature is not None and kept is not None and kept[0] == signature:
        return kept[1]
    data = fsio.read_bytes_or_none(path)
    counts = (0, 0) if not data else (data.count(b'"destination":{"layerId":"memory-spaces"'),
                                      data.count(b'"destination":{"layerId":"runtime-archive"'))
    if signature is not None:
        if len(_counted) > 64:
            _counted.clear()
        _counted[path] = (signature, counts)
    return counts


#: Lineage path -> (stat signature, counts) of :func:`count_archived`'s last read.
_counted: dict[str, tuple[Any, tuple[int, int]]] = {}


def local_archive_digests(root: Path) -> set[str]:
    """sha256 hex of the content of every entry in ``runtime/archived/memories.jsonl`` (unparseable lines
    are skipped)."""
    data = fsio.read_bytes_or_none(Path(root).joinpath(*LOCAL_ARCHIVE_REFERENCE.split("/")))
    digests: set[str] = set()
    for line in (data or b"").split(b"\n"):
        try:
            content = json.loads(line.decode("utf-8")).get("content")
        except (ValueError, UnicodeDecodeError, AttributeError):
            continue
        if isinstance(content, str):
            digests.add(sha256_hex(content))
    return digests


def verify_lineage(root: Path, spaces: "SpacesService | None", *, third_party: bool = True) -> list[Finding]:
    """Doctor check: every lineage destination still exists (read-only).

    A space item is looked up by exact id (:meth:`SpacesService.get_item`) and its content's sha256
    compared with ``destination.digest``; a local-archive destination must have an entry with that
    digest in ``runtime/archived/memories.jsonl``. Returns one ``ok`` finding when all are found (or
    nothing when there is no lineage), else one ``problem`` per missing destination (at most 20, then
    a count) and a ``warning`` for damaged lines. ``spaces`` ``None``: space destinations are reported
    as unverifiable. ``third_party`` ``False`` leaves destinations in third-party spaces unchecked (their
    engines are not opened; one ``ok`` finding counts them)."""
    log = read_lineage(root)
    subject = str(lineage_path(root))
    if not log.records and not log.damaged:
        return []
    findings: list[Finding] = []
    missing: list[str] = []
    unverifiable: list[str] = []
    unchecked = 0
    local: set[str] | None = None
    for record in log.records:
        dest = record.destination
        if dest.layer_id == "runtime-archive":
            if local is None:
                local = local_archive_digests(root)
            if dest.digest not in local:
                missing.append(f"{record.source.reference} -> {dest.reference} (no entry with sha256 "
                               f"{dest.digest[:12]})")
            continue
        target = record.space_item
        if target is None:
            continue  # another layer's record: verified by its own Source
        space_id, item_id = target
        if spaces is None:
            missing.append(f"{record.source.reference} -> {dest.reference} (Memory Spaces unavailable)")
            continue
        if not third_party:
            space = _space_record(spaces, space_id)
            if space is not None and not space.native:
                unchecked += 1
                continue
        try:
            item = spaces.get_item(space_id, item_id)
        except Exception as exc:  # an unknown space, an unavailable provider: all mean "not found now"
            missing.append(f"{record.source.reference} -> {dest.reference} ({getattr(exc, 'message', exc)})")
            continue
        if item is None and not _exact_lookup(spaces, space_id):
            unverifiable.append(f"{record.source.reference} -> {dest.reference}")
        elif item is None:
            missing.append(f"{record.source.reference} -> {dest.reference} (the item is gone)")
        elif sha256_hex(item.content) != dest.digest:
            missing.append(f"{record.source.reference} -> {dest.reference} (the item's content changed)")
    for line in missing[:20]:
        findings.append(Finding("problem", subject, f"archived fact not found at its destination: {line}",
                                "restore the space from a pack, or re-add the fact (`mnemon-ls runtime archived` "
                                "shows it)"))
    if unverifiable:
        findings.append(Finding("warning", subject,
                                f"{_facts(len(unverifiable))} {'is' if len(unverifiable) == 1 else 'are'} in spaces "
                                "whose provider cannot look an item up by id, so they were not verified (e.g. "
                                f"{unverifiable[0]})", "recall them to check (`mnemon-ls runtime archived` "
                                "shows each)"))
    if len(missing) > 20:
        findings.append(Finding("problem", subject, f"{len(missing) - 20} more archived facts not found"))
    if log.damaged:
        findings.append(Finding("warning", subject, f"{len(log.damaged)} lineage lines do not parse (lines "
                                f"{', '.join(map(str, log.damaged[:5]))}); they are skipped",
                                "a crash during an append leaves a torn last line; it is harmless"))
    if unchecked:
        findings.append(Finding("ok", subject,
                                f"{_facts(unchecked)} {'is' if unchecked == 1 else 'are'} in third-party spaces and "
                                "were not checked (their engines are not opened)",
                                "`mnemon-ls doctor --providers` checks them"))
    if not missing and not unverifiable:
        checked = len(log.records) - unchecked
        findings.append(Finding("ok", subject, f"{_facts(checked)}, every destination found"))
    return findings


def _space_record(spaces: Any, space_id: str) -> Any:
    """The registered space ``space_id`` of ``spaces`` or ``None`` (an unreadable registry included)."""
    try:
        return spaces.state().find(space_id)
    except Exception:  # noqa: BLE001 - doctor reports, never fails on a broken registry
        return None


def _exact_lookup(spaces: Any, space_id: str) -> bool:
    """Whether ``spaces`` can look items of ``space_id`` up by id (a provider without it is not proof of loss)."""
    try:
        return bool(spaces.has_exact_lookup(space_id))
    except Exception:
        return True


def _facts(count: int) -> str:
    """``"1 archived fact"`` / ``"<n> archived facts"``."""
    return f"{count} archived fact" if count == 1 else f"{count} archived facts"
