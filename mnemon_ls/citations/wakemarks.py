"""The wake's marks (issue 24 items 4 and 6): a MEMORY.md entry whose citations are not all fresh is marked
``cites src/retry.py:10-24: changed`` (``moved to 30-44`` with the new range; several joined by ``, ``), an
entry due for review (:func:`~.review.review_due` of its updated time) ``review due``, and the header says once
how many citations are not fresh and how many entries are due, with what to do about them.

:func:`annotator` builds the ``annotate`` callable :meth:`mnemon_ls.runtime.source.RuntimeMemory.wake` takes
(the runtime Source knows neither citations nor review). Base layer: imports only this package.
"""

from __future__ import annotations

import os
import threading
from typing import Any, Callable, Sequence

from . import trust
from .freshness import trusted
from .model import freshness_words
from .review import DAY_MS, due_since, last_touched, to_ms
from ..runtime.ops import entry_key
from .reviewed import ReviewedFile
from .store import Citations, runtime_key


_tables: dict[str, tuple[tuple[int, int, int, int], dict[str, Any]]] = {}
_tables_lock = threading.Lock()


def runtime_table(citations: Citations) -> dict[str, Any]:
    """The runtime side file's table (:meth:`Citations.table`), kept while the file's size, mtime (ns), inode and
    device are the same (every write replaces the file: a new inode). The caller must not change it."""
    path = citations.file("runtime").path
    try:
        info = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return {}  # no side file: nothing cited (nothing is read, so no directory needs checking)
    except OSError:
        return citations.table("runtime")
    signature = (info.st_size, info.st_mtime_ns, info.st_ino, info.st_dev)
    key = str(path)
    with _tables_lock:
        kept = _tables.get(key)
    if kept is not None and kept[0] == signature:
        return kept[1]
    table = citations.table("runtime")
    with _tables_lock:
        if len(_tables) > 64:
            _tables.clear()
        _tables[key] = (signature, table)
    return table


_stale: dict[str, tuple[dict[str, Any], int, dict[str, tuple[int, str]]]] = {}


def stale_marks(citations: Citations, table: dict[str, Any]) -> dict[str, tuple[int, str]]:
    """Key -> ``(how many of its citations are not fresh, the mark)`` for each key of ``table`` (the runtime
    side file's, :func:`runtime_table`) with a citation that is not fresh.

    In a long-lived host whose watch stands behind every cited file (:mod:`.trust`), the answer is kept and given
    again, with no call per citation, until the table or the trust changes (a watched change, an invalidation)."""
    where = str(citations.file("runtime").path)
    since = trust.generation()
    kept = _stale.get(where)
    if kept is not None and kept[0] is table and kept[1] == since:
        return kept[2]
    marks: dict[str, tuple[int, str]] = {}
    every = True
    for key, cites in table.items():
        bad = [v for v in citations.views(cites) if v["freshness"] != "fresh"]
        if bad:
            marks[key] = (len(bad), "cites " + ", ".join(cite_mark(v) for v in bad))
        every = every and all(trusted(citations.workspace, c) for c in cites)
    if every and trust.generation() == since:
        if len(_stale) > 64:
            _stale.clear()
        _stale[where] = (table, since, marks)
    return marks


def cite_mark(view: dict[str, Any]) -> str:
    """``src/retry.py:10-24: changed`` of a citation as read (``{path, startLine, endLine, freshness, movedTo?}``);
    moved: ``...: moved to 30-44``; renamed: ``...: renamed to src/backoff.py`` (:func:`.model.freshness_words`)."""
    lines = str(view["startLine"]) if view["startLine"] == view["endLine"] else f"{view['startLine']}-{view['endLine']}"
    return f"{view['path']}:{lines}: {freshness_words(view)}"


def citations_line(stale: int, entries: int) -> str:
    """The header line counting citations that are not fresh (``stale``) over ``entries`` entries."""
    return (f"Citations: {stale} cited code range{'s' if stale != 1 else ''} of {entries} "
            f"entr{'ies' if entries != 1 else 'y'} below {'are' if stale != 1 else 'is'} not fresh (marked `cites "
            "...: changed|moved to|renamed to|gone|unknown`): the code changed since it was remembered, so read it "
            "before relying on those entries, then replace or remove them.")


def review_line(due: int, days: int) -> str:
    """The header line counting entries due for review (not updated, recalled or confirmed for ``days`` days)."""
    return (f"Review: {due} entr{'ies' if due != 1 else 'y'} below, not updated, recalled or confirmed for {days}+ "
            f"days, {'are' if due != 1 else 'is'} marked `review due`: check "
            f"{'they still hold' if due != 1 else 'it still holds'} before relying on "
            f"{'them' if due != 1 else 'it'}, then update, remove, or confirm still true (nothing is deleted by "
            "age).")


