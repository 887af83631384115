"""Recall results holding a credential another program stored: sent redacted, the store left as it is.

Every write of mnemon-ls into a Memory Space passes :mod:`mnemon_ls.redact` first (DESIGN.md invariant 9), but a native
space's ``mnemon.db`` has another writer, the Mnemon CLI (shared/reference/mnemon-cli.md: same file format, no
redaction), and a third-party engine stores what its own clients gave it. Nothing in a row says who wrote it (``source``
is a free string both writers fill with ``user``/``agent``), so under ``secrets: redact`` (or ``reject``) the results a
recall sends (at most :data:`~mnemon_ls.spaces.model.MAX_RESULTS`) are passed through the redaction pass
(:func:`redact_results`): their content with :func:`~mnemon_ls.redact.find_secrets`, their source, category, tags and
entities as labels, as the write path judges them (a ``branch:<name>`` tag like a branch name). The pass is already
imported by :mod:`.service` (the write path's :class:`~mnemon_ls.redact.Scrubber`) and costs ~0.2 ms per 10 KiB of prose
(``bench/results/redact.md``), so a recall pays for the few results it sends only. A long-lived server sends the same
items again and again: each text's verdict is kept (:func:`_text`, :func:`_label`: pure functions of the string, the
last :data:`MEMO_SIZE` texts of at most :data:`MEMO_CHARS` characters), so an item sent before costs a dictionary
lookup.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable

from ..errors import echo_value
from ..redact import redact_label, redact_text
from .model import BRANCH_TAG_PREFIX

#: Texts whose verdict is kept (module doc), and the longest kept (characters).
MEMO_SIZE = 4096
MEMO_CHARS = 4096


def _scanned(redact: Callable[[str], tuple[str, list[Any]]], value: str) -> tuple[str, tuple[str, ...]]:
    new, matches = redact(value)
    return new, tuple(m.kind for m in matches)


_memo = lru_cache(maxsize=MEMO_SIZE)(_scanned)  # keyed by (the pass, the text): both are hashable


def _verdict(redact: Callable[[str], tuple[str, list[Any]]], value: str) -> tuple[str, tuple[str, ...]]:
    """``(value redacted, the kinds found)`` by ``redact`` (:func:`~mnemon_ls.redact.redact_text` or
    :func:`~mnemon_ls.redact.redact_label`), kept when at most :data:`MEMO_CHARS` characters (module doc)."""
    return _memo(redact, value) if len(value) <= MEMO_CHARS else _scanned(redact, value)


def _text(value: str) -> tuple[str, tuple[str, ...]]:
    """``(value redacted, the kinds found)`` as a text (:func:`~mnemon_ls.redact.redact_text`)."""
    return _verdict(redact_text, value)


def _label(value: Any, tag: bool) -> tuple[Any, tuple[str, ...]]:
    """``(value redacted, the kinds found)`` as a label (:func:`~mnemon_ls.redact.redact_label`; a ``branch:`` tag
    as a text); a value that is not a string is returned as it is."""
    if not isinstance(value, str):
        return value, ()
    return _verdict(redact_text if tag and value.startswith(BRANCH_TAG_PREFIX) else redact_label, value)


def redact_results(results: list[dict[str, Any]], space: tuple[str, str] | None = None) -> list[str]:
    """Redact each recall result of ``results`` in place (``content`` as text; ``source`` and ``category`` as
    labels; ``tags``, ``entities`` and ``branches`` element by element) and return one notice per result
    changed, naming its space and item id and the kinds found (never the value). Results without a credential are
    left as they are. ``space``: ``(id, name)`` of the space every result is from, for items that do not name it
    (``Item.to_dict()`` shapes)."""
    notices: list[str] = []
    for result in results:
        kinds: list[str] = []
        content = result.get("content")
        if isinstance(content, str):
            result["content"], found = _text(content)
            kinds.extend(found)
        for key in ("source", "category"):  # free strings in mnemon.db (and a third-party engine's rows)
            new, found = _label(result.get(key), False)
            if found:
                result[key] = new
                kinds.extend(found)
        for key, tag in (("tags", True), ("entities", False), ("branches", False)):
            values = result.get(key)
            if not isinstance(values, list):
                continue
            redacted = []
            for value in values:
                if key == "branches" and isinstance(value, str):
                    new, found = _text(value)
                else:
                    new, found = _label(value, tag)
                kinds.extend(found)
                redacted.append(new)
            result[key] = redacted
        if kinds:
            space_id, space_name = space or (result.get("spaceId"), result.get("spaceName"))
            notices.append(f"space {space_name} ({space_id}) item {echo_value(str(result.get('id')), 4096)} holds "
                           f"what looks like a credential ({', '.join(sorted(set(kinds)))}) that another program "
                           "stored; sent redacted, the store is unchanged: `mnemon-ls redact --apply` replaces it")
    return notices


def redact_status(status: dict[str, Any], space: tuple[str, str]) -> str | None:
    """Redact, in place, the labels of a native space's status object (``space status``) that another program
    stored: the ``by_category`` keys (two keys that become the same placeholder add up their counts) and the
    ``top_entities`` names, judged as labels as a recall judges them (:func:`redact_results`). Returns the notice
    naming ``space`` (``(id, name)``) and the kinds found (never a value), or ``None`` when nothing was found."""
    kinds: list[str] = []
    categories = status.get("by_category")
    if isinstance(categories, dict):
        redacted: dict[Any, Any] = {}
        for key, count in categories.items():
            new, found = _label(key, False)
            kinds.extend(found)
            redacted[new] = redacted[new] + count if new in redacted and isinstance(count, int) else count
        status["by_category"] = redacted
    for entry in status.get("top_entities") or ():
        if isinstance(entry, dict):
            entry["entity"], found = _label(entry.get("entity"), False)
            kinds.extend(found)
    if not kinds:
        return None
    return (f"space {space[1]} ({space[0]}) holds categories or entities that look like a credential "
            f"({', '.join(sorted(set(kinds)))}) that another program stored; shown redacted, the store is unchanged: "
            "`mnemon-ls redact --apply` replaces them")
