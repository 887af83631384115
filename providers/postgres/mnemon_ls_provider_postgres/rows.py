"""Rows of the ``items`` table as the provider reads and writes them: the columns a read selects
(:data:`ITEM_COLUMNS`), an :class:`~mnemon_ls.spaces.model.Item` of such a row (:func:`row_item`), the indexed terms
and the duplicate key of a written item. Shared by the engine, its spaces, recall and vectors; imports none of
them.
"""

from __future__ import annotations

import hashlib
from typing import Any, Sequence

from mnemon_ls.spaces.index import TOKENIZER
from mnemon_ls.spaces.model import Item, rfc3339

ITEM_COLUMNS = ("id, content, category, importance, tags, entities, source, created_at, branches, terms, author, "
                "updated_at")


def item_terms(content: str, tags: Sequence[str], entities: Sequence[str]) -> list[str]:
    """The distinct indexed terms of an item (content, tags, entities), as the native side index makes them."""
    terms: list[str] = []
    seen: set[str] = set()
    for text in (content, *tags, *entities):
        for term in TOKENIZER.document_terms(text):
            if term not in seen:
                seen.add(term)
                terms.append(term)
    return terms


def content_hash(content: str) -> str:
    """sha256 hex of the stripped content: two writes of one text in one space are one item."""
    return hashlib.sha256(content.strip().encode()).hexdigest()


def _time(value: Any) -> str | None:
    return rfc3339(value) if value is not None else None


def row_item(row: Sequence[Any], score: float | None = None, via: str | None = None) -> Item:
    """An :class:`Item` of a row of :data:`ITEM_COLUMNS`."""
    return Item(str(row[0]), row[1], category=row[2], importance=row[3], tags=list(row[4] or []),
                entities=list(row[5] or []), source=row[6], created_at=_time(row[7]), score=score, matched_via=via)
