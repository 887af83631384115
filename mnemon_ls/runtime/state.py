"""What a Runtime store read and what it returns: :class:`StoreState` (a read of ``memories.json``),
:class:`Receipt` (a committed or no-op mutation) and :class:`MaintenancePlan` (reference 4.1: what capacity
maintenance would work on). Plain data below :mod:`.store` and its maintenance and repair parts, so those
and :mod:`.compaction` share them without importing the store.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .model import Entry, Target


@dataclass(frozen=True, slots=True)
class StoreState:
    """What a read saw.

    ``entries`` all entries in stored order; ``revision`` sha256 hex of them; ``exists`` whether
    ``memories.json`` exists; ``problem`` ``None`` when the truth file is valid, else the reason it
    is not (then ``entries`` are the recoverable ones: salvaged entries of the damaged file plus any
    only the last-good copy holds, and writes are refused until ``recover``).
    """

    entries: tuple[Entry, ...]
    revision: str
    exists: bool
    problem: str | None = None

    def of(self, target: Target) -> tuple[Entry, ...]:
        """Valid entries of one target, in stored order (those with a ``problem`` are in :meth:`invalid`)."""
        return tuple(e for e in self.entries if e.target == target and e.problem is None)

    def invalid(self, target: Target | None = None) -> tuple[tuple[int, Entry], ...]:
        """``(index in memories.json, entry)`` of every entry (of ``target``) that breaks a rule of a new
        entry: kept in the file, left out of the projections and the wake (see :class:`Entry`)."""
        return tuple((i, e) for i, e in enumerate(self.entries)
                     if e.problem is not None and (target is None or e.target == target))



@dataclass(frozen=True, slots=True)
class Receipt:
    """A committed (or no-op) Runtime mutation (reference 3.4 result, plus ``revision`` and ``preserved``).

    ``to_dict()`` gives ``{success, message, target, entryCount, usage: {used, limit}, revision,
    added | replaced: {from, to} | removed, [similar], [kept, dropped], [preserved]}``; ``entryCount`` and
    ``usage`` (UTF-8 bytes) are for the mutated target after the change. ``similar`` (an add only) lists
    the contents of entries of the target that differ from the added one only in case, whitespace or
    punctuation (:func:`~mnemon_ls.runtime.ops.similar_entries`); nothing is removed for them.
    """

    message: str
    target: Target
    entry_count: int
    used: int
    limit: int
    revision: str
    changed: bool
    detail: dict[str, Any] = field(default_factory=dict)
    preserved: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The JSON receipt (camelCase)."""
        data = {
            "success": True,
            "message": self.message,
            "target": self.target,
            "entryCount": self.entry_count,
            "usage": {"used": self.used, "limit": self.limit},
            "revision": self.revision,
            "changed": self.changed,
            **self.detail,
        }
        if self.preserved:
            data["preserved"] = self.preserved
        return data


@dataclass(frozen=True, slots=True)
class MaintenancePlan:
    """Reference 4.1: what a capacity maintenance would work on, read under the lock.

    ``entries`` are the committed entries of ``target`` minus ``excluded`` (the replaced/removed one),
    ``pending`` the new entry of an add/replace, byte counts are UTF-8 bytes of the joined target.
    """

    revision: str
    action: str
    target: Target
    entries: tuple[Entry, ...]
    pending: Entry | None
    excluded: Entry | None
    used: int
    projected: int
    limit: int
    requires_maintenance: bool

    def to_dict(self) -> dict[str, Any]:
        """JSON shape with camelCase keys."""
        return {
            "revision": self.revision,
            "action": self.action,
            "target": self.target,
            "entries": [e.to_json() for e in self.entries],
            "pending": self.pending.to_json() if self.pending else None,
            "excluded": self.excluded.to_json() if self.excluded else None,
            "used": self.used,
            "projected": self.projected,
            "limit": self.limit,
            "requiresMaintenance": self.requires_maintenance,
        }