def annotator(citations: Citations | None, review_days: int, root: Any = None) -> Callable[
        [Sequence[Any], Sequence[Any], int], tuple[dict[tuple[str, str], str], list[str]]]:
    """``annotate(user_entries, memory_entries, now_ms)`` -> ``(marks, header lines)``: marks keyed by
    ``(target, content)``; entries are the runtime Source's (``content``, ``updated_at``). ``citations``
    ``None``: no citation marks; ``review_days`` 0: no review marks. ``root``: the storage root, whose
    ``state/citations/reviewed.json`` (:mod:`.reviewed`) says when a person last confirmed an entry still true.

    The marks of a root are kept (:class:`_KeptMarks`) and given again while the entries, the side files' tables,
    ``review_days`` and every entry's review state at ``now_ms`` are the same; the caller must not change them."""

    def annotate(user: Sequence[Any], memory: Sequence[Any],
                 now_ms: int) -> tuple[dict[tuple[str, str], str], list[str]]:
        table = runtime_table(citations) if citations is not None else {}
        bad = stale_marks(citations, table) if table and citations is not None else {}
        confirmed = ReviewedFile(root).read().get("runtime", {}) if root is not None and review_days else {}
        entries = (tuple((e.content, e.updated_at) for e in user), tuple((e.content, e.updated_at) for e in memory))
        where = (None if root is None else os.fspath(root), citations is None)
        with _marks_lock:
            kept = _marks.get(where)
        if kept is not None and kept.holds(table, bad, confirmed, review_days, entries, now_ms):
            return kept.marks, list(kept.lines)
        marks, lines, until = _annotate(entries, bad, confirmed, review_days, now_ms)
        with _marks_lock:
            if len(_marks) > 64:
                _marks.clear()
            _marks[where] = _KeptMarks(table, bad, confirmed, review_days, entries, now_ms, until, marks, lines)
        return marks, list(lines)

    return annotate


class _KeptMarks:
    """The last marks :func:`annotator` computed for one storage root, with what they were computed from and
    the span of time ``[since, until)`` (epoch ms) over which the same inputs give the same marks."""

    __slots__ = ("table", "bad", "confirmed", "days", "entries", "since", "until", "marks", "lines")

    def __init__(self, table: Any, bad: Any, confirmed: Any, days: int, entries: Any, since: int, until: float,
                 marks: dict[tuple[str, str], str], lines: tuple[str, ...]) -> None:
        self.table, self.bad, self.confirmed, self.days, self.entries = table, bad, confirmed, days, entries
        self.since, self.until, self.marks, self.lines = since, until, marks, lines

    def holds(self, table: Any, bad: Any, confirmed: Any, days: int, entries: Any, now_ms: int) -> bool:
        """Whether these marks are the answer for these inputs at ``now_ms`` (the tables compared by identity
        first: the side files' readers keep one object per file state)."""
        return (self.since <= now_ms < self.until and days == self.days and entries == self.entries
                and (table is self.table or table == self.table) and (bad is self.bad or bad == self.bad)
                and (confirmed is self.confirmed or confirmed == self.confirmed))


#: Storage root (and whether citations are checked) -> the last marks (:class:`_KeptMarks`): an agent asks for
#: the wake every turn, and the marks of 30 entries cost more than the rest of the Runtime render.
_marks: dict[tuple[str | None, bool], _KeptMarks] = {}
_marks_lock = threading.Lock()


def _annotate(entries: tuple[tuple[tuple[str, Any], ...], tuple[tuple[str, Any], ...]],
              bad: dict[str, tuple[int, str]], confirmed: dict[str, int], review_days: int,
              now_ms: int) -> tuple[dict[tuple[str, str], str], tuple[str, ...], float]:
    """The marks of ``entries`` (``(user, memory)``, each ``(content, updated_at)`` pairs) at ``now_ms``:
    ``(marks, header lines, until)``; ``until`` (epoch ms, or infinity) is the first moment after ``now_ms`` at
    which an entry's review mark could change (an age reaching ``review_days``, or a confirmation stamped in the
    future, ignored until then, starting to count)."""
    notes_of: dict[tuple[str, str], list[str]] = {}
    stale = stale_entries = due = 0
    until = float("inf")
    span = review_days * DAY_MS
    for target, pairs in zip(("user", "memory"), entries):
        for content, updated_at in pairs:
            notes: list[str] = []
            found = bad.get(runtime_key(content)) if bad and target == "memory" else None
            if found is not None:
                stale += found[0]
                stale_entries += 1
                notes.append(found[1])
            if review_days > 0:
                reviewed = confirmed.get(entry_key(target, content)) if confirmed else None
                latest = last_touched(updated_at, None, now_ms, reviewed)
                if due_since(latest, now_ms, review_days):
                    due += 1
                    notes.append("review due")
                elif latest is not None:
                    until = min(until, latest + span)
                moment = to_ms(reviewed)
                if moment is not None and moment > now_ms:
                    until = min(until, moment)
            if notes:
                notes_of[(target, content)] = notes
    lines = []
    if stale:
        lines.append(citations_line(stale, stale_entries))
    if due:
        lines.append(review_line(due, review_days))
    return {k: "; ".join(v) for k, v in notes_of.items()}, tuple(lines), until
