"""A three-way merge of records files (the git merge driver ``mnemon-ls records merge-driver %O %A %B``).

The ``shared-project`` file (``<workspace>/.dsh/workspace-memory/shared.jsonl``) is committed with the code,
and two branches that both add or change records both append lines at its end: git's line merge leaves
conflict markers there, which no reader can parse. :func:`merge` merges the three versions git hands a driver
(``base``, the common ancestor; ``ours``, the branch merged into; ``theirs``, the branch merged in) record by
record instead. A records file is an append log (:mod:`.store`): the last line of an id is the record's
current state, earlier lines are its history.

**The lines.** The result is every line of ``ours`` in its order, then every line of ``theirs`` that neither
``ours`` nor ``base`` has, in ``theirs``' order (identical lines once), less the lines one side removed and
the other kept as they were in ``base`` (a compaction or a quarantine on one side stays done). So no line
either side added is lost, the records keep the order of ``ours`` and the new ones from ``theirs`` come after.

**The records.** For every id, with ``o``, ``a``, ``b`` its current state in base, ours and theirs (or none):

- the same on both sides, or changed on one side only: that side's state (a record removed by hand on one
  side and untouched on the other goes, with its lines);
- changed on both sides: the higher ``governance.revision`` wins;
- removed (its lines deleted) or retired (``status`` archived or forgotten, from active) on one side and
  changed on the other: the changed one is kept, marked for review (``governance.verification`` ``stale``);
- two different states of the same revision: the later ``updatedAt`` wins (ours on a tie) and keeps the id;
  the other is kept too, as a new record ``<id>~conflict-<12 hex>`` marked ``stale``, with a source
  reference ``{"kind": "conflict", "id": <id>}``, so that a person sees both (``mnemon-ls records list
  --verification stale``), keeps one (``edit``/``verify``) and forgets the other.

When the last line of an id in the merged lines is not the state chosen, the chosen state is appended, so
the store reads exactly that (the lines before it stay as history). Nothing here reads a clock: merging the
same three files gives the same bytes.

**Lines that are not records** (not UTF-8, not JSON, not a valid record of schemaVersion 1) are kept verbatim
where they are; one that ``ours`` or ``theirs`` added (not in ``base``) makes the merge *unclean*: the driver
still writes the merged file but exits 1, so git reports a conflict and a person looks at the file.
Valid inputs always give valid JSONL.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from ..errors import InvalidInput
from ..jsontext import JsonUnreadable, json_loads
from .model import MAX_ID_CHARS, MemoryRecord, validate_record
from .store import encode

#: What a conflict copy's id adds to the id of the record it was split from.
CONFLICT_SUFFIX = "~conflict-"
#: The source reference kind naming the record a conflict copy was split from.
CONFLICT_REF_KIND = "conflict"


@dataclass
class Line:
    """One non-blank line of one side: its ``raw`` bytes (no newline), the ``record`` it is (``None``: not a
    record) and, for those, the ``reason``."""

    raw: bytes
    record: MemoryRecord | None
    reason: str = ""


@dataclass
class Conflict:
    """A record the merge marked for review: its ``id``, the ``kept`` id of the copy split off (same-revision
    conflicts only, else ``None``) and the ``reason`` in words."""

    id: str
    reason: str
    copy: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """``{id, copyId, reason}``."""
        return {"id": self.id, "copyId": self.copy, "reason": self.reason}


@dataclass
class MergeResult:
    """What :func:`merge` made: the merged ``data`` (JSONL bytes), the ``records`` in it (current states), how
    many lines came ``fromTheirs``, the ``conflicts`` marked for review and the ``malformed`` lines a side
    added (``{side, line, reason, text}``, 1-based line of that side): ``clean`` is whether there are none."""

    data: bytes
    records: int
    from_theirs: int
    conflicts: list[Conflict] = field(default_factory=list)
    malformed: list[dict[str, Any]] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        """No line that is not a record was added on either side (the driver exits 0)."""
        return not self.malformed


def parse(data: bytes) -> list[Line]:
    """The non-blank lines of a records file, each parsed (a bad line is a :class:`Line` with ``record``
    ``None`` and the reason). Never raises for content."""
    lines: list[Line] = []
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        try:
            value = json_loads(raw.decode("utf-8"))
        except UnicodeDecodeError:
            lines.append(Line(raw, None, "not UTF-8"))
            continue
        except JsonUnreadable as exc:
            lines.append(Line(raw, None, f"not JSON: {exc.in_line}"))
            continue
        try:
            lines.append(Line(raw, validate_record(value)))
        except InvalidInput as exc:
            lines.append(Line(raw, None, f"not a valid record: {exc.message}"))
    return lines


def _current(lines: list[Line]) -> dict[str, Line]:
    """id -> the last valid line of that id (the record's current state), in first-seen order."""
    out: dict[str, Line] = {}
    for line in lines:
        if line.record is not None:
            out[line.record.id] = line
    return out


def _same(x: Line | None, y: Line | None) -> bool:
    """Whether two current states are the same record state (field by field, not byte by byte)."""
    if x is None or y is None:
        return x is y
    return x.raw == y.raw or x.record.to_json() == y.record.to_json()  # type: ignore[union-attr]


def _retired(x: Line, base: Line | None) -> bool:
    """Archived or forgotten here while it was active (or absent) in base."""
    assert x.record is not None
    return x.record.status != "active" and (base is None or base.record.status == "active")  # type: ignore[union-attr]


def _stale(record: MemoryRecord, **changes: Any) -> MemoryRecord:
    """``record`` marked for review: verification ``stale`` (no ``verifiedAt``), with ``changes`` on top."""
    data = record.to_json()
    gov = {k: v for k, v in data["governance"].items() if k != "verifiedAt"}
    gov["verification"] = "stale"
    refs = changes.pop("sourceRefs", None)
    if refs is not None:
        gov["sourceRefs"] = refs
    return validate_record({**data, **changes, "governance": gov})


def _copy_id(record_id: str, loser: Line) -> str:
    """The id of the conflict copy of ``loser``: ``<id>~conflict-<12 hex of its line's sha256>`` (a longer
    one than ids may be: ``memory:conflict:<16 hex of the id's sha256>:<12 hex>``)."""
    digest = hashlib.sha256(encode(loser.record)).hexdigest()[:12]  # type: ignore[arg-type]
    copy = f"{record_id}{CONFLICT_SUFFIX}{digest}"
    if len(copy) <= MAX_ID_CHARS:
        return copy
    return f"memory:conflict:{hashlib.sha256(record_id.encode('utf-8')).hexdigest()[:16]}:{digest}"


def _decide(record_id: str, o: Line | None, a: Line | None, b: Line | None
            ) -> tuple[MemoryRecord | Line | None, list[MemoryRecord], Conflict | None]:
    """The state of one id (a side's line, a new record, or ``None``: removed), the new records beside it
    (a conflict copy) and the conflict to report (module doc)."""
    if _same(a, b):
        return a, [], None
    if _same(b, o):
        return a, [], None
    if _same(a, o):
        return b, [], None
    if a is None or b is None:
        kept = a if a is not None else b
        assert kept is not None and kept.record is not None
        side = "ours" if b is None else "theirs"
        return (_stale(kept.record), [],
                Conflict(record_id, f"removed on one side and changed on the other: {side}' change is kept, "
                                    "marked stale for review"))
    assert a.record is not None and b.record is not None
    a_retired, b_retired = _retired(a, o), _retired(b, o)
    if a_retired != b_retired:
        kept, side = (b, "theirs") if a_retired else (a, "ours")
        gone = (a if a_retired else b).record.status  # type: ignore[union-attr]
        return (_stale(kept.record), [],  # type: ignore[arg-type]
                Conflict(record_id, f"{gone} on one side and changed on the other: {side}' change is kept, "
                                    "marked stale for review"))
    ra, rb = a.record.governance.revision, b.record.governance.revision
    if ra != rb:
        return (a if ra > rb else b), [], None
    winner, loser = (b, a) if b.record.updated_at > a.record.updated_at else (a, b)
    copy = _copy_id(record_id, loser)
    refs = [ref.model_dump(by_alias=True) for ref in loser.record.governance.source_refs]  # type: ignore[union-attr]
    mark = {"kind": CONFLICT_REF_KIND, "id": record_id}
    if mark not in refs and len(refs) < 64:
        refs.append(mark)
    split = _stale(loser.record, id=copy, sourceRefs=refs)  # type: ignore[arg-type]
    side = "ours" if winner is a else "theirs"
    return (winner, [split],
            Conflict(record_id, f"changed differently on both sides at revision {ra}: {side}' state (the later) "
                                f"keeps the id, the other is kept as {copy}, marked stale for review", copy))


def merge(base: bytes, ours: bytes, theirs: bytes) -> MergeResult:
    """Merge three versions of a records file (module doc); returns the merged bytes and what happened.
    Never raises for content: lines that are not records are kept and reported in ``malformed``."""
    lines_o, lines_a, lines_b = parse(base), parse(ours), parse(theirs)
    set_o = {line.raw for line in lines_o}
    set_a = {line.raw for line in lines_a}
    set_b = {line.raw for line in lines_b}
    out: list[Line] = [line for line in lines_a if line.raw in set_b or line.raw not in set_o]
    seen = set(set_a)
    from_theirs = 0
    for line in lines_b:
        if line.raw not in seen and line.raw not in set_o:
            seen.add(line.raw)
            out.append(line)
            from_theirs += 1
    malformed = [{"side": side, "line": number, "reason": line.reason,
                  "text": line.raw.decode("utf-8", "replace")}
                 for side, lines in (("ours", lines_a), ("theirs", lines_b))
                 for number, line in enumerate(lines, start=1)
                 if line.record is None and line.raw not in set_o]
    # with its 1-based number among the side's non-blank lines; the raw bytes stay in the file as they are

    cur_o, cur_a, cur_b = _current(lines_o), _current(lines_a), _current(lines_b)
    ids = list(dict.fromkeys([*cur_a, *cur_b]))
    removed: set[str] = set()
    appended: list[bytes] = []
    conflicts: list[Conflict] = []
    last = _current(out)
    for record_id in ids:
        state, extra, conflict = _decide(record_id, cur_o.get(record_id), cur_a.get(record_id),
                                         cur_b.get(record_id))
        if conflict is not None:
            conflicts.append(conflict)
        if state is None:
            removed.add(record_id)
            continue
        chosen = state if isinstance(state, Line) else Line(encode(state).rstrip(b"\n"), state)
        if not _same(last.get(record_id), chosen):
            appended.append(chosen.raw)
        for record in extra:
            if record.id not in last or not _same(last[record.id], Line(b"", record)):
                appended.append(encode(record).rstrip(b"\n"))
    kept = [line.raw for line in out if line.record is None or line.record.id not in removed]
    body = [*kept, *appended]
    data = b"".join(raw + b"\n" for raw in body)
    records = len(_current(parse(data))) if appended or removed else len(last)
    return MergeResult(data, records, from_theirs, conflicts, malformed)


def merge_files(base: str, ours: str, theirs: str) -> MergeResult:
    """The git merge driver's work: merge the files ``base`` (``%O``), ``ours`` (``%A``) and ``theirs`` (``%B``)
    and replace ``ours`` with the result atomically (temp file, fsync, rename; its mode kept). Raises
    :class:`InvalidInput` naming the argument (``base``, ``ours``, ``theirs``) whose file cannot be read;
    then nothing is written."""
    from pathlib import Path

    from ..fsio import write_file_atomically

    data: dict[str, bytes] = {}
    for name, path in (("base", base), ("ours", ours), ("theirs", theirs)):
        try:
            data[name] = Path(path).read_bytes()
        except FileNotFoundError:
            raise InvalidInput(name, f"must be an existing file ({path} does not exist)") from None
        except OSError as exc:
            raise InvalidInput(name, f"must be a readable file ({path}: {exc.strerror})") from None
    result = merge(data["base"], data["ours"], data["theirs"])
    if result.data != data["ours"]:
        target = Path(ours)
        write_file_atomically(target, result.data, mode=target.stat().st_mode & 0o777)
    return result
