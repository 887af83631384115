"""Recall of the ``mnemon-native`` provider (:mod:`.native`): ``search`` (ranking on the side index, ``smart``
neighbour expansion, the CLI's ``basic`` ``LIKE`` scan, hybrid recall when semantic is on), the batched
access bookkeeping (``flush_access``) and ``related`` (graph walk).

:class:`NativeRecall` is a mixin of :class:`~mnemon_ls.spaces.providers.native.NativeProvider`: its methods
use the provider's connection, lock and side index and are only meant to be called on a ``NativeProvider``.
The score formula (0..1) is in :mod:`.native`'s module doc. :meth:`NativeRecall.search_partial` answers the same
items with only what the ranking read from the side index, and reads the rows of those the caller completes
(:mod:`.native_load`: the federated recall completes the ones it sends).
"""

from __future__ import annotations

import sqlite3
from typing import Any, Callable, Sequence

from ... import nowait
from ..index import TOKENIZER
from ..model import WALK_EDGE_TYPES, Item, epoch_seconds
from .base import KeepFn, SearchOutcome, sparse_hint
from .hybrid import hybrid_rank, vector_pool
from .. import accessflush
from ..accessflush import PENDING_CAP
from .native_load import Completer, item_from_row, item_importance, load_items, partial_order
from .native_schema import _BUSY_SLICE_MS, ACCESS_FLUSH_THRESHOLD, _json_list, missing_item
from ..keywordscore import OUTSIDE_RANGE_CAP, keyword_score
from ..querysense import ELSEWHERE_NOTICE, WEAK_MATCH_CAP, WEAK_MATCH_FACTOR, answered_elsewhere, sense, weak_matcher
from ...text import QueryTerm




def _frequencies(terms: Sequence[QueryTerm], candidates: Sequence[tuple]) -> dict[int, int]:
    """``{group: items holding its whole term}`` from the ``counts`` column of the side index's answer
    (:mod:`mnemon_ls.spaces.index_query`, the same on every row of it); ``{}`` when it has none."""
    counts = next((c[8] for c in candidates if c[8]), None)
    if not counts:
        return {}
    out: dict[int, int] = {}
    for term, count in zip(terms, counts.split(",")):
        out.setdefault(term.group, int(count))
    return out


def weakened(scored: list[tuple], weak: set[str]) -> list[tuple]:
    """``scored`` (keyword rows ``(score, ...)``, the id at index 3) with every score weakened as a weak match's
    (times :data:`~mnemon_ls.spaces.querysense.WEAK_MATCH_FACTOR`, at most ``WEAK_MATCH_CAP``: *low*, in the
    order it had); every id is added to ``weak``."""
    weak.update(entry[3] for entry in scored)
    return [(min(entry[0] * WEAK_MATCH_FACTOR, WEAK_MATCH_CAP), *entry[1:]) for entry in scored]


def _adjusted(scored: list[tuple], window: tuple[float, float] | None, groups: int, weak: set[str]) -> list[tuple]:
    """``scored`` (fused, best first) with the score of every item found by meaning alone outside ``window``
    (epoch seconds ``[start, end)``, when given) times ``groups / (groups + 1)`` (it lacks the range's group as
    a keyword hit outside it does; ``groups``: the query's keyword groups, at least 1), every item outside it
    at most :data:`OUTSIDE_RANGE_CAP` (the vectors may have lifted it), and the score of every
    ``weak`` id (a match on only a name or one common word) at most :data:`WEAK_MATCH_CAP`, whatever the vectors
    said (they stand out for a name whatever else the query asks); then sorted again."""
    keep = max(1, groups) / (max(1, groups) + 1)
    out = []
    for s in scored:
        score = s[0]
        if window is not None and not (s[2] and window[0] <= s[2] < window[1]):
            score = min(score * keep if s[6] == "vector" else score, OUTSIDE_RANGE_CAP)
        if s[3] in weak:
            score = min(score, WEAK_MATCH_CAP)
        out.append((score, *s[1:]))
    out.sort(key=lambda s: (-s[0], -s[1], -s[2], s[3]))
    return out


