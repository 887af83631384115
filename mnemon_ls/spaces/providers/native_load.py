"""Loading items of the ``mnemon-native`` provider from ``mnemon.db``: the rows of recall results, of ``get`` and of
``related`` (:mod:`.native_recall`, :mod:`.native_status`), and the *partial* answer of a recall, whose items are
completed only once the caller knows which it sends (issue 27 item 5).

A recall ranks its candidates on the side index's columns alone (:mod:`mnemon_ls.spaces.index`: the query groups
held, BM25, importance, created); the text, tags, entities, category, source and times of an item are only in
``mnemon.db``. The federated recall (:mod:`mnemon_ls.spaces.service_recall`) asks a provider for more candidates
than it sends (the policy's ``candidateLimit``, 30 for 10 results) and sends the ones its quality policy selects,
so a partial answer (:func:`partial_order`, :class:`Completer`) orders the candidates exactly as the full load
does, by ``(score, importance, created, id)``, from the side index's values, and reads the rows of those the
caller completes only: one ``SELECT`` for up to 500 ids. The side index holds what ``mnemon.db`` held when the
search caught it up (same read transaction), and its ``importance``/``created`` are derived from those rows by
the same rules as an :class:`~mnemon_ls.spaces.model.Item`'s (an integer importance or ``None``; the epoch seconds of
``created_at`` or 0), so the order is the full load's, bit for bit.

The rows are read when completed, after the search's transaction: an item forgotten (or a store replaced) in
between is not completed (:meth:`Completer.complete` leaves it out) rather than sent as it was.
"""

from __future__ import annotations

import sqlite3
from typing import Any, Callable, Iterable, Sequence

from ..model import Item
from .base import iter_chunks
from .native_schema import _json_list

#: The ``insights`` columns of a loaded item (then ``updated_at``, ``last_accessed_at`` where the store has them).
ITEM_COLUMNS = "id, content, category, importance, tags, entities, source, created_at"


def item_importance(value: Any) -> int | None:
    """An item's importance as stored: an integer (not a bool), else ``None``."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def fill(item: Item, r: Sequence[Any]) -> Item:
    """``item`` with the fields of the ``insights`` row ``r`` (:data:`ITEM_COLUMNS`, then optionally
    ``updated_at``, ``last_accessed_at``): content (``""`` when not text, as the side index reads it), category
    (``general`` when not text), importance, tags, entities, source, created at (and the two times when ``r`` has them).
    Returns ``item``."""
    item.content = r[1] if isinstance(r[1], str) else ""
    item.category = r[2] if isinstance(r[2], str) else "general"
    item.importance = item_importance(r[3])
    item.tags = _json_list(r[4])
    item.entities = _json_list(r[5])
    item.source = r[6] if isinstance(r[6], str) else None
    item.created_at = r[7]
    if len(r) > 8:
        item.updated_at = r[8] if isinstance(r[8], str) else None
        item.accessed_at = r[9] if isinstance(r[9], str) else None
    return item


def item_from_row(r: Sequence[Any], score: float | None, via: str | None) -> Item:
    """The :class:`Item` of an ``insights`` row (:func:`fill`) with ``score`` and ``matched_via`` ``via``."""
    return fill(Item(id=r[0], content="", score=score, matched_via=via), r)


def load_rows(db: sqlite3.Connection, columns: set[str], keys: Iterable[str]) -> dict[str, tuple]:
    """``{id: row}`` of the active (not forgotten) items among ``keys``: :data:`ITEM_COLUMNS`, ``updated_at``,
    ``last_accessed_at`` (``NULL`` where the store lacks the column; ``columns``: those ``insights`` has), one
    statement per 500 ids, in the store's order. Raises :class:`sqlite3.Error` as SQLite does."""
    times = "".join(f", {c}" if c in columns else ", NULL" for c in ("updated_at", "last_accessed_at"))
    rows: dict[str, tuple] = {}
    for chunk in iter_chunks(list(keys), 500):
        marks = ",".join("?" * len(chunk))
        for r in db.execute(f"SELECT {ITEM_COLUMNS}{times} FROM insights WHERE +deleted_at IS NULL "
                            f"AND id IN ({marks})", list(chunk)):
            rows[r[0]] = r
    return rows


def load_items(db: sqlite3.Connection, columns: set[str], scores: dict[str, tuple[float | None, str | None]]
               ) -> list[Item]:
    """The active items of ``scores`` (``{id: (score, matched via)}``) in the store's order, each with its score,
    ``matched_via`` and both times (:func:`load_rows`); a forgotten or missing id is left out."""
    if not scores:
        return []
    return [item_from_row(r, *scores[key]) for key, r in load_rows(db, columns, scores).items()]


def partial_order(scores: dict[str, tuple[float, str]], facts: dict[str, tuple[int | None, float]],
                  similar: dict[str, dict], limit: int) -> list[Item]:
    """The best ``limit`` items of ``scores`` (``{id: (rounded score, matched via)}``) as the full load orders
    them, ``(-score, -(importance or 0), -created, id)``, from ``facts`` (``{id: (importance, created epoch
    seconds or 0)}``: the side index's values, or those the neighbour expansion read); each a partial
    :class:`Item`: ``id``, ``score``, ``matched_via``, ``importance``, ``similarity`` (from ``similar``), the
    rest empty until completed (:class:`Completer`). An id without facts sorts as importance 0, created 0."""
    ranked = []
    for key, (score, via) in scores.items():
        importance, created = facts.get(key, (None, 0.0))
        ranked.append((score, importance, created or 0.0, key, via))
    ranked.sort(key=lambda r: (-(r[0] or 0.0), -(r[1] or 0), -r[2], r[3]))
    return [Item(id=key, content="", importance=importance, score=score, matched_via=via,
                 similarity=similar.get(key)) for score, importance, _created, key, via in ranked[:limit]]


class Completer:
    """Completes the partial items of one recall of a provider (module doc): ``complete(items)``.

    ``run(action)`` runs ``action(db)`` on the provider's connection under its lock, retried while the store is
    busy; ``columns()`` the ``insights`` columns the store has (read after the connection is opened)."""

    def __init__(self, run: Callable[[Callable[[sqlite3.Connection], Any]], Any],
                 columns: Callable[[], set[str]]) -> None:
        self._run = run
        self._columns = columns

    def complete(self, items: Sequence[Item]) -> list[Item]:
        """``items`` (partial items of the recall) with their rows filled in (:func:`fill`, times included), in
        their order; one forgotten since the recall (or whose store was replaced) is left out. One ``SELECT``
        on ``mnemon.db`` per 500 items (none for no items). Raises the provider's storage errors."""
        if not items:
            return []
        rows = self._run(lambda db: load_rows(db, self._columns(), [item.id for item in items]))
        return [fill(item, rows[item.id]) for item in items if item.id in rows]