class NativeRecall:
    """Reads of :class:`~mnemon_ls.spaces.providers.native.NativeProvider` (mixin; see module doc)."""

    # ------------------------------------------------------------------ search

    def search(self, query: str, *, limit: int, mode: str = "smart", category: str | None = None,
               source: str | None = None, intent: str | None = None, keep: KeepFn | None = None) -> SearchOutcome:
        """Ranked items for ``query`` (see module doc), at most ``limit``; ``keep(tags)`` false drops an item
        before the cut. ``intent`` is accepted for CLI parity and does not change the embedded ranking."""
        return self._search(query, limit, mode, category, source, keep, False)

    def search_partial(self, query: str, *, limit: int, mode: str = "smart", category: str | None = None,
                       source: str | None = None, intent: str | None = None,
                       keep: KeepFn | None = None) -> SearchOutcome:
        """:meth:`search`'s answer with *partial* items (:mod:`.native_load`): the same items in the same order with
        the same ``score``, ``matched_via``, ``importance`` and ``similarity``, their other fields empty until the
        caller completes those it sends with ``outcome.complete`` (the rows of the others are never read from
        ``mnemon.db``). A ``basic`` recall's items are complete (its scan reads them anyway)."""
        return self._search(query, limit, mode, category, source, keep, True)

    def _search(self, query: str, limit: int, mode: str, category: str | None, source: str | None,
                keep: KeepFn | None, partial: bool) -> SearchOutcome:
        if mode == "smart" and self.semantic is not None:
            self.semantic.prefetch(query)  # the query embedding runs while the keyword part does
        with self._lock:
            if mode == "basic":
                outcome = self._read(lambda db: self._basic(db, query, limit, category, source, keep))
            else:
                outcome = self._read(lambda db: self._ranked(db, query, limit, mode, category, source, keep,
                                                             partial))
            if mode == "smart" and self.semantic is not None:
                said = self.semantic.notice()  # once per process: the extra is missing or the model failed
                if said:
                    outcome.notices.append(said)
            if self.read_only_reason is not None:
                outcome.notices.append(self.notice or "")
            elif self.track_access and outcome.items:
                operation = "search" if mode == "keyword" else ("recall:basic" if mode == "basic" else "recall")
                if partial:  # the caller sends some of the candidates: those are the reads (access on returned ids)
                    outcome.complete = self._touching(outcome.complete, operation, query)
                else:
                    ids = [item.id for item in outcome.items]
                    self._touch_ready(len(ids))
                    nowait.after(lambda: self._touch_locked(ids, operation, query))
            return outcome

    def _touching(self, complete: Callable[[Sequence[Item]], list[Item]] | None, operation: str,
                  query: str) -> Callable[[Sequence[Item]], list[Item]]:
        """``outcome.complete`` of a partial answer that also records the access of the items it completes (the
        ones the caller sends; the Mnemon CLI counts an access on each returned id, reference ``mnemon-cli.md``
        §5): ``complete`` ``None`` means the items are already complete (a ``basic`` recall)."""
        def sent(items: Sequence[Item]) -> list[Item]:
            done = complete(items) if complete is not None else list(items)
            if done:
                ids = [item.id for item in done]
                self._touch_ready(len(ids))
                nowait.after(lambda: self._touch_locked(ids, operation, query))  # on a loop: once the read has run
            return done
        return sent

    def _ranked(self, db: sqlite3.Connection, query: str, limit: int, mode: str, category: str | None,
                source: str | None, keep: KeepFn | None, partial: bool = False) -> SearchOutcome:
        self._sync(db)
        sensed = sense(query, TOKENIZER, self.clock())  # the terms, the names, the time range it names
        terms, when = sensed.terms, sensed.when
        if not terms and when is None and (mode != "smart" or self.semantic is None or not query.strip()):
            return SearchOutcome([], sparse_hint(0, limit))
        pool = max(64, limit * 6)
        total = (self._verified[2]["active"] if self._verified else 0) or self.index.counts()[0]
        hybrid = mode == "smart" and self.semantic is not None
        # one statement (mnemon_ls.spaces.index_query): each candidate comes with the counts of the query groups
        # it holds and its branch tags alone, so nothing is split or decoded here but those tags
        candidates = self.index.search(terms, pool, total, category=category, source=source) if terms else []
        window = (when.start.timestamp(), when.end.timestamp()) if when is not None else None
        if window is not None:  # the items of the range the words did not find: they hold the range's group
            seen = {c[0] for c in candidates}
            candidates += [c for c in self.index.created_between(*window, pool, category=category, source=source)
                           if c[0] not in seen]
        fetched = len(candidates)
        best = max((c[1] or 0.0 for c in candidates), default=0.0) or 1.0
        groups = sensed.groups + (window is not None)  # the range is one more thing the query asks for
        frequency = _frequencies(terms, candidates)
        is_weak = weak_matcher(sensed, frequency)
        now = self.clock().timestamp()
        scored: list[tuple] = []
        dropped: set[str] = set()  # ids: an item refused by keyword and by vector is one hidden item
        weak: set[str] = set()  # ids of the matches on only a name or one common word
        elsewhere = 0  # the most query groups held by an item the branch filter drops
        here = 0  # by an item it keeps
        # the loop of every candidate (~100-200 per recall): plain comparisons instead of max()/min() calls, the
        # same arithmetic in the same order (the scores, hence the ranking, are bit for bit those of the formula)
        start, end = window if window is not None else (0.0, 0.0)
        append = scored.append
        for ident, bm25, importance, created, branches, matched, exact, held, _counts in candidates:
            if branches is not None:
                tags = _json_list(branches)  # its branch tags alone
                if tags and keep is not None and not keep(tags):
                    dropped.add(ident)
                    if matched > elsewhere:
                        elsewhere = matched
                    continue
            else:
                tags = []
            if matched > here:
                here = matched
            dated = window is not None and bool(created) and start <= created < end
            found = matched + dated
            if found <= 0:
                continue
            imp = importance if isinstance(importance, int) else 3
            if created:
                age_days = (now - created) / 86400
                if not age_days > 0.0:
                    age_days = 0.0
            else:
                created, age_days = 0.0, 3650.0
            if bm25 is not None:
                relevance = (bm25 if bm25 > 0.0 else 0.0) / best
            else:
                relevance = 0.5
            # cover, exactness: text.coverage and text.exactness (match_scores), counted by the index
            score = keyword_score(found / groups, (exact + dated) / found, relevance, imp, age_days)
            if not dated:
                if window is not None and score > OUTSIDE_RANGE_CAP:
                    score = OUTSIDE_RANGE_CAP  # not from the range the query names: medium at most
                if is_weak(held, exact == matched):
                    score = min(score * WEAK_MATCH_FACTOR, WEAK_MATCH_CAP)  # only a name or one common word: low
                    weak.add(ident)
            append((score if score < 1.0 else 1.0, imp, created, ident, tags, found == groups))
        notices: list[str] = []
        if scored and answered_elsewhere(elsewhere, here):  # what this branch holds only shares a part of the query
            scored = weakened(scored, weak)
            notices.append(ELSEWHERE_NOTICE)
        scored.sort(key=lambda s: (-s[0], -s[1], -s[2], s[3]))
        read: dict[str, tuple] = {}  # the side-index rows of the vector candidates: (importance, created, ...)
        if hybrid:
            fused = hybrid_rank(self.semantic, self.index, query, scored, vector_pool(limit), keep, category,
                                source, read)
            if fused is not None:
                scored, extra_dropped = fused
                dropped |= extra_dropped
                if window is not None or weak:  # meaning alone outside the range; weak matches stay low
                    scored = _adjusted(scored, window, sensed.groups, weak)
        chosen = scored[:limit]
        scores = {s[3]: (round(s[0], 4), s[6] if len(s) > 6 else "keyword") for s in chosen}
        facts: dict[str, tuple[int | None, float]] = {}  # id -> (importance, created) of the final order
        if mode == "smart" and chosen:
            self._expand(db, chosen, scores, limit, keep, category, source, facts)
        similar = {s[3]: s[7] for s in chosen if len(s) > 7 and s[7] is not None}
        complete = None
        if partial:  # ordered on the side index's values; the rows are read for the items the caller sends
            known = {c[0]: c for c in candidates}
            for key in scores:
                if key not in facts:
                    row = known.get(key)
                    facts[key] = (row[2], row[3]) if row is not None else read.get(key, (None, 0.0))[:2]
            items = partial_order(scores, facts, similar, limit)
            complete = Completer(self._locked_read, self._known_columns).complete
        else:
            items = load_items(db, self._columns, scores)
            for item in items:
                item.similarity = similar.get(item.id)
            items.sort(key=lambda it: (-(it.score or 0.0), -(it.importance or 0),
                                       -(epoch_seconds(it.created_at) or 0), it.id))
            items = items[:limit]
        return SearchOutcome(items, sparse_hint(len(items), limit), fetched=fetched, dropped=len(dropped),
                             notices=notices, complete=complete)

    def _locked_read(self, action: Callable[[sqlite3.Connection], Any]) -> Any:
        """``action(db)`` on the connection under the provider's lock, outside a transaction (one statement is
        its own snapshot), retried while the store is busy (:meth:`_retry`)."""
        with self._lock:
            return self._retry(lambda: action(self._conn()))

    def _known_columns(self) -> set[str]:
        """The ``insights`` columns of the open store."""
        return self._columns

    def _expand(self, db: sqlite3.Connection, chosen: list, scores: dict[str, tuple[float, str]], limit: int,
                keep: KeepFn | None, category: str | None, source: str | None,
                facts: dict[str, tuple[int | None, float]]) -> None:
        """Smart mode: neighbours of strong hits over causal/semantic edges (module doc), added to ``scores``;
        ``facts`` gets the importance and created epoch seconds (or 0) of each one added."""
        extra: dict[str, tuple[float, str]] = {}
        for score, _imp, _created, ident, *_rest in chosen[:5]:
            if score < 0.6:
                continue
            for other, edge_type, weight in db.execute(
                    "SELECT target_id, edge_type, weight FROM edges WHERE source_id = ? AND edge_type IN "
                    "('causal','semantic') UNION ALL SELECT source_id, edge_type, weight FROM edges "
                    "WHERE target_id = ? AND edge_type IN ('causal','semantic') LIMIT 40", (ident, ident)):
                if other in scores:
                    continue
                value = round(0.45 * score * max(0.0, min(1.0, float(weight or 0))), 4)
                if value > extra.get(other, (0.0, ""))[0]:
                    extra[other] = (value, edge_type)
        if not extra:
            return
        ranked = sorted(extra.items(), key=lambda kv: (-kv[1][0], kv[0]))[: max(1, limit // 2) * 3]
        marks = ",".join("?" * len(ranked))
        rows = {r[0]: r[1:] for r in db.execute(
            f"SELECT id, tags, category, source, importance, created_at FROM insights WHERE +deleted_at IS NULL "
            f"AND id IN ({marks})", [key for key, _ in ranked])}
        room = max(1, limit // 2)
        for key, value in ranked:  # the best allowed ones; a row past them is not decoded
            if not room:
                break
            row = rows.get(key)
            if row is None:
                continue
            tags_json, cat, src, importance, created_at = row
            if (category is not None and cat != category) or (source is not None and src != source):
                continue
            if keep is not None and not keep(_json_list(tags_json)):
                continue
            scores[key] = value
            facts[key] = (item_importance(importance), epoch_seconds(created_at) or 0.0)
            room -= 1

    def _load(self, db: sqlite3.Connection, scores: dict[str, tuple[float | None, str | None]]) -> list[Item]:
        """:func:`.native_load.load_items` on this store."""
        return load_items(db, self._columns, scores)

    @staticmethod
    def _item(r: Sequence[Any], score: float | None, via: str | None) -> Item:
        """:func:`.native_load.item_from_row`."""
        return item_from_row(r, score, via)

    def _basic(self, db: sqlite3.Connection, query: str, limit: int, category: str | None, source: str | None,
               keep: KeepFn | None) -> SearchOutcome:
        pattern = "%" + query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        sql = ("SELECT id, content, category, importance, tags, entities, source, created_at FROM insights "
               "WHERE deleted_at IS NULL AND content LIKE ? ESCAPE '\\'")
        args: list[Any] = [pattern]
        if category is not None:
            sql += " AND category = ?"
            args.append(category)
        if source is not None:
            sql += " AND source = ?"
            args.append(source)
        sql += " ORDER BY importance DESC, created_at DESC, id ASC"
        items: list[Item] = []
        fetched = dropped = 0
        for r in db.execute(sql, args):
            fetched += 1
            item = self._item(r, None, "basic")
            if keep is not None and not keep(item.tags):
                dropped += 1
                continue
            items.append(item)
            if len(items) >= limit:
                break
        return SearchOutcome(items, sparse_hint(len(items), limit), fetched=fetched, dropped=dropped)

    def _touch_ready(self, hits: int) -> None:
        """In no-wait mode (:mod:`mnemon_ls.nowait`), raise :class:`~mnemon_ls.nowait.WouldWait` when recording
        ``hits`` more accesses would write them inline (no flusher to hand them to, or :data:`PENDING_CAP`
        reached): that write is not for an event loop."""
        if nowait.active() and "access_count" in self._columns and self._writes_inline(self._pending_touches + hits):
            nowait.check(self.db_path)

    def _writes_inline(self, pending: int) -> bool:
        """Whether ``pending`` accesses (a count) are written by the reading thread rather than handed to the
        flusher: the threshold is reached and there is no open flusher, or :data:`PENDING_CAP` is reached (the
        background write cannot keep up). Without side effects; :meth:`_touch` also writes inline when the
        flusher declines the batch (``due``)."""
        if pending < ACCESS_FLUSH_THRESHOLD:
            return False
        flusher = self.access_flusher
        return flusher is None or pending >= PENDING_CAP or flusher.closed

    def _touch_locked(self, ids: list[str], operation: str, query: str) -> None:
        """:meth:`_touch` under the provider's lock, unless the store became read-only."""
        with self._lock:
            if self.read_only_reason is None:
                self._touch(ids, operation, query)

    def _touch(self, ids: list[str], operation: str, query: str) -> None:
        """Record the access bookkeeping of a read; written by :meth:`flush_access` (module doc)."""
        if "access_count" not in self._columns:
            return
        now = self._now()
        for ident in ids:
            self._pending_access[ident] = (self._pending_access.get(ident, (0, now))[0] + 1, now)
        self._pending_oplog.append((operation, f"q={query} hits={len(ids)}", now))
        self._pending_touches += len(ids)
        if self._pending_touches >= ACCESS_FLUSH_THRESHOLD:
            if self._writes_inline(self._pending_touches) or not self.access_flusher.due(self):
                self.flush_access()  # a process of one command, or the background write cannot keep up

    def flush_access_aside(self, *, due: bool = False) -> bool:
        """What :meth:`flush_access` writes, written on a connection of its own so that reads go on meanwhile
        (:mod:`mnemon_ls.spaces.accessflush`: the long-lived servers call it in a thread of theirs). The pending
        counters are taken under the provider's lock, written outside it, and put back (before any taken since)
        when the store refuses them (busy for ~0.25 s, a full disk); dropped when ``mnemon.db`` was replaced
        meanwhile (they belonged to the store that was there, as :meth:`_reopen_replaced` drops them). One such
        write at a time; ``close()`` waits for it. ``due``: only when the threshold's hits are pending (the
        flusher was asked twice for one batch). Returns True when nothing was pending, it was written or
        dropped; False when it is pending again."""
        with self._aside:
            with self._lock:
                if not self._pending_access and not self._pending_oplog:
                    return True
                if due and self._pending_touches < ACCESS_FLUSH_THRESHOLD:
                    return True
                if self.read_only_reason is not None or self._db is None or self._degraded is not None:
                    return self.flush_access()  # drops them (read-only) or keeps them pending, as ever
                access, oplog = self._pending_access, self._pending_oplog
                self._pending_access, self._pending_oplog, self._pending_touches = {}, [], 0
                identity, with_time = self._identity, "last_accessed_at" in self._columns
            written = self._write_access(access, oplog, identity, with_time)
            if written is False:
                with self._lock:
                    if self._identity == identity:  # not replaced meanwhile: pending again, the older first
                        for ident, (n, when) in self._pending_access.items():
                            held = access.get(ident)
                            access[ident] = (held[0] + n, when) if held is not None else (n, when)
                        self._pending_access, self._pending_oplog = access, oplog + self._pending_oplog
                        self._pending_touches = sum(n for n, _when in access.values())
            return written is not False

    def _apply_access(self, db: sqlite3.Connection, access: dict[str, tuple[int, str]],
                      oplog: list[tuple[str, str, str]], with_time: bool) -> None:
        """Inside the caller's transaction on ``db``: add each item's count to ``access_count`` (and set
        ``last_accessed_at`` when ``with_time``: the column exists) for ``access`` (``id -> (count, ISO time)``),
        and append the ``oplog`` rows ``(operation, detail, ISO time)``. Raises :class:`sqlite3.Error`."""
        sql = ("UPDATE insights SET access_count = access_count + ?" +
               (", last_accessed_at = ?" if with_time else "") + " WHERE id = ?")
        db.executemany(sql, [((n, when, ident) if with_time else (n, ident)) for ident, (n, when) in access.items()])
        for operation, detail, when in oplog:
            self._oplog(db, operation, "", detail, when)

    def _write_access(self, access: dict[str, tuple[int, str]], oplog: list[tuple[str, str, str]],
                      identity: tuple[int, int] | None, with_time: bool) -> bool | None:
        """Write ``access`` and ``oplog`` in one transaction on a new connection to ``mnemon.db``: True when
        committed, None when the file is no longer ``identity`` (replaced: nothing written), False when the
        store refused (nothing written)."""
        try:
            uri = "file:" + self.db_path.as_posix().replace("?", "%3f").replace("#", "%23") + "?mode=rw"
            db = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False,
                                 timeout=_BUSY_SLICE_MS / 1000)  # mode=rw: a removed store is not created again
        except sqlite3.Error:
            return False
        try:
            db.execute("PRAGMA synchronous=NORMAL")  # soft state: no fsync for it (as flush_access)
            db.execute("BEGIN IMMEDIATE")
            if self._file_identity() != identity:
                db.execute("ROLLBACK")
                return None
            self._apply_access(db, access, oplog, with_time)
            accessflush.step("commit")
            db.execute("COMMIT")
            return True
        except sqlite3.Error:
            if db.in_transaction:
                db.execute("ROLLBACK")
            return False
        finally:
            db.close()
            accessflush.step("done")

    def flush_access(self) -> bool:
        """Write the pending access counters (``access_count + n``, ``last_accessed_at``) and ``recall``/
        ``search`` oplog rows of past reads in one short transaction, as the CLI would have written them
        read by read. Best effort: returns False (and keeps them pending) when the store is busy for more
        than ~0.25 s; True when nothing is pending or they were written. Call it when idle; ``close()``
        calls it too."""
        with self._lock:
            if not self._pending_access and not self._pending_oplog:
                return True
            if self.read_only_reason is not None or self._db is None:
                self._pending_access, self._pending_oplog, self._pending_touches = {}, [], 0
                return True
            db = self._db
            try:
                db.execute("PRAGMA synchronous=NORMAL")  # access counters are soft state: no fsync for them
                db.execute("BEGIN IMMEDIATE")
            except sqlite3.Error:
                db.execute("PRAGMA synchronous=FULL")
                return False
            try:
                self._apply_access(db, self._pending_access, self._pending_oplog,
                                   "last_accessed_at" in self._columns)
                db.execute("COMMIT")
                self._pending_access, self._pending_oplog, self._pending_touches = {}, [], 0
                return True
            except sqlite3.Error:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                return False
            finally:
                db.execute("PRAGMA synchronous=FULL")

    # ------------------------------------------------------------------ graph, link, forget

    def related(self, item_id: str, *, depth: int = 2, edge_type: str | None = None, limit: int = 20) -> list[Item]:
        """Breadth-first walk from ``item_id`` over edges in both directions (only ``edge_type`` when given),
        active items only, start excluded, at most ``depth`` hops and ``limit`` items. Each item carries
        ``depth`` and ``edge_type`` (the edge that reached it). Raises :class:`InvalidInput` (``id``) when
        the start is missing or forgotten."""
        types = (edge_type,) if edge_type else WALK_EDGE_TYPES

        def walk(db: sqlite3.Connection) -> list[Item]:
            if db.execute("SELECT 1 FROM insights WHERE id = ? AND +deleted_at IS NULL", (item_id,)).fetchone() is None:
                raise missing_item(db, "id", item_id, "no active item with this id in the space (missing or forgotten)",
                                   id=item_id, spaceId=self.space_id)
            marks = ",".join("?" * len(types))
            seen = {item_id}
            frontier = [item_id]
            found: list[tuple[str, int, str]] = []
            for level in range(1, depth + 1):
                nxt: list[str] = []
                for node in frontier:
                    for other, kind in db.execute(
                            f"SELECT target_id, edge_type FROM edges WHERE source_id = ? AND edge_type IN ({marks}) "
                            f"UNION ALL SELECT source_id, edge_type FROM edges WHERE target_id = ? "
                            f"AND edge_type IN ({marks})", (node, *types, node, *types)):
                        if other in seen:
                            continue
                        alive = db.execute("SELECT 1 FROM insights WHERE id = ? AND +deleted_at IS NULL",
                                           (other,)).fetchone()
                        if alive is None:
                            continue
                        seen.add(other)
                        found.append((other, level, kind))
                        nxt.append(other)
                        if len(found) >= limit:
                            break
                    if len(found) >= limit:
                        break
                frontier = nxt
                if len(found) >= limit or not frontier:
                    break
            loaded = {it.id: it for it in self._load(db, {key: (None, kind) for key, _, kind in found})}
            out = []
            for key, level, kind in found:
                item = loaded.get(key)
                if item is not None:
                    item.depth, item.edge_type, item.matched_via = level, kind, kind
                    out.append(item)
            return out

        with self._lock:
            return self._read(walk)
